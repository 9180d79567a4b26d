"""How a pair is measured and judged: settings, samples, the sampling and counting plans, the
statistics, and the judged figure (:class:`~overheadbench.engine.checks.Check`).
"""
