"""What a transport test's figures do to it: each figure's verdict and each figure's change
(against the stored run, at every other place of the session), decided by the one rule
(:func:`overheadbench.engine.outcome.decide`); the transport fixture has no warnings of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.errors import OverheadChangeWarning
from ..engine.changes import Change, Gate
from ..engine.findings import Finding
from ..engine.outcome import Gated, Outcome, decide
from ..engine.settings import Policy
from .metrics import SPECS
from .results import FigureResult, compared_text


def figures_outcome(
    nodeid: str,
    figures: Sequence[FigureResult],
    policy: Policy,
    changes: Sequence[tuple[FigureResult, Change]] = (),
    gate: Gate | None = None,
) -> Outcome:
    """A transport test's outcome (:func:`decide`): each figure's verdict, and each figure's
    change against the stored run, or at every other place of the session (a pair's sides there
    are only shown), in percent of the figure."""
    placed = [(figure, place.change, place) for figure in figures for place in figure.places if place.gated]
    gated = []
    for figure, change, place in [*((figure, change, None) for figure, change in changes), *placed]:
        spec = SPECS[figure.metric]
        story = f"{spec.what} {change.describe((compared_text(figure, change.old), compared_text(figure, change.new)))}"
        under = place.role.under(place.name) if place is not None else ""
        gated.append(Gated(f"{figure.row} {spec.what}{under}", story, change))
    warned = [undecided] if gate is not None and (undecided := undecided_figures(nodeid, gated, gate)) else []
    return decide(nodeid, [(f.verdict, f.message) for f in figures], policy, gated, gate, warned)


def undecided_figures(nodeid: str, gated: Sequence[Gated], gate: Gate) -> OverheadChangeWarning | None:
    """One warning for a transport test whose gated figures' changes the gate could not tell from its
    threshold, where each alone is only shown (a figure has many, each with a wide interval): a gate
    that decided none of 27 figures exited 0 and said nothing."""
    if gate.unknown is not None or gate.threshold is None:
        return None
    unknown = [g.change for g in gated if gate.finding(g.change) == Finding.UNKNOWN]
    if not unknown:
        return None
    widths = sorted(change.detectable for change in unknown)
    return OverheadChangeWarning(
        f"{nodeid}: the gate cannot tell {len(unknown)} of its {len(gated)} transport figures' changes from "
        f"--overhead-fail-above={gate.threshold:g}% (their intervals ±{widths[0]:.0f}..{widths[-1]:.0f}%): for "
        f"those it decided nothing; more rounds narrow them, or gate transport figures at their own threshold "
        f"(--overhead-fail-above=pairs:PCT,transport:PCT2)"
    )
