"""How long a transport pair's windows are: never shorter than the requests they count.

A window counts the requests that finish within it (its deadline is exact; those still in flight are
let finish, not counted). A gateway at 16 in flight whose requests took 0.2-0.6 s, in the default
0.25 s windows, counted 0 or 1 request in most of its framework windows: the empty rounds were
dropped ("paired over 6 rounds") and only requests shorter than a window were counted, so its req/s
read -98.6% and its p50 +120% where an independent loop read -76% and +347%, with no warning.

So a pair's windows are sized from its own requests: where a side's windows let an in-flight slot
finish fewer than :data:`MIN_PER_SLOT` requests, the pair is measured again with windows long enough
for that (at most :data:`MAX_WINDOW_S`), and where even those are too short, the test is told that its
figures count only the requests shorter than a window.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Iterator

from ..core.errors import OverheadConcurrencyWarning
from ..http.load import Throughput

MIN_PER_SLOT = 8
"""Requests each in-flight slot must finish in a window: a request is then at most an eighth of it."""
MAX_WINDOW_S = 8.0
"""The longest window a pair grows to (its rounds take 2 x rounds x this at most)."""


def per_slot(windows: Iterable[Throughput]) -> float:
    """The fewest requests an in-flight slot finished in any of ``windows`` (inf: none)."""
    return min((window.requests / max(window.concurrency, 1) for window in windows), default=math.inf)


def sized(window_s: float, windows: Iterable[Throughput]) -> float:
    """The window that lets every slot finish :data:`MIN_PER_SLOT` requests, judged from ``windows``
    measured ``window_s`` long: ``window_s`` where they all did; else as much longer as the fewest
    fell short (an empty window: 2 x ``MIN_PER_SLOT`` times), at most :data:`MAX_WINDOW_S`."""
    fewest = per_slot(windows)
    if fewest >= MIN_PER_SLOT:
        return window_s
    return min(MAX_WINDOW_S, window_s * MIN_PER_SLOT / max(fewest, 0.5))


def short_of(row: str, window_s: float, windows: Iterable[Throughput]) -> str | None:
    """What to tell where even ``window_s`` windows let a slot finish fewer than :data:`MIN_PER_SLOT`
    requests (None: they did not)."""
    fewest = per_slot(windows)
    if fewest >= MIN_PER_SLOT:
        return None
    return (
        f"{row}: its requests take as long as its windows ({window_s:g} s, the longest a pair grows to): an in-flight "
        f"slot finished {fewest:.1f} request(s) in its fewest, so its req/s and latencies count only the requests "
        f"shorter than a window; measure it with fewer in flight or a longer duration_s"
    )


def window_lengths(
    nodeid: str, measuring: bool, row: str, window_s: float, windows: tuple[list[Throughput], list[Throughput]]
) -> Iterator[float]:
    """The windows' length for a pair's rounds: ``window_s``, and once more, longer, where those
    windows were shorter than the requests they count (:mod:`.windows`: the first windows are
    dropped); where even the longest are, the test is warned that its figures cannot be read."""
    yield window_s
    if not measuring or (grown := sized(window_s, [*windows[0], *windows[1]])) <= window_s:
        return
    windows[0].clear()
    windows[1].clear()
    yield grown
    if why := short_of(row, grown, [*windows[0], *windows[1]]):
        warnings.warn(OverheadConcurrencyWarning(f"{nodeid}: {why}"), stacklevel=2)
