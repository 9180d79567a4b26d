"""The plugin's options: registered, resolved and checked once, at configure time (the gate's
own, stored runs and the base tree, in :mod:`overheadbench.gate_options`).

Each setting is resolved in one place as "command line, else the quick profile (itself a
command-line option), else ini, else default". Every output and storage option is checked
here, so a bad one is a usage error (exit 4) before anything is measured, not a traceback
after the whole run. Options that only mean something while measuring imply ``--overhead``.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .core.units import DurationError, parse_duration
from .core.vocabulary import MAX_PROCESSES, Counter
from .engine.settings import Mode, Policy, Settings, shown_default
from .engine.valgrind import unavailable
from .report.pairs import COLUMN_KEYS, TERMINAL_COLUMNS


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


def _choice(*allowed: str) -> Callable[[str], Any]:
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
    "time_budget_s": (
        "time-budget",
        _seconds,
        "measuring time per pair once its processes are ready, e.g. 2s or 500ms",
    ),
    "target_halfwidth": ("target", _fraction, "stop once the overhead interval is ±this fraction"),
    "confidence": ("confidence", _fraction, "confidence level of the interval"),
    "processes": (
        "processes",
        _process_count,
        "fresh replica processes each pair is measured in first (1 = in this process only)",
    ),
    "max_processes": ("max-processes", _process_count, "at most this many processes per pair"),
    "extra_processes": (
        "extra-processes",
        _process_count,
        "processes added per further round while the interval is wider than the target",
    ),
    "replica_timeout_s": ("replica-timeout", _seconds, "longest a replica process may stay silent, e.g. 90s"),
    "pair_timeout_s": ("pair-timeout", _seconds, "longest a pair may take before it fails, e.g. 300s"),
    "backend": ("backend", _choice("asyncio", "trio"), "event loop for async callables: asyncio or trio"),
    "gc_enabled": ("gc", _boolean, "keep the garbage collector on while timing"),
    "inconclusive": (
        "inconclusive",
        _choice(*Policy),
        "an inconclusive verdict fails the test or only warns: fail or warn",
    ),
    "subtract_harness": ("subtract-harness", _boolean, "subtract the harness's own loop cost per call"),
    "mode": (
        "mode",
        _choice(*Mode),
        "what a pair is measured in: time (wall clock) or count "
        "(executed instructions and allocations, the same on every run)",
    ),
    "allocations": (
        "allocations",
        _boolean,
        "in time mode, count allocations per call too, in a short pass after timing",
    ),
    "counter": (
        "counter",
        _choice(*Counter),
        "count mode's instructions: callgrind (machine instructions, compiled code included; needs valgrind), "
        "bytecode (Python bytecode only), or auto (callgrind where valgrind runs, else bytecode)",
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
        help="quick profile for CI: 3 processes, 0.5 s per pair, wider intervals (explicit options win; "
        "implies --overhead)",
    )
    group.addoption(
        "--overhead-json",
        metavar="PATH",
        default=None,
        help="write every measured pair (samples included) as JSON to PATH (implies --overhead)",
    )
    group.addoption(
        "--overhead-md",
        metavar="PATH",
        default=None,
        help="write a markdown report (environment, one table per group) to PATH at the end (implies --overhead)",
    )
    group.addoption(
        "--overhead-columns",
        metavar="KEYS",
        default=None,
        help=f"the terminal table's columns, comma-separated, or 'all': {', '.join(COLUMN_KEYS)} "
        f"(default {','.join(TERMINAL_COLUMNS)}; the markdown report and JSON always have every figure)",
    )
    parser.addini("overhead_columns", "the terminal table's columns (see --overhead-columns)", default=None)
    group.addoption(
        "--overhead-github",
        metavar="BOOL",
        default=None,
        help="under GitHub Actions, annotate failing pairs and append the markdown report to the job summary "
        "(default true)",
    )
    parser.addini("overhead_github", "see --overhead-github (default true)", default=None)
    defaults = Settings()
    for name, (suffix, _, help_text) in _OPTIONS.items():
        described = f"{help_text} (default {shown_default(name, getattr(defaults, name))})"
        group.addoption(f"--overhead-{suffix}", default=None, help=described)
        parser.addini(f"overhead_{suffix.replace('-', '_')}", described, default=None)


QUICK: dict[str, Any] = {
    "processes": 3,
    "max_processes": 3,
    "time_budget_s": 0.5,
    "target_halfwidth": 0.03,
    "inconclusive": Policy.WARN,
}
"""``--overhead-quick``: a CI profile, about a quarter of the default time per pair, with
wider intervals (3 processes: the interval is the mean ± t, see measurement.md). Its
intervals are too wide to settle close calls, so an inconclusive verdict warns instead of
failing; a pair clearly over budget still fails."""
QUICK_AGAINST: dict[str, Any] = {"processes": 6, "max_processes": 6}
"""The quick profile under ``--overhead-against`` or ``--overhead-env``: 6 processes per place. With 3 the change has
2-4 degrees of freedom (t up to 4.3) and one stray process makes its interval ±20%: a 10%
regression was left "unknown" in 3 of 8 sessions (benchmarks/validation/AB_GATE.md)."""
IMPLYING = (
    "--overhead-quick",
    "--overhead-json",
    "--overhead-md",
    "--overhead-save",
    "--overhead-autosave",
    "--overhead-compare",
    "--overhead-compare-fail",
    "--overhead-compare-fail-percent",
    "--overhead-against",
    "--overhead-env",
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
    columns: tuple[str, ...]
    """The terminal table's columns (keys of :data:`overheadbench.report.pairs.COLUMNS`)."""
    github: bool
    """Annotate and summarise under GitHub Actions."""


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
        columns=_columns(option("--overhead-columns") or config.getini("overhead_columns")),
        github=_flag(option("--overhead-github") or config.getini("overhead_github"), "--overhead-github"),
    )


