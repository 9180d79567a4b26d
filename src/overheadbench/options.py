"""Session settings: each one resolved in one place as "command line, else ini, else default".

A :class:`Settings` is also what a replica worker process receives, so it stays a flat,
JSON-serialisable dataclass.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from .durations import DurationError, parse_duration
from .marker import MAX_PROCESSES, MODES


@dataclass(frozen=True)
class Settings:
    """How pairs are measured and judged (units in the names: seconds, fractions)."""

    time_budget_s: float = 2.0
    """Wall time one pair may take, all replica processes included."""
    target_halfwidth: float = 0.01
    """Stop early once the overhead's interval is this narrow (a fraction: 0.01 = ±1 point)."""
    confidence: float = 0.95
    processes: int = 6
    """Fresh replica processes a pair is measured in first; 1 = in this process only, no replicas.
    6 is the fewest for which the median of the processes has its distribution-free interval at
    95%. Fewer fall back to mean ± t, which one heavy-tail process moves, and which is too
    narrow where a pair stops because its first few processes happened to agree
    (benchmarks/validation/stopping.py: 0.85 coverage for those that stopped at 3)."""
    max_processes: int = 9
    """At most this many processes per pair (or ``processes``, if more)."""
    extra_processes: int = 3
    """Processes added per further round while the interval is wider than the target (6 -> 9)."""
    replica_timeout_s: float = 60.0
    """Longest a replica process may stay silent (starting, setting a test up, sampling)."""
    pair_timeout_s: float = 120.0
    """Longest a pair may take in this process before it fails (a callable that hangs)."""
    backend: str = "asyncio"
    gc_enabled: bool = False
    """Leave the garbage collector on while timing (off by default: it fires at random)."""
    inconclusive: str = "fail"
    """What an inconclusive verdict does to the test: "fail" or "warn"."""
    subtract_harness: bool = False
    """Subtract the harness's own per-call loop cost from both sides before the ratio."""
    min_block_s: float = 100e-6
    """Calibration target: a timed block lasts at least this long."""
    mode: str = "time"
    """"time" (wall clock, replicated, with intervals) or "count" (instructions and
    allocations, exact, in this process); a marker's ``mode=`` overrides it per test."""
    allocations: bool = True
    """In time mode, also count allocations per call (a short tracemalloc pass after timing)."""

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Settings:
        return cls(**data)


def _process_count(text: str) -> int:
    value = int(text)
    if not 1 <= value <= MAX_PROCESSES:
        raise ValueError(f"must be between 1 and {MAX_PROCESSES}")
    return value


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise ValueError("must be between 0 and 1")
    return value


