"""The paired tests, intervals and minimum detectable difference against independent oracles:
every sign pattern enumerated by hand, binomial sums, scipy's permutation test, paired t-test,
Wilcoxon and binomial test, numpy's percentiles of the seeded resamples, statsmodels' Wilson
interval and power solver; at n = 1, 2, 3, ties, constant differences, all 0, all 1 and large n."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import numpy
import pytest
from scipy import stats
from statsmodels.stats.power import TTestPower
from statsmodels.stats.proportion import proportion_confint

from context_bench.metrics.intervals import bootstrap_means, data_seed, estimate, wilson
from context_bench.metrics.paired import DRAWS, mdd, p_text, paired, sign_flip_p


def enumerated_p(differences: list[Fraction]) -> Fraction:
    """The exact two-sided sign-flip p-value by hand: the share of all 2^n sign patterns whose
    sum is at least as far from 0 as the observed sum (exact fractions: no rounding at all)."""
    observed = abs(sum(differences))
    patterns = list(itertools.product((1, -1), repeat=len(differences)))
    far = sum(
        1
        for signs in patterns
        if abs(sum(s * d for s, d in zip(signs, differences, strict=True))) >= observed
    )
    return Fraction(far, len(patterns))


@pytest.mark.parametrize(
    "differences",
    [
        [Fraction(1, 2), Fraction(1, 2)],  # n = 2, constant: 2 of 4 patterns
        [Fraction(-1, 4)] * 3,  # n = 3, constant: 2 / 8 (the bootstrap said 0.002)
        [Fraction(1, 8), Fraction(-3, 8), Fraction(5, 8), Fraction(1, 2)],
        [Fraction(k, 16) for k in (3, -1, 4, -1, 5, 9, -2, 6, 5, 3)],
        [Fraction(k, 32) for k in (-7, -3, -12, 1, -9, -4, -15, -2, -6, -11, -5, 2)],
    ],
)
def test_the_exact_sign_flip_p_is_the_enumerated_share_of_sign_patterns(differences):
    base = [0.5] * len(differences)
    other = [0.5 + float(d) for d in differences]
    test = paired(base, other)
    assert test.test == "sign_flip"
    assert test.p_value == float(enumerated_p(differences))


def test_the_exact_sign_flip_p_matches_scipys_permutation_test_at_n_12_and_16():
    rng = random.Random(3)
    for n in (12, 16):
        base = [rng.random() for _ in range(n)]
        other = [b + rng.gauss(0.1, 0.3) for b in base]
        test = paired(base, other)
        oracle = stats.permutation_test(
            (numpy.array(other), numpy.array(base)),
            lambda x, y, axis: numpy.mean(x - y, axis=axis),
            permutation_type="samples",
            n_resamples=math.inf,
            vectorized=True,
        ).pvalue
        assert test.test == "sign_flip" and test.p_value == pytest.approx(oracle, rel=1e-12)


def test_three_constant_pairs_give_the_exact_tests_quarter_as_wilcoxon_does():
    """The issue's case: 3 pairs, each 0.5 lower.  The exact sign-flip test (and Wilcoxon) give
    0.25; scipy's paired t cannot tell a constant difference (no variance)."""
    base, other = [0.9, 0.8, 0.7], [0.4, 0.3, 0.2]
    test = paired(base, other)
    assert (test.test, test.p_value, test.n) == ("sign_flip", 0.25, 3)
    assert stats.wilcoxon(other, base).pvalue == 0.25
    assert test.mdd is None and (test.low, test.high) == pytest.approx(
        (-0.5, -0.5)
    )  # no n = 3 can be significant


def test_the_smallest_p_of_each_test():
    """Issue 26 item 5: the exact smallest p-value each estimator can give for a clear difference
    (the +1 of the Monte Carlo estimate keeps it above 0)."""
    for n in (5, 12, 20):  # exact: all + and all - of 2^n patterns
        assert paired([0.9] * n, [0.2 + 0.01 * i for i in range(n)]).p_value == 2 / 2**n
    for n in (21, 50, 1000):  # Monte Carlo: none of the 10,000 draws as far, plus one
        test = paired([0.9] * n, [0.2 + 0.0001 * i for i in range(n)])
        assert (test.test, test.p_value) == ("sign_flip_mc", 1 / 10_001)
    assert DRAWS == 10_000


