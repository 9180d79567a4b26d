"""What a person reads, in three rooms over one set of shared cells: ``terminal/`` (the session's summary),
``files/`` (the markdown report, a pull request's comment, CSV, plots, GitHub's job summary and annotations,
the outputs written), ``page/`` (the one self-contained HTML page). The cells every room reads, so each
shows a run's outcomes and intervals alike (tests/test_surfaces.py), are the modules here: the pairs'
columns (``pairs``), the transport tables (``transport``), the change tables (``shown``, ``pair_changes``),
budgets, explanations and notes; ``reporter`` is the pytest plugin that gathers a session and writes them.
"""
