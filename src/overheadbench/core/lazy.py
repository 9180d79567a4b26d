"""Package attributes that import their module on first use (PEP 562).

Why: a server process imports ``overheadbench.http.apps``, which runs this package's
``__init__``; importing pytest, numpy and the engine there cost every server start ~0.3 s.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_attributes(package: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving ``name`` from submodule ``homes[name]`` of ``package``."""

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f".{homes[name]}", package), name)

    return __getattr__
