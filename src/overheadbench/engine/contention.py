"""How much of a core this process gets now: the one measure of a contended machine.

Why: an absolute figure read on the wall clock (a p95 latency, requests per second, what an HTTP
pair adds per call) is the machine's as much as the code's. Beside four busy loops on this 2-core
machine the benchmark suite failed 21 such budgets whose code had not changed (``p95 9.23 ms
exceeds 5.00 ms``). Relative figures (a pair's framework / baseline, a transport pair's change)
are read side by side and stay honest there; an absolute one cannot be, so a budget that such a
figure broke while the machine was contended is *inconclusive* (:attr:`.checks.Check.contended`),
said, and never passed. The probe spins for :data:`PROBE_S` and reads this thread's CPU time
against the wall clock: alone here 0.97-1.0 of a core, beside four busy loops about 0.4.
"""

from __future__ import annotations

import time

PROBE_S = 0.05
"""How long the probe spins (a few scheduler slices at load 5)."""
CONTENDED_BELOW = 0.8
"""A process that gets less than this share of a core is on a contended machine."""


def core_share(probe_s: float = PROBE_S) -> float:
    """The share of one core this thread got while it spun for ``probe_s`` (1.0: all of it)."""
    wall, cpu = time.perf_counter(), time.thread_time()
    while time.perf_counter() - wall < probe_s:
        pass
    return min(1.0, (time.thread_time() - cpu) / (time.perf_counter() - wall))
