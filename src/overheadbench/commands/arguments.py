"""What every command's arguments share: argparse's sub-parsers, and ``--fail-above`` read as the
session's ``--overhead-fail-above`` reads it."""

from __future__ import annotations

import argparse
from typing import Any

from ..core.thresholds import Thresholds, parse_thresholds

Commands = Any
"""argparse's sub-parsers action (its type is private)."""


def thresholds(text: str) -> Thresholds:
    """``--fail-above``, as ``--overhead-fail-above`` takes it (:mod:`overheadbench.core.thresholds`)."""
    try:
        return parse_thresholds(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
