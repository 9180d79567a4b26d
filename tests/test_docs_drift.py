"""Each class of drift between the pages and the code fails here (tests/test_docs.py checks the
command lines and the options table): defaults and versions stated in prose, the marker
keyword tables, signatures quoted in the pages, Python blocks that must compile and use only
names they define or import, the README's example and the output pasted from a real run of it,
relative links and their anchors, ``--help`` as rendered, and the CI templates for users.

Figures about this machine are not checked here: they live in docs/results.md and
docs/validation.md, each with the command that made it."""

from __future__ import annotations

import ast
import inspect
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import overheadbench
from overheadbench.cli import build_parser
from overheadbench.core.keywords import keyword_table, names
from overheadbench.engine.settings import QUICK, QUICK_AGAINST, Settings
from overheadbench.http.loadrun import Target, load
from overheadbench.http.server import Server, start_server
from overheadbench.pairs.fixture import OverheadFixture
from overheadbench.pairs.marker import KEYWORDS
from overheadbench.pairs.outcome import HARNESS_WARN_SHARE
from overheadbench.store.runs import SCHEMA_VERSION
from overheadbench.transport.across import PLACE_ROUNDS, QUICK_PLACE_ROUNDS
from overheadbench.transport.fixture import QUICK_STREAM_RUNS, STREAM_RUNS, TransportFixture
from overheadbench.transport.limits import MARKER_KEYWORDS
from overheadbench.transport.recording import PAIR_ROUNDS, QUICK_PAIR_ROUNDS

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))]


def prose(name: str) -> str:
    """A page with its whitespace collapsed, so a stated fact may wrap anywhere."""
    path = ROOT / name if (ROOT / name).exists() else DOCS / name
    return " ".join(path.read_text(encoding="utf-8").split())


def number(value: float) -> str:
    return f"{value:g}"


S = Settings()
FACTS: list[tuple[str, str, tuple[float, ...]]] = [
    ("README.md", r"in (\d+) fresh processes, and reports", (S.processes,)),
    (
        "index.md",
        r"measures a pair in (\d+) fresh processes, then (\d+) more per round while its interval is wider than "
        r"±(\d+)% of the ratio, up to (\d+), within ([\d.]+) s of measuring",
        (S.processes, S.extra_processes, 100 * S.target_halfwidth, S.max_processes, S.time_budget_s),
    ),
    (
        "index.md",
        r"`--overhead-quick` measures (\d+) processes \((\d+) per place .{0,80}?\) for ([\d.]+) s and aims at ±(\d+)%",
        (QUICK["processes"], QUICK_AGAINST["processes"], QUICK["time_budget_s"], 100 * QUICK["target_halfwidth"]),
    ),
    (
        "measurement.md",
        r"`overhead_processes` \(default (\d+)\) and gets (\d+) more per round while the interval is wider than "
        r"±(\d+)% of the ratio, up to (\d+)",
        (S.processes, S.extra_processes, 100 * S.target_halfwidth, S.max_processes),
    ),
    ("replicas.md", r"`overhead_processes` \(default \*\*(\d+)\*\*\)", (S.processes,)),
    (
        "replicas.md",
        r"wider than ±(\d+)% of the ratio and fewer than (\d+) have measured, (\d+) more do",
        (100 * S.target_halfwidth, S.max_processes, S.extra_processes),
    ),
    (
        "deciding.md",
        r"default profile: (\d+) processes, (\d+) s of measuring per pair; - `--overhead-quick`: (\d+) processes, "
        r"([\d.]+) s per pair",
        (S.processes, S.time_budget_s, QUICK["processes"], QUICK["time_budget_s"]),
    ),
    ("validation.md", r"\((\d+) s by default, ([\d.]+) s quick\)", (S.time_budget_s, QUICK["time_budget_s"])),
    (
        "ci.md",
        r"The quick profile \((\d+) processes, (\d+) per tree under `--overhead-against`, ([\d.]+) s of measuring",
        (QUICK["processes"], QUICK_AGAINST["processes"], QUICK["time_budget_s"]),
    ),
    ("transport.md", r"the pair time budget \((\d+) s, ([\d.]+) s quick\)", (S.time_budget_s, QUICK["time_budget_s"])),
    (
        "transport.md",
        r"`rounds` windows of each side \(default (\d+); (\d+) in the quick profile\)",
        (PAIR_ROUNDS, QUICK_PAIR_ROUNDS),
    ),
    (
        "transport.md",
        r"the stream `runs` times \((\d+); (\d+) in the quick profile\)",
        (STREAM_RUNS, QUICK_STREAM_RUNS),
    ),
    ("transport.md", r"\((\d+) rounds; (\d+) under `--overhead-quick`\)", (PLACE_ROUNDS, QUICK_PLACE_ROUNDS)),
    (
        "transport.md",
        r"`figures\[i\]\.places`: `name`, `role`, `change`, `gated`, `control`; schema (\d+)\)",
        (SCHEMA_VERSION,),
    ),
    ("baselines.md", r"`schema_version` \((\d+)\)", (SCHEMA_VERSION,)),
    ("index.md", r"gathering costs more than (\d+)% of the baseline's time per call", (100 * HARNESS_WARN_SHARE,)),
    ("counting.md", r"runs are schema (\d+) now", (SCHEMA_VERSION,)),
]


