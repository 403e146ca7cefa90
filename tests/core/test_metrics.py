"""Aggregate metrics over rows, and how a run reports them per (system, data set)."""

from __future__ import annotations

import math

import attrs
import pytest

from context_bench import Analysis, EvalRow, Output, RunConfig, evaluate
from context_bench._summary import Summarizer
from context_bench.direction import Directions
from context_bench.metrics import CostOfPass, Latency, MeanScore, PassRate, percentile
from context_bench.metrics._aggregate import latency_figures
from context_bench.records import LatencyFigures
from context_bench.testing import isolated_host


def row(f1=None, latency=None, cost=None, tokens=(None, None)):
    return EvalRow(
        system="s",
        dataset="d",
        example_id="x",
        scores={} if f1 is None else {"f1": f1},
        latency=latency,
        cost=cost,
        input_tokens=tokens[0],
        output_tokens=tokens[1],
    )


def test_percentile_interpolates_like_numpy():
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0], 95) == pytest.approx(3.85)
    assert math.isnan(percentile([], 50))


def test_mean_score_counts_only_rows_that_produced_the_field():
    assert MeanScore("f1").compute([row(1.0), row(0.0), row()]) == {"mean": 0.5, "n": 2.0}


def test_pass_rate_counts_rows_without_the_field_as_failures():
    assert PassRate("f1", 0.5).compute([row(1.0), row(0.4), row()]) == {"rate": 1 / 3, "passed": 1.0}


@pytest.mark.parametrize(("field", "lower"), [("f1", False), ("profanity", True)])
def test_the_row_metrics_pass_at_the_reports_threshold_in_the_fields_direction(field, lower):
    """Values 0.69, 0.7 and 0.71, $1 each, at the default threshold 0.7: f1 passes at least it
    (0.7, 0.71), profanity, lower is better, at most it (0.69, 0.7): 2 of 3 pass, $1.50 a pass,
    in the metrics and in the report's pass figures alike."""
    assert PassRate(field).threshold == CostOfPass().threshold == Analysis().threshold == 0.7
    rows = [
        EvalRow("s", "d", f"r{i}", scores={field: value}, cost=1.0)
        for i, value in enumerate((0.69, 0.7, 0.71))
    ]
    summarize = Summarizer(directions=Directions({"profanity": 1.0}), analysis=Analysis(score_field=field))
    passing = summarize(rows).groups[0].passing
    assert PassRate(field, lower_is_better=lower).compute(rows) == {"rate": 2 / 3, "passed": 2.0}
    assert passing.pass_rate == 2 / 3
    assert CostOfPass(field, lower_is_better=lower).compute(rows)["cost_of_pass"] == 1.5
    assert passing.cost_of_pass == 1.5


def test_latency_figures():
    figures = Latency().compute([row(latency=v) for v in (0.1, 0.2, 0.3, 0.4)] + [row()])
    assert figures["mean"] == pytest.approx(0.25) and figures["p50"] == pytest.approx(0.25)
    assert figures["p95"] == pytest.approx(0.385)


@pytest.mark.parametrize(
    ("seconds", "mean", "p50", "p95", "p99"),
    [
        # one row: every figure is its value
        ((0.5,), 0.5, 0.5, 0.5, 0.5),
        # 1 and 3: p at position q/100 between them, 1 + 2q/100
        ((3.0, 1.0), 2.0, 2.0, 2.9, 2.98),
        # 0.1, 0.2, 0.4 (given out of order): position 2q/100, p95 at 1.9 = 0.2 + 0.9 * 0.2
        ((0.2, 0.4, 0.1), 0.7 / 3, 0.2, 0.38, 0.396),
    ],
)
def test_the_metrics_api_and_the_report_show_the_same_latency(seconds, mean, p50, p95, p99):
    """The same latencies through Latency().compute and through the summary the reports read give
    identical figures (one definition), hand-worked at n = 1, 2, 3; a row without one is skipped."""
    rows = [EvalRow("s", "d", f"r{i}", scores={"f1": 1.0}, latency=v) for i, v in enumerate(seconds)]
    rows.append(EvalRow("s", "d", "none", scores={"f1": 1.0}))
    figures = latency_figures(r.latency for r in rows if r.latency is not None)
    assert attrs.astuple(figures) == pytest.approx((mean, p50, p95, p99), rel=1e-12)
    group = Summarizer()(rows).groups[0]
    assert group.latency == figures
    assert Latency().compute(rows) == group.metrics["latency"] == Latency.shown(figures)
    assert group.metrics["latency"] == {"mean": figures.mean, "p50": figures.p50, "p95": figures.p95}


def test_no_latency_is_no_figure_not_zero():
    assert latency_figures([math.nan]) == LatencyFigures()
    assert Latency().compute([row()]) == {} == Summarizer()([row(1.0)]).groups[0].metrics["latency"]


def test_cost_of_pass_uses_reported_cost_or_priced_tokens():
    rows = [row(1.0, cost=0.02), row(0.0, tokens=(1_000_000, 0)), row(1.0, tokens=(0, 500_000))]
    figures = CostOfPass("f1", 1.0, input_price=0.5, output_price=2.0).compute(rows)
    assert figures["total_cost"] == pytest.approx(0.02 + 0.5 + 1.0)
    assert figures["cost_of_pass"] == pytest.approx(1.52 / 2)
    assert CostOfPass("f1").compute([row(0.0, cost=1.0)])["cost_of_pass"] == math.inf


def test_a_run_reports_metrics_per_group_and_turns_infinity_into_null():
    data = {
        "a": [{"id": "1", "answer": "x", "response": "x"}],
        "b": [{"id": "2", "answer": "x", "response": "y"}],
    }
    result = evaluate(
        None,
        data,
        RunConfig(
            analysis=Analysis(metrics=[PassRate("f1"), CostOfPass("f1")]), output=Output(progress=False)
        ),
        host=isolated_host(),
    )
    groups = {g.dataset: g.metrics for g in result.summary.groups}
    assert groups["a"]["pass_rate_f1"] == {"rate": 1.0, "passed": 1.0}
    assert groups["b"]["pass_rate_f1"] == {"rate": 0.0, "passed": 0.0}
    assert groups["b"]["cost_of_pass"]["cost_of_pass"] is None
    assert '"cost_of_pass": null' in result.to_json()
