"""The mutations of the verdicts code (bench/mutation.py plants them; ``mutations.py`` says what a
mutation is): the paired test, the intervals, the row metrics, the gates, the comparisons and the
one definition of a field's direction they all read (``direction.py``, issue 34).
"""

from __future__ import annotations

from mutations import CORE, Area, Mutation

STATISTICS = (
    "tests/core/test_paired_tests.py",
    "tests/core/test_statistics.py",
    "tests/core/test_verdict_mutations.py",
    "tests/core/test_comparisons.py",
    "tests/core/test_metrics.py",
    "tests/core/test_figures.py",
    "tests/core/test_gates.py",
    "tests/core/test_verdicts.py",
)
DIRECTIONS = (
    "tests/core/test_direction.py",
    "tests/core/test_gates.py",
    "tests/core/test_comparisons.py",
    "tests/core/test_errored_rows.py",
    "tests/core/test_metrics.py",
)
GATES = (
    "tests/core/test_verdict_mutations.py",
    "tests/core/test_gates.py",
    "tests/core/test_errored_rows.py",
    "tests/core/test_verdicts.py",
)

PAIRED = CORE + "metrics/paired.py"
INTERVALS = CORE + "metrics/intervals.py"
INTERVAL = CORE + "metrics/interval.py"
AGGREGATE = CORE + "metrics/_aggregate.py"
DIRECTION = CORE + "direction.py"

