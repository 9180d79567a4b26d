"""The markdown report of a run: what ``--overhead-md`` writes, the GitHub step summary and
``overheadbench report RUN`` print, composed from each part's own section.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.thresholds import UNGATED, Thresholds
from ..engine.changes import Finding
from ..pairs.results import OverheadResult
from ..transport.figures import FigureResult
from .budgets import markdown_budgets
from .changes import gate_findings, markdown_figure_places, markdown_gate, markdown_places
from .pairs_markdown import markdown_pairs, markdown_purposes
from .transport import markdown_figures


def render_markdown(
    results: Sequence[OverheadResult],
    env: dict[str, Any],
    figures: Sequence[FigureResult] = (),
    purposes: dict[str, str] | None = None,
    thresholds: Thresholds = UNGATED,
) -> str:
    """A report in the style of published benchmark baselines: under a gate, its outcome first
    (counted, the failed pairs named) and the pairs' changes at every other place of the session
    (the base tree of ``--overhead-against``, each ``--overhead-env``; gated at ``thresholds``);
    then the environment, one table per group of pairs, the transport tables, every judged
    budget, and what the budgets are for. Ready for a PR comment or a CI step summary: what a
    reviewer decides on comes first."""
    gated = thresholds.pairs
    findings = gate_findings(results, gated) if gated is not None else {}
    regressed = [nodeid for nodeid, found in findings.items() if found == Finding.REGRESSED]
    first = (
        markdown_gate(results, gated) if gated is not None else "",
        markdown_places(results, gated),
        markdown_figure_places(figures, thresholds.transport),
    )
    rest = (
        markdown_figures(figures),
        markdown_budgets(results, figures, regressed=regressed),
        markdown_purposes(purposes or {}),
    )
    head = "# Overhead report\n" + "".join(f"\n{part}" for part in first if part)
    return (
        head
        + "\n"
        + "\n".join(markdown_pairs(results, env, regressed))
        + "\n"
        + "".join(f"\n{part}" for part in rest if part)
    )
