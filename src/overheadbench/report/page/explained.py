"""One explanation on the page: where a pair's overhead goes, or what a change added, function by function, as
a table beside its flame graph (:mod:`.flame`), which the page's script lets a reader search and zoom.
"""

from __future__ import annotations

from ...engine.attribution import Explanation
from .flame import render_flame
from .svg import FUNCTION_BREAKS, anchor, esc, name


def explanation_article(nodeid: str, what: str, explanation: Explanation) -> str:
    """``explanation`` of ``nodeid`` (``what`` it explains) as an article: its flame graph, its rows."""
    rows = "".join(
        f"<tr><td>{name(row.where, breaks=FUNCTION_BREAKS)}</td><td>{row.share:.0%}</td>"
        f"<td>{esc(explanation.per_call(row.added))}</td></tr>"
        for row in explanation.rows
    )
    table = (
        f'<table class="rows"><caption>{esc(explanation.kind)}; '
        f"net {esc(explanation.per_call(explanation.net))}/call</caption>"
        '<thead><tr><th scope="col">Function</th><th scope="col">Share</th>'
        '<th scope="col">Added per call</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )
    flame = render_flame(explanation.stacks, f"flame graph: {nodeid}, {what}", explanation.per_call)
    tools = (
        '<div class="flame-tools" hidden><label>Search <input type="search" class="flame-search"></label> '
        '<button type="button" class="flame-reset">Reset zoom</button> <span class="flame-found"></span></div>'
    )
    graph = (
        f'<div class="flame-box">{tools}{flame}</div>' if flame else "<p>No stacks were kept for this explanation.</p>"
    )
    return (
        f'<article class="explanation" id="{anchor("explain", nodeid + what)}">'
        f"<h3>{name(nodeid)}: {esc(what)}</h3>"
        f'<div class="side-by-side">{graph}{table}</div></article>'
    )
