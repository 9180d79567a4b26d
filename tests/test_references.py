"""Every ``overheadbench.…`` name the docstrings and the docs mention is defined.

A name that moved leaves its old spelling behind in prose, where nothing imports it; this
resolves each one (``:class:`~overheadbench.replicas.pool.Replicas```, ``overheadbench.http.load``
in a page) to a module, or to a name defined in one.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
REFERENCE = re.compile(r"\boverheadbench(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
RELATIVE = re.compile(r":(?:mod|class|func|meth|attr):`~?(\.[A-Za-z_][\w.]*)`")
"""A docstring's role with a name relative to its module (``:mod:`.settings```)."""
SOURCES = sorted((ROOT / "src" / "overheadbench").rglob("*.py"))
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def resolves(name: str) -> bool:
    """Whether ``name`` is a module of the package, or a name one of its modules defines (a
    class's attribute too: ``overheadbench.http.recorder.Recorder.worker``)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def references(path: Path) -> set[str]:
    """The names ``path`` mentions, a source file's relative ones as seen from its package (or
    from the module itself: ``:meth:`.judged``` in the module that defines it)."""
    text = path.read_text(encoding="utf-8")
    names = {match.rstrip(".") for match in REFERENCE.findall(text)}
    if path.suffix == ".py":
        module = ".".join(path.relative_to(ROOT / "src").with_suffix("").parts).removesuffix(".__init__")
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for relative in RELATIVE.findall(text):
            near = [f"{package}{relative}", f"{module}{relative}"]
            names.add(next((name for name in near if resolves(name)), near[0]))
    return names


@pytest.mark.parametrize("path", SOURCES + PAGES, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_name_mentioned_is_defined(path: Path) -> None:
    missing = sorted(name for name in references(path) if not resolves(name))
    assert not missing, f"{path.relative_to(ROOT)} names what is not defined: {missing}"


def test_a_moved_name_is_caught() -> None:
    assert resolves("overheadbench.http.recorder.Recorder") and resolves("overheadbench.engine.checks")
    assert not resolves("overheadbench.replicas.pool.Replicas") and not resolves("overheadbench.nowhere")
