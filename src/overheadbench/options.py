"""The plugin's settings (:data:`KNOBS`: each one's option, ini key, reader and help) resolved and checked
once, at configure time (every flag registered: :mod:`overheadbench.option_table`; the gate's own, stored
runs and the base tree: :mod:`overheadbench.gate_options`).

Each setting is resolved in one place as "command line, else the quick profile (itself a
command-line option), else ini, else default". Every output and storage option is checked
here, so a bad one is a usage error (exit 4) before anything is measured, not a traceback
after the whole run. Options that only mean something while measuring imply ``--overhead``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .core.errors import deprecated, usage
from .core.files import cannot_write
from .core.flags import boolean, choice, fraction, process_count, seconds, word
from .core.vocabulary import Counter
from .engine.settings import Mode, Policy, Settings, quick_profile
from .engine.valgrind import unavailable
from .report.pairs import COLUMN_KEYS, TERMINAL_COLUMNS


@dataclass(frozen=True)
class Knob:
    """A setting's option and ini key: ``--overhead-SUFFIX`` and ``overhead_SUFFIX``."""

    suffix: str
    parse: Callable[[str], Any]
    metavar: str
    help: str
    replaced: str | None = None
    """Deprecated in 0.2.0 (hidden, still honoured until 0.3): what to use instead."""

    @property
    def flag(self) -> str:
        return f"--overhead-{self.suffix}"

    @property
    def ini(self) -> str:
        return f"overhead_{self.suffix.replace('-', '_')}"


_PROFILE = (
    "the profile sets the stopping rule (the default, or --overhead-quick); --overhead-processes and "
    "--overhead-time-budget override it"
)
KNOBS: dict[str, Knob] = {
    "processes": Knob(
        "processes",
        process_count,
        "N",
        "fresh replica processes each pair is measured in first (1 = in this "
        "process only; the marker's processes= per test)",
    ),
    "time_budget_s": Knob(
        "time-budget", seconds, "DURATION", "measuring time per pair once its processes are ready, e.g. 2s or 500ms"
    ),
    "max_time_s": Knob(
        "max-time",
        seconds,
        "DURATION",
        "a pair's ceiling: how long it may go on past its time budget for its processes' minimum of block pairs "
        "(millisecond calls) and, under a gate, while its change is unknown",
    ),
    "confidence": Knob("confidence", fraction, "LEVEL", "confidence level of the intervals"),
    "mode": Knob(
        "mode",
        word(Mode),
        "time|count",
        "what a pair is measured in: time (wall clock) or count (executed "
        "instructions and allocations, the same on every run)",
    ),
    "counter": Knob(
        "counter",
        word(Counter),
        "auto|callgrind|bytecode",
        "count mode's instructions: callgrind (machine "
        "instructions, compiled code included; needs valgrind), bytecode (Python bytecode only), or auto (callgrind "
        "where valgrind runs, else bytecode)",
    ),
    "backend": Knob("backend", choice("asyncio", "trio"), "asyncio|trio", "event loop for async callables"),
    "inconclusive": Knob("inconclusive", word(Policy), "fail|warn", "what an inconclusive verdict does to its test"),
    "allocations": Knob(
        "allocations", boolean, "BOOL", "in time mode, count allocations per call too, in a short pass after timing"
    ),
    "gc_enabled": Knob("gc", boolean, "BOOL", "keep the garbage collector on while timing"),
    "subtract_harness": Knob(
        "subtract-harness", boolean, "BOOL", "subtract the harness's own loop cost per call from both sides"
    ),
    "replica_timeout_s": Knob(
        "replica-timeout", seconds, "DURATION", "longest a replica process may stay silent, e.g. 90s"
    ),
    "pair_timeout_s": Knob(
        "pair-timeout",
        seconds,
        "DURATION",
        "longest a pair may stay silent (no block timed, no replica's message) before its test fails",
    ),
    "target_halfwidth": Knob("target", fraction, "FRACTION", "", replaced=_PROFILE),
    "max_processes": Knob("max-processes", process_count, "N", "", replaced=_PROFILE),
    "extra_processes": Knob("extra-processes", process_count, "N", "", replaced=_PROFILE),
}
"""Every setting a user can set, by :class:`~overheadbench.engine.settings.Settings` field, in
``--help`` order."""
IMPLYING = (
    "--overhead-quick",
    "--overhead-json",
    "--overhead-md",
    "--overhead-html",
    "--overhead-save",
    "--overhead-autosave",
    "--overhead-compare",
    "--overhead-fail-above",
    "--overhead-compare-fail",
    "--overhead-compare-fail-percent",
    "--overhead-against",
    "--overhead-env",
    "--overhead-explain",
    "--overhead-flame",
)
"""Options that only mean something while measuring: each implies ``--overhead``."""


