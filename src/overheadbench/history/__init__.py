"""Runs across sessions and trees: stored runs (:mod:`.runs`), the one change model
(:mod:`.changes`) with its estimators for pairs and figures, the stored-run gate (:mod:`.gate`)
and ``--overhead-against`` (:mod:`.against`).
"""
