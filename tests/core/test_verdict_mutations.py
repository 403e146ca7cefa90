"""The bugs the mutation check (bench/mutations.py, issue 26) planted in the verdicts code that no
other test caught, each pinned by hand-worked figures at n = 1, 2, 3 and by an oracle (scipy, or
numpy's percentiles of the same seeded resamples) at larger n: weights and NaN pairs in the paired
test, the edge of the minimum detectable difference and of significance at alpha, the interval's
level following alpha, pairs matched by id whatever the rows' order, and a gate that reads the
comparison against its own baseline."""

from __future__ import annotations

import math
import random

import numpy
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from context_bench._summary import Summarizer
from context_bench.analysis import Analysis
from context_bench.comparisons import verdict
from context_bench.gates import GATE_FAILED, OK, Gates
from context_bench.metrics.intervals import Estimate, data_seed, estimate, finite, wilson
from context_bench.metrics.paired import mdd, paired
from context_bench.records import EvalResult, EvalRow


def resampled_means(values, weights=None):
    """The oracle of a bootstrap over distinct values: 1,000 resamples of n indices drawn with the
    values' own seed, over the (value, weight) rows in sorted order, as weighted means in order."""
    weights = [1.0] * len(values) if weights is None else weights
    rows = numpy.array(sorted(zip(values, weights, strict=True)))
    data, weight = rows[:, 0], rows[:, 1]
    picks = numpy.random.default_rng(data_seed(data, weight)).integers(0, len(data), (1000, len(data)))
    return numpy.sort((data[picks] * weight[picks]).sum(axis=1) / weight[picks].sum(axis=1))


def test_weighted_pairs_weigh_in_the_difference_its_test_and_its_resamples():
    """``other - base`` of 1, 0.5 and 0 weighing 2, 1, 1: delta (2 + 0.5) / 4, not 1.5 / 3; the
    sign-flip terms are 2 and 0.5, whose 4 patterns sum to +-2.5 and +-1.5 (p = 2/4)."""
    one = paired([0.0], [1.0], [3.0])
    assert (one.delta, one.p_value, one.low, one.test) == (1.0, None, None, None)
    two = paired([0.0, 0.0], [1.0, 0.5], [3.0, 1.0])
    assert (two.delta, two.p_value, two.test, two.n) == (3.5 / 4, 0.5, "sign_flip", 2)
    three = paired([0.0, 0.0, 0.0], [1.0, 0.5, 0.0], [2.0, 1.0, 1.0])
    assert (three.delta, three.p_value, three.test, three.n) == (0.625, 0.5, "sign_flip", 3)
    differences = [0.125 * k for k in (1, -2, 3, 5, -1, 4, 6, 2)]
    weights = [1.0, 3.0, 2.0, 1.0, 4.0, 2.0, 1.0, 3.0]
    test = paired([0.5] * 8, [0.5 + d for d in differences], weights)
    assert test.delta == sum(d * w for d, w in zip(differences, weights, strict=True)) / 17
    low, high = numpy.percentile(resampled_means(differences, weights), [2.5, 97.5])
    assert (test.low, test.high) == pytest.approx((low, high), rel=1e-12)


def test_a_pair_with_nan_on_either_side_is_left_out():
    assert paired([math.nan], [1.0]) is None and paired([0.5], [math.nan]) is None
    one = paired([math.nan, 0.5], [1.0, 0.75])
    assert (one.delta, one.n, one.p_value) == (0.25, 1, None)
    two = paired([0.25, 0.5, 0.5, math.nan], [0.75, math.nan, 1.0, 0.5])  # +0.5 twice: 2 of 4 patterns
    assert (two.delta, two.n, two.p_value, two.test) == (0.5, 2, 0.5, "sign_flip")
    three = paired([1.0, 1.0, math.nan, 1.0, 1.0], [0.0, 0.0, 0.0, math.nan, 0.0])
    assert (three.delta, three.n, three.lost, three.p_value, three.test) == (-1.0, 3, 3, 0.25, "mcnemar")