@pytest.mark.parametrize(("page", "pattern", "expected"), FACTS, ids=[f"{p}: {e}" for p, _, e in FACTS])
def test_defaults_stated_in_prose_are_the_codes(page: str, pattern: str, expected: tuple[float, ...]) -> None:
    found = re.search(pattern, prose(page))
    assert found is not None, f"{page} no longer states this fact; update FACTS with the new wording: {pattern}"
    assert found.groups() == tuple(number(value) for value in expected), page


def test_the_version_is_one_and_the_changelog_names_it() -> None:
    assert re.search(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(), re.M).group(1) == overheadbench.__version__  # type: ignore[union-attr]
    assert 'dynamic = ["version"]' in (ROOT / "pyproject.toml").read_text()


def test_the_keyword_tables_come_from_the_markers_definitions() -> None:
    assert keyword_table(KEYWORDS) in (DOCS / "index.md").read_text()
    budgets = (DOCS / "transport.md").read_text().split("## The budgets", 1)[1].split("\n\n", 2)[1]
    documented = re.findall(r"^\| `(\w+)[`=]", budgets, re.M) + re.findall(r"^\| `\w+`, `(\w+)`", budgets, re.M)
    documented += re.findall(r"^\| `\w+`, `\w+`, `(\w+)`", budgets, re.M)
    assert sorted(set(documented)) == sorted(names(MARKER_KEYWORDS))


# what a name in the pages' signatures stands for
CALLABLES: dict[str, Callable[..., Any]] = {
    "overhead.compare": OverheadFixture.compare,
    "overhead.acompare": OverheadFixture.acompare,
    "overheadbench.http.loadrun.load": load,
    "overheadbench.http.loadrun.Target": Target,
    "overheadbench.http.start_server": start_server,
    "server.close": Server.close,
    **{
        f"transport.{name}": getattr(TransportFixture, name)
        for name in (
            "load",
            "sweep",
            "stream",
            "astream",
            "record",
            "compare",
            "acompare",
            "acompare_streams",
            "aevents",
        )
    },
}
SIGNATURE = re.compile(r"`(?:await )?([\w.]+)\(([^`]*)\)`")


def quoted_signatures() -> list[tuple[str, str, str]]:
    found = []
    for page in PAGES:
        for name, params in SIGNATURE.findall(" ".join(page.read_text(encoding="utf-8").split())):
            if name in CALLABLES and params and params != "...":
                found.append((page.name, name, params))
    return found


QUOTED = quoted_signatures()


def test_the_pages_quote_signatures_at_all() -> None:
    assert len(QUOTED) >= 8


@pytest.mark.parametrize(("page", "name", "params"), QUOTED, ids=[f"{p}: {n}" for p, n, _ in QUOTED])
def test_signatures_quoted_in_the_pages_are_the_real_ones(page: str, name: str, params: str) -> None:
    """Each keyword shown is a parameter (or passed on by ``**``), each default shown is the real
    one, and a quote that lists keywords without ``...`` or ``**`` lists every real keyword."""
    signature = inspect.signature(CALLABLES[name])
    real = {p.name: p for p in signature.parameters.values() if p.name != "self"}
    passes_on = any(p.kind == p.VAR_KEYWORD for p in real.values())
    shown = [part.strip() for part in re.split(r",(?![^()\[\]{}]*[)\]}])", params) if part.strip()]
    for part in shown:
        key, _, default = part.partition("=")
        key = key.strip()
        if key in ("...", "**budgets", "**options") or not key.isidentifier():
            continue
        assert key in real or passes_on, f"{page}: {name}({key}=...): no such parameter"
        if key in real and default.strip() not in ("", "..."):
            try:
                value = ast.literal_eval(default.strip())
            except (ValueError, SyntaxError):
                continue
            assert value == real[key].default, (
                f"{page}: {name}({key}={default}) but the default is {real[key].default!r}"
            )
    named = {part.partition("=")[0].strip() for part in shown}
    # a signature, not an example call: every keyword shown is a named parameter, nothing elided
    complete = "..." not in params and "**" not in params and all(key in real for key in named if key.isidentifier())
    keywords = {name for name, p in real.items() if p.kind == p.KEYWORD_ONLY}
    if complete:
        missing = keywords - named
        assert not missing, f"{page}: {name}(...) leaves out {sorted(missing)}"


