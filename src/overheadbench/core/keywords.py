"""A marker's keywords, defined once: the names it accepts, the line ``pytest --markers``
prints and the table the docs show all come from one tuple of :class:`Keyword` (the docs'
table is checked against :func:`keyword_table` by tests/test_docs.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Keyword:
    name: str
    meaning: str
    """What it sets, in plain text with ``code`` in backticks (markdown and terminal alike)."""


def names(keywords: Sequence[Keyword]) -> tuple[str, ...]:
    return tuple(keyword.name for keyword in keywords)


def marker_help(marker: str, summary: str, keywords: Sequence[Keyword]) -> str:
    """The ``markers`` ini line: the signature, what the marker does, then each keyword."""
    signature = ", ".join(f"{keyword.name}=None" for keyword in keywords)
    described = "; ".join(f"{keyword.name}: {keyword.meaning}" for keyword in keywords)
    return f"{marker}({signature}): {summary}. {described}"


def keyword_table(keywords: Sequence[Keyword]) -> str:
    """The docs' markdown table of the keywords."""
    rows = [f"| `{keyword.name}` | {keyword.meaning} |" for keyword in keywords]
    return "\n".join(["| keyword | meaning |", "|---|---|", *rows])