def test_no_mdd_where_the_most_extreme_pairs_only_reach_alpha():
    """n pairs reach p = 2 / 2^n at best: at alpha 0.25 three pairs (2/8) cannot be significant, four
    can; at alpha 0.5 two cannot.  Where they can, (t(1 - alpha/2) + t(0.8)) * se, t from scipy."""

    def scipys(alpha, n):
        return (stats.t.ppf(1 - alpha / 2, n - 1) + stats.t.ppf(0.8, n - 1)) * 0.1

    assert mdd(0.1, 1, alpha=0.5) is None and mdd(0.1, 2, alpha=0.5) is None
    assert mdd(0.1, 3, alpha=0.5) == pytest.approx(scipys(0.5, 3), rel=1e-9)
    assert mdd(0.1, 3, alpha=0.25) is None
    assert mdd(0.1, 4, alpha=0.25) == pytest.approx(scipys(0.25, 4), rel=1e-9)
    assert paired([0.5] * 3, [0.25, 0.75, 1.0], alpha=0.25).mdd is None


def lost(n):
    """``n`` rows of f1 that the baseline passed and the system failed."""
    rows = [EvalRow("base", "qa", f"q{i}", {"f1": 1.0}) for i in range(n)]
    return rows + [EvalRow("new", "qa", f"q{i}", {"f1": 0.0}) for i in range(n)]


def only(summary):
    (found,) = summary.comparisons
    return found


def test_a_p_value_equal_to_alpha_is_not_significant():
    """3 of 3 lost: McNemar's p = 2/8 = 0.25; 5 of 5: 2/32 = 0.0625.  Significant means p < alpha."""
    at = {alpha: only(Summarizer(analysis=Analysis(alpha=alpha))(lost(3))) for alpha in (0.05, 0.25, 0.3)}
    assert [(c.p_value, c.significant) for c in at.values()] == [(0.25, False), (0.25, False), (0.25, True)]
    five = paired([1.0] * 5, [0.0] * 5)
    assert five.p_value == 0.0625
    assert verdict(five, 0.0625)["significant"] is False and verdict(five, 0.0626)["significant"] is True
    one = only(Summarizer(analysis=Analysis(alpha=0.5))(lost(1)))  # p = 2/2 = 1: never
    assert (one.p_value, one.significant, one.ci) == (None, None, None)


def test_the_comparisons_interval_and_mdd_are_at_the_runs_alpha():
    """At --alpha 0.1 a comparison's interval is the 5th and 95th percentiles of the seeded
    resamples of its differences, and its mdd uses t(0.95)."""
    rng = random.Random(5)
    base = [rng.random() for _ in range(40)]
    new = [min(1.0, max(0.0, b + rng.gauss(-0.1, 0.2))) for b in base]
    rows = [EvalRow("base", "qa", f"q{i}", {"f1": b}) for i, b in enumerate(base)]
    rows += [EvalRow("new", "qa", f"q{i}", {"f1": o}) for i, o in enumerate(new)]
    c = only(Summarizer(analysis=Analysis(alpha=0.1))(rows))
    differences = [o - b for b, o in zip(base, new, strict=True)]
    assert c.ci == pytest.approx(list(numpy.percentile(resampled_means(differences), [5, 95])), rel=1e-12)
    se = stats.tstd(differences) / math.sqrt(40)
    assert c.mdd == pytest.approx((stats.t.ppf(0.95, 39) + stats.t.ppf(0.8, 39)) * se, rel=1e-9)


def test_rows_pair_by_id_whatever_order_the_system_gave_them_in():
    """The baseline passes q0 and q2; the system, its rows in reverse order, passes q2 alone: q0 is
    lost and nothing gained (paired by position, q3 and q1 would read lost and q2 gained)."""
    rows = [EvalRow("base", "qa", f"q{i}", {"f1": f1}) for i, f1 in enumerate((1.0, 0.0, 1.0, 0.0))]
    rows += [EvalRow("new", "qa", f"q{i}", {"f1": 1.0 if i == 2 else 0.0}) for i in (3, 2, 1, 0)]
    c = only(Summarizer()(rows))
    assert (c.delta, c.lost, c.gained, c.n, c.p_value) == (-0.25, ["q0"], [], 4, 1.0)


