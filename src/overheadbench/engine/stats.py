"""The estimator and its interval; no timing, no printing.

* Within one process the overhead is the **median of pair ratios** (framework block /
  baseline block, each pair timed back to back), with a distribution-free order-statistic
  interval for that median.
* Across processes the ratio itself moves: code and heap layout (ASLR, hash seed) make
  the same pair 1–3 points faster or slower in one fresh process than in the next, far
  more than the within-process interval, in clusters and with a heavy tail (a process in
  twenty lands several points away). So with several replica processes the estimate is
  a **robust weighted mean of their medians** (Huber's), each weighed by its own precision and the
  spread between processes, and its interval is Student's t on the log scale with that
  estimate's standard error (:func:`pool`, a random-effects combination): it carries the
  between-process variance, as pyperf's replicated means do, and a process whose own blocks
  were preempted (a wide interval of its own) counts little instead of moving the estimate
  (on a busy runner such processes made intervals of ±100-270%, issue 45). A heavy-tailed
  process widens it through the spread seen, never hides. The
  distribution-free order-statistic interval used before is, at 6 processes, the range of
  the processes, which one process in a bad layout set: on the suite's middleware pairs it
  was 1.2-1.7 times what the estimate's spread across sessions needs (issue 24,
  ``validation/ab_gate.py intervals``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..core.vocabulary import Word
from .student import t_quantile

CONFIDENCE = 0.95
"""Of every two-sided interval read off a process or a change ("~" when a change's contains zero;
the gate reads its ends)."""
MEDIAN_FROM = 6
"""Processes from which the estimate is their median (fewer: their mean)."""
HUBER_K = 1.345
"""Where a process's figure stops counting in full: this many of its own standard deviations
(its variance plus the spread between processes) from the centre. Huber's constant: 95% of the
mean's efficiency for normal spread, and a bounded pull from any one process."""
HUBER_EFFICIENCY = 1.0252
"""Standard error of Huber's estimate at ``HUBER_K`` over that of a mean, for normal spread
(sqrt(1.051); a median's is sqrt(pi/2) = 1.2533, the price issue 45's gate could not pay)."""
HUBER_ITERATIONS = 50
"""Reweighting rounds at most (it settles in a handful: the start is the weighted median)."""
SESSION_SD = 0.005
"""Between-session standard deviation of a pair's log ratio on this machine kind (0.5%): what
moves every process of a session alike (the machine's load and frequency, the session's
calibrated block sizes), so no single session can see it. Measured by
validation/gate.py on the suite's pairs; held out on lopsided pairs by
validation/lopsided.py, whose 10x-1000x pairs moved 0.6-0.9% between sessions under
within-session intervals of ±1.0-1.3% (pooled coverage 89% without it; see LOPSIDED.md). A
pair's interval includes it; the stored-run gate starts from it (``pair_changes``)."""
SESSION_SHARE = 1.25
"""...or this multiple of the pair's own spread between processes (the sd of their log ratios), if
larger: a pair that is noisy between processes is noisy between sessions too, and a busy machine
makes it so (gate.py, 8 quiet sessions here: the between-session sd was 0 to 1.7 times the
between-process sd, at most 1.3 for all pairs but one; cross_session.py, under load and load that
came and went: 0 to 0.95, validation/CROSS_SESSION.md). A constant alone let an agent
SDK's three pairs in busy sessions carry ±3% intervals while their estimates spread 7-14% between
sessions (:func:`session_term`)."""
PROCESS_SD = 0.035
"""How far one fresh process's figure may sit from another's by its layout alone (sd of the log
ratio): the 1-3 points of the module's docstring for a microsecond call, 5-7 for a 60 ns one and
for a cost that grows with its calls (validation/ADVERSARIAL.md). A one-process interval carries it
(:func:`combine`); several processes measure their own."""
LAYOUT_NS = 1.5
"""How far a call's cost may sit, in ns, between the processes of one session, which share their
imports, heap and code layout, and a bare interpreter (sd): a pair of 51 and 91 ns calls read
1.76-1.81x in every process of ten sessions of pytest where three bare interpreters read 1.83, 1.87
and 1.94x (2.8% sd between them, 1.25 ns; 5% apart, 2.2 ns). More processes cannot narrow it and a
microsecond call does not notice it (:func:`layout_sd`)."""
MIN_WITHIN_SD = 1e-4
"""The least a process's own log sd is taken to be (0.01%): its ratios all agreeing is luck, not exactness."""
BIG_VARIANCE = 1.0
"""A process's own variance is taken as at most this (a log sd of 1: a factor of e), so that one
with no interval at all still has a weight, however small."""


