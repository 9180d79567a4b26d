"""Where each explained pair's overhead goes, and what each explained change between places added, as
the markdown report and the job summary show them, and as the terminal shows a passing pair's (a
failing or inconclusive pair's, and a gated change's, are in its failure or warning)."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.tables import markdown_cell, markdown_code, markdown_table, plain
from ..engine.attribution import Explanation
from ..engine.checks import Overall, Status
from ..pairs.results import OverheadResult


def markdown_explanations(results: Sequence[OverheadResult]) -> str:
    """A section per explained pair, and one per explained change at another place: each function's
    share of the added cost and what it adds per call, most first; what the figures are under it.
    Names are code spans, written as they are (``with_retry.<locals>.wrapped``): CommonMark decodes no
    entity inside one, so an escaped ``&lt;`` showed as written."""
    explained = [(markdown_code(r.nodeid), r.explain) for r in results if r.explain is not None]
    for result in results:
        for place in result.places:
            if place.explain is not None:
                where = markdown_cell(place.role.section(place.name))
                explained.append((f"{where}: {markdown_code(result.nodeid)}, what the change added", place.explain))
    if not explained:
        return ""
    lines = ["## Where the overhead goes"]
    for title, explanation in explained:
        lines += ["", f"### {title}", "", *markdown_table(_rows(explanation))]
        modules = ", ".join(f"{module} {share:.0%}" for module, share in explanation.modules())
        lines += ["", f"By module: {markdown_cell(modules)}." if modules else "No function adds cost."]
        lines += ["", f"_{explanation.kind}; net {explanation.per_call(explanation.net)}/call; {explanation.note}_"]
    return "\n".join(lines) + "\n"


def _rows(explanation: Explanation) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = [("Function", "Share", "Added per call")]
    for row in explanation.rows:
        rows.append((row.where, f"{row.share:.0%}", explanation.per_call(row.added)))  # a code span: as written
    if explanation.rest:
        rows.append(("(the rest)", f"{explanation.rest:.0%}", ""))
    return rows


WHERE_IT_GOES = {
    Overall.PASS: "overhead: where it goes, in the pairs that passed",
    Overall.REGRESSED: "overhead: where it goes, in the pairs within their budgets whose change regressed",
    Overall.UNKNOWN: "overhead: where it goes, in the pairs within their budgets whose change the gate cannot tell",
}
"""The terminal's heading of each outcome's explained pairs whose budgets passed: a pair whose test failed on the
gate was once listed among the pairs "within their budgets" alone."""


def passing_explanations(results: Sequence[OverheadResult]) -> list[tuple[str, list[str]]]:
    """The terminal's sections (heading, lines) of the explained pairs within their budgets
    (``--overhead-explain``), under the heading of each one's own outcome: its test id, then its top
    functions as a failure quotes them."""
    sections: dict[str, list[str]] = {}
    for result in results:
        if result.explain is not None and result.verdict == Status.PASS:
            heading = WHERE_IT_GOES.get(result.overall, WHERE_IT_GOES[Overall.PASS])
            told = [plain(result.nodeid), *(f"  {line}" for line in result.explain.told().splitlines())]
            sections.setdefault(heading, []).extend(told)
    return [(heading, sections[heading]) for heading in WHERE_IT_GOES.values() if heading in sections]
