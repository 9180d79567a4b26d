"""The validation scripts (``validation/``) stay runnable: each one's ``--help`` runs here, and
every file there is a script so tested or a helper the scripts import, as pyperf's suite guards
its examples. mypy type-checks their bodies against ``src/`` (pyproject.toml); a rename broke two
of them silently before (``gate.py`` read a ``Change`` that had lost three attributes)."""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest's own dependency
    import tomli as tomllib
import tomllib

ROOT = Path(__file__).parent.parent
VALIDATION = ROOT / "validation"
HELPERS = {"harness", "pairs"}
"""Modules the scripts import (no ``--help`` of their own)."""
SCRIPTS = sorted(path.stem for path in VALIDATION.glob("*.py") if path.stem not in HELPERS)


def test_every_file_is_a_script_or_a_helper_and_every_one_is_type_checked() -> None:
    for name in SCRIPTS:
        assert 'if __name__ == "__main__":' in (VALIDATION / f"{name}.py").read_text(), f"{name}.py: not a script"
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert "validation" in config["files"]
    (overrides,) = [o for o in config["overrides"] if "harness" in o["module"]]
    assert sorted(overrides["module"]) == sorted([*SCRIPTS, *HELPERS])  # a new script is checked too


@pytest.mark.parametrize("name", SCRIPTS)
def test_each_validation_script_says_how_it_is_run(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(VALIDATION))
    monkeypatch.setattr(sys, "argv", [f"{name}.py", "--help"])
    for module in [*HELPERS, *SCRIPTS]:  # each script imports its siblings afresh
        monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(SystemExit) as ended:
        runpy.run_path(str(VALIDATION / f"{name}.py"), run_name="__main__")
    assert ended.value.code in (0, None)
    said = capsys.readouterr().out
    assert re.match(r"usage: ", said), said[:300]