class Method(Word):
    """What the overhead's interval is."""

    BETWEEN_PROCESSES = "between-processes"
    """Over the medians of several fresh processes (time mode)."""
    WITHIN_PROCESS = "within-process"
    """One process's own interval, widened by the layout prior it cannot measure (``PROCESS_SD``)."""
    COUNTED = "count"
    """The range over repeated counts (count mode)."""


@dataclass(frozen=True)
class Estimate:
    """A ratio (framework / baseline) with a two-sided interval at ``confidence``."""

    ratio: float
    low: float
    high: float
    confidence: float
    method: Method
    """Over the processes' medians, or one process's own interval."""
    between_sd: float = math.nan
    """The spread of the processes' log ratios beyond their own precision (NaN: one process)."""
    disagree: bool = False
    """The processes' medians disagree beyond their own precision (their spread is in the interval)."""
    session_sd: float = 0.0
    """The between-session term the interval carries (:func:`session_term`; 0: the session's own)."""
    session_runs: int = 0
    """The stored runs that term was learned from (0: the prior, :func:`session_term`)."""

    @property
    def overhead(self) -> float:
        return self.ratio - 1

    @property
    def overhead_ci(self) -> tuple[float, float]:
        return (self.low - 1, self.high - 1)


@dataclass(frozen=True)
class Pooled:
    """Processes' log values pooled: Huber's weighted centre, its standard error and degrees of
    freedom, the spread between processes beyond their own precision (``between_sd``, on the log
    scale), and whether the processes disagree beyond their own precision (Cochran's Q over its
    99% chi-square quantile)."""

    centre: float
    se: float
    df: int
    between_sd: float
    disagree: bool


def within_variance(low: float, high: float, confidence: float) -> float:
    """A process's own variance of its log figure, read off its interval at ``confidence``
    (never below ``MIN_WITHIN_SD`` squared: a process whose ratios all agreed is not exact)."""
    if not (0 < low <= high) or not math.isfinite(high):
        return math.inf
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    return max((math.log(high) - math.log(low)) / (2 * z), MIN_WITHIN_SD) ** 2


def pool(logs: Sequence[float] | np.ndarray, variances: Sequence[float] | np.ndarray) -> Pooled:
    """Pool per-process log figures ``logs`` with their own ``variances`` (random effects).

    Each process weighs ``1 / (its variance + between²)``: a process with ten preempted blocks
    has a wide interval of its own and counts little; where the processes' precision is alike
    (the usual case: the spread is layout), the weights are equal. ``between²`` is the spread
    beyond the processes' own precision, from the median absolute deviation so that one
    process in a bad layout cannot set it. The centre is Huber's weighted estimate
    (:func:`huber_centre`: one such process pulls it by at most ``HUBER_K`` of its own standard
    deviations, weighed as one of ``k``); its standard error is Huber's (``HUBER_EFFICIENCY``)
    over the larger of the model's and the weighted spread actually seen (Hartung-Knapp), so a
    heavy tail widens the interval, never hides. Huber's rather than the median: as robust to
    one process, with 0.82 times the median's interval (on the same samples of four gated
    sessions on a busy runner the median left 4 of 8 pairs of a +6% change unknown at a 2%
    gate, Huber's 1: validation/BUSY_RUNNER.md).
    """
    y = np.asarray(logs, float)
    v = np.minimum(np.asarray(variances, float), BIG_VARIANCE)
    k = y.size
    mad = 1.4826 * float(np.median(np.abs(y - np.median(y))))
    between2 = max(0.0, mad**2 - float(np.median(v)))
    weights = 1.0 / (v + between2)
    centre = huber_centre(y, weights)
    model = 1.0 / float(weights.sum())
    seen = _weighted_squares(y, weights) / ((k - 1) * float(weights.sum()))
    se = HUBER_EFFICIENCY * math.sqrt(max(model, seen))
    q = _weighted_squares(y, 1.0 / v)  # Cochran's Q: the processes' own precision alone
    return Pooled(centre, se, k - 1, math.sqrt(between2), q > chi2_quantile(0.99, k - 1))


def _weighted_squares(values: np.ndarray, weights: np.ndarray) -> float:
    """The weighted sum of squared deviations from the weighted mean."""
    mean = float((weights * values).sum()) / float(weights.sum())
    return float((weights * (values - mean) ** 2).sum())


