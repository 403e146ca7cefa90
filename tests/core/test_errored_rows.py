"""A row that failed never makes a score look better: errored rows count 0 in the headline means,
the error rate shows beside them in every report, and each distinct error is listed with its count."""

from __future__ import annotations

import json
import math
import re

import pytest

from context_bench import EvalResult, EvalRow, Output, RowError, RunConfig, Scope, evaluate
from context_bench._summary import Summarizer
from context_bench.cli import main
from context_bench.direction import Directions
from context_bench.gates import Gates
from context_bench.metrics import MeanScore
from context_bench.reports import View, render
from context_bench.systems import OpenAIProxy
from context_bench.testing import FakeServer, Reply, isolated_host, last_user_message

ROWS = 20
FAILING = 14  # like the issue: 14 of 20 rows refused by a proxy

#: The terminal table with every table (--detail).
DETAIL = View(detail=True)


def mc_rows(n=ROWS):
    return [{"id": f"q{i}", "question": f"question {i}", "correct_letter": "A"} for i in range(n)]


def model(failing=0):
    """A clean model right on 16 of 20 rows (0.8), failing the first ``failing`` rows (a 500: a
    429 would hold the other rows in the client's shared cool-down and make the test slow)."""

    def reply(body):
        number = int(re.search(r"question (\d+)", last_user_message(body)).group(1))
        if number < failing:
            return Reply(status=500, body={"error": {"message": "upstream failed"}})
        return "The answer is B." if number % 5 == 4 else "The answer is A."

    return reply


def run(reply):
    with FakeServer(reply) as server:
        return evaluate(
            OpenAIProxy(server.url, model="m", max_retries=0),
            {"mmlu": mc_rows()},
            RunConfig(output=Output(progress=False)),
            host=isolated_host(),
        )


def test_rows_the_system_could_not_answer_count_as_failures_in_the_headline():
    clean = run(model())
    assert clean.summary.groups[0].scores["mc_accuracy"] == pytest.approx(0.8)
    result = run(model(FAILING))
    group = result.summary.groups[0]
    assert group.errors == FAILING and group.error_rate == pytest.approx(0.70)
    # rows 14..19 answered; 14 and 19 wrong: 4 right of 20
    assert group.scores["mc_accuracy"] <= 0.8 * (ROWS - FAILING) / ROWS
    assert group.scores["mc_accuracy"] == pytest.approx(4 / 20)
    assert group.scores_scored_only["mc_accuracy"] == pytest.approx(4 / 6)
    system = result.summary.systems["proxy"]
    assert system.scores["mc_accuracy"] == pytest.approx(0.2) and system.error_rate == pytest.approx(0.7)
    assert system.scores_scored_only["mc_accuracy"] == pytest.approx(4 / 6)
    assert not result.summary.exclude_errors
    # flagged, not silent: the rows themselves keep no invented score
    assert all(not row.scores for row in result.rows if row.errors)


