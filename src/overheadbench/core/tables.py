"""Text tables for the terminal and markdown: escaping, padding, and test names that fit.

Every report table (pairs, transport rows, budgets, comparisons) names a test in its first
column, and node ids are long: ``benchmarks/test_under_concurrency.py::test_x[c=64-retry-sync]``.
Cutting them to fit a terminal lost the end that tells rows apart (the parameters), so the
suite's table showed the same 24 characters on nine rows. Here a table's rows are grouped under
their file, written once as a heading, each row names the test by what follows the file, and a
name longer than its column's room gets a line of its own, its cells on the next: never cut,
and the table fits ``TERMINAL_WIDTH`` whatever the names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

TERMINAL_WIDTH = 120
INDENT = "  "
"""Rows under a file heading are indented by this much."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
"""An ``@`` that GitHub would read as the start of a mention (of a user or a team)."""
_CONTROL_IN_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def plain(text: str, lines: bool = False) -> str:
    """``text`` with every control character (escape codes, newlines, tabs, bidirectional
    overrides) written as an escape: names and messages can come from a stored file or a test
    id, and must not drive the terminal, reorder what is shown, or break a row. ``lines``: a
    message of several lines (a test's failure, a warning), whose newlines and tabs stay."""
    pattern = _CONTROL_IN_LINES if lines else _CONTROL
    return pattern.sub(lambda match: match.group().encode("unicode_escape").decode(), text)


def plain_warning(warning: Warning) -> Warning:
    """The same warning, its message :func:`plain` and fitted as a warning's (its text names a test)."""
    return type(warning)(fitted(plain(str(warning), lines=True), WARNING_WIDTH))


MESSAGE_WIDTH = 96
"""A message's lines at most this wide, paths and test ids not counted (a failure, a warning, a usage error):
under what pytest puts before them (``E       ``, ``  file.py:12: OverheadMarkerWarning: ``) a line stays
within ``TERMINAL_WIDTH``, where single lines of 200-517 characters ran before."""
NAME = re.compile(
    r"\S*(?:/|::|<locals>|<lambda>|\.(?:py|json|md|html|csv|folded|svg|png|txt|toml|ini|cfg)\b)\S*"
    r"|\w+(?:\.\w+){2,}:?|\w+\[\S*\]"
)
"""A path, a test id, a file name, a function's or a module's qualified name in a line: its length is the
user's (or pytest's, ``overheadbench.core.errors.OverheadPairWarning:``), so a line is not measured by it."""
WARNING_WIDTH = 88
"""A warning's lines: pytest writes ``  file.py:12: OverheadInconclusiveWarning: `` before its first."""


def shown_length(line: str) -> int:
    """A line's length as a terminal line's limit reads it: its paths, test ids and file names not counted."""
    return len(NAME.sub("", line))


def fitted(text: str, width: int = MESSAGE_WIDTH) -> str:
    """``text`` with each line longer than ``width`` (:func:`shown_length`) wrapped at its spaces (a path or a
    name is never cut), each continuation indented two spaces past its line's own indent."""
    lines = []
    for line in text.split("\n"):
        indent = line[: len(line) - len(line.lstrip(" "))]
        lead, current = indent, ""
        for word in line[len(indent) :].split(" "):
            joined = f"{current} {word}" if current else word
            if current and shown_length(lead + joined) > width:
                lines.append(lead + current)
                lead, current = f"{indent}  ", word
            else:
                current = joined
        lines.append(lead + current)
    return "\n".join(lines)


def said(text: str, width: int = MESSAGE_WIDTH) -> str:
    """A message as the terminal shows it: :func:`plain` over its lines, each line :func:`fitted` (``width``:
    a line the plugin writes itself has nothing before it, and may take the terminal's)."""
    return fitted(plain(text, lines=True), width)


def markdown_cell(text: str) -> str:
    """``text`` safe inside a markdown table cell of a report a pull request shows: :func:`plain`,
    pipes escaped, HTML written as text (a docstring's ``<img src=...>`` or ``<details>`` must not
    render: every ``<`` as ``&lt;``), and an ``@name`` kept from mentioning anyone (a zero-width
    space after the ``@``)."""
    text = _in_cell(text).replace("<", "&lt;")  # no tag can open: the "->" of our own cells stays as it is
    return _MENTION.sub("@\u200b", text)


def markdown_code(text: str) -> str:
    """``text`` as inline code in a table cell (as plain text if it holds a backtick, which would end the span);
    a code span shows HTML and ``@`` as they are, and renders neither."""
    return markdown_cell(text) if "`" in text else f"`{_in_cell(text)}`"


def _in_cell(text: str) -> str:
    return plain(text).replace("|", "\\|")


def markdown_table(rows: Sequence[Sequence[str]], code_first: bool = True) -> list[str]:
    """Rows (the first is the header) as a markdown table; the first column as code (test ids)
    unless ``code_first`` is false."""
    header, *body = rows
    lines = ["|" + "|".join(f" {cell} " if cell else " " for cell in header) + "|", "|" + "---|" * len(header)]
    first = markdown_code if code_first else markdown_cell
    for row in body:
        lines.append("| " + " | ".join([first(row[0]), *map(markdown_cell, row[1:])]) + " |")
    return lines


