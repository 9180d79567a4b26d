"""The page: one self-contained HTML file of a run (and of its history), what ``--overhead-html``
and ``overheadbench html`` write.

What it shows, in this order: the verdict (failed, inconclusive, regressed, unknown, then the
rest), each pair's overhead and interval against its budget (:mod:`.forest`), the changes against
the session's other places and the stored run with the gate's thresholds, the history of each
figure with its change points (:mod:`.trends`), the transport figures, and where each explained
overhead goes as a differential flame graph of whole stacks (:mod:`.flame`).

Why one file with nothing outside it: it is opened as a CI artifact, from a ``file://`` URL and on
GitHub/GitLab Pages, often where nothing else can be fetched; so the style and the script are
inlined, no font, image or script is loaded, and every figure and verdict is in the HTML itself
(the script only adds zoom, search and keyboard use to the flame graphs).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import replace
from importlib import resources

from ...engine.attribution import Explanation
from ...engine.changes import Change
from ...engine.checks import Overall, Status
from ...history.timeline import ChangePoint, History
from ...store.runs import Run
from ...transport.results import FigureResult
from ..pair_changes import places_of
from ..pairs import environment_rows, overhead_cell
from ..transport import NOTE as TRANSPORT_NOTE, transport_tables
from .explained import explanation_article
from .forest import Forest, ForestRow, render_forest
from .svg import anchor, esc, name
from .trends import history_section

PAGE_ORDER = (
    Overall.FAIL,
    Overall.INCONCLUSIVE,
    Overall.REGRESSED,
    Overall.UNKNOWN,
    Overall.UNJUDGED,
    Overall.PASS,
    Overall.UNMEASURED,
)
"""The verdict's order: what a reviewer must act on first."""
OUTCOME_WORDS = {
    Overall.FAIL: "failed",
    Overall.INCONCLUSIVE: "inconclusive",
    Overall.REGRESSED: "regressed",
    Overall.UNKNOWN: "unknown (gate)",
    Overall.UNJUDGED: "not judged",
    Overall.PASS: "passed",
    Overall.UNMEASURED: "not measured",
}


def render_page(run: Run, history: History | None = None, title: str = "Overhead report") -> str:
    """The page of ``run`` and of ``history`` (None: no trends)."""
    ordered = replace(run, results=sorted(run.results, key=lambda r: PAGE_ORDER.index(r.overall)))
    sections = [_verdict(ordered, history)]
    if ordered.results:
        sections += [_pairs(ordered), _changes(ordered), _explained(ordered)]
    if history is not None and history.ordered:
        sections.append(history_section(history))
    if run.figures:
        sections.append(_transport(run))
    return _document(title, _environment(run), [section for section in sections if section])


def _document(title: str, environment: str, sections: Sequence[str]) -> str:
    assets = resources.files("overheadbench.report.page")
    style = assets.joinpath("page.css").read_text(encoding="utf-8")
    script = assets.joinpath("page.js").read_text(encoding="utf-8")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        f"script-src '{script_hash(script)}'; img-src data:\">"
        f"<title>{esc(title)}</title><style>{style}</style></head>"
        f"<body><header><h1>{esc(title)}</h1>{environment}</header><main>{''.join(sections)}</main>"
        f"<script>{script}</script></body></html>\n"
    )


def script_hash(script: str) -> str:
    """The page's policy admits its own script by this hash alone, never inline script as such: one
    escaping slip in a name from a file then cannot run."""
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()


def _environment(run: Run) -> str:
    rows = "".join(
        f'<tr><th scope="row">{esc(what)}</th><td>{esc(which)}</td></tr>'
        for what, which in environment_rows(run.environment)
    )
    return f'<details class="environment"><summary>Where it ran</summary><table>{rows}</table></details>'