def test_the_gate_compares_with_its_own_baseline_when_the_result_was_summarized_with_another():
    """The run's summary compares b with a (its first system); the gate names b as the baseline,
    so it reads a minus b: 8 of 10 lost, McNemar's p = 2/2^8, a failure."""
    rows = [EvalRow("a", "qa", f"q{i}", {"f1": 1.0 if i < 2 else 0.0}) for i in range(10)]
    rows += [EvalRow("b", "qa", f"q{i}", {"f1": 1.0}) for i in range(10)]
    summarize = Summarizer()
    result = EvalResult(rows=rows, summary=summarize(rows), summarize=summarize)
    assert [(c.system, c.baseline, c.delta) for c in result.summary.comparisons] == [("b", "a", 0.8)]
    verdict_ = Gates.parse(fail_if_worse=["f1"], baseline="b").judge(result)
    assert verdict_.status == GATE_FAILED
    (line,) = verdict_.lines
    assert line.startswith("gate failed: --fail-if-worse f1: f1 of a minus the baseline b on qa is -0.800")
    assert "(McNemar's exact test, p=0.00781 < alpha 0.05)" in line
    assert Gates.parse(fail_if_worse=["f1"], baseline="a").judge(result).status == OK


@pytest.mark.parametrize("values", [[0.25, 0.75], [0.25, 0.5, 1.0], [0.1 * k for k in range(1, 31)]])
def test_a_means_bootstrap_interval_is_at_the_confidence_asked(values):
    found = estimate(values, confidence=0.9)
    assert found.method == "bootstrap" and found.mean == pytest.approx(sum(values) / len(values))
    low, high = numpy.percentile(resampled_means(values), [5, 95])
    assert (found.low, found.high) == pytest.approx((low, high), rel=1e-12)


def test_a_proportions_interval_never_leaves_0_to_1():
    """Wilson's interval of 0 of n is [0, (z^2/n) / (1 + z^2/n)] and of n of n its mirror, inside
    0..1 however it rounds: unclamped, 0 of 21 starts at -1.4e-17 (a report's "-0.000") and 9 of 9
    ends at 1.0000000000000002."""
    z2 = stats.norm.ppf(0.975) ** 2
    for n in range(1, 101):
        low, high = wilson(0, n)
        assert 0.0 <= low == pytest.approx(0.0, abs=1e-15) and high == pytest.approx(z2 / n / (1 + z2 / n))
        low, high = wilson(n, n)
        assert 1.0 >= high == pytest.approx(1.0) and low == pytest.approx(1 / (1 + z2 / n), rel=1e-12)
    assert wilson(0, 21)[0] == 0.0 and wilson(9, 9)[1] == 1.0
    assert estimate([0.0] * 21).low == 0.0 and estimate([1.0] * 9).high == 1.0


def test_infinities_and_nan_are_no_values_of_a_mean():
    assert finite([1.0, math.inf, math.nan, -math.inf, 2.0]) == [1.0, 2.0]
    one = estimate([math.inf, 0.5, -math.inf])
    assert (one.mean, one.n, one.low, one.method) == (0.5, 1, None, "bootstrap")
    two = estimate([0.0, math.inf, 1.0])  # 1 of 2: Wilson's interval, as statsmodels has it
    assert (two.mean, two.n, two.method) == (0.5, 2, "wilson")
    assert (two.low, two.high) == pytest.approx(proportion_confint(1, 2, method="wilson"), abs=1e-12)
    three = estimate([0.25, math.nan, 0.5, -math.inf, 0.75])
    assert (three.mean, three.n, three.method) == (0.5, 3, "bootstrap")


def test_a_means_standard_error_is_scipys_from_1000_values_and_the_resamples_below():
    rng = random.Random(8)
    for n in (1000, 1500):
        values = [rng.random() for _ in range(n)]
        found = estimate(values)
        assert (found.method, found.n) == ("t", n)
        assert found.stderr == pytest.approx(stats.sem(values), rel=1e-12)
        interval = stats.t.interval(0.95, n - 1, loc=found.mean, scale=stats.sem(values))
        assert (found.low, found.high) == pytest.approx(interval, rel=1e-9)
    values = [0.125, 0.5, 0.875]
    assert estimate(values).stderr == pytest.approx(float(resampled_means(values).std(ddof=1)), rel=1e-12)


def test_one_value_has_no_interval_whatever_its_kind():
    assert estimate([1.0]) == Estimate(1.0, None, None, None, 1, "wilson")
    assert estimate([0.0, math.nan]) == Estimate(0.0, None, None, None, 1, "wilson")
    assert estimate([0.25]) == Estimate(0.25, None, None, None, 1, "bootstrap")
    assert estimate([math.nan]) is None
