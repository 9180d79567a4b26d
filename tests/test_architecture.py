"""The house rules, checked on every run: the package's layers, import floors, no cycles, module sizes.

The package's folders are layers (docs/index.md, "Layout"): a module imports only from its own
folder and the folders below it, never upward; the modules at the top (the plugin, the options,
the outcome, the CLI) may import any of them. ``http`` is a wing: it stands on ``core`` alone,
so a server or load-worker process imports nothing of the engine.

A module's floor is 1 + the highest floor among the package modules it imports (relative or
absolute, typing-only imports included); a cycle would have no floor at all.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "src" / "overheadbench"
MAX_FLOORS = 7
MAX_LINES = 300
LAYERS = (
    "core",
    "http",
    "engine",
    "instruments",
    "replicas",
    "pairs",
    "transport",
    "store",
    "history",
    "report",
    "commands",
)
"""The folders, lowest first."""


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


MODULES = _modules()


def imports(name: str) -> set[str]:
    """The package modules ``name`` imports."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            found.update(c for c in (target, *(f"{target}.{a.name}" for a in node.names)) if c in MODULES)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in MODULES)
    return found - {name}


_FLOORS: dict[str, int] = {}


def floor(name: str, seen: tuple[str, ...] = ()) -> int:
    """Memoised by name alone (memoised by the path walked too, it took 25 s); ``seen`` names a cycle."""
    if name in _FLOORS:
        return _FLOORS[name]
    assert name not in seen, f"import cycle: {' -> '.join((*seen, name))}"
    _FLOORS[name] = found = 1 + max((floor(other, (*seen, name)) for other in imports(name)), default=0)
    return found


ENTRY = "overheadbench.plugin"
"""pytest's entry point: it registers the session (:mod:`overheadbench.session`) and sits alone
above the package's seven floors."""
MAX_ENTRY_IMPORTS = 20


COMMAND_LINE = "overheadbench.cli"
"""The shell's entry point: it parses and dispatches to the commands (``commands/``), and sits
alone above the seven floors too."""


def test_the_package_has_at_most_seven_floors_and_no_cycle() -> None:
    floors = {name: floor(name) for name in MODULES if name not in (ENTRY, COMMAND_LINE)}
    assert max(floors.values()) <= MAX_FLOORS, sorted(floors.items(), key=lambda item: -item[1])[:5]
    assert floor(ENTRY) <= MAX_FLOORS + 1 and floor(COMMAND_LINE) <= MAX_FLOORS + 1


def test_the_entry_point_is_thin() -> None:
    """plugin.py imported 37 modules and held the session and both measured kinds; it registers them."""
    assert len(imports(ENTRY)) <= MAX_ENTRY_IMPORTS, sorted(imports(ENTRY))
    assert "overheadbench.session" in imports(ENTRY)


KINDS = {"overheadbench.pairs.kind": "PairKind", "overheadbench.transport.kind": "TransportKind"}
"""Each measured kind, in its own folder: its marker, fixture, judgement and what it carries."""


def test_each_measured_kind_lives_in_its_folder_and_implements_the_kind_whole() -> None:
    """A pair's budget went ``pairs/`` -> ``pair_tests.py`` -> ``outcome.py`` -> the session's fixture
    method and back; each kind is one folder now, the session knows neither, and the generic
    decision (``decide``, the gate's effect) sits below both."""
    for module, name in KINDS.items():
        tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
        (found,) = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == name]
        methods = {node.name for node in found.body if isinstance(node, ast.FunctionDef)}
        assert {"fixture", "apply", "carried"} <= methods, (module, methods)
        # it judges its tests and puts what it kept on their reports in its own hooks: a pair's
        # result went through the measurer's hooks, which knew every kind
        assert [base.id for base in found.bases if isinstance(base, ast.Name)] == ["KindHooks"], module
        folder = module.rsplit(".", 1)[0]
        assert f"{folder}.outcome" in imports(module), module  # its outcome beside it
        assert "overheadbench.engine.outcome" in imports(f"{folder}.outcome")
    for name in MODULES:
        if name.startswith("overheadbench.report."):
            continue  # the reporter reads the kinds' report attributes
        assert not {"overheadbench.pairs.kind", "overheadbench.transport.kind"} & imports(name) or name in (
            "overheadbench.session",
            "overheadbench.measurer",
        ), name
    measurer = MODULES["overheadbench.measurer"].read_text(encoding="utf-8")
    assert "MeasuredKind" in measurer
    assert ".apply(" not in measurer and "pytest_runtest_makereport" not in measurer


MAX_SESSION_IMPORTS = 20
MAX_FUNCTION_LINES = 60
MAX_CLASS_LINES = 250


