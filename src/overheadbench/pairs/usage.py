"""How ``overhead.compare`` is called, checked before anything is measured: a mistake names the
test and the fix instead of failing deep inside the sampling."""

from __future__ import annotations

import dataclasses
import inspect
import warnings
from typing import Any

from ..core.errors import OverheadPairWarning, OverheadUsageError
from ..core.numbers import callers
from ..core.vocabulary import MAX_CONCURRENCY, Side
from ..engine.samples import Kind
from .pair import Pair


def sides_kind(nodeid: str, baseline: Any, framework: Any) -> Kind:
    """Whether both sides are plain functions or both ``async def`` ones (anything else is an error)."""
    for side, fn in ((Side.BASELINE, baseline), (Side.FRAMEWORK, framework)):
        if not callable(fn):
            raise OverheadUsageError(f"{nodeid}: the {side} must be a zero-argument callable, got {fn!r}")
    kinds = {inspect.iscoroutinefunction(fn) for fn in (baseline, framework)}
    if len(kinds) == 2:
        raise OverheadUsageError(
            f"{nodeid}: baseline and framework must both be plain functions or both `async def` "
            f"functions; got one of each"
        )
    return Kind.ASYNC if kinds == {True} else Kind.SYNC


def with_callers(pair: Pair, concurrency: Any) -> Pair:
    """``compare(concurrency=N)``: checked, and made the pair's (unless the marker gave levels)."""
    nodeid = pair.nodeid
    if not callers(concurrency):
        raise OverheadUsageError(
            f"{nodeid}: concurrency must be a whole number of callers from 1 to {MAX_CONCURRENCY}, "
            f"got {concurrency!r} (for one row per level, give the marker a list: concurrency=[1, 8, 64])"
        )
    if pair.levelled and concurrency != pair.concurrency:
        raise OverheadUsageError(
            f"{nodeid}: the marker's concurrency levels set this row to {pair.concurrency} callers; "
            f"compare() asked for {concurrency}: give the callers in one place"
        )
    if pair.mode.counted and concurrency > 1:
        raise OverheadUsageError(
            f"{nodeid}: count mode counts one caller's instructions; concurrency={concurrency} is a time measurement"
        )
    return dataclasses.replace(pair, concurrency=concurrency)


def warn_unlike(nodeid: str, baseline: Any, framework: Any) -> None:
    """Warn when the sides' first calls returned values of different types (``None`` aside: a
    baseline that does nothing is a choice): a dict against a str, a wrapper that returns
    something else than what it wraps, are the same work only by accident."""
    kinds = type(baseline), type(framework)
    if kinds[0] is not kinds[1] and type(None) not in kinds:
        warnings.warn(
            OverheadPairWarning(
                f"{nodeid}: the baseline returned a {kinds[0].__qualname__} and the framework a "
                f"{kinds[1].__qualname__}: do both sides do the same work?"
            ),
            stacklevel=4,
        )
