"""The pairs in the markdown report: the environment, one table per group of pairs with each
pair's status (the gate's where it failed the pair), the scaling by callers and what the budgets
are for. The cells and notes are the terminal table's (:mod:`overheadbench.report.pairs`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from ..core.tables import markdown_cell, markdown_table
from ..engine.checks import Status
from ..pairs.results import OverheadResult
from .pairs import column_cell, footnotes, interval_notes, scaling_rows, shown_columns

MARKDOWN_STATUS = {
    Status.PASS: "✅",
    Status.FAIL: "❌",
    Status.INCONCLUSIVE: "⚠ inconclusive",
    Status.UNJUDGED: "— (not judged)",
    Status.UNMEASURED: "— (not measured)",
}
GATE_FAILED = "❌ regressed"


def environment_lines(env: dict[str, Any]) -> list[str]:
    """The environment as a two-column markdown table (Python, OS, CPU, commit, packages, date)."""
    machine, commit = env.get("machine_info") or {}, env.get("commit_info") or {}
    cpu = (machine.get("cpu") or {}).get("brand_raw") or machine.get("processor") or "?"
    packages = ", ".join(f"{name} {version}" for name, version in (env.get("packages") or {}).items() if version)
    rows = [
        ("Python", f"{machine.get('python_implementation', '?')} {machine.get('python_version', '?')}"),
        ("OS", f"{machine.get('system', '?')} {machine.get('release', '')} {machine.get('machine', '')}".strip()),
        ("CPU", f"{cpu} ({env.get('cpu_count', '?')} cores)"),
        (
            "Commit",
            f"{commit.get('id', '?')}{' (dirty)' if commit.get('dirty') else ''} on {commit.get('branch', '?')}",
        ),
        ("Packages", packages or "?"),
        ("Date", str(env.get("datetime", "?"))),
    ]
    return markdown_table([("", ""), *rows], code_first=False)


def markdown_pairs(
    results: Sequence[OverheadResult], env: dict[str, Any], regressed: Collection[str] = ()
) -> list[str]:
    """The environment, one table per group of pairs, the scaling by callers, and the notes
    (:func:`overheadbench.report.markdown.render_markdown` adds the rest). ``regressed``: the
    pairs the gate failed, whose status says so whatever their budget said."""
    lines = [*environment_lines(env)]
    groups: dict[str | None, list[OverheadResult]] = {}
    for result in results:
        groups.setdefault(result.pair.group, []).append(result)
    for group, members in groups.items():
        columns = shown_columns(members)
        rows = [("Test", *(c.markdown for c in columns), "Status")]
        rows += [(r.nodeid, *(column_cell(c, r) for c in columns), _status(r, regressed)) for r in members]
        lines += ["", f"## {markdown_cell(group or 'Ungrouped')}", "", *markdown_table(rows)]
    scaling = scaling_rows(results)
    if scaling:
        lines += ["", "## Overhead by concurrent callers", "", *markdown_table(scaling)]
    notes = [*interval_notes(results), *footnotes(results)]
    if notes:
        lines += ["", *(f"_{note}_" + ("  " if index < len(notes) - 1 else "") for index, note in enumerate(notes))]
    return lines


def _status(result: OverheadResult, regressed: Collection[str]) -> str:
    """A pair's markdown status: its verdict's, or the gate's where the gate failed it (a ✅ beside a
    test that failed as regressed misled its reviewer)."""
    return GATE_FAILED if result.nodeid in regressed else MARKDOWN_STATUS[result.verdict]


def markdown_purposes(purposes: dict[str, str]) -> str:
    """What each measured test's budget is for (its docstring's first paragraph), one row per
    test function: a report is read by people who did not write the budgets."""
    if not purposes:
        return ""
    rows = [("Test", "What its budget is for"), *sorted(purposes.items())]
    return "\n".join(["## What the budgets are for", "", *markdown_table(rows)]) + "\n"
