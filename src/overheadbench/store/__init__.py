"""Where runs are kept, apart from what a history makes of them: the stored runs (:mod:`.runs`),
what they were measured on (:mod:`.environment`, :mod:`.machine`) and the index a history reads them
through (:mod:`.index`). The analysis (series, change points, confirming, bisecting, measuring past
commits) is :mod:`overheadbench.history`'s.
"""
