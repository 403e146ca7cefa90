"""A paired comparison of two systems on the same rows: the mean difference, its interval, a
two-sided p-value and the smallest difference the rows could have shown.

The test holds at every number of pairs:

- scores that are 0 or 1 on both sides get McNemar's exact test: only the pairs where the systems
  disagree say anything, and under "no difference" each goes either way with probability 1/2, so
  the p-value is an exact binomial tail;
- other scores get the paired sign-flip permutation test: under "no difference" each pair's
  difference is as likely negative as positive, so the p-value is the share of the ``2^m`` sign
  patterns of the ``m`` nonzero differences whose sum is at least as far from 0 as the observed
  one; every pattern is counted up to :data:`EXACT_UP_TO` nonzero differences (the smallest
  p-value is then ``2 / 2^m``), :data:`DRAWS` seeded patterns are drawn up to
  :data:`MONTE_CARLO_UP_TO` pairs (``p = (1 + as far) / (1 + DRAWS)``, at least ``1 / 10,001``),
  and the paired t-test takes over beyond, where the mean difference is near normal.

The interval is a seeded percentile bootstrap of the pairs below
:data:`~context_bench.metrics.intervals.BOOTSTRAP_BELOW` pairs and Student's t from there on.
One pair, or pairs that all tie, leave nothing to test: no p-value, no interval.  The minimum
detectable difference (``mdd``) at 80% power, two-sided at ``alpha``, is
``(t(1 - alpha/2, n-1) + t(0.8, n-1)) * se`` with ``se`` the standard error of the mean difference;
none when even the most extreme pairs could not reach ``alpha`` (``2 / 2^n >= alpha``).  Seeds
come from the pairs' values (:func:`~context_bench.metrics.intervals.data_seed`), never a name.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs

from ..defaults import DEFAULT_ALPHA
from .interval import CONFIDENCE, Interval, _within, exact_sum, square, t_quantile
from .intervals import BOOTSTRAP_BELOW, bootstrap_means, data_seed, exact_scale, is_binary, spread

#: The significance level of the reports and gates unless ``--alpha`` says otherwise (their
#: intervals are at ``1 - alpha``: 95%).
ALPHA = DEFAULT_ALPHA
#: Up to this many nonzero differences the sign-flip test counts every sign pattern.
EXACT_UP_TO = 20
#: Up to this many pairs the sign-flip test draws :data:`DRAWS` patterns; beyond, the paired t-test.
MONTE_CARLO_UP_TO = 1000
#: Sign patterns a Monte Carlo sign-flip test draws.
DRAWS = 10_000
#: The power the minimum detectable difference is figured at.
POWER = 0.8

#: The ``test`` each method is named by, and what a report calls it.
TEST_NAMES = {
    "mcnemar": "McNemar's exact test",
    "sign_flip": "exact sign-flip permutation test",
    "sign_flip_mc": f"Monte Carlo sign-flip test ({DRAWS:,} draws)",
    "t": "paired t-test",
}


@attrs.frozen
class PairedTest:
    """``other - base`` over ``n`` pairs: mean ``delta``, its interval at ``confidence``, the
    p-value and the test (a key of :data:`TEST_NAMES`), None for all three when there is nothing
    to test; ``lost``/``gained`` count the pairs that went from 1 to 0 and from 0 to 1 (McNemar's
    discordant pairs; 0 for other scores); ``mdd`` is the minimum detectable difference."""

    delta: float
    low: float | None
    high: float | None
    p_value: float | None
    n: int
    test: str | None
    lost: int = 0
    gained: int = 0
    mdd: float | None = None
    confidence: float = CONFIDENCE

    def interval(self) -> Interval:
        low = -math.inf if self.low is None else self.low
        high = math.inf if self.high is None else self.high
        return Interval(self.delta, low, high, self.n, self.confidence)


#: Up to this many discordant pairs McNemar's tail is summed in whole numbers, exactly.
_EXACT_PAIRS = 2000


def mcnemar_p(lost: int, gained: int) -> float:
    """McNemar's exact two-sided p-value: twice the smaller binomial tail of ``lost + gained``
    discordant pairs with probability 1/2, at most 1 (past 2,000 pairs summed in logarithms)."""
    n = lost + gained
    if n == 0:
        return 1.0
    k = min(lost, gained)
    if n <= _EXACT_PAIRS:  # whole numbers, one correctly rounded division
        tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    else:
        logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in range(k + 1)]
        top = max(logs)
        tail = math.exp(top - n * math.log(2)) * math.fsum(math.exp(x - top) for x in logs)
    return min(1.0, 2 * tail)


def t_p_value(t: float, df: int) -> float:
    """Two-sided p-value of Student's t statistic: exact to 200 degrees of freedom, beyond from
    the normal with the usual correction ``t (1 - 1/(4 df)) / sqrt(1 + t^2 / (2 df))``."""
    t = abs(t)
    if df <= 200:
        return max(0.0, 1.0 - _within(t, df))
    from statistics import NormalDist  # only past 200 degrees of freedom

    z = t * (1 - 1 / (4 * df)) / math.sqrt(1 + t * t / (2 * df))
    return 2 * (1 - NormalDist().cdf(z))


def sign_flip_p(terms: Sequence[float]) -> tuple[float, str]:
    """The two-sided p-value of the sign-flip test of ``terms`` (each pair's weighted difference)
    and the test's name: exact when at most :data:`EXACT_UP_TO` of them are nonzero, else from
    :data:`DRAWS` patterns drawn with the terms' own seed."""
    import numpy  # here, not at import: the CLI starts without it

    nonzero = numpy.sort([x for x in terms if x != 0.0])  # in order: the draws fall on the same terms
    nonzero = nonzero / exact_scale(nonzero)  # the same test; sums near the float's limit overflow
    observed = abs(exact_sum(nonzero.tolist()))
    # sums that equal the observed one but for rounding count as "as far": a relative tolerance
    # far above the rounding of a sum of at most 1,000 terms, far below any real gap between them
    reach = observed - 1e-9 * float(numpy.abs(nonzero).sum())
    if len(nonzero) <= EXACT_UP_TO:
        sums = numpy.zeros(1)
        for term in nonzero:  # every pattern: the sums with this term added and subtracted
            sums = numpy.concatenate((sums + term, sums - term))
        return int((numpy.abs(sums) >= reach).sum()) / len(sums), "sign_flip"
    # Each draw is a row of random bytes, 8 signs a byte: a pattern's sum is 2 * (the sum of the
    # terms whose bit is set) - (the sum of them all), and the bits' share of the sum is looked up
    # per byte in a table of its 256 values, 8 terms at a time.
    groups = -(-len(nonzero) // 8)
    padded = numpy.zeros(groups * 8)
    padded[: len(nonzero)] = nonzero
    bits = numpy.unpackbits(numpy.arange(256, dtype=numpy.uint8)[:, None], axis=1).astype(float)
    tables = bits @ padded.reshape(groups, 8).T  # 256 x groups
    rng = numpy.random.default_rng(data_seed(terms))
    drawn = rng.integers(0, 256, size=(DRAWS, groups), dtype=numpy.uint8)
    sums = 2 * tables[drawn, numpy.arange(groups)].sum(axis=1) - padded.sum()
    return (1 + int((numpy.abs(sums) >= reach).sum())) / (1 + DRAWS), "sign_flip_mc"


def p_text(p: float | None, alpha: float = ALPHA) -> str:
    """A p-value to three significant digits, more where three would round it across ``alpha``
    (0.04996 is "0.04996", not "0.05"), so what is printed is on the side of alpha it is on."""
    if p is None:
        return "-"
    for digits in range(3, 18):
        text = f"{p:.{digits}g}"
        if (float(text) < alpha) == (p < alpha):
            return text
    return repr(p)


def paired(
    base: Sequence[float],
    other: Sequence[float],
    weights: Sequence[float] | None = None,
    alpha: float = ALPHA,
) -> PairedTest | None:
    """Compare ``other`` with ``base`` pair by pair (NaN on either side leaves a pair out; each
    pair weighs its weight, 1 by default), the interval at ``1 - alpha``; None when no pair is
    left.  The result depends on the pairs alone, not on their order: sums are exactly rounded
    and what is seeded puts its values in order first."""
    if weights is None:
        kept = [(b, o) for b, o in zip(base, other, strict=True) if b == b and o == o]
        w = None
    else:
        triples = [
            (b, o, float(x)) for b, o, x in zip(base, other, weights, strict=True) if b == b and o == o
        ]
        kept, w = [(b, o) for b, o, _ in triples], [x for _, _, x in triples]
    n = len(kept)
    total = float(n) if w is None else exact_sum(w)
    if not n or not total > 0:
        return None
    differences = [o - b for b, o in kept]
    terms = differences if w is None else [d * x for d, x in zip(differences, w, strict=True)]
    delta = exact_sum(terms) / total
    if not math.isfinite(delta):  # differences too large to add up
        return None
    confidence = 1 - alpha
    binary = is_binary([b for b, _ in kept]) and is_binary([o for _, o in kept])
    lost = sum(1 for d in differences if d < 0) if binary else 0
    gained = sum(1 for d in differences if d > 0) if binary else 0
    if n < 2 or not any(differences):  # nothing to test
        return PairedTest(delta, None, None, None, n, None, lost, gained, None, confidence)
    stderr = _stderr(differences, w, delta, total)
    if n < BOOTSTRAP_BELOW:
        low, high = spread(bootstrap_means(differences, w), confidence)
    else:  # Student's t interval, as mean_interval gives it
        half = t_quantile((1 + confidence) / 2, n - 1) * stderr
        low, high = delta - half, delta + half
    if binary:
        p, test = mcnemar_p(lost, gained), "mcnemar"
    elif n <= MONTE_CARLO_UP_TO:
        p, test = sign_flip_p(terms)
    else:
        p = (1.0 if delta == 0 else 0.0) if stderr == 0 else t_p_value(delta / stderr, n - 1)
        test = "t"
    return PairedTest(delta, low, high, p, n, test, lost, gained, mdd(stderr, n, alpha), confidence)


def mdd(stderr: float, n: int, alpha: float = ALPHA) -> float | None:
    """The minimum detectable difference at :data:`POWER`, two-sided at ``alpha``, of a mean
    difference with standard error ``stderr`` over ``n`` pairs: ``(t(1 - alpha/2) + t(POWER)) *
    stderr`` with ``n - 1`` degrees of freedom; None when no ``n`` pairs could be significant
    (the most extreme of them give ``p = 2 / 2^n``, not below ``alpha``)."""
    if n < 2 or 2 / 2**n >= alpha:
        return None
    return (t_quantile(1 - alpha / 2, n - 1) + t_quantile(POWER, n - 1)) * stderr


def _stderr(differences: list[float], weights: list[float] | None, delta: float, total: float) -> float:
    """The standard error of the (weighted) mean difference, as :func:`mean_interval` has it:
    ``sqrt(n / (n - 1) * sum((w * (d - delta))^2)) / sum(w)``."""
    n = len(differences)
    if weights is None:
        spread_ = exact_sum([square(d - delta) for d in differences])
    else:
        spread_ = exact_sum([square(x * (d - delta)) for d, x in zip(differences, weights, strict=True)])
    return math.sqrt(n / (n - 1) * spread_) / total
