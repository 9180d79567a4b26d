"""``@pytest.mark.overhead(...)``: validated and resolved, with the session's settings, into a :class:`Pair`.

A bad marker must fail the test that carries it with a message naming the test and the
mistake, so everything a user can get wrong is checked here, before any measuring.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import pytest

from ..core.errors import MarkerError, NotCountable
from ..core.keywords import Keyword, marker_help, names
from ..core.numbers import callers, check_fraction, check_processes, parse_number
from ..core.tables import said
from ..core.units import BudgetError, DurationError, SizeError, parse_duration, parse_overhead_budget, parse_size
from ..core.vocabulary import MAX_CONCURRENCY
from ..core.xdist import original_nodeid
from ..engine.settings import Mode, Settings
from .pair import Budget, Pair

T = TypeVar("T")
MARKER_NAME = "overhead"
KEYWORDS = (
    Keyword(
        "max",
        "relative budget, a fraction of the baseline's time per call: `0.25` = the framework at most 25% slower "
        "(with `mode='count'`, instructions); negative demands a speed-up (`-0.2` = at least 20% faster). Or a "
        "factor, as a string: `'500x'` = at most 500 times the baseline (agent frameworks: 100-1000x their bare path)",
    ),
    Keyword("max_abs", "absolute budget: extra time per call, in seconds (`2e-6`) or as a string (`'2us'`, `'1.5ms'`)"),
    Keyword(
        "max_alloc",
        "allocation budget: extra memory blocks the framework path keeps per call (`0` = keeps nothing the "
        "baseline does not; bounded state such as a cache is not kept memory)",
    ),
    Keyword("max_alloc_bytes", "allocation budget: extra peak memory per call, in bytes or as a string (`'1KiB'`)"),
    Keyword(
        "mode",
        "`'count'`: judge on executed instructions and allocations, the same on every run; `'time'`: wall clock "
        "(default: the session's `--overhead-mode`)",
    ),
    Keyword("confidence", "two-sided level of the interval the verdict uses (default: the session's)"),
    Keyword("group", "the report table the test appears in (else pytest-benchmark's `group`)"),
    Keyword(
        "work",
        "the real work a call does in production (`'500ms'` for an LLM call): the report's impact column shows the "
        "absolute overhead's share of it",
    ),
    Keyword(
        "processes",
        "fresh processes that measure this test first (default: the session's `--overhead-processes`); `1` = in "
        "the test's own process only, for fixtures a second process cannot hold at the same time (a fixed port)",
    ),
    Keyword(
        "concurrency",
        "callers of each side at once while it is timed: threads for plain callables, tasks for `async def` ones "
        "(`8`); a list (`[1, 8, 64]`) measures each level, one row each (time mode only; on the test function, "
        "class or module, not in `pytest.param(marks=...)`)",
    ),
)
"""Every keyword ``@pytest.mark.overhead`` accepts. At least one budget (:data:`BUDGETS`) is required."""
BUDGETS = ("max", "max_abs", "max_alloc", "max_alloc_bytes")
MARKER_HELP = marker_help(
    MARKER_NAME,
    "fail when the framework callable given to the `overhead` fixture costs more than the baseline by more than "
    "its budget (at least one of max, max_abs, max_alloc, max_alloc_bytes)",
    KEYWORDS,
)


def _check_shape(args: tuple[Any, ...], kwargs: Mapping[str, Any], where: str) -> None:
    """Keywords only, each known, and at least one budget."""
    if args:
        raise MarkerError(f"{where} takes keyword arguments only (e.g. max=0.25), got {args!r}")
    unknown = sorted(set(kwargs) - set(names(KEYWORDS)))
    if unknown:
        raise MarkerError(
            f"{where} got unknown argument(s) {', '.join(unknown)}; it accepts {', '.join(names(KEYWORDS))}"
        )
    if all(kwargs.get(key) is None for key in BUDGETS):
        raise MarkerError(
            f"{where} needs a budget: max=0.25 (relative), max_abs='2us', max_alloc=0 or max_alloc_bytes='1KiB'"
        )


def _budget(value: _Reader, kwargs: Mapping[str, Any], where: str, mode: Mode) -> Budget:
    """The pair's budget, parsed here once (every reader after reads the :class:`Budget`)."""
    max_overhead, max_factor = value.get("max", parse_overhead_budget) or (None, False)
    budget = Budget(
        max_overhead=max_overhead,
        max_abs_s=value.get("max_abs", parse_duration),
        max_alloc=value.get("max_alloc", _blocks),
        max_alloc_bytes=value.get("max_alloc_bytes", parse_size),
        max_factor=max_factor,
    )
    if mode.counted and kwargs.get("mode") and budget == Budget(max_abs_s=budget.max_abs_s):
        raise MarkerError(
            f"{where}: max_abs is a time budget, which mode='count' cannot judge; give max "
            f"(the instruction overhead), max_alloc or max_alloc_bytes, or drop mode='count'"
        )
    return budget


