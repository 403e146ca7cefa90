"""The confidence interval of a mean: Student's t interval over the rows' values.

The method, kept simple so a reader can check it by hand: the mean ``m`` of the ``n`` values (each
weighing its weight, 1 unless an evaluator weighs its rows), the standard error
``se = sqrt(n / (n - 1) * sum(w_i**2 * (x_i - m)**2)) / sum(w_i)`` (for equal weights, the usual
``s / sqrt(n)``), and ``m +- t * se`` with ``t`` the two-sided quantile of Student's t with
``n - 1`` degrees of freedom.  One value has no interval (``-inf`` to ``inf``); values that all agree
have a zero-width one.  Scores bounded in 0..1 near their ends make the t interval conservative
at worst, which is what a gate wants; the rows are taken as independent draws of the data set.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence

import attrs

#: The confidence of the intervals the CLI shows and its gates use.
CONFIDENCE = 0.95
#: Above this many degrees of freedom, t's quantile comes from its expansion around the normal's.
_EXACT_DF = 200


@attrs.frozen
class Interval:
    """A mean, the bounds of its confidence interval, and the number of values it is over."""

    mean: float
    low: float
    high: float
    n: int
    confidence: float = CONFIDENCE

    def describe(self, digits: int = 3) -> str:
        """``0.612 (95% CI 0.550 to 0.674, n=50)``: the figure a gate's message shows."""
        share = f"{self.confidence:.0%}"
        if not math.isfinite(self.low) or not math.isfinite(self.high):
            return f"{self.mean:.{digits}f} (n={self.n}, too few rows for a {share} interval)"
        return (
            f"{self.mean:.{digits}f} ({share} CI {self.low:.{digits}f} to {self.high:.{digits}f}, n={self.n})"
        )


def square(x: float) -> float:
    """``x * x``: infinity where it overflows (``x ** 2`` raises)."""
    return x * x


def exact_sum(values: Iterable[float]) -> float:
    """The correctly rounded sum (``math.fsum``: the same in any order), or the plain sum where
    that overflows or meets opposite infinities (an infinity or NaN, as the values' own sum)."""
    values = list(values)
    try:
        return math.fsum(values)
    except (OverflowError, ValueError):
        return sum(values)


def mean_interval(
    values: Sequence[float], weights: Sequence[float] | None = None, confidence: float = CONFIDENCE
) -> Interval:
    """The (weighted) mean of ``values`` and its t interval (see the module's docstring)."""
    n = len(values)
    if not n:
        raise ValueError("no values: a mean needs at least one")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (got {confidence})")
    w = [1.0] * n if weights is None else [float(x) for x in weights]
    total = exact_sum(w)
    if not total > 0:
        raise ValueError("the weights add up to 0: a mean needs a positive weight")
    # lists, not generators: a run's 100,000 values in one call each, not a call per value
    mean = exact_sum([x * y for x, y in zip(values, w, strict=True)]) / total  # the same in any order
    if n == 1:
        return Interval(mean, -math.inf, math.inf, n, confidence)
    spread = exact_sum([d * d for x, y in zip(values, w, strict=True) for d in (y * (x - mean),)])
    error = math.sqrt(n / (n - 1) * spread) / total
    half = t_quantile((1 + confidence) / 2, n - 1) * error
    return Interval(mean, mean - half, mean + half, n, confidence)


@functools.lru_cache(maxsize=1024)  # a report asks for the same few quantiles again and again
def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (``p`` above 0.5).

    Exact for ``df`` up to 200: bisection on the closed-form distribution function of an integer
    ``df`` (Abramowitz and Stegun 26.7.3 and 26.7.4); beyond, the Cornish-Fisher expansion around
    the normal quantile, accurate there to far better than the figures a report prints.
    """
    if df < 1:
        raise ValueError("t needs at least 1 degree of freedom")
    if df > _EXACT_DF:
        from statistics import NormalDist  # only past 200 degrees of freedom

        z = NormalDist().inv_cdf(p)
        return (
            z
            + (z**3 + z) / (4 * df)
            + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
        )
    target = 2 * p - 1  # the share of t's mass within +-quantile
    low, high = 0.0, 1.0
    while _within(high, df) < target:
        high *= 2
    for _ in range(100):
        middle = (low + high) / 2
        if _within(middle, df) < target:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def _within(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with an integer ``df``: a finite sum in ``theta = atan(t / sqrt(df))``."""
    theta = math.atan(t / math.sqrt(df))
    sin, cos2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2 == 0:  # 26.7.4: sin(theta) * (1 + cos^2/2 + 1*3 cos^4/(2*4) + ...)
        term, total = 1.0, 1.0
        for k in range(1, df // 2):
            term *= cos2 * (2 * k - 1) / (2 * k)
            total += term
        return sin * total
    if df == 1:  # 26.7.3 with no series: the Cauchy distribution
        return 2 * theta / math.pi
    cos = math.cos(theta)  # 26.7.3: (2/pi)(theta + sin cos (1 + 2/3 cos^2 + 2*4/(3*5) cos^4 + ...))
    term, total = 1.0, 1.0
    for k in range(1, (df - 1) // 2):
        term *= cos2 * (2 * k) / (2 * k + 1)
        total += term
    return 2 / math.pi * (theta + sin * cos * total)
