"""An option's path that pytest took for a test path (``--overhead-json /ci/out.json``, written
with a space): said at configure time, with the ``=`` form that keeps the rootdir."""

from __future__ import annotations

import itertools
import os
import shlex
from pathlib import Path

import pytest


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