def test_the_session_is_a_composition_root_of_two_plugins() -> None:
    """session.py imported 35 modules and its one class held 7 roles; it assembles the measuring
    plugin now, by named functions (no closures), and the entry point registers it and the
    reporting plugin."""
    assert len(imports("overheadbench.session")) <= MAX_SESSION_IMPORTS, sorted(imports("overheadbench.session"))
    tree = ast.parse(MODULES["overheadbench.session"].read_text(encoding="utf-8"))
    nested = [
        inner.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        for inner in ast.walk(node)
        if inner is not node and isinstance(inner, (ast.FunctionDef, ast.Lambda)) and not isinstance(inner, ast.Lambda)
    ]
    assert not nested and not [node for node in tree.body if isinstance(node, ast.ClassDef)], nested
    assert "overheadbench.measurer" in imports("overheadbench.session")
    assert {"overheadbench.session", "overheadbench.report.reporter"} <= imports(ENTRY)  # registers both


def test_no_function_is_over_60_lines_and_no_class_over_250() -> None:
    long = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            size = (node.end_lineno or node.lineno) - node.lineno + 1 if hasattr(node, "end_lineno") else 0
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and size > MAX_FUNCTION_LINES:
                long.append(f"{name}.{node.name}: {size}")
            elif isinstance(node, ast.ClassDef) and size > MAX_CLASS_LINES:
                long.append(f"{name}.{node.name}: {size}")
    assert not long, long


COMMANDS = [name for name in MODULES if name.startswith("overheadbench.commands.")] + ["overheadbench.cli"]


def test_the_plugin_and_the_cli_judge_a_change_by_the_one_regression_check() -> None:
    """The CLI had its own regression rule, without the unknown policy the session has, and its own
    sentence; both read ``Gate.fails`` and say ``gate_sentence``."""
    for name in ("overheadbench.engine.outcome", "overheadbench.commands.compare"):
        text = MODULES[name].read_text(encoding="utf-8")
        assert ".fails(" in text and ".unknown ==" not in text, name  # the policy is read in one place
        assert "gate_sentence(" in text, name
    assert all("more than {" not in MODULES[name].read_text(encoding="utf-8") for name in COMMANDS)  # said once
    assert "def fails(" in MODULES["overheadbench.engine.changes"].read_text(encoding="utf-8")


MODE_HOMES = {"overheadbench.engine.settings", "overheadbench.pairs.strategy"}
"""Where a mode may be tested: the enum (what a mode is: ``counted``, ``unit``) and the strategy's factory."""


def mode_tests(name: str) -> list[int]:
    """Lines of ``name`` that compare something with a ``Mode.`` member (a default is not a test)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        and any(
            isinstance(side, ast.Attribute) and isinstance(side.value, ast.Name) and side.value.id == "Mode"
            for side in (node.left, *node.comparators)
        )
    ]


def test_no_mode_is_tested_outside_the_strategy_and_the_enum() -> None:
    """``Mode.COUNT``/``Mode.TIME`` was tested 26 times in 10 files: the fixture chose its instruments,
    plans and result by the mode, and reports and checks chose their words by it."""
    tested = {name: lines for name in MODULES if name not in MODE_HOMES and (lines := mode_tests(name))}
    assert not tested, tested
    assert mode_tests("overheadbench.pairs.strategy"), "the factory chooses by the mode"
    fixture = MODULES["overheadbench.pairs.fixture"].read_text(encoding="utf-8")
    assert "Mode" not in fixture and "isinstance" not in fixture


def test_numbers_are_parsed_and_ranges_checked_in_one_place() -> None:
    """Two number parsers (a marker's, a transport budget's) and the processes' and confidence's
    ranges checked once for options and once for markers, in two wordings."""
    for name in ("core.flags", "pairs.marker", "core.thresholds", "transport.metrics"):
        assert "overheadbench.core.numbers" in imports(f"overheadbench.{name}"), name
    for name, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        if name != "overheadbench.core.numbers":
            assert "<= MAX_PROCESSES" not in text and "<= MAX_CONCURRENCY" not in text, name
            assert "0 < value < 1" not in text, name


def test_a_replica_is_reached_through_its_channel() -> None:
    """``ReplicaPool._start`` hard-coded three ``os.pipe``s and ``pass_fds``: a place kind that starts
    replicas elsewhere brings a :class:`~overheadbench.replicas.channel.Channel` instead."""
    replicas = {name: path.read_text(encoding="utf-8") for name, path in MODULES.items() if ".replicas." in name}
    opened = {name for name, text in replicas.items() if "os.pipe(" in text or "pass_fds" in text}
    assert opened == {"overheadbench.replicas.channel"}, opened
    assert "channel" in MODULES["overheadbench.replicas.pool"].read_text(encoding="utf-8")


def layer(name: str) -> int:
    """A module's layer: its folder's place in ``LAYERS`` (a top-level module: above them all)."""
    parts = name.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 2 or parts[1:] and parts[1] in LAYERS else len(LAYERS)


ROOMS = {"report": {"terminal", "files", "page"}}
"""Folders within a layer: report/'s three rooms (what the terminal, the files and the page show, over
report/'s shared cells)."""