@dataclass(frozen=True)
class Options:
    """Every option of the session, resolved and checked."""

    settings: Settings
    measuring: bool
    implied_by: str | None
    """The option that switched measuring on without ``--overhead``, if one did."""
    quick: bool
    json_path: Path | None
    markdown_path: Path | None
    html_path: Path | None
    """The page (``--overhead-html``)."""
    columns: tuple[str, ...]
    """The terminal table's columns (keys of :data:`overheadbench.report.pairs.COLUMNS`)."""
    github: bool
    """Annotate and summarise under GitHub Actions."""
    explain: bool = False
    """Explain every measured pair (``--overhead-explain``; a failing one is explained anyway)."""
    flame: Path | None = None
    """The folder each explained pair's flame graph goes to (``--overhead-flame``), written as an output."""


def options_from_config(config: pytest.Config) -> Options:
    """Resolve and check every option, or raise :class:`pytest.UsageError` saying which and why."""
    option = config.getoption
    given = [name for name in IMPLYING if option(name) not in (None, False)]
    return Options(
        settings=settings_from_config(config),
        measuring=bool(option("--overhead") or given),
        implied_by=None if option("--overhead") or not given else given[0],
        quick=bool(option("--overhead-quick")),
        json_path=_output(option("--overhead-json"), "--overhead-json"),
        markdown_path=_output(option("--overhead-md"), "--overhead-md"),
        html_path=_output(option("--overhead-html"), "--overhead-html"),
        columns=_columns(option("--overhead-columns") or config.getini("overhead_columns")),
        github=_flag(option("--overhead-github") or config.getini("overhead_github"), "--overhead-github"),
        explain=bool(option("--overhead-explain")),
        flame=_flame(option("--overhead-flame")),
    )


def _flame(flame: str | None) -> Path | None:
    """The flame graphs' folder, checked before anything is measured."""
    if flame and (why := cannot_write(Path(flame), folder=True)):
        raise usage(f"overheadbench: --overhead-flame={flame}: {why}")
    return Path(flame).resolve() if flame else None


def settings_from_config(config: pytest.Config) -> Settings:
    """Resolve every setting: command line, else the quick profile if asked, else ini, else
    the dataclass default."""
    places = bool(config.getoption("--overhead-against") or config.getoption("--overhead-env"))
    quick = quick_profile(config.getoption("--overhead-quick"), places, config.getoption("--overhead-link"))
    values: dict[str, Any] = {}
    for field, knob in KNOBS.items():
        ini_name, parse = knob.ini, knob.parse
        raw = config.getoption(knob.flag)
        source = knob.flag
        if raw is None and field in quick:
            values[field] = quick[field]
            continue
        if raw is None:
            raw = config.getini(ini_name)
            source = f"ini option {ini_name}"
        if raw is None or raw == "" or raw == []:
            continue
        try:
            values[field] = parse(str(raw))
        except ValueError as exc:
            raise usage(f"overheadbench: {source}={raw!r}: {exc}") from None
    settings = Settings(**values)
    return dataclasses.replace(settings, counter=_counter(settings.counter))


def _counter(asked: str) -> Counter:
    """The counter this session uses: ``auto`` resolved; callgrind asked for where it cannot run is an error."""
    if asked == Counter.BYTECODE:
        return Counter.BYTECODE
    missing = unavailable()
    if missing is None:
        return Counter.CALLGRIND
    if asked == Counter.CALLGRIND:
        raise usage(
            f"overheadbench: --overhead-counter=callgrind: {missing}; install valgrind (apt-get install valgrind) "
            f"or count bytecode with --overhead-counter=bytecode"
        )
    return Counter.BYTECODE


def _output(raw: str | None, option: str) -> Path | None:
    """An output file's path, checked now: not a folder, in a folder that exists (or can be
    made) and can be written, so the run's results are never lost at the end."""
    if raw is None:
        return None
    if not raw.strip():
        raise usage(f"overheadbench: {option} needs a file path")
    path = Path(raw)
    if why := cannot_write(path):
        raise usage(f"overheadbench: {option}={raw}: {why}")
    return path


def deprecations(config: pytest.Config) -> list[str]:
    """What this session asked for by a setting's option or ini key deprecated in 0.2.0, and what
    replaces it (the gate's: :func:`overheadbench.gate_options.gate_deprecations`)."""
    return [
        deprecated(where, knob.replaced)
        for knob in KNOBS.values()
        if knob.replaced
        for where, given in ((knob.flag, config.getoption(knob.flag)), (knob.ini, config.getini(knob.ini)))
        if given not in (None, "")
    ]


def _flag(raw: str | None, name: str) -> bool:
    """A true/false option that defaults to true."""
    if not raw:
        return True
    try:
        return boolean(str(raw))
    except ValueError as exc:
        raise usage(f"overheadbench: {name}={raw!r}: {exc}") from None


def _columns(raw: str | None) -> tuple[str, ...]:
    """``--overhead-columns``: known column keys, or "all"."""
    if not raw:
        return TERMINAL_COLUMNS
    keys = tuple(key.strip() for key in str(raw).split(",") if key.strip())
    if keys == ("all",):
        return COLUMN_KEYS
    unknown = [key for key in keys if key not in COLUMN_KEYS]
    if unknown or not keys:
        raise usage(
            f"overheadbench: --overhead-columns={raw!r}: unknown column(s) {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join(COLUMN_KEYS)}, or 'all'"
        )
    return keys
