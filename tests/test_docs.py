"""The README and docs/ against the code: every command line they show parses (options that
exist, values they accept), the options table's defaults are the settings' defaults, every
option named anywhere exists, and the documented public API is exactly ``overheadbench.__all__``.

Docs drift one edit at a time; these catch the drift on the next run of the tests, not on a
new user's first try."""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import overheadbench
from overheadbench.cli import build_parser
from overheadbench.engine.settings import Settings, shown_default
from overheadbench.options import KNOBS

ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def shell_blocks(text: str) -> list[str]:
    """The contents of the page's ```bash (or unlabelled) code blocks, fences paired in order."""
    blocks, current, language = [], None, ""
    for line in text.splitlines():
        if line.startswith("```"):
            if current is None:
                current, language = [], line[3:].strip()
            else:
                if language in ("", "bash", "sh", "console"):
                    blocks.append("\n".join(current))
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def commands(program: str) -> list[tuple[str, list[str]]]:
    """Every ``program ...`` command in the pages' code blocks: (where, its arguments)."""
    found = []
    for page in PAGES:
        for block in shell_blocks(page.read_text(encoding="utf-8")):
            for line in block.replace("\\\n", " ").splitlines():
                for part in re.split(r"&&|;|\|", line.split(" #")[0]):
                    try:
                        words = shlex.split(part)
                    except ValueError:  # prose in a comment with an apostrophe, after the command
                        words = part.split()
                    synopsis = any(re.match(r"\[?[A-Z]{2,}", word) for word in words[1:])  # OLD NEW, RUN
                    if words and Path(words[0]).name == program and not synopsis:
                        found.append((f"{page.name}: {part.strip()}", words[1:]))
    return found


PYTEST_LINES = commands("pytest")
CLI_LINES = commands("overheadbench")


def test_the_pages_show_command_lines_at_all() -> None:
    assert len(PYTEST_LINES) > 15 and len(CLI_LINES) >= 3


@pytest.mark.parametrize(("where", "args"), PYTEST_LINES, ids=[where for where, _ in PYTEST_LINES])
@pytest.mark.every_plugin
def test_every_pytest_command_line_in_the_docs_parses(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, where: str, args: list[str]
) -> None:
    """Its options exist and take the values shown (checked as the session starts them)."""
    for path in ("docs", "benchmarks", "tests"):
        pytester.mkdir(path)
    if any(arg.startswith("--overhead-against") for arg in args):  # a repository with the base the docs name
        git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
        for command in (
            ["init", "-q"],
            ["commit", "-q", "--allow-empty", "-m", "base"],
            ["update-ref", "refs/remotes/origin/main", "HEAD"],
        ):
            subprocess.run([*git, *command], cwd=pytester.path, check=True, capture_output=True)
    for spec in (arg.partition("=")[2] for arg in args if arg.startswith("--overhead-env=")):
        interpreter(pytester, monkeypatch, spec.partition("=")[2] if "=" in spec else spec)
    try:
        pytester.parseconfigure(*args)
    except pytest.UsageError as exc:
        pytest.fail(f"{where}: {exc}")


def interpreter(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, spec: str) -> None:
    """The interpreter an ``--overhead-env`` of the docs names, made here: this one, started by a
    script at its path, or a tox on PATH that answers with this one for ``tox:ENV``."""
    if spec.startswith("tox:"):
        tox = pytester.path / "bin" / "tox"
        tox.parent.mkdir(exist_ok=True)
        tox.write_text(f"#!/bin/sh\necho 'env_python = {sys.executable}'\n")
        tox.chmod(0o755)
        monkeypatch.setenv("PATH", f"{tox.parent}{os.pathsep}{os.environ['PATH']}")
        return
    script = pytester.path / spec
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    script.chmod(0o755)


@pytest.mark.parametrize(("where", "args"), CLI_LINES, ids=[where for where, _ in CLI_LINES])
def test_every_overheadbench_command_line_in_the_docs_parses(where: str, args: list[str]) -> None:
    try:
        build_parser().parse_args(args)
    except SystemExit:
        pytest.fail(f"{where}: the overheadbench command refuses these arguments")


def test_every_option_the_pages_name_exists(pytester: pytest.Pytester) -> None:
    help_text = pytester.runpytest("--help").stdout.str()
    registered = set(re.findall(r"(--overhead[\w-]*)", help_text))
    named = {(page.name, option) for page in PAGES for option in re.findall(r"(--overhead[\w-]*\w)", page.read_text())}
    assert {f"{page}: {option}" for page, option in named if option not in registered} == set()


def test_the_options_tables_defaults_are_the_settings_defaults() -> None:
    table = (ROOT / "docs" / "index.md").read_text()
    defaults = Settings()
    for name, knob in KNOBS.items():
        row = re.search(rf"^\| `{knob.flag}[^`]*` \| `{knob.ini}` \| `([^`]*)` \|", table, re.M)
        if knob.replaced:
            assert row is None, f"docs/index.md lists {knob.flag}, deprecated"
            continue
        assert row is not None, f"docs/index.md has no row for {knob.flag}"
        assert row.group(1) == shown_default(name, getattr(defaults, name)), knob.flag


def test_the_documented_public_api_is_exactly_what_the_package_exports() -> None:
    text = (ROOT / "docs" / "index.md").read_text()
    paragraph = text[text.index("**Public API**") :].split("\n\n")[0].split("(e.g.")[0]
    documented = set(re.findall(r"`(\w+)`", paragraph))
    assert documented == set(overheadbench.__all__)
    for name in overheadbench.__all__:
        assert getattr(overheadbench, name) is not None


def test_the_public_names_type_checkers_read_are_the_ones_that_load() -> None:
    """The names are written once, in ``_HOMES``; the imports for type checkers must name the same
    names from the same modules, or a checker and the running code disagree."""
    tree = ast.parse(Path(overheadbench.__file__).read_text())
    guarded = next(node for node in tree.body if isinstance(node, ast.If))
    imported = {
        alias.name: node.module.removeprefix(".") if node.module else ""
        for node in guarded.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert imported == overheadbench._HOMES
    assert overheadbench.__all__ == sorted(overheadbench._HOMES)