def settings_from_config(config: pytest.Config) -> Settings:
    """Resolve every setting: command line, else the quick profile if asked, else ini, else
    the dataclass default."""
    quick = QUICK if config.getoption("--overhead-quick") else {}
    if quick and (config.getoption("--overhead-against") or config.getoption("--overhead-env")):
        quick = {**quick, **QUICK_AGAINST}
    values: dict[str, Any] = {}
    for field, (suffix, parse, _) in _OPTIONS.items():
        ini_name = f"overhead_{suffix.replace('-', '_')}"
        raw = config.getoption(f"--overhead-{suffix}")
        source = f"--overhead-{suffix}"
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
            raise pytest.UsageError(f"overheadbench: {source}={raw!r}: {exc}") from None
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
        raise pytest.UsageError(
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
        raise pytest.UsageError(f"overheadbench: {option} needs a file path")
    path = Path(raw)
    if path.is_dir():
        raise pytest.UsageError(f"overheadbench: {option}={raw}: is a folder; name a file")
    folder = path.absolute().parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise pytest.UsageError(f"overheadbench: {option}={raw}: cannot write in {folder}")
    if path.exists() and not os.access(path, os.W_OK) and not os.access(path.parent, os.W_OK):
        raise pytest.UsageError(f"overheadbench: {option}={raw}: cannot be written")
    return path


def misread_paths(config: pytest.Config) -> list[str]:
    """Warnings for this plugin's options written with a space before a value that names an
    existing path outside the invocation directory (``--overhead-json /ci/out.json``).

    pytest chooses the rootdir and the ini file from the command line's paths before it knows
    any plugin's options, so it took such a value for a test path: the session was rooted at a
    common ancestor, and could lose its ini file. Replicas are given the session's rootdir and
    ini file, so pairs are measured all the same; the warning says why the rootdir moved, and
    the ``=`` form that keeps it.
    """
    here = Path(config.invocation_params.dir)
    words = [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *map(str, config.invocation_params.args)]
    warnings = []
    for option, value in itertools.pairwise(words):
        if not option.startswith("--overhead-") or config.getoption(option, default=None) != value:
            continue
        path = (here / value).resolve()
        if path.exists() and here.resolve() not in (path, *path.parents):
            ini = config.inipath or "none"
            warnings.append(
                f"overheadbench: {option} {value}: pytest chose the rootdir ({config.rootpath}) and the ini file "
                f"({ini}) before it knew this option, taking {value} for a test path; write {option}={value}"
            )
    return warnings


def _flag(raw: str | None, name: str) -> bool:
    """A true/false option that defaults to true."""
    if not raw:
        return True
    try:
        return _boolean(str(raw))
    except ValueError as exc:
        raise pytest.UsageError(f"overheadbench: {name}={raw!r}: {exc}") from None


def _columns(raw: str | None) -> tuple[str, ...]:
    """``--overhead-columns``: known column keys, or "all"."""
    if not raw:
        return TERMINAL_COLUMNS
    keys = tuple(key.strip() for key in str(raw).split(",") if key.strip())
    if keys == ("all",):
        return COLUMN_KEYS
    unknown = [key for key in keys if key not in COLUMN_KEYS]
    if unknown or not keys:
        raise pytest.UsageError(
            f"overheadbench: --overhead-columns={raw!r}: unknown column(s) {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join(COLUMN_KEYS)}, or 'all'"
        )
    return keys
