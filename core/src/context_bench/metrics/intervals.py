"""The 95% interval and standard error of a group's mean, by the method its values call for.

Scores that are all 0 or 1 (exact match, accuracy) get Wilson's score interval, which stays
inside 0..1 and behaves at 0% and 100%.  Other scores get a seeded percentile bootstrap below
:data:`BOOTSTRAP_BELOW` values (no assumption about their shape) and Student's t interval from
there on, where the mean is near normal and the bootstrap would cost more than the run's summary.
Fewer than two values have no interval.

A bootstrap's seed is the values' own (:func:`data_seed`): the same values give the same interval
wherever they are summarized (``run``, ``score``, ``compare``, a gate, ``assert_scores``), in
whatever order the rows came, and no name can change it.
"""

from __future__ import annotations

import itertools
import math
from array import array
from collections.abc import Sequence
from typing import Any

import attrs

from ._aggregate import interpolated
from .interval import CONFIDENCE, exact_sum, mean_interval

#: Below this many values a mean's interval (and a paired difference's) is bootstrapped.
BOOTSTRAP_BELOW = 1000
#: Resamples of a bootstrap.
RESAMPLES = 1000


@attrs.frozen
class Estimate:
    """A mean, its interval (``low``/``high``, None with fewer than two values), its standard
    error, how many values it is over and the method (``wilson``, ``bootstrap`` or ``t``)."""

    mean: float
    low: float | None
    high: float | None
    stderr: float | None
    n: int
    method: str


def finite(values: Sequence[float]) -> list[float]:
    """The values that are numbers (a column's NaN marks a row without one)."""
    return [v for v in values if v == v and v not in (math.inf, -math.inf)]


_BINARY = frozenset((0.0, 1.0))


def is_binary(values: Sequence[float]) -> bool:
    return _BINARY.issuperset(values)  # in C: a run's 100,000 values are no 100,000 calls


def z_value(confidence: float = CONFIDENCE) -> float:
    from statistics import NormalDist  # here: the CLI's parser reads this package's defaults

    return NormalDist().inv_cdf((1 + confidence) / 2)


def wilson(successes: float, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson's score interval of a proportion ``successes / n``."""
    z = z_value(confidence)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def data_seed(*columns: Sequence[float]) -> int:
    """The seed of a bootstrap (or a Monte Carlo test) over ``columns`` (equal lengths, a row's
    values side by side): a hash of their rows in sorted order, so it depends on the values alone."""
    import hashlib

    rows = sorted(zip(*columns, strict=True))
    flat = array("d", [value for row in rows for value in row])
    return int.from_bytes(hashlib.blake2b(flat.tobytes(), digest_size=8).digest(), "little")


def bootstrap_means(
    values: Sequence[float], weights: Sequence[float] | None = None, resamples: int = RESAMPLES
) -> Any:
    """The (weighted) means of ``resamples`` resamples with replacement of ``values``, in
    ascending order (a numpy array).

    The draws are seeded by :func:`data_seed` of the values (with their weights) in sorted order,
    so the result is a function of the values alone.  A resample is how many times it holds each
    distinct (value, weight): with few distinct ones (0/1 scores and their differences) that is
    one multinomial draw each, else ``n`` indices drawn at once (numpy's PCG64 either way)."""
    import numpy  # here, not at import: the CLI starts without it

    n = len(values)
    ordered = sorted(zip(values, [1.0] * n if weights is None else weights, strict=True))
    rows = numpy.array(ordered)
    data, weight = rows[:, 0], rows[:, 1]
    rng = numpy.random.default_rng(data_seed(data, weight))
    scale = exact_scale(data)  # resampled sums of figures near the float's limit would overflow
    data = data / scale
    kinds = [(row, len(list(same))) for row, same in itertools.groupby(ordered)]
    if len(kinds) * _FEW <= n:
        distinct = numpy.array([row for row, _ in kinds])
        drawn = rng.multinomial(n, [count / n for _, count in kinds], size=resamples)
        sums, totals = drawn @ (distinct[:, 0] / scale * distinct[:, 1]), drawn @ distinct[:, 1]
    else:
        picks = rng.integers(0, n, size=(resamples, n))
        sums, totals = (data[picks] * weight[picks]).sum(axis=1), weight[picks].sum(axis=1)
    means = numpy.divide(sums, totals, out=numpy.zeros(resamples), where=totals > 0) * scale
    means.sort()
    return means


def exact_scale(values: Any) -> float:
    """A power of two that brings the largest of ``values`` (a numpy array) below 2 in size:
    dividing by it is exact, so a statistic figured on the scaled values and scaled back is the
    same, and sums of figures near the float's limit do not overflow."""
    import numpy

    largest = float(numpy.abs(values).max()) if len(values) else 0.0
    return 2.0 ** (math.frexp(largest)[1] - 1) if 0 < largest < math.inf else 1.0


#: A bootstrap draws how many of each distinct value a resample holds when there are at most
#: ``n / _FEW`` of them (a binomial draw each is dearer than an index, cheaper than ``_FEW``).
_FEW = 8


def spread(means: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The percentile interval of bootstrap means in ascending order: their ``(1 - confidence) / 2``
    and ``(1 + confidence) / 2`` quantiles (2.5% and 97.5% at 95%), interpolated as numpy does."""
    tail = round((1 - confidence) * 50, 9)  # 2.5, not 2.500000000000002 (1 - 0.95 in binary)
    return float(interpolated(means, tail)), float(interpolated(means, 100 - tail))


def estimate(values: Sequence[float], confidence: float = CONFIDENCE) -> Estimate | None:
    """The mean of ``values`` (NaN left out) with its interval; None when there is no value."""
    values = finite(values)
    n = len(values)
    if not n:
        return None
    mean = exact_sum(values) / n  # the same in any order
    if not math.isfinite(mean):  # scores too large to add up: no interval either
        return Estimate(mean, None, None, None, n, "t")
    if is_binary(values):
        if n < 2:
            return Estimate(mean, None, None, None, n, "wilson")
        low, high = wilson(mean * n, n, confidence)
        return Estimate(mean, low, high, math.sqrt(mean * (1 - mean) / n), n, "wilson")
    if n < 2:
        return Estimate(mean, None, None, None, n, "bootstrap")
    if n < BOOTSTRAP_BELOW:
        import numpy

        means = bootstrap_means(values)
        low, high = spread(means, confidence)
        with numpy.errstate(all="ignore"):  # values near the float's limit: an infinite deviation
            deviation = float(means.std(ddof=1))
        return Estimate(mean, low, high, deviation, n, "bootstrap")
    interval = mean_interval(values, confidence=confidence)
    stderr = math.sqrt(exact_sum([d * d for v in values for d in (v - mean,)]) / (n - 1) / n)
    return Estimate(mean, interval.low, interval.high, stderr, n, "t")
