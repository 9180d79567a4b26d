"""Several processes' figures combined into a pair's estimate and its interval (:func:`combine`): each process's
median of pair ratios, weighed by its own precision and the spread between processes, with the spread a session
cannot see (:func:`session_term`) and the layout a process cannot (:func:`layout_sd`); see :mod:`.stats` for why.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..core.vocabulary import Word
from .stats import MEDIAN_FROM, pool, welch_df, within_variance
from .student import t_quantile

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