def huber_centre(values: np.ndarray, weights: np.ndarray) -> float:
    """Huber's M-estimate of the centre of ``values``, each with variance ``1 / weights``: the
    weighted mean where every value lies within ``HUBER_K`` of its standard deviations of it; a
    value farther out counts as if it lay at that distance. Iteratively reweighted from the
    weighted median."""
    centre = weighted_median(values, weights)
    scale = np.sqrt(weights)
    for _ in range(HUBER_ITERATIONS):
        distance = np.abs(values - centre) * scale
        counted = weights * np.minimum(1.0, HUBER_K / np.maximum(distance, HUBER_K * 1e-12))
        moved = float((counted * values).sum() / counted.sum())
        if math.isclose(moved, centre, rel_tol=0.0, abs_tol=1e-12):
            return moved
        centre = moved
    return centre


def weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """The value below which half the weight lies (the middle two's mean on an exact tie)."""
    order = np.argsort(values)
    ordered, cumulative = values[order], np.cumsum(weights[order])
    half = cumulative[-1] / 2
    index = int(np.searchsorted(cumulative, half))
    if math.isclose(float(cumulative[index]), half) and index + 1 < ordered.size:
        return float((ordered[index] + ordered[index + 1]) / 2)
    return float(ordered[index])


def chi2_quantile(p: float, df: int) -> float:
    """The chi-square quantile by Wilson and Hilferty's cube (within ~1% from 2 degrees of freedom)."""
    z = NormalDist().inv_cdf(p)
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def session_term(process_sd: float) -> float:
    """The between-session standard deviation of a pair's log ratio where no stored history says
    better: the machine kind's :data:`SESSION_SD`, or :data:`SESSION_SHARE` times the pair's own
    spread between processes (``process_sd``, the sd of their log ratios), if larger. The one rule
    for a session's own interval and for a comparison with a stored run."""
    return max(SESSION_SD, SESSION_SHARE * process_sd) if math.isfinite(process_sd) else SESSION_SD


SessionRule = Callable[[float], tuple[float, float]]
"""A pair's between-session term from its processes' spread (the sd of their log ratios): the
term's standard deviation and its degrees of freedom (infinite for the prior, the stored runs
less one where it was learned from them, :func:`overheadbench.pairs.comparing.session_sd`)."""


def prior_session(process_sd: float) -> tuple[float, float]:
    """The rule where no stored history is read: :func:`session_term`, taken as known."""
    return session_term(process_sd), math.inf


def layout_sd(baseline_ns: float, framework_ns: float) -> float:
    """The sd of a pair's log ratio that :data:`LAYOUT_NS` of each side's call makes: 3.4% for calls
    of 51 and 91 ns, 0.2% for a microsecond's."""
    if not (baseline_ns > 0 and framework_ns > 0):
        return 0.0
    return LAYOUT_NS * math.hypot(1 / baseline_ns, 1 / framework_ns)


def _one_process(
    replica: tuple[float, float, float], confidence: float, session: SessionRule | None, layout: float
) -> Estimate:
    """One process's figure: its own interval, and (``session`` given) at least as wide as its own
    variance plus the layout prior ``PROCESS_SD``, the shared ``layout`` and the between-session
    term, about its median: one process cannot see how far its layout sits from another's (adversarial
    pairs read 2-6% off a reference of five processes in one process, their own intervals ±0.5%), nor
    from a bare interpreter's (a 51/91 ns pair, five single processes beside four busy loops: 4.9% sd
    off the reference, one of them 9% below it)."""
    median, low, high = replica
    if session is None or not (0 < low <= median <= high) or not math.isfinite(high):
        return Estimate(median, low, high, confidence, Method.WITHIN_PROCESS)
    session_sd, _ = session(math.nan)
    spread = math.sqrt(within_variance(low, high, confidence) + PROCESS_SD**2 + layout**2 + session_sd**2)
    half = NormalDist().inv_cdf((1 + confidence) / 2) * spread
    widened = (min(low, median * math.exp(-half)), max(high, median * math.exp(half)))
    return Estimate(median, *widened, confidence, Method.WITHIN_PROCESS, session_sd=session_sd)