def test_the_error_rate_and_the_honest_mean_show_in_every_report():
    result = run(model(FAILING))
    table = render(result, "table", DETAIL)
    scores = table.split("\nScores\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert scores[0].split() == ["system", "dataset", "rows", "errors", "error", "rate", "mc_accuracy"]
    assert scores[2].split() == ["proxy", "mmlu", "20", "14", "70.0%", "0.200"]
    assert "| proxy | mmlu | 20 | 14 | 70.0% | 0.200 |" in render(result, "markdown")
    page = render(result, "html")
    assert "70.0%" in page and "0.200" in page
    data = json.loads(render(result, "json"))
    group = data["summary"]["groups"][0]
    assert group["scores"] == {"mc_accuracy": pytest.approx(0.2)}
    assert group["error_rate"] == pytest.approx(0.7)
    assert group["scores_scored_only"] == {"mc_accuracy": pytest.approx(4 / 6)}
    assert data["summary"]["exclude_errors"] is False


def test_exclude_errors_is_the_scored_rows_mean_and_says_so():
    result = run(model(FAILING)).summarized(exclude_errors=True)
    group = result.summary.groups[0]
    assert group.scores["mc_accuracy"] == pytest.approx(4 / 6) and group.error_rate == pytest.approx(0.7)
    assert result.summary.exclude_errors
    assert "\nScores (scored rows only, --exclude-errors)\n" in render(result, "table", DETAIL)
    assert any("leave them out (--exclude-errors)" in w for w in result.summary.warnings)
    # a filter keeps the choice
    assert result.filter(system="proxy").summary.exclude_errors


def test_the_cli_flag_exclude_errors(tmp_path, capsys):
    data = tmp_path / "mmlu.jsonl"
    rows = mc_rows(4)
    rows[1]["response"] = "A"
    rows[2]["response"] = "B"
    rows[3]["response"] = "A"
    # the first line is an input error (unreadable JSON): it counts 0, and is the input's, not a system's
    data.write_text("{not json\n" + "".join(json.dumps(r) + "\n" for r in rows[1:]))
    assert main(["score", str(data), "--output", "json", "--no-progress"]) == 4  # 1 of 4 unreadable: > 0.1
    default = json.loads(capsys.readouterr().out)["summary"]
    assert default["groups"][0]["scores"]["mc_accuracy"] == pytest.approx(2 / 4)
    assert default["errors"]["by_system"] == {} and default["errors"]["by_input"] == {"mmlu": 1}
    assert main(["score", str(data), "--output", "json", "--no-progress", "--exclude-errors"]) == 4
    excluded = json.loads(capsys.readouterr().out)["summary"]
    assert excluded["groups"][0]["scores"]["mc_accuracy"] == pytest.approx(2 / 3)
    assert excluded["exclude_errors"] is True


def row(dataset="d", scores=None, errors=(), weights=None, example_id="x", system="s"):
    return EvalRow(
        system, dataset, example_id, scores=dict(scores or {}), errors=list(errors), weights=weights
    )


SYSTEM_DOWN = RowError("system", "s", "HTTPError", "HTTP 500: upstream down")


def test_an_evaluator_error_counts_0_for_the_fields_the_row_lacks():
    rows = [
        row(scores={"f1": 1.0, "judge": 1.0}),
        row(scores={"f1": 1.0}, errors=[RowError("evaluator", "judge", "ValueError", "no reference")]),
    ]
    group = Summarizer()(rows).groups[0]
    assert group.scores == {"f1": 1.0, "judge": 0.5}
    assert group.scores_scored_only == {"f1": 1.0, "judge": 1.0}


def test_rows_without_errors_that_lack_a_field_are_not_counted():
    """A field wired per row (choices on some rows only) is not owed by the rows without it."""
    rows = [row(scores={"f1": 1.0, "mc_accuracy": 1.0}), row(scores={"f1": 0.0})]
    assert Summarizer()(rows).groups[0].scores == {"f1": 0.5, "mc_accuracy": 1.0}


def test_a_group_where_every_row_failed_takes_the_data_sets_fields_from_other_systems():
    rows = [
        row(system="good", scores={"f1": 1.0}),
        row(system="down", errors=[SYSTEM_DOWN]),
        row(system="down", errors=[SYSTEM_DOWN], example_id="y"),
    ]
    summary = Summarizer()(rows)
    down = next(g for g in summary.groups if g.system == "down")
    assert down.scores == {"f1": 0.0} and down.error_rate == 1.0 and down.scores_scored_only == {}
    assert summary.systems["down"].scores == {"f1": 0.0}


def headline_values(summarize, key, field):
    """(id, value, weight) of each row of a group as the intervals and gates read them: the
    summary's columns after it finished."""
    group = summarize.groups[key]
    weights = (group.weights or {}).get(field)
    values = group.columns.scores[field]
    return [
        (row_id, values[i], 1.0 if weights is None else weights[i])
        for i, row_id in enumerate(group.columns.ids)
    ]


def test_an_errored_row_weighs_as_much_as_an_average_row_of_a_weighted_field():
    # instruction-level accuracy: rows weigh by their number of instructions (2 and 4: average 3)
    rows = [
        row(scores={"acc": 1.0}, weights={"acc": 2.0}, example_id="a"),
        row(scores={"acc": 0.5}, weights={"acc": 4.0}, example_id="b"),
        row(errors=[SYSTEM_DOWN], example_id="c"),
    ]
    summarize = Summarizer()
    assert summarize(rows).groups[0].scores["acc"] == pytest.approx((2.0 + 2.0) / 9.0)
    # what the gates and the interval read weighs it the same (with weight 1: 4 / 7, a better mean)
    assert headline_values(summarize, ("s", "d"), "acc") == [
        ("a", 1.0, 2.0),
        ("b", 0.5, 4.0),
        ("c", 0.0, 3.0),
    ]


def test_breakdowns_and_the_mean_score_metric_count_errored_rows_too():
    rows = [row(scores={"f1": 1.0}), row(errors=[SYSTEM_DOWN])]
    for r in rows:
        r.meta["kind"] = "k"
    summary = Summarizer(metrics=[MeanScore("f1")], breakdown=["kind"])(rows)
    group = summary.groups[0]
    assert group.breakdown["kind"]["k"].scores == {"f1": 0.5}
    assert group.metrics["mean_f1"] == {"mean": 0.5, "n": 2.0}
    # no row has the field: an errored row would not have had it either
    lone = MeanScore("f1").compute([row(errors=[SYSTEM_DOWN])])
    assert math.isnan(lone["mean"]) and lone["n"] == 0.0


def test_distinct_error_messages_are_listed_with_counts_in_the_table_and_markdown():
    rows = [row(errors=[SYSTEM_DOWN], example_id=f"r{i}") for i in range(5)]
    rows += [
        row(
            errors=[RowError("system", "s", "HTTPError", "HTTP 404: model 'tiny' not found")], example_id="m"
        ),
        row(
            errors=[
                RowError(
                    "input",
                    "row 7 of data set 'd'",
                    "MissingField",
                    "row 7 of data set 'd' has no 'id' field",
                )
            ],
            example_id="#7",
        ),
        row(
            errors=[
                RowError(
                    "input",
                    "row 9 of data set 'd'",
                    "MissingField",
                    "row 9 of data set 'd' has no 'id' field",
                )
            ],
            example_id="#9",
        ),
        row(scores={"f1": 1.0}, example_id="ok"),
    ]
    summary = Summarizer()(rows)
    errors = summary.errors
    assert errors.by_system == {"s": 6} and errors.by_input == {"d": 2}
    assert errors.by_stage == {"system": 6, "input": 2}
    first, second, third = errors.messages
    assert (first.count, first.stage, first.source, first.type) == (5, "system", "s", "HTTPError")
    assert first.message == "HTTP 500: upstream down" and first.examples == ["r0", "r1", "r2"]
    assert (second.count, second.source, second.message) == (2, "d", "has no 'id' field")
    assert second.examples == ["#7", "#9"]
    assert third.message == "HTTP 404: model 'tiny' not found"
    result = EvalResult(rows=rows, summary=summary)
    table = render(result, "table", DETAIL)
    block = table.split("\nError messages\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert block[2].split()[:5] == ["5", "system", "s", "HTTPError", "HTTP"]
    assert block[2].rstrip().endswith("r0, r1, r2, …")
    assert "model 'tiny' not found" in table and "see each row's errors" not in table
    assert "input d" in table
    markdown = render(result, "markdown")
    assert "| 2 | input | d | MissingField | has no 'id' field | #7, #9 |" in markdown
    [warning] = summary.warnings
    assert warning.startswith("8 errors in 8 of 9 rows (88.9%); each counts 0 in the means")
    assert "most frequent (5x): system s: HTTPError: HTTP 500: upstream down" in warning


def test_a_long_error_message_is_one_trimmed_line():
    message = "line one\n" + "x" * 1000
    summary = Summarizer()([row(errors=[RowError("system", "s", "E", message)])])
    [entry] = summary.errors.messages
    assert "\n" not in entry.message and len(entry.message) == 300 and entry.message.endswith("…")
    table = render(EvalResult(rows=[], summary=summary), "table", DETAIL)
    block = table.split("\nError messages\n", 1)[1].split("\n\n", 1)[0]
    # too wide for the terminal's 100 columns: the row's cells on wrapped lines, the message cut
    # at 120 characters
    joined = "".join(line.removeprefix("  ") for line in block.splitlines())
    assert (
        "message line one " + "x" * 110 + "…; rows x" in joined and max(map(len, block.splitlines())) <= 100
    )
    [warning] = [line for line in table.splitlines() if line.startswith("warning: 1 error")]
    assert len(warning) < 300


class Invented:
    """A false-memory-style evaluator: 1.0 when the answer invents something (lower is better)."""

    name = "invented"

    def score(self, original, processed):
        return {"false_memory": 1.0 if "invented" in processed["response"] else 0.0}


class InventedPlugin:
    from context_bench import EvaluatorSpec, hookimpl

    CBENCH_PLUGIN_API = 1

    @hookimpl
    def cbench_register_evaluators(self, register):
        register(
            InventedPlugin.EvaluatorSpec(
                "Invented", Invented, fields=["false_memory"], ranges=(0, 1), lower_is_better=["false_memory"]
            )
        )


class HalfDown:
    name = "half-down"

    def process(self, example):
        if int(example["id"]) % 2:
            raise ConnectionError("endpoint down")
        return {"response": "a faithful answer"}


def test_a_failed_row_counts_the_worst_value_where_lower_is_better():
    """A row the system could not answer must not count 0 for false_memory, its best value."""
    rows = [{"id": str(i), "question": "q", "answer": "a"} for i in range(4)]
    host = isolated_host(InventedPlugin())
    result = evaluate(
        [HalfDown()],
        rows,
        RunConfig(scope=Scope(evaluators=["Invented"]), output=Output(progress=False)),
        host=host,
    )
    group = result.summary.groups[0]
    assert group.scores["false_memory"] == pytest.approx(0.5)  # 2 clean rows at 0, 2 failed at 1
    assert group.scores_scored_only["false_memory"] == 0.0
    assert result.summary.systems["half-down"].scores["false_memory"] == pytest.approx(0.5)
    assert result.summarized(exclude_errors=True).summary.groups[0].scores["false_memory"] == 0.0


class DownOnTwo:
    name = "down-on-2"

    def process(self, example):
        if example["id"] == "2":
            raise ConnectionError("endpoint down")
        return {"response": "a faithful answer"}


def test_the_interval_and_the_gates_count_the_failure_value_where_lower_is_better():
    """Rows 0 and 1 invent nothing (0), row 2 errored: its false_memory is 1, the field's worst, in
    the interval and in what the gates read, not only in the mean (with 0, the interval was Wilson's
    for 0 of 3, [0, 0.561], around a mean of 0.333, and the gates read a mean of 0)."""
    rows = [{"id": str(i), "question": "q", "answer": "a"} for i in range(3)]
    host = isolated_host(InventedPlugin())
    result = evaluate(
        [DownOnTwo()],
        rows,
        RunConfig(scope=Scope(evaluators=["Invented"]), output=Output(progress=False)),
        host=host,
    )
    group = result.summary.groups[0]
    assert group.scores["false_memory"] == pytest.approx(1 / 3)
    # Wilson's interval for 1 of 3: the roots of (1/3 - p)^2 = z^2 p (1 - p) / 3, z = 1.95996
    low, high = group.ci["false_memory"]
    assert low == pytest.approx(0.0614919447, abs=1e-9) and high == pytest.approx(0.7923403992, abs=1e-9)
    z = 1.959963984540054
    assert all((1 / 3 - p) ** 2 == pytest.approx(z * z * p * (1 - p) / 3, abs=1e-12) for p in (low, high))
    assert headline_values(result.summarize, ("down-on-2", "dataset"), "false_memory") == [
        ("0", 0.0, 1.0),
        ("1", 0.0, 1.0),
        ("2", 1.0, 1.0),
    ]
    # the gates read the same values (with row 2 at 0 the mean would pass a 0.2 ceiling) and print
    # the summary's own interval, Wilson's for 1 of 3
    verdict = Gates.parse(fail_over=["false_memory=0.2"], max_failure_rate=0.5).judge(result)
    assert verdict.lines == [
        "gate failed: --fail-over false_memory=0.2: false_memory of down-on-2 on dataset is "
        "0.333 (95% CI 0.061 to 0.792, n=3), above 0.2"
    ]


def test_the_summarizer_counts_a_failure_value_without_touching_the_scored_mean():
    rows = [
        EvalRow("s", "d", "1", scores={"false_memory": 0.0, "f1": 1.0}),
        EvalRow("s", "d", "2", errors=[RowError("system", "s", "ConnectionError", "down")]),
    ]
    group = Summarizer(directions=Directions({"false_memory": 1.0}))(rows).groups[0]
    assert group.scores == {"false_memory": 0.5, "f1": 0.5}
    assert group.scores_scored_only == {"false_memory": 0.0, "f1": 1.0}


@pytest.mark.parametrize(("field", "threshold"), [("f1", 0.0), ("profanity", 1.0)])
def test_a_failed_row_never_passes_even_at_a_threshold_its_failure_value_reaches(field, threshold):
    """The failure value a mean counts for an errored row (0, or 1 where lower is better) reaches
    a threshold of 0 (at least it), or 1 (at most it) where lower is better; the row still fails,
    as it fails PassRate, and the baseline's pass there is lost: base passes both rows, new
    scores 0.5 on one and errors on the other, so new passes 1 of 2 and loses q1."""
    from context_bench.analysis import Analysis
    from context_bench.metrics import PassRate

    down = [RowError("system", "new", "ConnectionError", "down")]
    rows = [
        EvalRow("base", "qa", "q0", scores={field: 0.5}),
        EvalRow("base", "qa", "q1", scores={field: 0.5}),
        EvalRow("new", "qa", "q0", scores={field: 0.5}),
        EvalRow("new", "qa", "q1", errors=down),
    ]
    analysis = Analysis(score_field=field, threshold=threshold)
    summary = Summarizer(directions=Directions({"profanity": 1.0}), analysis=analysis)(rows)
    base, new = summary.groups
    assert (base.passing.pass_rate, new.passing.pass_rate) == (1.0, 0.5)
    lower = field == "profanity"
    assert PassRate(field, threshold, lower_is_better=lower).compute(rows[2:])["rate"] == 0.5
    (compared,) = [c for c in summary.comparisons if c.field == field]
    assert (compared.lost, compared.gained) == (["q1"], [])