def python_blocks() -> list[tuple[str, str]]:
    """Every ```python block of the pages not marked ``<!-- fragment -->`` on the line before it."""
    blocks = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        start = None
        for number_, line in enumerate(lines):
            if start is None and line.strip() == "```python":
                start = number_
            elif start is not None and line.startswith("```"):
                if not (start and lines[start - 1].strip() == "<!-- fragment -->"):
                    blocks.append((f"{page.name}:{start + 1}", "\n".join(lines[start + 1 : number_]) + "\n"))
                start = None
    return blocks


BLOCKS = python_blocks()


@pytest.mark.parametrize(("where", "code"), BLOCKS, ids=[where for where, _ in BLOCKS])
def test_every_python_block_compiles_and_defines_what_it_uses(where: str, code: str, tmp_path: Path) -> None:
    compile(code, where, "exec")
    block = tmp_path / "block.py"
    block.write_text(code)
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or "ruff"
    checked = subprocess.run(
        [ruff, "check", "--isolated", "--no-cache", "--select", "F821,F811", "--output-format", "concise", str(block)],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, f"{where}: {checked.stdout}"


EXAMPLE = DOCS / "examples" / "test_readme.py"
OUTPUT = DOCS / "examples" / "test_readme.out"


def test_the_readme_shows_its_example_and_the_output_of_a_real_run_of_it() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"```python\n{EXAMPLE.read_text()}```" in readme
    output = OUTPUT.read_text(encoding="utf-8")
    assert f"```\n{output}```" in readme
    tests = re.findall(r"^def (test_\w+)", EXAMPLE.read_text(), re.M)
    assert tests and all(re.search(rf"^  {test} ", output, re.M) for test in tests)
    assert "1 failed, 1 passed" in output  # the example shows a pass and, on purpose, a failure


def test_the_readme_example_runs_as_a_plain_test_file(pytester: pytest.Pytester) -> None:
    """Without --overhead each side is called once: the example is a working test file."""
    pytester.makepyfile(test_layers=EXAMPLE.read_text())
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


LINK = re.compile(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)")


def anchors(path: Path) -> set[str]:
    """GitHub's anchors for a page's headings."""
    found = set()
    for heading in re.findall(r"^#+ (.*)$", path.read_text(encoding="utf-8"), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        found.add(slug)
    return found


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for target, anchor in LINK.findall(page.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path = (page.parent / target).resolve() if target else page
        if not path.exists():
            broken.append(f"{target} (missing)")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}#{anchor} (no such heading)")
    assert not broken, f"{page.name}: {broken}"


def test_pytest_help_renders_in_its_groups() -> None:
    shown = subprocess.run([sys.executable, "-m", "pytest", "--help"], capture_output=True, text=True, cwd=ROOT)
    assert shown.returncode == 0, shown.stderr[-2000:]
    text = shown.stdout
    for group in ("overheadbench: measuring", "overheadbench: reports", "overheadbench: regression gate"):
        assert group in text
    ours = text[text.index("overheadbench: measuring") : text.index("overheadbench: regression gate") + 3000]
    assert "%(" not in ours and "{'" not in ours and "OVERHEAD_" not in ours  # no argparse leftovers, a metavar each
    for retired in ("--overhead-target", "--overhead-max-processes", "--overhead-compare-fail"):
        assert retired not in ours


@pytest.mark.parametrize("command", [[], ["compare"], ["report"], ["plot"]])
def test_overheadbench_help_renders(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args([*command, "--help"])
    assert exited.value.code == 0
    assert "%(" not in capsys.readouterr().out
