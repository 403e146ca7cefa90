"""The statistics against independent oracles: hand-computed cases, exact binomial sums for
McNemar, published tables for Student's t and Krippendorff's worked example."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from context_bench.metrics.agreement import krippendorff_alpha
from context_bench.metrics.interval import mean_interval
from context_bench.metrics.intervals import BOOTSTRAP_BELOW, estimate, wilson
from context_bench.metrics.paired import mcnemar_p, paired, t_p_value

NAN = math.nan


def test_wilson_matches_hand_computed_intervals():
    # p = 0.8, n = 10, z = 1.959964: (p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)
    low, high = wilson(8, 10)
    assert low == pytest.approx(0.4901625, abs=1e-6) and high == pytest.approx(0.9433178, abs=1e-6)
    low, high = wilson(0, 10)  # at 0% the interval still has width: 0 to z²/(n + z²)
    assert low == pytest.approx(0.0, abs=1e-12) and high == pytest.approx(
        1.959964**2 / (10 + 1.959964**2), abs=1e-6
    )


def test_each_kind_of_score_gets_its_method():
    binary = estimate([1.0, 0.0, 1.0, 1.0, NAN])
    assert (binary.method, binary.n, binary.mean) == ("wilson", 4, 0.75)
    assert [binary.low, binary.high] == list(wilson(3, 4))
    assert binary.stderr == pytest.approx(math.sqrt(0.75 * 0.25 / 4))
    small = [0.1 * (i % 7) + 0.05 for i in range(50)]
    boot = estimate(small)
    assert boot.method == "bootstrap" and boot.low < boot.mean < boot.high
    assert estimate(small[::-1]) == boot  # seeded by the values: the same interval in any order
    assert estimate([*small[:-1], 0.07]) != boot
    # the bootstrap's standard error is close to s / sqrt(n)
    s = math.sqrt(sum((x - boot.mean) ** 2 for x in small) / 49)
    assert boot.stderr == pytest.approx(s / math.sqrt(50), rel=0.15)
    large = [random.Random(1).random() for _ in range(BOOTSTRAP_BELOW)]
    t = estimate(large)
    reference = mean_interval(large)
    assert t.method == "t" and (t.low, t.high) == (reference.low, reference.high)
    one = estimate([0.4])
    assert (one.mean, one.low, one.high, one.stderr) == (0.4, None, None, None)
    assert estimate([NAN, NAN]) is None


def _binomial_p(lost: int, gained: int) -> float:
    n = lost + gained
    tail = sum(Fraction(math.comb(n, i), 2**n) for i in range(min(lost, gained) + 1))
    return float(min(Fraction(1), 2 * tail))


@pytest.mark.parametrize("lost, gained", [(0, 0), (0, 5), (1, 4), (3, 3), (10, 2), (7, 20), (40, 25)])
def test_mcnemar_is_the_exact_binomial_tail(lost, gained):
    assert mcnemar_p(lost, gained) == pytest.approx(_binomial_p(lost, gained), rel=1e-12)


def test_mcnemar_by_hand_and_past_the_exact_range():
    assert mcnemar_p(0, 5) == 2 / 32 and mcnemar_p(1, 4) == 2 * 6 / 32
    assert mcnemar_p(1500, 1600) == pytest.approx(_binomial_p(1500, 1600), rel=1e-9)


def test_t_p_values_match_the_tables():
    assert t_p_value(2.262157, 9) == pytest.approx(0.05, abs=1e-5)
    assert t_p_value(-2.0, 30) == pytest.approx(0.05462, abs=1e-4)
    assert t_p_value(1.959964, 100_000) == pytest.approx(0.05, abs=1e-4)
    assert t_p_value(1.962346, 1000) == pytest.approx(0.05, abs=1e-4)  # t(0.975, 1000) = 1.962346


def test_paired_picks_mcnemar_for_verdicts():
    base = [1.0] * 6 + [0.0] * 4
    other = [1.0] * 2 + [0.0] * 4 + [1.0] * 1 + [0.0] * 3
    test = paired(base, other)
    assert (test.test, test.lost, test.gained, test.n) == ("mcnemar", 4, 1, 10)
    assert test.delta == pytest.approx(-0.3) and test.p_value == pytest.approx(_binomial_p(4, 1))
    assert paired([1.0, NAN], [NAN, 0.0]) is None  # no pair has both sides


def test_paired_is_seeded_by_its_pairs_and_sees_a_clear_difference():
    rng = random.Random(5)
    base = [rng.random() for _ in range(200)]
    other = [b - 0.2 + rng.gauss(0, 0.05) for b in base]
    test = paired(base, other)
    assert test.test == "sign_flip_mc" and test.high < 0 and test.p_value == 1 / 10_001
    assert paired(base[::-1], other[::-1]) == test  # the pairs alone decide, not their order
    same = paired(base, base)
    assert (same.delta, same.p_value, same.low, same.high, same.test) == (0.0, None, None, None, None)


def test_paired_t_test_above_the_bootstrap_range():
    differences = [0.1 if i % 2 else -0.05 for i in range(2000)]  # mean 0.025, sd ~0.075
    test = paired([0.5] * 2000, [0.5 + d for d in differences])
    mean = sum(differences) / 2000
    sd = math.sqrt(sum((d - mean) ** 2 for d in differences) / 1999)
    assert test.test == "t" and test.delta == pytest.approx(mean)
    assert test.p_value == pytest.approx(t_p_value(mean / (sd / math.sqrt(2000)), 1999), rel=1e-6)
    assert test.p_value < 1e-10


def test_krippendorff_alpha_on_krippendorffs_worked_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers, 12 units,
    # interval alpha 0.849 (nominal 0.743)
    data = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
        [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
    ]
    units = [[float(coder[i]) for coder in data] for i in range(12)]
    assert krippendorff_alpha(units) == pytest.approx(0.849, abs=5e-4)


def test_krippendorff_alpha_by_hand_on_verdicts():
    # nominal by the coincidence matrix: n = 8, n_0 = 5, n_1 = 3, o_01 = o_10 = 1:
    # alpha = 1 - (n - 1) * 2 / (2 * 5 * 3) = 1 - 14/30
    assert krippendorff_alpha([[1, 1], [0, 0], [1, 0], [0, 0]]) == pytest.approx(1 - 14 / 30)
    assert krippendorff_alpha([[1, 1], [0, 0]]) == 1.0
    assert krippendorff_alpha([[1, NAN], [0, NAN]]) is None  # no row has two verdicts
    assert krippendorff_alpha([[1, 1], [1, 1]]) is None  # no variation: nothing to agree on
