"""What runs across sessions say: a branch's history of stored runs (:mod:`.stored`, :mod:`.timeline`;
the change-point search is :mod:`overheadbench.engine.shifts`), accepted steps (:mod:`.accepted`),
commits measured again (:mod:`.confirm`, :mod:`.bisect`, :mod:`.commits`, :mod:`.past`), the
estimators of a change between runs for pairs (:mod:`.pair_changes`) and figures
(:mod:`.figure_changes`), and the stored-run gate (:mod:`.gate`). Where runs are kept is
:mod:`overheadbench.store`.
"""
