"""The markdown report of a run: what ``--overhead-md`` writes, the GitHub step summary and
``overheadbench report RUN`` print, composed from each part's own section.
"""

from __future__ import annotations

from ...core.tables import markdown_cell, markdown_table
from ...engine.checks import Overall
from ...store.runs import Run
from ..budgets import markdown_budgets
from ..explanations import markdown_explanations
from ..pair_changes import markdown_gate, markdown_places, markdown_stored
from ..pair_notes import interval_notes
from ..pairs import column_cell, environment_lines, footnotes, scaling_rows, shown_columns
from ..transport import markdown_figure_places, markdown_figures

MARKDOWN_STATUS = {
    Overall.PASS: "✅",
    Overall.FAIL: "❌",
    Overall.REGRESSED: "❌ regressed",
    Overall.UNKNOWN: "⚠ unknown (gate)",
    Overall.INCONCLUSIVE: "⚠ inconclusive",
    Overall.UNJUDGED: "— (not judged)",
    Overall.UNMEASURED: "— (not measured)",
}
"""A pair's status: its one outcome (a ✅ beside a test the gate failed misled its reviewer)."""
COMMENT_CHARACTERS = 60_000
"""What a folded report keeps (a GitHub comment holds 65,536 characters)."""
FOLDED_SUMMARY = "Every pair, where the overhead goes, transport figures and budgets"
CUT = "_(cut here: a comment holds no more; the whole report is in the run's artifact)_"


def render_markdown(run: Run, purposes: dict[str, str] | None = None, folded: bool = False) -> str:
    """A report of ``run`` in the style of published benchmark baselines: under a gate, its outcome
    first (counted, the failed pairs named) and the pairs' changes at every other place of the session
    (the base tree of ``--overhead-against``, each ``--overhead-env``; gated at the run's thresholds);
    then the environment, one table per group of pairs, the transport tables, every judged
    budget, and what the budgets are for. Ready for a PR comment or a CI step summary: what a
    reviewer decides on comes first. ``folded``: everything after the gate and the changes inside one
    ``<details>`` (a pull request's comment: short, the rest a click away), cut where a comment could
    not hold it."""
    results, figures, thresholds = run.results, run.figures, run.gate
    gated = thresholds.pairs
    regressed = [result.nodeid for result in results if result.overall == Overall.REGRESSED]
    first = (
        markdown_gate(results, gated) if gated is not None else "",
        markdown_places(results, gated),
        markdown_stored(results, gated),
        markdown_figure_places(figures, thresholds.transport),
    )
    rest = (
        markdown_explanations(results),
        markdown_figures(figures),
        markdown_budgets(results, figures, regressed=regressed),
        markdown_purposes(purposes or {}),
    )
    head = "# Overhead report\n" + "".join(f"\n{part}" for part in first if part)
    body = "\n".join(markdown_pairs(run)) + "\n" + "".join(f"\n{part}" for part in rest if part)
    if not folded:
        return head + "\n" + body
    if len(head) + len(body) > COMMENT_CHARACTERS:
        body = body[: max(0, COMMENT_CHARACTERS - len(head))].rsplit("\n", 1)[0] + f"\n\n{CUT}\n"
    return f"{head}\n<details><summary>{FOLDED_SUMMARY}</summary>\n\n{body}\n</details>\n"


def markdown_pairs(run: Run) -> list[str]:
    """The environment, one table per group of pairs (each pair's status its one outcome), the
    scaling by callers, and the notes (:func:`overheadbench.report.files.markdown.render_markdown` adds the rest)."""
    results, lines = run.results, [*environment_lines(run.environment)]
    for group in dict.fromkeys(result.pair.group for result in results):  # in the order first met
        members = [result for result in results if result.pair.group == group]
        columns = shown_columns(members)
        rows = [("Test", *(c.markdown for c in columns), "Status")]
        rows += [(r.nodeid, *(column_cell(c, r) for c in columns), MARKDOWN_STATUS[r.overall]) for r in members]
        lines += ["", f"## {markdown_cell(group or 'Ungrouped')}", "", *markdown_table(rows)]
    scaling = scaling_rows(results)
    if scaling:
        lines += ["", "## Overhead by concurrent callers", "", *markdown_table(scaling)]
    notes = [*interval_notes(results), *footnotes(results)]
    if notes:
        lines += ["", *(f"_{note}_" + ("  " if index < len(notes) - 1 else "") for index, note in enumerate(notes))]
    return lines


def markdown_purposes(purposes: dict[str, str]) -> str:
    """What each measured test's budget is for (its docstring's first paragraph), one row per
    test function: a report is read by people who did not write the budgets."""
    if not purposes:
        return ""
    rows = [("Test", "What its budget is for"), *sorted(purposes.items())]
    return "\n".join(["## What the budgets are for", "", *markdown_table(rows)]) + "\n"
