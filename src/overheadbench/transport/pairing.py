"""A transport pair's schedule and its paired comparison, figure by figure.

The two sides of a transport pair (two servers, two routes, two clients, two protocols) are
loaded in rounds, each round one window of each side in a random order: whatever the shared
machine does during a round (a neighbour's burst, a frequency step) falls on both sides, and a
drift over the session falls on each side as often first as second. A figure of the pair is
then the framework side's against the baseline side's:

- the value is the pooled figure of each side's windows (all its requests' p95, its req/s
  over all its windows), compared: framework / baseline - 1 (:attr:`Measure.CHANGE`) or
  framework - baseline (:attr:`Measure.ADDED`), so it converges on what a long run measures;
- the interval is Student's t over the rounds' own comparisons (each round's two windows
  against each other: the log ratio for a change, the difference for an added cost), centred
  on that value. The round-to-round spread holds the machine's drift the pairing did not
  cancel and each window's sampling error, so the interval is wider than a naive one, never
  narrower than the rounds disagree.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..engine.student import t_quantile
from ..http.load import Throughput
from ..http.stream_stats import StreamStats
from .metrics import QUANTILES, SIDES, STREAM_FIGURES, Measure, Metric, RoundValues, side_row
from .results import Reading


def schedule(rounds: int, rng: random.Random) -> list[int]:
    """The sides' windows in order: ``rounds`` rounds, each side once per round (0: baseline,
    1: framework), each round's order drawn at random."""
    order: list[int] = []
    for _ in range(rounds):
        order += rng.sample((0, 1), 2)
    return order


def load_figures(run: Throughput) -> dict[Metric, float]:
    """A load's figures: one window's, or a side's pooled windows' (:meth:`Throughput.pooled`)."""
    latencies = np.asarray(run.latency_ns, float) / 1e9
    figures = {Metric.RPS: run.requests_per_s}
    for metric, q in QUANTILES.items():
        figures[metric] = float(np.quantile(latencies, q)) if latencies.size else math.nan
    figures[Metric.CLIENT_CPU] = run.client_cpu_s_per_request
    figures[Metric.SERVER_CPU] = run.server_cpu_s_per_request
    return figures


def stream_figures(streams: Sequence[StreamStats]) -> dict[Metric, float]:
    """One side's stream figures: the median over ``streams``."""
    return {
        Metric.TTFE: float(np.median([s.first_event_s for s in streams])),
        Metric.EVENTS_PER_S: float(np.median([s.events_per_s for s in streams])),
        Metric.TOTAL: float(np.median([s.total_s for s in streams])),
    }


@dataclass(frozen=True)
class SideFigures:
    """One side's figures: each round's, and pooled over all its windows."""

    rounds: list[dict[Metric, float]]
    pooled: dict[Metric, float]


def stream_sides(rounds: Sequence[Sequence[Sequence[StreamStats]]]) -> list[SideFigures]:
    """Each side's stream figures, round by round and over all its streams (``rounds``: each side's
    rounds, each round its streams)."""
    return [SideFigures([stream_figures(r) for r in s], stream_figures([x for r in s for x in r])) for s in rounds]


def compared(
    row: str, metric: Metric, measure: Measure, baseline: SideFigures, framework: SideFigures, confidence: float
) -> Reading:
    """The framework side's ``metric`` against the baseline's, as ``measure``, with the paired
    interval over the rounds (no interval with fewer than two rounds that both measured it)."""
    change = measure == Measure.CHANGE
    before, after = baseline.pooled[metric], framework.pooled[metric]
    if change:
        centre = math.log(after / before) if before > 0 and after > 0 else math.nan
    else:
        centre = after - before
    pairs = [(b[metric], f[metric]) for b, f in zip(baseline.rounds, framework.rounds, strict=True)]
    each = [(math.log(f / b) if b > 0 and f > 0 else math.nan) if change else f - b for b, f in pairs]
    each = [d for d in each if math.isfinite(d)]
    if len(each) < 2 or not math.isfinite(centre):
        low = high = centre
        interval = ""
    else:
        half = t_quantile((1 + confidence) / 2, len(each) - 1) * float(np.std(each, ddof=1)) / math.sqrt(len(each))
        low, high = centre - half, centre + half
        interval = f"{confidence:.0%} CI, paired over {len(each)} rounds"
    if change:
        centre, low, high = (math.exp(v) - 1 if math.isfinite(v) else math.nan for v in (centre, low, high))
    samples = tuple(math.exp(d) - 1 for d in each) if change else tuple(each)
    return Reading(row, metric, centre, low, high, interval, samples, measure=measure)


def pair_rounds(row: str, metrics: Sequence[Metric], sides: Sequence[SideFigures]) -> list[RoundValues]:
    """A transport pair's rounds as places compare them: each round's change (its ratio) and each side's figure."""
    rounds = []
    for baseline, framework in zip(sides[0].rounds, sides[1].rounds, strict=True):
        values: list[tuple[str, Metric, Measure, float]] = [
            (row, m, Measure.CHANGE, framework[m] / baseline[m]) for m in metrics if baseline[m] > 0
        ]
        for name, side in zip(SIDES, (baseline, framework), strict=True):
            values += [(side_row(row, name), m, Measure.FIGURE, side[m]) for m in metrics]
        rounds.append([[r, str(m), str(measure), v] for r, m, measure, v in values if math.isfinite(v)])
    return rounds


def stream_rounds(row: str, rounds: Sequence[Sequence[Sequence[StreamStats]]]) -> list[RoundValues]:
    """A stream pair's rounds (each side's, each round its streams) as places compare them."""
    return pair_rounds(row, STREAM_FIGURES, stream_sides(rounds))