def test_every_module_sits_in_a_layer_folder_or_at_the_top() -> None:
    folders = {path.parent.relative_to(PACKAGE) for path in PACKAGE.rglob("__init__.py") if path.parent != PACKAGE}
    rooms = {Path(layer, room) for layer, found in ROOMS.items() for room in found}
    assert folders == {Path(layer) for layer in LAYERS} | rooms
    top = sorted(name for name, path in MODULES.items() if name.count(".") == 1 and path.name != "__init__.py")
    assert top == [
        f"overheadbench.{name}"
        for name in (
            "cli",
            "gate_options",
            "hookspecs",
            "measurer",
            "option_table",
            "options",
            "plugin",
            "session",
        )
    ]


def test_no_folder_imports_from_a_folder_above_it() -> None:
    upward = sorted(
        f"{name} -> {other}" for name in MODULES for other in imports(name) if layer(other) > layer(name) < len(LAYERS)
    )
    assert not upward, upward
    wing = {other for name in MODULES if layer(name) == LAYERS.index("http") for other in imports(name)}
    assert {LAYERS[layer(other)] for other in wing} <= {"core", "http"}, sorted(wing)


def test_the_engine_and_the_model_sit_low() -> None:
    assert floor("overheadbench.engine.calibration") <= 3 and floor("overheadbench.pairs.pair") <= 3
    assert floor("overheadbench.engine.sampling") <= 4  # it drives calibration, then samples
    assert "overheadbench.options" not in imports("overheadbench.engine.sampling")


LARGER = {"overheadbench.pairs.results": 340}
"""The one module past ``MAX_LINES``, and its own bound: a pair's result model (28 fields, their JSON both
ways, each kind's reading), which imports floor-3 modules and is imported from floor 5 up, so a module
it imported would put an eighth floor on the graph; what could leave it did (the pair's own JSON, a
report's cell)."""


def test_no_module_is_over_300_lines() -> None:
    """16 modules were over 300 lines (``engine/samples`` 386, ``engine/attribution`` 376, ``http/load`` 374...);
    each was split by concept, the new module sitting below its old one or beside it."""
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in MODULES.items()}
    over = {name: size for name, size in sizes.items() if size > LARGER.get(name, MAX_LINES)}
    assert over == {}
    assert all(sizes[name] > MAX_LINES for name in LARGER)  # an exception no longer needed goes


def test_only_the_worktree_home_runs_git_worktree() -> None:
    """A checked-out tree has one home (replicas/trees.py's ``Worktree``): the gate's base tree, bisect,
    ``--confirm`` and ``--measure`` each had their own checkout and clean-up at death."""
    running = [
        name
        for name, path in MODULES.items()
        if re.search(r"""["']worktree["']""", path.read_text(encoding="utf-8"))
        and name != "overheadbench.replicas.trees"
    ]
    assert running == []


BOTH_KINDS = {"overheadbench", "overheadbench.session", "overheadbench.store.runs"}
"""The modules that may import both kinds: the public API, the composition root that builds each
kind, and the run (the document that holds both kinds' results and reads itself)."""


def _kind(name: str) -> str | None:
    folder = name.split(".")[1] if name.count(".") else ""
    return folder if folder in ("pairs", "transport") else None


def test_only_the_roots_and_the_run_import_both_kinds() -> None:
    """11 modules imported both kinds: the index knew how each kind became a reading, the stored-run
    gate, the terminal, markdown and the page each branched on both. Each kind gives its own readings,
    its own side of the stored-run gate and its own report sections; the readers read a run."""
    both = {
        name
        for name in MODULES
        if _kind(name) is None and {_kind(other) for other in imports(name)} >= {"pairs", "transport"}
    }
    assert both <= BOTH_KINDS, sorted(both - BOTH_KINDS)


GATE_AT_PLACES = {"threshold", "Looks", "GateRounds", "Finding", "finding"}
"""What reading the gate at the session's other places takes: its threshold, its looks, its rule
for the rounds, a change's finding."""


def test_only_the_place_gate_reads_the_pairs_threshold() -> None:
    """The threshold of the gate at the other places had two carriers (``Gate``, ``Looks``) and was
    read in six modules of ``pairs/`` (stopping, the strategy, comparing, the verdict, the explainer,
    the outcome): ``pairs/across.py`` holds it and they ask its ``PlaceGate``."""
    reading = {}
    for name, path in MODULES.items():
        if not name.startswith("overheadbench.pairs.") or name == "overheadbench.pairs.across":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        used |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        used |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
        if used & GATE_AT_PLACES:
            reading[name] = sorted(used & GATE_AT_PLACES)
    assert reading == {}
