"""What a row's scores may be, and what the summary divides soft failures by."""

from __future__ import annotations

import json

import pytest

from context_bench import Output, RunConfig, Scope, Scores, evaluate
from context_bench.records import EvaluatorFailures
from context_bench.testing import isolated_host


def _strict_json(text: str):
    def refuse(token):
        raise ValueError(f"not JSON: {token}")

    return json.loads(text, parse_constant=refuse)


class Length:
    name = "length"

    def score(self, original, processed):
        return {"length": float(len(processed["response"]))}


class Unbounded:
    """Scores 0.5, or the row's id where that reads as a float that is not finite."""

    name = "unbounded"

    def score(self, original, processed):
        return {"v": float(original["id"]) if original["id"] in ("nan", "inf", "-inf") else 0.5}


class SometimesJudge:
    """Applies to the rows marked ``judge_me`` only, and fails on some of them."""

    name = "judge"

    def score(self, original, processed):
        if not original.get("judge_me"):
            return {}
        if original.get("fail"):
            return Scores({"verdict": 0.0}, failure="call_error: HTTP 503")
        return {"verdict": 1.0}


def _run(rows, evaluators, cache_dir=None):
    config = RunConfig(scope=Scope(evaluators=evaluators), output=Output(cache_dir=cache_dir, progress=False))
    return evaluate(None, rows, config, host=isolated_host())


def test_a_score_that_is_not_finite_is_an_error_of_that_evaluator_on_that_row():
    rows = [{"id": key, "response": "xy"} for key in ("a", "nan", "inf", "-inf", "b")]
    result = _run(rows, [Unbounded(), Length()])
    by_id = {row.example_id: row for row in result.rows}
    for key in ("nan", "inf", "-inf"):
        row = by_id[key]
        assert row.scores == {"length": 2.0}
        [error] = row.errors
        assert (error.source, error.type) == ("unbounded", "ValueError")
        assert f"score field 'v' is {float(key)!r}" in error.message
    assert by_id["a"].scores == {"v": 0.5, "length": 2.0} and not by_id["a"].errors
    # the three rows whose v failed count 0 in the headline; the scored rows alone stay available
    assert result.summary.groups[0].scores == {"v": 0.2, "length": 2.0}
    assert result.summary.groups[0].scores_scored_only == {"v": 0.5, "length": 2.0}
    assert result.summary.errors.by_evaluator == {"unbounded": 3}
    parsed = _strict_json(result.to_json())
    assert len(parsed["rows"]) == 5


def test_figures_of_scored_rows_that_cannot_be_right_are_input_errors():
    rows = [{"id": "a", "response": "x", "input_tokens": float("nan"), "cost": float("inf"), "latency": 0.5}]
    row = _run(rows, [Length()]).rows[0]
    assert (row.input_tokens, row.cost, row.latency, row.scores) == (None, None, None, {})
    (error,) = row.errors
    assert (error.stage, error.type) == ("input", "InvalidFigure")
    assert error.message == (
        "row 0 of data set 'dataset': 'input_tokens' is nan, not a token count from 0 to 1e+12; "
        "'cost' is inf, not dollars from 0 to 1e+12"
    )


@pytest.mark.parametrize("cached", [False, True])
def test_soft_failure_rate_is_over_the_rows_the_evaluator_scored(tmp_path, cached):
    rows = [{"id": str(i), "answer": "a", "response": "a"} for i in range(20)]
    for row in rows[:5]:
        row["judge_me"] = True
    rows[0]["fail"] = rows[1]["fail"] = True
    cache_dir = tmp_path if cached else None
    if cached:  # the second run takes the judge's verdicts from the cache; failed rows run again
        _run(rows, [Length(), SometimesJudge()], cache_dir)
    result = _run(rows, [Length(), SometimesJudge()], cache_dir)
    assert result.summary.failures == {
        "judge": EvaluatorFailures(count=2, rows=5, rate=0.4, kinds={"call_error": 2})
    }
    assert any(w.startswith("judge failed on 2 of 5 rows (40.0%") for w in result.summary.warnings)
    assert [row.meta["scored_by"] for row in result.rows[4:6]] == [["length", "judge"], ["length"]]
    assert result.summary.groups[0].failures == {"judge": 2}


def test_a_field_whose_rows_all_weigh_nothing_has_no_mean_and_the_json_stays_valid():
    class Weightless:
        name = "weightless"

        def score(self, original, processed):
            return Scores({"v": 1.0}, weights={"v": 0.0})

    result = evaluate(
        None,
        [{"id": "1", "response": "x"}],
        RunConfig(scope=Scope(evaluators=[Weightless()]), output=Output(progress=False)),
        host=isolated_host(),
    )
    assert result.summary.systems["responses"].scores == {"v": None}
    _strict_json(result.to_json())