def _choice(*allowed: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return text

    return parse


def _boolean(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError("must be true or false")


def _seconds(text: str) -> float:
    try:
        value = parse_duration(text)
    except DurationError as exc:
        raise ValueError(str(exc)) from None
    if value <= 0:
        raise ValueError("must be more than zero")
    return value


# field name -> (ini/option suffix, parser, help)
_OPTIONS: dict[str, tuple[str, Callable[[str], Any], str]] = {
    "time_budget_s": ("time-budget", _seconds, "wall time per pair, e.g. 2s or 500ms (default 2s)"),
    "target_halfwidth": ("target", _fraction, "stop once the overhead interval is ±this fraction (default 0.01)"),
    "confidence": ("confidence", _fraction, "confidence level of the interval (default 0.95)"),
    "processes": (
        "processes",
        _process_count,
        "fresh replica processes each pair is measured in first (default 6; 1 = in this process only)",
    ),
    "max_processes": ("max-processes", _process_count, "at most this many processes per pair (default 9)"),
    "extra_processes": (
        "extra-processes",
        _process_count,
        "processes added per further round while the interval is wider than the target (default 3)",
    ),
    "replica_timeout_s": ("replica-timeout", _seconds, "longest a replica process may stay silent, e.g. 60s (default)"),
    "pair_timeout_s": ("pair-timeout", _seconds, "longest a pair may take before it fails, e.g. 120s (default)"),
    "backend": ("backend", _choice("asyncio", "trio"), "event loop for async callables: asyncio or trio"),
    "gc_enabled": ("gc", _boolean, "keep the garbage collector on while timing (default false)"),
    "inconclusive": (
        "inconclusive",
        _choice("fail", "warn"),
        "an inconclusive verdict fails the test or only warns (default fail)",
    ),
    "subtract_harness": ("subtract-harness", _boolean, "subtract the harness's own loop cost per call (default false)"),
    "mode": (
        "mode",
        _choice(*MODES),
        "what a pair is measured in: time (wall clock, default) or count "
        "(executed instructions and allocations, the same on every run)",
    ),
    "allocations": (
        "allocations",
        _boolean,
        "in time mode, count allocations per call too, in a short pass after timing (default true)",
    ),
}


def add_options(parser: pytest.Parser) -> None:
    """Register ``--overhead*`` options and their ``overhead_*`` ini twins."""
    group = parser.getgroup("overhead", "overhead benchmarking (overheadbench)")
    group.addoption(
        "--overhead",
        action="store_true",
        default=False,
        help="measure @pytest.mark.overhead tests and judge them against their budgets",
    )
    group.addoption(
        "--overhead-quick",
        action="store_true",
        default=False,
        help="quick profile for CI: 3 processes, 0.5 s per pair, wider intervals (explicit options win)",
    )
    group.addoption(
        "--overhead-json",
        metavar="PATH",
        default=None,
        help="write every measured pair (samples included) as JSON to PATH",
    )
    group.addoption(
        "--overhead-md",
        metavar="PATH",
        default=None,
        help="write a markdown report (environment, one table per group) to PATH at the end",
    )
    group.addoption(
        "--overhead-save",
        metavar="NAME",
        default=None,
        help="store this run as NNNN_NAME.json in the storage folder (never replacing a file)",
    )
    group.addoption(
        "--overhead-autosave", action="store_true", default=False, help="store this run, named after the git commit"
    )
    group.addoption(
        "--overhead-storage",
        metavar="PATH",
        default=None,
        help="folder of stored runs (default: baselines/ under the rootdir)",
    )
    parser.addini("overhead_storage", "folder of stored runs (default: baselines/)", default=None)
    group.addoption(
        "--overhead-compare",
        metavar="NAME",
        nargs="?",
        const="",
        default=None,
        help="compare each pair with a stored run: its name, number or path (default: the newest)",
    )
    group.addoption(
        "--overhead-compare-fail",
        metavar="POINTS",
        type=float,
        default=None,
        help="fail a test whose overhead grew by more than POINTS percentage points, significantly, "
        "against the stored run (implies --overhead-compare)",
    )
    for suffix, _, help_text in _OPTIONS.values():
        group.addoption(f"--overhead-{suffix}", default=None, help=help_text)
        parser.addini(f"overhead_{suffix.replace('-', '_')}", help_text, default=None)


QUICK = {"processes": 3, "max_processes": 3, "time_budget_s": 0.5, "target_halfwidth": 0.03, "inconclusive": "warn"}
"""``--overhead-quick``: a CI profile, about a quarter of the default time per pair, with
wider intervals (3 processes: the interval is the mean ± t, see measurement.md). Its
intervals are too wide to settle close calls, so an inconclusive verdict warns instead of
failing; a pair clearly over budget still fails."""


def settings_from_config(config: pytest.Config) -> Settings:
    """Resolve every setting: command line, else ini, else the quick profile if asked, else
    the dataclass default."""
    values: dict[str, Any] = dict(QUICK) if config.getoption("--overhead-quick") else {}
    for field, (suffix, parse, _) in _OPTIONS.items():
        ini_name = f"overhead_{suffix.replace('-', '_')}"
        raw = config.getoption(f"--overhead-{suffix}")
        source = f"--overhead-{suffix}"
        if raw is None:
            raw = config.getini(ini_name)
            source = f"ini option {ini_name}"
        if raw is None or raw == "" or raw == []:
            continue
        try:
            values[field] = parse(str(raw))
        except ValueError as exc:
            raise pytest.UsageError(f"overheadbench: {source}={raw!r}: {exc}") from None
    return Settings(**values)