def split_nodeid(nodeid: str) -> tuple[str, str]:
    """``("dir/test_x.py", "test_y[a-b]")``; an id without ``::`` has no file."""
    file, separator, rest = nodeid.partition("::")
    return (file, rest) if separator else ("", nodeid)


def by_file(nodeids: Sequence[str]) -> dict[str, list[int]]:
    """The indexes of ``nodeids`` grouped by file, files in order of first appearance."""
    groups: dict[str, list[int]] = {}
    for index, nodeid in enumerate(nodeids):
        groups.setdefault(split_nodeid(nodeid)[0], []).append(index)
    return groups


def _named(nodeids: Sequence[str]) -> list[tuple[str | None, str]]:
    """For rows of one file, in order: a heading to write before the row (or None) and the
    row's name. Consecutive rows of one parametrized function share the function as a heading
    and are named by their parameters; a row of the same test as the row above is unnamed."""
    rests = [split_nodeid(nodeid)[1] for nodeid in nodeids]
    functions = [rest.partition("[")[0] for rest in rests]
    named: list[tuple[str | None, str]] = []
    for index, (rest, function) in enumerate(zip(rests, functions, strict=True)):
        params = rest[len(function) :]
        neighbours = functions[max(index - 1, 0) : index] + functions[index + 1 : index + 2]
        shared = bool(params) and function in neighbours
        first = index == 0 or functions[index - 1] != function
        heading = INDENT + function if shared and first else None
        repeated = index > 0 and rests[index - 1] == rest
        named.append((heading, "" if repeated else (2 * INDENT + params if shared else INDENT + rest)))
    return named


def _labelled(named: list[tuple[str | None, str]], labels: Sequence[str]) -> list[tuple[list[str], str]]:
    """Rows named by a label within their test (a transport row, a budget's figure): the test's
    name becomes a heading of its own, written once, and the row is named by its label, one level
    deeper."""
    rows: list[tuple[list[str], str]] = []
    depth = INDENT
    for (heading, name), label in zip(named, labels, strict=True):
        if name:
            depth = name[: len(name) - len(name.lstrip())] + INDENT
        rows.append(([line for line in (heading, name) if line], depth + label))
    return rows


def laid_out(rows: Sequence[Sequence[str]], width: int = TERMINAL_WIDTH, labelled: bool = False) -> list[str]:
    """A table whose first column holds test node ids (plain text), as lines at most ``width``
    wide: the header and a rule, then per file a heading line and its rows (see :func:`_named`); a
    name longer than the room left by the other columns stands on its own line, its cells on the
    next; columns that do not fit beside each other continue on further lines, indented
    (:func:`_chunked`: a change table with each side's time per call ran to 150 characters).
    ``labelled``: the second column names the row within its test (see :func:`_labelled`): a label
    as long as ``gateway vs upstream c=10 [framework] · app (http1)`` made a column of its own 76
    characters wide, and the table 159."""
    header, *body = rows
    if labelled:
        header = (f"{header[0]} / {header[1]}", *header[2:])
    first = 2 if labelled else 1
    cells = [header[1:], *(row[first:] for row in body)]
    widths = [max(len(row[column]) for row in cells) for column in range(len(header) - 1)]
    chunks = _chunked(widths, width - len(header[0]) - 2)
    groups = []
    for file, indexes in by_file([row[0] for row in body]).items():
        named = _named([body[i][0] for i in indexes])
        entries = (
            _labelled(named, [body[i][1] for i in indexes])
            if labelled
            else [([heading] if heading else [], name) for heading, name in named]
        )
        groups.append((file, entries, indexes))
    room = width - sum(widths[i] + 2 for i in chunks[0])
    names = [len(name) for _, entries, _ in groups for _, name in entries]
    name_width = max([len(header[0]), *(length for length in names if length <= room)])

    def line(name: str, cells: Sequence[str], fill: str = " ") -> list[str]:
        def padded(chunk: Sequence[int]) -> list[str]:
            return [cells[i].ljust(widths[i], fill) for i in chunk]

        found = ["  ".join([name.ljust(name_width, fill), *padded(chunks[0])]).rstrip()]
        return found + [(CONTINUED + "  ".join(padded(chunk))).rstrip() for chunk in chunks[1:]]

    lines = [*line(header[0], header[1:]), *line("", [""] * len(widths), "-")]
    for file, entries, indexes in groups:
        lines += [file] if file else []
        for (headings, name), index in zip(entries, indexes, strict=True):
            lines += headings
            row = body[index][first:]
            lines += [name, *line("", row)] if len(name) > name_width else line(name, row)
    return lines


CONTINUED = " " * 8
"""Where a row's columns that did not fit beside the others go on, one line down."""


def _chunked(widths: Sequence[int], width: int) -> list[list[int]]:
    """The columns (by index) as groups that each fit ``width`` beside each other (two spaces apart): one
    group where they all do, else the first group beside the names and each next one on a line of its own."""
    chunks: list[list[int]] = [[]]
    used = 0
    for index, column in enumerate(widths):
        if chunks[-1] and used + column + 2 > width - len(CONTINUED):
            chunks.append([])
            used = 0
        chunks[-1].append(index)
        used += column + 2
    return chunks if sum(widths) + 2 * len(widths) > width else [list(range(len(widths)))]
