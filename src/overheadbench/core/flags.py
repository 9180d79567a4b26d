"""Command-line options declared once, each with its ini twin where it has one.

Why: ``addoption`` then ``addini`` with a help that repeats the option's, again and again, in two
modules (the measuring and report options, the gate's): a table of :class:`Flag` and one
:func:`add_flags` say each once, as pytest-memray's ``value_or_ini`` reads them once.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from .numbers import check_fraction, check_processes, parse_number
from .units import DurationError, parse_duration
from .vocabulary import MAX_PROCESSES, Word


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


# How a flag's or an ini key's text reads: each raises ValueError in words that name the mistake.


def process_count(text: str) -> int:
    """A number of processes, 1 to ``MAX_PROCESSES``."""
    try:
        value = int(text)
    except ValueError:  # int()'s own words ("invalid literal for int() with base 10") name neither
        raise ValueError(f"{text!r} is not a whole number of processes (1 to {MAX_PROCESSES})") from None
    return check_processes(value)


def fraction(text: str) -> float:
    """A fraction (0.25), finite."""
    return check_fraction(parse_number(text))


def choice(*allowed: str) -> Callable[[str], Any]:
    """A reader of one of ``allowed``."""

    def parse(text: str) -> str:
        if text not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return text

    return parse


def word(kind: type[Word]) -> Callable[[str], Any]:
    """One of an enum's words, as the enum (the settings hold :class:`Mode`, not its text)."""
    choose = choice(*kind)
    return lambda text: kind(choose(text))


def boolean(text: str) -> bool:
    """An ini or option switch: 1, true, yes, on (or 0, false, no, off), any case."""
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError("must be true or false")


def seconds(text: str) -> float:
    """A duration above zero (``2s``, ``500ms``), in seconds."""
    try:
        value = parse_duration(text)
    except DurationError as exc:
        raise ValueError(str(exc)) from None
    if value <= 0:
        raise ValueError("must be more than zero")
    return value