VERDICTS = (
    Area(
        "paired",
        STATISTICS,
        (
            Mutation("paired-sign", PAIRED, "differences = [o - b for", "differences = [b - o for"),
            Mutation(
                "monte-carlo-p-without-plus-one",
                PAIRED,
                "return (1 + int((numpy.abs(sums) >= reach).sum())) / (1 + DRAWS)",
                "return int((numpy.abs(sums) >= reach).sum()) / DRAWS",
            ),
            Mutation(
                "observed-pattern-not-counted",
                PAIRED,
                "reach = observed - 1e-9 *",
                "reach = observed + 1e-9 *",
            ),
            Mutation(
                "exact-sign-flip-one-short",
                PAIRED,
                "if len(nonzero) <= EXACT_UP_TO:",
                "if len(nonzero) < EXACT_UP_TO:",
            ),
            Mutation(
                "monte-carlo-one-short",
                PAIRED,
                "elif n <= MONTE_CARLO_UP_TO:",
                "elif n < MONTE_CARLO_UP_TO:",
            ),
            Mutation("mcnemar-one-sided", PAIRED, "return min(1.0, 2 * tail)", "return min(1.0, tail)"),
            Mutation(
                "mcnemar-tail-without-k",
                PAIRED,
                "sum(math.comb(n, i) for i in range(k + 1))",
                "sum(math.comb(n, i) for i in range(k))",
            ),
            Mutation(
                "t-p-one-sided",
                PAIRED,
                "return max(0.0, 1.0 - _within(t, df))",
                "return max(0.0, (1.0 - _within(t, df)) / 2)",
            ),
            Mutation(
                "t-p-normal-one-sided",
                PAIRED,
                "return 2 * (1 - NormalDist().cdf(z))",
                "return 1 - NormalDist().cdf(z)",
            ),
            Mutation(
                "binary-on-one-side",
                PAIRED,
                "binary = is_binary([b for b, _ in kept]) and is_binary(",
                "binary = is_binary([b for b, _ in kept]) or is_binary(",
            ),
            Mutation(
                "lost-counts-gains",
                PAIRED,
                "lost = sum(1 for d in differences if d < 0)",
                "lost = sum(1 for d in differences if d > 0)",
            ),
            Mutation(
                "one-pair-tested",
                PAIRED,
                "if n < 2 or not any(differences):  # nothing to test",
                "if not any(differences):  # nothing to test",
            ),
            Mutation(
                "ties-tested",
                PAIRED,
                "if n < 2 or not any(differences):  # nothing to test",
                "if n < 2:  # nothing to test",
            ),
            Mutation(
                "delta-unweighted",
                PAIRED,
                "delta = exact_sum(terms) / total",
                "delta = exact_sum(terms) / n",
            ),
            Mutation(
                "nan-pairs-kept",
                PAIRED,
                "for b, o in zip(base, other, strict=True) if b == b and o == o]",
                "for b, o in zip(base, other, strict=True) if b == b]",
            ),
            Mutation("interval-alpha-ignored", PAIRED, "confidence = 1 - alpha", "confidence = CONFIDENCE"),
            Mutation(
                "t-interval-one-sided",
                PAIRED,
                "half = t_quantile((1 + confidence) / 2, n - 1) * stderr",
                "half = t_quantile(confidence, n - 1) * stderr",
            ),
            Mutation(
                "stderr-without-bessel",
                PAIRED,
                "return math.sqrt(n / (n - 1) * spread_) / total",
                "return math.sqrt(spread_) / total",
            ),
            Mutation(
                "mdd-one-sided",
                PAIRED,
                "return (t_quantile(1 - alpha / 2, n - 1) + t_quantile(POWER",
                "return (t_quantile(1 - alpha, n - 1) + t_quantile(POWER",
            ),
            Mutation(
                "mdd-alpha-ignored",
                PAIRED,
                "mdd(stderr, n, alpha), confidence)",
                "mdd(stderr, n), confidence)",
            ),
            Mutation(
                "mdd-at-the-reachable-boundary",
                PAIRED,
                "if n < 2 or 2 / 2**n >= alpha:",
                "if n < 2 or 2 / 2**n > alpha:",
            ),
        ),
    ),
    Area(
        "intervals",
        STATISTICS,
        (
            Mutation(
                "tail-not-halved",
                INTERVALS,
                "tail = round((1 - confidence) * 50, 9)",
                "tail = round((1 - confidence) * 100, 9)",
            ),
            Mutation(
                "bootstrap-confidence-ignored",
                INTERVALS,
                "low, high = spread(means, confidence)",
                "low, high = spread(means)",
            ),
            Mutation(
                "wilson-centre",
                INTERVALS,
                "centre = (p + z * z / (2 * n)) / denominator",
                "centre = (p + z * z / n) / denominator",
            ),
            Mutation(
                "wilson-unclamped",
                INTERVALS,
                "return max(0.0, centre - half), min(1.0, centre + half)",
                "return centre - half, centre + half",
            ),
            Mutation(
                "z-one-sided",
                INTERVALS,
                "NormalDist().inv_cdf((1 + confidence) / 2)",
                "NormalDist().inv_cdf(confidence)",
            ),
            Mutation("infinities-kept", INTERVALS, "v == v and v not in (math.inf, -math.inf)", "v == v"),
            Mutation(
                "wilson-stderr-bessel",
                INTERVALS,
                "math.sqrt(mean * (1 - mean) / n)",
                "math.sqrt(mean * (1 - mean) / (n - 1))",
            ),
            Mutation("t-stderr-n-squared", INTERVALS, "/ (n - 1) / n)", "/ n / n)"),
            Mutation(
                "binary-one-value-interval",
                INTERVALS,
                'return Estimate(mean, None, None, None, n, "wilson")',
                "pass",
            ),
            Mutation(
                "bootstrap-weights-ignored",
                INTERVALS,
                "sums, totals = (data[picks] * weight[picks]).sum(axis=1), weight[picks].sum(axis=1)",
                "sums, totals = data[picks].sum(axis=1), numpy.full(resamples, float(n))",
            ),
        ),
    ),
    Area(
        "interval",
        STATISTICS,
        (
            Mutation(
                "t-df-n",
                INTERVAL,
                "t_quantile((1 + confidence) / 2, n - 1)",
                "t_quantile((1 + confidence) / 2, n)",
            ),
            Mutation("no-bessel", INTERVAL, "math.sqrt(n / (n - 1) * spread)", "math.sqrt(spread)"),
            Mutation(
                "mean-unweighted",
                INTERVAL,
                "mean = exact_sum(x * y for x, y in zip(values, w, strict=True)) / total",
                "mean = exact_sum(x * y for x, y in zip(values, w, strict=True)) / n",
            ),
            Mutation(
                "even-df-series",
                INTERVAL,
                "term *= cos2 * (2 * k - 1) / (2 * k)",
                "term *= cos2 * (2 * k + 1) / (2 * k)",
            ),
            Mutation(
                "one-value-zero-width",
                INTERVAL,
                "return Interval(mean, -math.inf, math.inf, n, confidence)",
                "return Interval(mean, mean, mean, n, confidence)",
            ),
            Mutation("cornish-fisher", INTERVAL, "+ (z**3 + z) / (4 * df)", "+ (z**3 + z) / (2 * df)"),
        ),
    ),
    Area(
        "aggregate",
        (*STATISTICS, "tests/core/test_errored_rows.py"),
        (
            Mutation(
                "percentile-position",
                AGGREGATE,
                "position = (len(ordered) - 1) * q / 100",
                "position = len(ordered) * q / 100",
            ),
            Mutation(
                "mean-score-drops-errors",
                AGGREGATE,
                '"mean": total / (len(values) + failed)',
                '"mean": total / len(values)',
            ),
            Mutation(
                "pass-rate-strict",
                DIRECTION,
                "return [value >= threshold for value in values]",
                "return [value > threshold for value in values]",
            ),
            Mutation(
                "pass-rate-missing-passes",
                AGGREGATE,
                "if field in r.scores and passes(r.scores[field], threshold))",
                "if field not in r.scores or passes(r.scores[field], threshold))",
            ),
            Mutation(
                "cost-of-pass-free",
                AGGREGATE,
                "total / passed if passed else math.inf",
                "total / passed if passed else 0.0",
            ),
            Mutation(
                "failed-row-passes",
                CORE + "columns.py",
                "            passed[position] = False",
                "            pass",
            ),
        ),
    ),
    Area(
        "gates",
        GATES,
        # floor-unweighted (the floor's mean of the rows without their weights) is gone with the
        # code it mutated: a floor now reads the group's headline mean from the summary, whose
        # weights interval/mean-unweighted and summary/errored-weight-one mutate.
        (
            Mutation(
                "floor-inclusive",
                CORE + "gates.py",
                "if mean is None or gate.direction.passes(mean, gate.bound):",
                "if mean is None or gate.direction.gain(mean - gate.bound) > 0:",
            ),
            Mutation(
                "gates-read-scored-only",
                CORE + "gates.py",
                "mean = group.scores[gate.field]",
                "mean = group.scores_scored_only[gate.field]",
            ),
            Mutation(
                "worse-on-low",
                CORE + "gates.py",
                "gains(ci)[1] < -self.margin",
                "gains(ci)[0] < -self.margin",
            ),
            Mutation(
                "worse-margin-sign",
                CORE + "gates.py",
                "gains(ci)[1] < -self.margin",
                "gains(ci)[1] < self.margin",
            ),
            Mutation(
                "worse-without-significance",
                CORE + "gates.py",
                "if not comparison.significant or ci is None:",
                "if ci is None:",
            ),
            Mutation(
                "worse-scope-ignored",
                CORE + "gates.py",
                "c.field == gate.field and (c.system, c.dataset) in keys]",
                "c.field == gate.field]",
            ),
            Mutation(
                "worse-against-another-baseline",
                CORE + "gates.py",
                "if self.fail_if_worse and summary.baseline != self.baseline:",
                "if False:",
            ),
            Mutation(
                "worse-alpha-ignored",
                CORE + "gates.py",
                "_worse(gate, compared, summarize.analysis.alpha)",
                "_worse(gate, compared, 0.05)",
            ),
            Mutation(
                "gate-status-wins-over-rates",
                CORE + "gates.py",
                "status = TOO_MANY_FAILURES if rates else GATE_FAILED if lines else OK",
                "status = GATE_FAILED if lines else OK",
            ),
            Mutation(
                "all-errored-unseen",
                CORE + "gates.py",
                "if total and errored == total:",
                "if total and errored > total:",
            ),
        ),
    ),
    Area(
        "comparisons",
        STATISTICS,
        (
            Mutation(
                "paired-arguments-swapped",
                CORE + "comparisons.py",
                "test = paired(before, after,",
                "test = paired(after, before,",
            ),
            Mutation(
                "pairs-by-position",
                CORE + "comparisons.py",
                "pairs = [(where[example], i) for i,",
                "pairs = [(i, i) for i,",
            ),
            Mutation(
                "missing-rows-unpaired",
                CORE + "comparisons.py",
                "ids,\n                    pairs,\n                    analysis,",
                "ids,\n                    real,\n                    analysis,",
            ),
            Mutation(
                "significance-alpha-ignored",
                CORE + "comparisons.py",
                "**verdict(test, analysis.alpha),",
                "**verdict(test, 0.05),",
            ),
            Mutation(
                "interval-alpha-ignored",
                CORE + "comparisons.py",
                "paired(before, after, alpha=analysis.alpha)",
                "paired(before, after)",
            ),
            Mutation(
                "significant-at-alpha",
                CORE + "comparisons.py",
                "test.p_value < alpha,",
                "test.p_value <= alpha,",
            ),
            Mutation(
                "lost-above-threshold",
                CORE + "comparisons.py",
                "base_passed = base.passing(field, direction, analysis.threshold)",
                "base_passed = [direction.gain(v - analysis.threshold) > 0 for v in base.scores[field]]",
            ),
            Mutation(
                "gained-ignores-base",
                CORE + "comparisons.py",
                "if b != a:\n            (lost if b else gained)",
                "if a or b:\n            (gained if a else lost)",
            ),
            Mutation(
                "cost-saved-sign",
                CORE + "comparisons.py",
                "dollars[base_key][b] - dollars[(system, dataset)][o]",
                "dollars[(system, dataset)][o] - dollars[base_key][b]",
            ),
            Mutation(
                "cost-saved-across-sources",
                CORE + "comparisons.py",
                "same = source is not None and source == costs[(system, dataset)].source",
                "same = source is not None",
            ),
            Mutation(
                "ratio-inverted",
                CORE + "comparisons.py",
                "ratio = sum(o for _, o in inputs) / base_in if",
                "ratio = base_in / sum(o for _, o in inputs) if",
            ),
            Mutation(
                "tokens-saved-sign",
                CORE + "comparisons.py",
                "sum(t - u for t, u in both)",
                "sum(u - t for t, u in both)",
            ),
        ),
    ),
    Area(
        "direction",
        DIRECTIONS,
        (
            Mutation(
                "direction-flipped", DIRECTION, 'return self.name == "lower"', 'return self.name != "lower"'
            ),
            Mutation(
                "lower-pass-strict",
                DIRECTION,
                "return [value <= threshold for value in values]",
                "return [value < threshold for value in values]",
            ),
            Mutation(
                "words-swapped",
                DIRECTION,
                'return "better" if gained > 0 else "worse" if gained < 0',
                'return "worse" if gained > 0 else "better" if gained < 0',
            ),
            Mutation(
                "gains-unsorted",
                DIRECTION,
                "low, high = sorted(self.gain(bound) for bound in interval)",
                "low, high = (self.gain(bound) for bound in interval)",
            ),
            Mutation("failure-value-best", DIRECTION, "return self.lower.get(field, 0.0)", "return 0.0"),
            Mutation(
                "reported-direction-lost",
                DIRECTION,
                'info.get("direction") == LOWER.name',
                'info.get("direction") == LOWER',
            ),
        ),
    ),
)