def test_differences_of_one_size_give_the_binomial_p_exactly_then_within_the_draws_error():
    """Differences of equal size: the sign-flip null is a binomial (the count of + signs), so the
    exact p is a binomial sum.  Up to 20 pairs the test counts it exactly; beyond, the Monte Carlo
    estimate of 10,000 draws is within 4 of its standard errors (seeded: the same every run)."""
    for n, negative in ((6, 0), (13, 3), (20, 6), (20, 10), (30, 10), (41, 13), (200, 85), (1000, 470)):
        differences = [-0.25] * negative + [0.25] * (n - negative)
        k = min(negative, n - negative)
        exact = min(Fraction(1), Fraction(2 * sum(math.comb(n, i) for i in range(k + 1)), 2**n))
        test = paired([0.5] * n, [0.5 + d for d in differences])
        if n <= 20:
            assert (test.test, test.p_value) == ("sign_flip", float(exact))
            continue
        error = math.sqrt(exact * (1 - exact) / DRAWS) + 1 / DRAWS
        assert test.test == "sign_flip_mc" and abs(test.p_value - exact) <= 4 * error, (
            n,
            test.p_value,
            exact,
        )


def test_past_1000_pairs_the_paired_t_test_as_scipy_gives_it():
    rng = random.Random(11)
    base = [rng.random() for _ in range(1500)]
    other = [b - 0.01 + rng.gauss(0, 0.1) for b in base]
    test = paired(base, other)
    assert test.test == "t"  # past 200 degrees of freedom t's tail comes from the corrected normal's
    assert test.p_value == pytest.approx(stats.ttest_rel(other, base).pvalue, rel=1e-3)
    low, high = stats.ttest_rel(other, base).confidence_interval(0.95)
    assert (test.low, test.high) == pytest.approx((low, high), rel=1e-9)


@pytest.mark.parametrize("lost, gained", [(3, 0), (0, 5), (1, 4), (8, 2), (20, 7), (300, 250)])
def test_mcnemar_on_0_1_scores_is_scipys_exact_binomial_test(lost, gained):
    ties = 4
    base = [1.0] * lost + [0.0] * gained + [1.0] * ties
    other = [0.0] * lost + [1.0] * gained + [1.0] * ties
    test = paired(base, other)
    oracle = stats.binomtest(min(lost, gained), lost + gained, 0.5).pvalue
    assert (test.test, test.lost, test.gained) == ("mcnemar", lost, gained)
    assert test.p_value == pytest.approx(oracle, rel=1e-9)


@pytest.mark.parametrize(
    "base, other",
    [
        ([0.4], [0.9]),  # n = 1: no test is possible
        ([0.4, 0.7], [0.4, 0.7]),  # every pair tied
        ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0]),  # all 0 on both sides
        ([1.0, 1.0], [1.0, 1.0]),  # all 1
        ([1.0, 0.0, 1.0], [1.0, 0.0, 1.0]),  # 0/1, no discordant pair
    ],
)
def test_nothing_to_test_has_no_p_value_no_interval_and_no_mdd(base, other):
    test = paired(base, other)
    assert (test.p_value, test.low, test.high, test.test, test.mdd) == (None, None, None, None, None)
    assert test.delta == pytest.approx(sum(other) / len(other) - sum(base) / len(base))


def test_three_of_three_rows_lost_is_not_significant():
    """McNemar's p of 3 discordant pairs, all lost, is 2/8: the bootstrap interval [-1, -1] alone
    would have called it a loss."""
    test = paired([1.0] * 3, [0.0] * 3)
    assert (test.test, test.p_value, test.low, test.high, test.delta) == ("mcnemar", 0.25, -1.0, -1.0, -1.0)


def test_the_interval_bounds_are_the_percentiles_of_the_seeded_resamples():
    """Issue 26 item 6: the 95% interval's bounds are the 2.5th and 97.5th percentiles (numpy's)
    of the 1,000 resample means, drawn with the seed of the values: n indices per resample from
    the values in sorted order."""
    rng = random.Random(2)
    base = [rng.random() for _ in range(60)]
    other = [b + rng.gauss(-0.05, 0.2) for b in base]
    differences = numpy.sort(numpy.array(other) - numpy.array(base))
    ones = numpy.ones(60)
    picks = numpy.random.default_rng(data_seed(differences, ones)).integers(0, 60, size=(1000, 60))
    means = differences[picks].mean(axis=1)
    low, high = numpy.percentile(means, [2.5, 97.5])
    test = paired(base, other)
    assert (test.low, test.high) == pytest.approx((low, high), rel=1e-12)
    found = estimate(list(differences))  # a mean's interval: the same resamples of the same values
    assert found.method == "bootstrap" and (found.low, found.high) == pytest.approx((low, high), rel=1e-12)
    at_90 = paired(base, other, alpha=0.10)
    assert (at_90.low, at_90.high) == pytest.approx(tuple(numpy.percentile(means, [5, 95])), rel=1e-12)


