"""Runs across sessions: stored runs (:mod:`.runs`) and what they were measured on
(:mod:`.environment`), the estimators of a change between runs for pairs (:mod:`.pair_changes`)
and figures (:mod:`.figure_changes`), and the stored-run gate (:mod:`.gate`). The one change
model is :mod:`overheadbench.engine.changes`; places measured in one session are
:mod:`overheadbench.replicas.places`.
"""