def _levels(value: _Reader, kwargs: Mapping[str, Any], where: str, mode: Mode) -> tuple[int, ...]:
    """The marker's concurrency levels (one caller by default); count mode counts one caller only."""
    levels: tuple[int, ...] = value.get("concurrency", concurrency_levels) or (1,)
    if mode.counted and max(levels) > 1:
        error = MarkerError if kwargs.get("mode") else NotCountable
        raise error(
            f"{where}: count mode counts one caller's instructions; concurrency is a time measurement"
            + ("" if kwargs.get("mode") else " (skipped under --overhead-mode=count; measure it in time mode)")
        )
    return levels


def pair_from_marker(
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    nodeid: str,
    settings: Settings,
    group: str | None = None,
    level: int | None = None,
) -> Pair:
    """Validate the marker's arguments and resolve them over ``settings`` (``group``: the
    report group to use when the marker names none; ``level``: this item's concurrency level,
    when the marker gives a list), or raise :class:`MarkerError`."""
    where = f"{nodeid}: @pytest.mark.overhead"
    _check_shape(args, kwargs, where)
    value = _Reader(kwargs, where)
    mode = value.get("mode", _mode) or settings.mode
    budget = _budget(value, kwargs, where, mode)
    work_s = value.get("work", parse_duration)
    if work_s is not None and work_s <= 0:
        raise MarkerError(f"{where}: work must be more than zero, got {kwargs['work']!r}")
    levels = _levels(value, kwargs, where, mode)
    listed = isinstance(kwargs.get("concurrency"), (list, tuple))
    if listed and level is None:
        raise MarkerError(
            f"{where}: a list of concurrency levels parametrises the test, so it goes in a marker on the test "
            f"function (or its class or module), not in pytest.param(marks=...), where the levels would be lost"
        )
    return Pair(
        nodeid=nodeid,
        budget=budget,
        mode=mode,
        confidence=value.get("confidence", check_fraction) or settings.confidence,
        group=value.get("group", _group) or group,
        work_s=work_s,
        processes=value.get("processes", check_processes) or settings.processes,
        concurrency=level if listed and level in levels else levels[0],
        levels=levels if listed else (),
    )


PAIR_KEY = pytest.StashKey[Pair]()


def pair_for(item: pytest.Item, settings: Settings) -> Pair | None:
    """The test's pair, resolved once from its marker and ``settings`` (None: not marked) and
    kept on the item (the controller resolves pairs before the tests run, to start their replicas)."""
    if PAIR_KEY not in item.stash:
        pair = _resolve(item, original_nodeid(item), settings)
        if pair is None:
            return None
        item.stash[PAIR_KEY] = pair
    return item.stash[PAIR_KEY]