def combine(
    replicas: Sequence[tuple[float, float, float]],
    confidence: float,
    session: SessionRule | None = None,
    layout: float = 0.0,
) -> Estimate:
    """Pool per-process ``(median, low, high)`` into one estimate.

    One process: its own interval, labelled within-process, widened (``session`` given) by what it
    cannot see: the layout prior ``PROCESS_SD`` and the between-session term (:func:`_one_process`).
    ``MEDIAN_FROM`` processes or more: :func:`pool` on the log scale, with
    Student's t. Fewer: the mean ± t·s/√k (a median of 3 is no better).
    ``session``: the interval carries the between-session term, which no process of the session
    can see, added to the standard error, with Welch's degrees of freedom where it was learned
    from a few stored runs (None: the session's own interval, as the stopping rule reads it), and
    ``layout`` (:func:`layout_sd`), what every process of the session shares, taken as known.
    """
    if not replicas:
        raise ValueError("no replicas")
    if len(replicas) == 1:
        return _one_process(replicas[0], confidence, session, layout)
    medians = np.array([r[0] for r in replicas], float)
    spread = float(np.std(np.log(medians), ddof=1)) if bool(np.all(medians > 0)) else math.nan
    session_sd, session_df = session(spread) if session is not None else (0.0, math.inf)
    layout = layout if session is not None else 0.0
    runs = int(session_df) + 1 if math.isfinite(session_df) else 0
    if medians.size >= MEDIAN_FROM and bool(np.all(medians > 0)):
        pooled = pool(np.log(medians), [within_variance(low, high, confidence) for _, low, high in replicas])
        df = welch_df((pooled.se**2, pooled.df), (session_sd**2, session_df))
        half = t_quantile((1 + confidence) / 2, df) * math.hypot(pooled.se, session_sd, layout)
        centre = math.exp(pooled.centre)
        return Estimate(
            centre,
            centre * math.exp(-half),
            centre * math.exp(half),
            confidence,
            Method.BETWEEN_PROCESSES,
            pooled.between_sd,
            pooled.disagree,
            session_sd,
            runs,
        )
    centre = float(medians.mean())
    own = float(medians.std(ddof=1)) / math.sqrt(medians.size)
    df = welch_df((own**2, medians.size - 1), ((centre * session_sd) ** 2, session_df))
    half = t_quantile((1 + confidence) / 2, df) * math.hypot(own, centre * session_sd, centre * layout)
    return Estimate(
        centre,
        centre - half,
        centre + half,
        confidence,
        Method.BETWEEN_PROCESSES,
        spread,
        session_sd=session_sd,
        session_runs=runs,
    )


def welch_df(*parts: tuple[float, float]) -> int:
    """Welch-Satterthwaite degrees of freedom of a sum of variances, each ``(variance, df)``; a term
    taken as known (an infinite df: the prior, a rule rather than a measurement) adds none, so the
    prior's intervals keep the processes' own degrees of freedom. At least 1."""
    measured = [(variance, df) for variance, df in parts if variance > 0 and math.isfinite(df)]
    if not measured:
        first = parts[0][1]
        return max(1, int(first)) if math.isfinite(first) else 1_000_000
    total = sum(variance for variance, _ in measured)
    return max(1, int(total**2 / sum(variance**2 / df for variance, df in measured)))


def log_halfwidth(low: float, high: float) -> float:
    """Half an overhead interval's width on the log scale of framework / baseline (infinite where
    it has no such width): ±1% reads alike on a 20% pair and a 230% one, as the gate's changes do.
    The stopping rule and the report's "still wider than the target" read this one figure."""
    if low <= -1 or not math.isfinite(low) or not math.isfinite(high):
        return math.inf
    return (math.log1p(high) - math.log1p(low)) / 2


TRIM = 0.2
"""The share of paired differences :func:`trimmed_mean` sets aside at each end."""
TRIM_FROM = 10
"""Fewer values are averaged whole: trimming one of five or eight leaves too few degrees of freedom."""


def trimmed_mean(values: Sequence[float], share: float = TRIM) -> tuple[float, float, int]:
    """The ``share``-trimmed mean of ``values`` (of :data:`TRIM_FROM` or more; the mean of fewer),
    its standard error and degrees of freedom (Yuen's: the winsorised spread over (1 - 2 x share)
    root n, n - 2k - 1 degrees): a centre that the rounds a place spent in another regime cannot
    carry. Two places' stream rounds paired on a busy runner have tails of rounds 20-60% apart (one
    process's client and server on one core, the other's on two); over the same rounds of identical
    trees the plain mean's intervals were up to four times as wide (an SDK stream's time to first
    event -10.4% ±24.2% against -2.9% ±5.7%, validation/STREAMS.md)."""
    ordered = sorted(values)
    count = len(ordered)
    cut = math.floor(share * count) if count >= TRIM_FROM else 0
    kept = ordered[cut : count - cut]
    low, high = ordered[cut], ordered[count - cut - 1]
    winsorised = [min(max(value, low), high) for value in ordered]
    spread = float(np.std(winsorised, ddof=1))
    return float(np.mean(kept)), spread / ((1 - 2 * cut / count) * math.sqrt(count)), count - 2 * cut - 1
