"""Command-line options declared once, each with its ini twin where it has one.

Why: ``addoption`` then ``addini`` with a help that repeats the option's, again and again, in two
modules (the measuring and report options, the gate's): a table of :class:`Flag` and one
:func:`add_flags` say each once, as pytest-memray's ``value_or_ini`` reads them once.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest


@dataclass(frozen=True)
class Flag:
    """One ``--overhead-*`` option: how it reads, its help, and its ini twin (``ini``), if any."""

    name: str
    help: str
    metavar: str | None = None
    action: str | None = None
    """``store_true`` (a switch) or ``append`` (repeatable); None: one value."""
    nargs: str | None = None
    const: Any = None
    ini: str | None = None
    """The ini file's key for the same setting (None: the command line only)."""
    ini_help: str | None = None
    """The ini key's help (default: a pointer to the option's)."""
    ini_type: str | None = None
    hidden: bool = False
    """Kept working (a replaced spelling) but out of ``--help``."""


def add_flags(group: pytest.OptionGroup, parser: pytest.Parser, flags: Sequence[Flag]) -> None:
    """Register each flag in ``group`` and its ini twin in ``parser``."""
    for flag in flags:
        kwargs: dict[str, Any] = {"default": False if flag.action == "store_true" else None}
        if flag.action is not None:
            kwargs["action"] = flag.action
        if flag.metavar is not None:
            kwargs["metavar"] = flag.metavar
        if flag.nargs is not None:
            kwargs.update(nargs=flag.nargs, const=flag.const)
        group.addoption(flag.name, help=argparse.SUPPRESS if flag.hidden else flag.help, **kwargs)
        if flag.ini is not None:
            ini_kwargs: dict[str, Any] = {"type": flag.ini_type} if flag.ini_type else {"default": None}
            parser.addini(flag.ini, flag.ini_help or f"see {flag.name}", **ini_kwargs)