def _verdict(run: Run, history: History | None) -> str:
    results, figures = run.results, run.figures
    counts = [(outcome, sum(r.overall == outcome for r in results)) for outcome in PAGE_ORDER]
    said = ", ".join(f"{count} {OUTCOME_WORDS[outcome]}" for outcome, count in counts if count)
    broken = [figure for figure in figures if figure.verdict in (Status.FAIL, Status.INCONCLUSIVE)]
    regressions = [
        p for p in (history.change_points if history else ()) if p.regression and not p.accepted and not p.pending
    ]
    items = _verdict_items(run, broken, regressions)
    head = f'<p class="headline">{esc(said or "nothing measured")} of {len(results)} pairs'
    judged = [figure for figure in figures if figure.verdict != Status.UNJUDGED and figure.measured]
    head += f"; {len(judged) - len(broken)} of {len(judged)} judged transport figures passed" if judged else ""
    head += f"; {len(regressions)} regressions in the history" if history is not None else ""
    listed = (
        f'<ol class="verdict-list">{"".join(items)}</ol>'
        if items
        else "<p>Every measured pair is within its budget.</p>"
    )
    return f'<section id="verdict"><h2>Verdict</h2>{head}.</p>{listed}</section>'


def _verdict_items(run: Run, broken: Sequence[FigureResult], regressions: Sequence[ChangePoint]) -> list[str]:
    """The verdict's list: what failed the job first (a warning once came before the failure that
    failed it), then pairs, figures and the history's regressions as they come."""
    explained = {nodeid: anchor("explain", nodeid + what) for nodeid, what, _ in reversed(_explanations(run))}
    why = _why(run)
    listed = []
    for result in run.results:
        if result.overall in (Overall.PASS, Overall.UNMEASURED):
            continue
        where = f' (<a href="#{explained[result.nodeid]}">where it goes</a>)' if result.nodeid in explained else ""
        link = f'<a href="#{anchor("pair", result.nodeid)}">{name(result.nodeid)}</a>'
        outcome = f'<span class="outcome">{esc(OUTCOME_WORDS[result.overall])}</span>'
        line = f"{link} {outcome}: {why[result.nodeid]}{where}"
        listed.append((not result.test_failed, f'<li class="{result.overall.value}">{line}</li>'))
    for figure in broken:
        outcome = f'<span class="outcome">{esc(figure.verdict.value)}</span>'
        line = f"{name(figure.nodeid)} {name(figure.row, code=False)} {outcome}: {esc(figure.message)}"
        listed.append((figure.verdict != Status.FAIL, f'<li class="{figure.verdict.value}">{line}</li>'))
    for point in regressions:
        link = f'<a href="#{anchor("trend", f"{point.test} {point.figure}")}">{name(point.test)}</a>'
        step = f'<span class="outcome">{esc(point.shift.kind.value)} regressed</span> {100 * point.shift.change:+.1f}%'
        commit = f'<code class="commit">{esc(point.after_commit.short)}</code>'
        line = f"{link} {step} at {commit} {name(point.after_commit.subject, code=False)}"
        listed.append((True, f'<li class="regressed">{line}</li>'))
    return [item for _, item in sorted(listed, key=lambda found: found[0])]


def _why(run: Run) -> dict[str, str]:
    """Why each pair would be listed, as HTML: a gated change (against each place and the stored run,
    each named in isolation), or its budget's message's first line."""
    said = {}
    for result in run.results:
        changes = [
            (_against(place.role.place_side(place.name)), place.change) for place in result.places if place.change
        ]
        changes += [(_stored(result.stored.run), result.stored.change)] if result.stored else []
        text = (result.message or "").strip()
        said[result.nodeid] = (
            "; ".join(f"{where}: {change.percent:+.1f}% ({esc(change.evidence)})" for where, change in changes)
            if result.overall in (Overall.REGRESSED, Overall.UNKNOWN)
            else esc(text.splitlines()[0])
            if text
            else ""
        )
    return said


def _against(side: str) -> str:
    """A place's side (``base main``), its name isolated."""
    role, _, place = side.partition(" ")
    return f"{esc(role)} {name(place, code=False)}" if place else name(side, code=False)


def _stored(run: str) -> str:
    return f"stored run {name(run, code=False)}"


def _pairs(run: Run) -> str:
    rows = []
    for result in run.results:
        limit = result.pair.budget.max_overhead
        cells = (
            name(result.nodeid),
            esc(overhead_cell(result)),
            esc(result.pair.budget.describe(result.mode)),
            f'<span class="outcome">{esc(OUTCOME_WORDS[result.overall])}</span>',
        )
        low, high = result.ci
        rows.append(
            ForestRow(
                anchor("pair", result.nodeid),
                cells,
                1 + result.overhead,
                1 + low,
                1 + high,
                1 + limit if limit is not None else None,
                result.overall.value,
            )
        )
    forest = Forest(
        "Each pair's overhead with its 95% interval; its budget is the red mark",
        ("Test", "Overhead (95% CI)", "Budget", "Outcome"),
        tuple(rows),
    )
    return f'<section id="pairs"><h2>Pairs</h2>{render_forest(forest)}</section>'


