"""The markdown report of a run: what ``--overhead-md`` writes, the GitHub step summary and
``overheadbench report RUN`` print, composed from each part's own section.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.thresholds import UNGATED, Thresholds
from ..pairs.results import OverheadResult
from ..transport.figures import FigureResult
from .budgets import markdown_budgets
from .changes import markdown_figure_places, markdown_places
from .pairs import markdown_pairs, markdown_purposes
from .transport import markdown_figures


def render_markdown(
    results: Sequence[OverheadResult],
    env: dict[str, Any],
    figures: Sequence[FigureResult] = (),
    purposes: dict[str, str] | None = None,
    thresholds: Thresholds = UNGATED,
) -> str:
    """A report in the style of published benchmark baselines: the environment, one table per
    group of pairs, the pairs' change at every other place of the session (the base tree of
    ``--overhead-against``, each ``--overhead-env``; gated at ``thresholds``), the transport
    tables, every judged budget, and what the budgets are for.
    Ready for a PR comment or a CI step summary."""
    parts = (
        markdown_places(results, thresholds.pairs),
        markdown_figure_places(figures, thresholds.transport),
        markdown_figures(figures),
        markdown_budgets(results, figures),
        markdown_purposes(purposes or {}),
    )
    return "\n".join(markdown_pairs(results, env)) + "\n" + "".join(f"\n{part}" for part in parts if part)
