"""A comparison's figures worked by hand, through the Summarizer: the sign of the difference, the
loss audit's threshold, coverage and missing rows, one cost source per comparison, tokens only
where both sides have them, judges priced by their model."""

from __future__ import annotations

import pytest

from context_bench._summary import Summarizer
from context_bench.analysis import Analysis
from context_bench.prices import Price, Prices
from context_bench.records import EvalRow, RowError


def row(system, example, f1, *, tokens=(100.0, 10.0), cost=None, dataset="qa", **more):
    return EvalRow(
        system,
        dataset,
        example,
        {"f1": f1},
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        cost=cost,
        **more,
    )


def only(summary, field="f1"):
    (found,) = [c for c in summary.comparisons if c.field == field]
    return found


def test_a_system_that_lost_one_of_four_rows_is_a_quarter_below():
    """Issue 26 item 1: the difference is the system's minus the baseline's, never the reverse."""
    rows = [row("base", str(i), 1.0) for i in range(4)] + [
        row("new", str(i), 0.0 if i == 2 else 1.0) for i in range(4)
    ]
    c = only(Summarizer()(rows))
    assert (c.delta, c.lost, c.gained, c.n) == (-0.25, ["2"], [], 4)
    assert (c.test, c.p_value, c.significant) == ("mcnemar", 1.0, False)  # one discordant pair: 2 * 1/2
    assert c.ci[0] < 0 and c.ci[1] == 0.0  # a third of the resamples draw no lost row
    back = only(Summarizer(analysis=Analysis(baseline="new"))(rows))
    assert (back.delta, back.gained, back.lost) == (0.25, ["2"], [])


def test_a_row_at_the_threshold_passes():
    """The loss audit's boundary: a row passes when its score reaches the threshold (>=), so a row
    the baseline scored exactly 0.7 and the system 0.69 is lost, one the system scored exactly
    0.7 from the baseline's 0.69 is gained."""
    rows = [
        row("base", "at", 0.7),
        row("new", "at", 0.69),
        row("base", "up", 0.69),
        row("new", "up", 0.7),
        row("base", "both", 0.7),
        row("new", "both", 0.7),
    ]
    c = only(Summarizer(analysis=Analysis(threshold=0.7))(rows))
    assert (c.lost, c.gained) == (["at"], ["up"])


def test_coverage_and_the_rows_one_side_lacks():
    """new has 4 of base's 10 rows (and one of its own): 6 count as its failures (0) in its mean,
    its comparison and its failure count; with missing rows allowed it is compared on the 4."""
    rows = [row("base", f"q{i}", 1.0) for i in range(10)]
    rows += [row("new", f"q{i}", 1.0) for i in range(4)] + [row("new", "extra", 1.0)]
    counted = Summarizer()(rows)
    c = only(counted)
    assert (c.coverage, c.only_baseline, c.only_system) == (0.4, [f"q{i}" for i in range(4, 10)], ["extra"])
    assert (c.n, c.delta, c.lost, c.p_value) == (10, -0.6, [f"q{i}" for i in range(4, 10)], 2 / 2**6)
    assert c.shared() == "4 of 10 rows shared" and c.significant
    new = counted.groups[1]
    assert (new.rows, new.errors, new.scores["f1"]) == (11, 6, 5 / 11)
    assert counted.errors.by_system == {"new": 6}
    assert counted.errors.messages[0].type == "MissingRow" and counted.errors.messages[0].count == 6
    assert (
        "new on qa: 4 of 10 rows shared with the baseline base; the 6 it lacks count as its failures in "
        "every figure and gate (--allow-missing: compare the shared rows alone)"
    ) in counted.warnings
    allowed = Summarizer(analysis=Analysis(allow_missing=True))(rows)
    c = only(allowed)
    assert (c.n, c.delta, c.p_value, c.coverage, c.shared()) == (4, 0.0, None, 0.4, "4 of 10 rows shared")
    assert allowed.groups[1].scores["f1"] == 1.0 and allowed.errors.total == 0
    assert (
        "new on qa: 4 of 10 rows shared with the baseline base; compared on the shared rows alone "
        "(--allow-missing)"
    ) in allowed.warnings


def test_a_data_set_a_system_did_not_run_is_said_not_counted():
    rows = [row("base", "1", 1.0), row("base", "2", 1.0, dataset="other"), row("new", "1", 1.0)]
    summary = Summarizer()(rows)
    assert [(c.system, c.dataset) for c in summary.comparisons] == [("new", "qa")]
    assert "no rows of a data set the baseline base ran, so no comparison: new on other" in summary.warnings


