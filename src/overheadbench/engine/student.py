"""Student's t distribution's quantiles: the one place every interval of few values reads them."""

from __future__ import annotations

import functools
import math

import numpy as np


@functools.cache
def t_quantile(p: float, df: int) -> float:
    """Quantile of Student's t with ``df`` degrees of freedom (bisection on a Simpson CDF).

    numpy has no t distribution and scipy is not a dependency; this is exact to ~1e-6,
    which is far below anything a timing interval can resolve.
    """
    if not 0 < p < 1 or df < 1:
        raise ValueError("p must be in (0, 1) and df >= 1")
    if p < 0.5:
        return -t_quantile(1 - p, df)
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)

    def cdf(t: float) -> float:
        x = np.linspace(0.0, t, 4001)
        density = np.exp(log_norm - (df + 1) / 2 * np.log1p(x * x / df))
        h = t / 4000
        area = h / 3 * (density[0] + density[-1] + 4 * density[1:-1:2].sum() + 2 * density[2:-1:2].sum())
        return 0.5 + float(area)

    low, high = 0.0, 1.0
    while cdf(high) < p:
        high *= 2
    for _ in range(60):
        middle = (low + high) / 2
        if cdf(middle) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2