def test_0_1_resamples_are_multinomial_draws_of_the_distinct_pairs():
    """Few distinct values (0/1 differences): a resample is how many of each it holds, one
    multinomial draw with the same seed; its interval is their percentiles all the same."""
    differences = numpy.array([-1.0] * 9 + [0.0] * 25 + [1.0] * 6)
    seed = data_seed(differences, numpy.ones(40))
    counts = numpy.random.default_rng(seed).multinomial(40, [9 / 40, 25 / 40, 6 / 40], size=1000)
    means = numpy.sort(counts @ numpy.array([-1.0, 0.0, 1.0]) / 40)
    assert list(bootstrap_means(list(differences))) == pytest.approx(list(means), abs=1e-15)
    test = paired([1.0] * 9 + [0.0] * 6 + [1.0] * 25, [0.0] * 9 + [1.0] * 6 + [1.0] * 25)
    assert (test.low, test.high) == pytest.approx(tuple(numpy.percentile(means, [2.5, 97.5])), abs=1e-12)


def test_a_seed_is_the_values_own():
    values = [0.25, 0.5, 0.125, 0.75]
    assert data_seed(values) == data_seed(values[::-1]) != data_seed([0.25, 0.5, 0.125, 0.875])
    assert data_seed(values, [1.0] * 4) != data_seed(values, [2.0, 1.0, 1.0, 1.0])
    rng = random.Random(4)
    pairs = [(rng.random(), rng.random()) for _ in range(50)]
    shuffled = rng.sample(pairs, len(pairs))
    once = paired([b for b, _ in pairs], [o for _, o in pairs])
    assert paired([b for b, _ in shuffled], [o for _, o in shuffled]) == once


def test_wilson_is_statsmodels_wilson():
    for successes, n in ((0, 1), (1, 1), (1, 2), (2, 3), (6, 10), (0, 40), (37, 40), (512, 999)):
        assert wilson(successes, n) == pytest.approx(
            proportion_confint(successes, n, alpha=0.05, method="wilson"), abs=1e-12
        )
    found = estimate(
        [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    )  # the interval assert_scores showed as 0.125..1.209
    assert found.method == "wilson"
    assert (found.low, found.high) == pytest.approx(proportion_confint(2, 8, method="wilson"), abs=1e-12)


def test_the_minimum_detectable_difference():
    """(t(1 - alpha/2, n-1) + t(0.8, n-1)) * se, t from scipy; within 1% of statsmodels' exact
    solution (the noncentral t) from 10 pairs on; none where no n pairs can be significant."""
    differences = [-0.5, 0.25, -0.25, 0.0, 0.5, -0.75, 0.25, -0.5, 0.0, -0.25, 0.5, -0.25]
    n = len(differences)
    se = stats.tstd(differences) / math.sqrt(n)
    hand = (stats.t.ppf(0.975, n - 1) + stats.t.ppf(0.8, n - 1)) * se
    test = paired([0.5] * n, [0.5 + d for d in differences])
    assert test.mdd == pytest.approx(hand, rel=1e-9)
    assert paired([0.5] * n, [0.5 + d for d in differences], alpha=0.01).mdd == pytest.approx(
        (stats.t.ppf(0.995, n - 1) + stats.t.ppf(0.8, n - 1)) * se, rel=1e-9
    )
    for pairs in (10, 20, 30, 100, 800):
        exact = TTestPower().solve_power(nobs=pairs, alpha=0.05, power=0.8, alternative="two-sided")
        assert mdd(1 / math.sqrt(pairs), pairs) == pytest.approx(exact, rel=0.01)
    # 2 / 2^5 = 0.0625: five pairs cannot reach 0.05; six can (2 / 64)
    assert mdd(0.1, 5) is None and mdd(0.1, 6) is not None and mdd(0.1, 5, alpha=0.1) is not None


def test_a_printed_p_is_on_its_side_of_alpha():
    assert p_text(0.0499, 0.05) == "0.0499" and p_text(0.04996, 0.05) == "0.04996"
    assert p_text(0.05, 0.05) == "0.05" and p_text(2 / 2**8) == "0.00781" and p_text(None) == "-"


def test_the_sign_flip_p_ignores_zero_differences():
    """A zero difference is the same under either sign: the exact test counts patterns of the
    nonzero ones, so 20 that differ among 30 pairs are still counted exactly."""
    nonzero = [0.1 * (i % 5) + 0.05 for i in range(20)]
    assert sign_flip_p(nonzero + [0.0] * 10) == sign_flip_p(nonzero) == (2 / 2**20, "sign_flip")