def test_tokens_saved_only_where_both_sides_report_them():
    """A system that reports no tokens (a --command system) saves none: not the baseline's total."""
    rows = [row("base", str(i), 1.0, tokens=(400.0, 10.0)) for i in range(3)]
    rows += [row("cmd", str(i), 1.0, tokens=(None, None)) for i in range(3)]
    rows += [row("half", str(i), 1.0, tokens=(100.0, 10.0) if i else (None, None)) for i in range(3)]
    summary = Summarizer()(rows)
    cmd, half = summary.comparisons
    assert (cmd.system, cmd.compression_ratio, cmd.tokens_saved) == ("cmd", None, None)
    assert (half.compression_ratio, half.tokens_saved) == (100 / 400, 2 * (410 - 110))  # the 2 both have
    assert (
        "no tokens saved or compression ratio where one side reported no token counts: cmd against base on qa"
    ) in summary.warnings


def test_dollars_saved_only_from_one_source():
    """The baseline's cost reported by its endpoint, the candidate's priced by --price for its
    name: no dollars saved, one warning naming both; a price for the model they share prices
    both sides, reported cost or not, and the saving is computed."""
    rows = [row("base", str(i), 1.0, tokens=(1000.0, 10.0), cost=0.5) for i in range(3)]
    rows += [row("small", str(i), 1.0, tokens=(540.0, 10.0)) for i in range(3)]
    by_name = Summarizer(analysis=Analysis(prices=Prices({"small": Price(1.0, 1.0)})))(rows)
    c = only(by_name)
    assert (c.cost_saved, c.cost_source) == (None, None)
    assert [g.cost.source for g in by_name.groups] == ["reported", "priced"]
    assert [w for w in by_name.warnings if w.startswith("no dollars saved")] == [
        "no dollars saved where the two sides' costs come from different sources (reported by the "
        "endpoint, or priced by --price): small (priced) against base (reported) on qa; --price "
        "MODEL=IN,OUT prices every call of a model, so both sides of one model are priced alike"
    ]
    models = {"base": "m", "small": "m"}
    by_model = Summarizer(analysis=Analysis(prices=Prices({"m": Price(2.0, 4.0)}), models=models))(rows)
    c = only(by_model)
    assert c.cost_source == "priced" and c.cost_saved == pytest.approx(3 * (1000 - 540) * 2.0 / 1e6)
    assert [g.cost.dollars for g in by_model.groups] == pytest.approx([3 * 2040 / 1e6, 3 * 1120 / 1e6])
    assert not [w for w in by_model.warnings if w.startswith("no dollars saved")]
    reported = [row(s, str(i), 1.0, cost=c) for s, c in (("base", 0.5), ("small", 0.2)) for i in range(3)]
    c = only(Summarizer()(reported))
    assert (c.cost_source, c.cost_saved) == ("reported", pytest.approx(0.9))


def test_a_judge_is_priced_by_its_model_else_by_what_its_endpoint_reported():
    usage = {"judge": {"input_tokens": 100.0, "output_tokens": 10.0, "cost": 0.25}}
    rows = [EvalRow("a", "qa", str(i), {"judge": 1.0}, usage=dict(usage)) for i in range(2)]
    reported = Summarizer()(rows)
    assert reported.judges[0].dollars == 0.5 and reported.prices == {"missing": []}
    summarize = Summarizer(analysis=Analysis(prices=Prices({"jm": Price(1000.0, 2000.0)})))
    summarize.judge_models = {"judge": "jm"}
    (judge,) = summarize(rows).judges
    assert judge.dollars == pytest.approx(2 * (100 * 1000 + 10 * 2000) / 1e6)
    unpriced = [EvalRow("a", "qa", "1", {"judge": 1.0}, usage={"judge": {"input_tokens": 5.0}})]
    summarize = Summarizer()
    summarize.judge_models = {"judge": "jm"}
    assert summarize(unpriced).prices == {"missing": ["jm"]}


def test_an_errored_candidate_row_pairs_as_a_failure():
    rows = [row("base", str(i), 1.0) for i in range(3)]
    rows += [
        row("new", "0", 1.0),
        row("new", "1", 1.0),
        EvalRow("new", "qa", "2", errors=[RowError("system", "new", "E", "x")]),
    ]
    c = only(Summarizer()(rows))
    assert (c.n, c.delta, c.lost, c.coverage) == (3, pytest.approx(-1 / 3), ["2"], 1.0)