def _changes(run: Run) -> str:
    results, gate, rows = run.results, run.gate.pairs, []
    for where, measured in places_of(results):
        for result, place in measured:
            if place.change is not None:
                side = place.role.place_side(where)
                rows.append(_change_row(result.nodeid, (side, _against(side)), place.change, gate))
    for result in results:
        if result.stored is not None:
            stored = (f"stored run {result.stored.run}", _stored(result.stored.run))
            rows.append(_change_row(result.nodeid, stored, result.stored.change, gate))
    if not rows:
        return ""
    across = ((1 + gate / 100, f"gate +{gate:g}%"), (1 - gate / 100, f"gate -{gate:g}%")) if gate is not None else ()
    forest = Forest(
        "Each change against the session's other places and the stored run, with its interval as the gate read it"
        + (f"; the gate's threshold (±{gate:g}%) is the dashed line" if gate is not None else ""),
        ("Test", "Against", "Change (95% CI)", "Outcome"),
        tuple(rows),
        across,
        "change",
    )
    return f'<section id="changes"><h2>Changes</h2>{render_forest(forest)}</section>'


def _change_row(nodeid: str, against: tuple[str, str], change: Change, gate: float | None) -> ForestRow:
    """A change's row (``against``: where, as text and as HTML): its own outcome at the gate's threshold
    (the pair's budget outcome read "pass" where the terminal and the comment said "same"); without a
    threshold, whether it is significant."""
    low, high = change.interval
    css = change.finding(gate).value if gate is not None else "changed" if change.significant else "not significant"
    cells = (
        name(nodeid),
        against[1],
        esc(f"{change.percent:+.1f}% ({change.evidence})"),
        f'<span class="outcome">{esc(css)}</span>',
    )
    return ForestRow(
        anchor("change", f"{nodeid} {against[0]}"),
        cells,
        change.new / change.old,
        1 + low / 100,
        1 + high / 100,
        None,
        css,
    )


def _explanations(run: Run) -> list[tuple[str, str, Explanation]]:
    """Each explanation of the page (test, what it explains, it): for each test, what each change
    between places added first (why a regressed pair is read), then where its own overhead goes."""
    found = []
    for result in run.results:
        for place in result.places:
            if place.explain is not None:
                old, new = place.sides
                found.append((result.nodeid, f"what the change added ({new} less {old})", place.explain))
        if result.explain is not None:
            found.append((result.nodeid, "where the overhead goes", result.explain))
    return found


def _explained(run: Run) -> str:
    parts = [explanation_article(nodeid, what, explanation) for nodeid, what, explanation in _explanations(run)]
    if not parts:
        return ""
    return f'<section id="explained"><h2>Where the overhead goes</h2>{"".join(parts)}</section>'


def _transport(run: Run) -> str:
    tables = [f"<h3>{esc(title)}</h3>{_table(rows)}" for title, rows in transport_tables(run.figures)]
    note = f'<p class="note">{esc(TRANSPORT_NOTE)}</p>'
    return f'<section id="transport"><h2>Transport</h2>{"".join(tables)}{note}</section>'


def _table(rows: Sequence[Sequence[str]]) -> str:
    """A figures table, each test's id once beside its rows (``rowspan``)."""
    header, *body = rows
    head = "".join(f'<th scope="col">{esc(cell)}</th>' for cell in header)
    lines = []
    for index, row in enumerate(body):
        first = ""
        if index == 0 or body[index - 1][0] != row[0]:
            span = next((n for n, later in enumerate(body[index:]) if later[0] != row[0]), len(body) - index)
            first = f'<th scope="rowgroup" rowspan="{span}">{name(row[0])}</th>'
        lines.append("<tr>" + first + "".join(f"<td>{esc(cell)}</td>" for cell in row[1:]) + "</tr>")
    return f'<table class="figures"><thead><tr>{head}</tr></thead><tbody>{"".join(lines)}</tbody></table>'
