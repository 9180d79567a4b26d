"""The plugin's flags, registered: the measuring, report and gate groups' options and ini keys in
``--help`` order, each setting's from its knob (:data:`~.options.KNOBS`) with its default
(:func:`add_options`, :func:`add_gate_options`). Apart from what they resolve to (:mod:`.options`,
:mod:`.gate_options`): the flags' help is what a reader of ``--help`` meets, and together they filled 400 lines.
"""

from __future__ import annotations

import pytest

from .core.flags import Flag, add_flags
from .core.thresholds import HELP_EXAMPLE, REPLACED
from .engine.settings import QUICK, Settings, shown_default
from .options import KNOBS
from .report.pairs import COLUMN_KEYS, TERMINAL_COLUMNS

MEASURING = "overhead"
REPORTS = "overhead-reports"
GATE = "overhead-gate"
"""The ``--help`` groups, one per concern (the gate's options: :mod:`overheadbench.gate_options`)."""


MEASURING_FLAGS = (
    Flag("--overhead", "measure @pytest.mark.overhead tests and judge them against their budgets", action="store_true"),
    Flag(
        "--overhead-quick",
        f"the quick profile, for CI: {QUICK['processes']} processes, {QUICK['time_budget_s']:g} s per pair, "
        "wider intervals, inconclusive warns (options given explicitly win; implies --overhead)",
        action="store_true",
    ),
)
REPORT_FLAGS = (
    Flag(
        "--overhead-json",
        "write every measured pair (samples included) as JSON to PATH (implies --overhead)",
        metavar="PATH",
    ),
    Flag(
        "--overhead-md",
        "write a markdown report (environment, one table per group) to PATH at the end (implies --overhead)",
        metavar="PATH",
    ),
    Flag(
        "--overhead-html",
        "write the page (one self-contained HTML file: verdict, budgets, flame graphs) to PATH (implies --overhead)",
        metavar="PATH",
    ),
    Flag(
        "--overhead-columns",
        f"the terminal table's columns, comma-separated, or 'all': {', '.join(COLUMN_KEYS)} "
        f"(default {','.join(TERMINAL_COLUMNS)}; the markdown report and JSON always have every figure)",
        metavar="KEYS",
        ini="overhead_columns",
        ini_help="the terminal table's columns (see --overhead-columns)",
    ),
    Flag(
        "--overhead-github",
        "under GitHub Actions, annotate failing pairs and append the markdown report to the job summary (default true)",
        metavar="BOOL",
        ini="overhead_github",
        ini_help="see --overhead-github (default true)",
    ),
    Flag(
        "--overhead-explain",
        "explain every pair: where its overhead goes, function by function, and every change between "
        "places (a failing pair and a regressed change are explained anyway; about a second per pair)",
        action="store_true",
    ),
    Flag(
        "--overhead-flame",
        "write each explained pair's added cost to DIR as folded stacks (flamegraph.pl, speedscope, inferno)",
        metavar="DIR",
    ),
)
"""The options of the measuring and report groups, in ``--help`` order (the settings: :data:`KNOBS`)."""


def knob_flags() -> list[Flag]:
    """Each setting's option and ini key, its default in its help; a replaced one hidden."""
    defaults = Settings()
    flags = []
    for name, knob in KNOBS.items():
        if knob.replaced:
            flags.append(
                Flag(knob.flag, "", ini=knob.ini, ini_help=f"deprecated since 0.2.0: {knob.replaced}", hidden=True)
            )
            continue
        described = f"{knob.help} (default {shown_default(name, getattr(defaults, name))})"
        flags.append(Flag(knob.flag, described, metavar=knob.metavar, ini=knob.ini, ini_help=described))
    return flags


def add_options(parser: pytest.Parser) -> None:
    """Register ``--overhead*`` options and their ``overhead_*`` ini twins, grouped by concern."""
    group = parser.getgroup(MEASURING, "overheadbench: measuring (@pytest.mark.overhead, transport)")
    add_flags(group, parser, [*MEASURING_FLAGS, *knob_flags()])
    add_flags(parser.getgroup(REPORTS, "overheadbench: reports", after=MEASURING), parser, REPORT_FLAGS)


GATE_FLAGS = (
    Flag(
        "--overhead-against",
        "measure every pair on this tree and on another in the same session, interleaved, and gate the "
        "change: a git revision (e.g. origin/main; checked out as a temporary worktree) or a checkout's folder "
        "(implies --overhead)",
        metavar="REV|DIR",
    ),
    Flag(
        "--overhead-against-python",
        "the interpreter that runs the base tree's replicas (a virtual environment where the base is "
        "installed; default: this one)",
        metavar="PATH",
    ),
    Flag(
        "--overhead-env",
        "measure every pair under this interpreter too (a virtual environment with other dependency versions "
        "or another Python, where pytest, overheadbench and the project are installed; tox:ENV for a tox "
        "environment), interleaved with this one, and gate each environment's change (repeatable; implies "
        "--overhead)",
        metavar="[NAME=]PYTHON",
        action="append",
        ini="overhead_envs",
        ini_help="environments to measure every pair under too, one [NAME=]PYTHON per line",
        ini_type="linelist",
    ),
    Flag(
        "--overhead-save",
        "store this run as NNNN_NAME.json in the storage folder (never replacing a file; implies --overhead)",
        metavar="NAME",
    ),
    Flag("--overhead-autosave", "store this run, named after the git commit (implies --overhead)", action="store_true"),
    Flag(
        "--overhead-storage",
        "folder of stored runs (default: baselines/ under the rootdir)",
        metavar="PATH",
        ini="overhead_storage",
        ini_help="folder of stored runs (default: baselines/)",
    ),
    Flag(
        "--overhead-machine",
        "store and read runs under NAME instead of this machine's fingerprint (a runner fleet: one label, "
        "several CPU models; each run keeps its fingerprint, and history pools them)",
        metavar="NAME",
        ini="overhead_machine",
        ini_help="the machine name stored runs go under (default: this machine's fingerprint)",
    ),
    Flag(
        "--overhead-link",
        "with --overhead-autosave: measure the newest stored run's commit on this branch beside this tree, "
        "interleaved, and store each figure's change over it with the run (history reads the change, which "
        "the runner's load and CPU model do not move)",
        action="store_true",
    ),
    Flag(
        "--overhead-compare",
        "compare each pair with a stored run: its name, number or path (default: the newest; implies --overhead)",
        metavar="NAME",
        nargs="?",
        const="",
    ),
    Flag(
        "--overhead-fail-above",
        f"fail a test whose change against the base tree, another environment or the stored run grew by "
        f"more than PCT percent with confidence: a pair's framework / baseline, a transport figure; "
        f"{HELP_EXAMPLE} (implies --overhead)",
        metavar="PCT",
    ),
    Flag(
        "--overhead-compare-unknown",
        "what a change whose interval contains the --overhead-fail-above threshold does: warn (default) or fail",
        metavar="warn|fail",
        ini="overhead_compare_unknown",
        ini_help="see --overhead-compare-unknown (default warn)",
    ),
    *(Flag(old, "", metavar="PCT", hidden=True) for old in REPLACED),
    Flag(
        "--overhead-compare-force",
        "let --overhead-fail-above gate against a run stored by another machine",
        action="store_true",
    ),
)
"""The gate's options (a base tree, environments, stored runs), in ``--help`` order."""


def add_gate_options(group: pytest.OptionGroup, parser: pytest.Parser) -> None:
    add_flags(group, parser, GATE_FLAGS)
