"""CSV that a spreadsheet opens as data: no cell read as a formula.

A run file is a CI artifact anyone can download, and its test names and groups are whatever the
tests were called: a parametrized id such as ``=HYPERLINK("http://...")`` or ``@SUM(A1)``,
written to ``overheadbench report --format csv`` as it was, became a live formula in the
spreadsheet that opened the report (CSV injection). A text cell that starts with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return is written with a leading ``'``, which spreadsheets read
as "this is text" and do not show; numbers stay numbers.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(value: Any) -> Any:
    """``value`` as a spreadsheet reads it as data: a text cell that would start a formula, quoted."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_text(rows: Iterable[Sequence[Any]]) -> str:
    """``rows`` as CSV text (one line per row), every cell through :func:`cell`."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([cell(value) for value in row] for row in rows)
    return buffer.getvalue()
