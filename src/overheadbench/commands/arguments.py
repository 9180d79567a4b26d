"""What every command's arguments share: argparse's sub-parsers, ``--fail-above`` read as the
session's ``--overhead-fail-above`` reads it, and a plain percent."""

from __future__ import annotations

import argparse
from typing import Any

from ..core.numbers import parse_number
from ..core.thresholds import Thresholds, parse_thresholds

Commands = Any
"""argparse's sub-parsers action (its type is private)."""


def thresholds(text: str) -> Thresholds:
    """``--fail-above``, as ``--overhead-fail-above`` takes it (:mod:`overheadbench.core.thresholds`)."""
    try:
        return parse_thresholds(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def percent(text: str) -> float:
    """A threshold in percent, finite and not below 0 (``nan`` and ``inf`` turned a gate off)."""
    try:
        return parse_number(text, minimum=0.0)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