def _resolve(item: pytest.Item, nodeid: str, settings: Settings) -> Pair | None:
    """The test's pair from its marker (None: not marked), pytest-benchmark's ``group`` and its
    concurrency level (the ``LEVEL_FIXTURE`` parameter); a bad marker fails the test with the
    marker's message."""
    mark = item.get_closest_marker(MARKER_NAME)
    if mark is None:
        return None
    benchmark = item.get_closest_marker("benchmark")
    group = benchmark.kwargs.get("group") if benchmark is not None else None
    callspec = getattr(item, "callspec", None)
    level = callspec.params.get(LEVEL_FIXTURE) if callspec is not None else None
    try:
        return pair_from_marker(mark.args, mark.kwargs, nodeid, settings, str(group) if group else None, level)
    except NotCountable as exc:
        raise pytest.skip.Exception(str(exc)) from None
    except MarkerError as exc:
        raise pytest.fail.Exception(said(str(exc)), pytrace=False) from None


def listed_levels(kwargs: Mapping[str, Any]) -> tuple[int, ...]:
    """The marker's list of concurrency levels, if it gives a valid one (else its pair says why)."""
    value = kwargs.get("concurrency")
    if not isinstance(value, (list, tuple)):
        return ()
    try:
        return concurrency_levels(value)
    except ValueError:
        return ()


def concurrency_levels(value: Any) -> tuple[int, ...]:
    """``concurrency=8`` or ``concurrency=[1, 8, 64]``: whole numbers of callers, each once."""
    levels = list(value) if isinstance(value, (list, tuple)) else [value]
    if not levels or not all(callers(level) for level in levels):
        raise ValueError(
            f"must be a number of callers from 1 to {MAX_CONCURRENCY}, or a list of them (e.g. [1, 8, 64])"
        )
    if len(set(levels)) != len(levels):
        raise ValueError("lists a level twice")
    return tuple(levels)


class _Reader:
    """Each keyword parsed by its own function; a ``ValueError`` becomes a :class:`MarkerError`
    that names the test, the keyword and what was given."""

    def __init__(self, kwargs: Mapping[str, Any], where: str) -> None:
        self.kwargs, self.where = kwargs, where

    def get(self, key: str, parse: Callable[[Any], T]) -> T | None:
        raw = self.kwargs.get(key)
        if raw is None:
            return None
        try:
            return parse(raw)
        except (DurationError, SizeError, BudgetError) as exc:  # their messages quote the value already
            raise MarkerError(f"{self.where}: {key} {exc}") from None
        except ValueError as exc:
            raise MarkerError(f"{self.where}: {key} {exc}, got {raw!r}") from None


def _blocks(value: Any) -> float:
    """Blocks kept per call, 0 or more: the budget bounds a leak, and ``-1`` (keep fewer blocks than the
    baseline) was accepted and failed every pair only after it was measured."""
    try:
        return parse_number(value, minimum=0, text=False)
    except ValueError:
        raise ValueError("must be a number of memory blocks per call, 0 or more (e.g. 0)") from None


def _mode(value: Any) -> Mode:
    if value not in tuple(Mode):
        raise ValueError("must be 'time' or 'count'")
    return Mode(value)


def _group(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("must be a string")
    return value


LEVEL_FIXTURE = "overhead_concurrency"


def parametrize_levels(metafunc: pytest.Metafunc) -> None:
    """``@pytest.mark.overhead(concurrency=[1, 8, 64])``: one test item, so one row, per level."""
    mark = metafunc.definition.get_closest_marker(MARKER_NAME)
    levels = listed_levels(mark.kwargs) if mark is not None else ()
    if levels and LEVEL_FIXTURE in metafunc.fixturenames:
        metafunc.parametrize(LEVEL_FIXTURE, levels, ids=[f"c={level}" for level in levels], indirect=True)


@pytest.fixture(name=LEVEL_FIXTURE)
def concurrency_level(request: pytest.FixtureRequest) -> int | None:
    """This row's number of concurrent callers, when the marker lists levels."""
    return getattr(request, "param", None)
