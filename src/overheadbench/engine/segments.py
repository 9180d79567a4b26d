"""A series of runs as :mod:`.shifts` searches it (:class:`Runs`: weighted log values, commit ordinals, links)
and the weighted sums its search is made of: the squares left about each stretch's mean, the change at a
split (joined with the commit's link), a running median's winsorising. Plain numpy: the search's decisions
(what is a step, a drift, pending) are :mod:`.shifts`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MEDIAN_WINDOW = 5
"""Runs in the running median a value is held to."""
CLIP = 3.0
"""A value farther than this many of its standard deviations from the running median is moved to that distance."""


def winsorised(y: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """``y`` held within :data:`CLIP` of its standard deviations (``sd``) of its running median: a lone far run
    weighs on the search as a far run, not as a step."""
    half = MEDIAN_WINDOW // 2
    edges = [i for i in range(y.size) if i < half or i >= y.size - half]  # windows cut short by an end
    medians = np.empty(y.size)
    if y.size >= MEDIAN_WINDOW:  # every whole window at once (a thousand runs of fifty pairs: 1.3 s one by one)
        medians[half : y.size - half] = np.median(np.lib.stride_tricks.sliding_window_view(y, MEDIAN_WINDOW), axis=1)
    for i in edges:
        medians[i] = np.median(y[max(0, i - half) : i + half + 1])
    clipped: np.ndarray = np.clip(y, medians - CLIP * sd, medians + CLIP * sd)
    return clipped


@dataclass(frozen=True)
class Runs:
    """A series as searched: its (winsorised) log values, their weights, each run's commit ordinal,
    and at the first run of each linked commit its link (its change over the commit before) and weight."""

    y: np.ndarray
    w: np.ndarray
    commit: np.ndarray
    """The ordinal of each run's commit (runs of one commit share it): a drift's x axis."""
    link: np.ndarray
    link_w: np.ndarray
    """1 / the link's variance; 0 where the run starts no linked commit."""


def link_squares(runs: Runs, expected: np.ndarray) -> float:
    """The links' weighted squares about what a model of the series expects each to read."""
    return float((runs.link_w * (runs.link - expected) ** 2).sum())


def squares(runs: Runs, edges: list[int]) -> float:
    """The weighted squares left about each stretch's weighted mean, the stretches cut at ``edges``."""
    total = 0.0
    for a, b in zip(edges, edges[1:], strict=False):
        y, w = runs.y[a:b], runs.w[a:b]
        total += float((w * (y - float((w * y).sum() / w.sum())) ** 2).sum())
    return total


def splits(runs: Runs, start: int, end: int, at: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each split ``at`` of runs ``start..end``: the change between the two sides' weighted means,
    joined with the commit's link where it has one (two readings of one step, weighed by their
    variances), its variance, and ``z``."""
    y, w = runs.y[start:end], runs.w[start:end]
    cw, cwy = np.cumsum(w), np.cumsum(w * y)
    left_w, left_wy = cw[at - start - 1], cwy[at - start - 1]
    right_w, right_wy = cw[-1] - left_w, cwy[-1] - left_wy
    level_w = 1.0 / (1.0 / left_w + 1.0 / right_w)
    joined_w = level_w + runs.link_w[at]
    change = (level_w * (right_wy / right_w - left_wy / left_w) + runs.link_w[at] * runs.link[at]) / joined_w
    z: np.ndarray = change * np.sqrt(joined_w)
    return change, 1.0 / joined_w, z


def split(runs: Runs, start: int, at: int, end: int) -> tuple[float, float, float]:
    """Runs ``start..end`` split at ``at`` (:func:`splits`): the change, its standard error, and ``z``."""
    change, variance, z = (float(value[0]) for value in splits(runs, start, end, np.array([at])))
    return change, math.sqrt(variance), z
