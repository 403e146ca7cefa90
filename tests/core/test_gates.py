"""Quality gates through the real CLI: --fail-under (exit 3), --fail-if-worse with --baseline (exit 3),
--max-failure-rate (exit 4), usage errors (exit 2) and which status wins when several apply."""

from __future__ import annotations

import json

import pytest
from statsmodels.stats.proportion import proportion_confint

from context_bench.cli import main
from context_bench.gates import failure_rates
from context_bench.metrics import mean_interval
from context_bench.metrics.interval import t_quantile
from context_bench.metrics.paired import paired
from context_bench.records import EvalRow, RowError
from context_bench.testing import FakeServer, last_user_message

ANSWERS = {f"q{i}": f"answer{i}" for i in range(10)}


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def qa(tmp_path):
    path = tmp_path / "qa.jsonl"
    path.write_text(
        "".join(json.dumps({"id": q, "question": q, "answer": a}) + "\n" for q, a in ANSWERS.items())
    )
    return path


def answering(right: int, down: int = 0):
    """A server that answers the first ``right`` questions right, the next ``down`` with HTTP 500,
    and the rest wrong."""
    from context_bench.testing import Reply

    order = list(ANSWERS)

    def reply(body):
        position = order.index(last_user_message(body).strip())
        if position < right:
            return ANSWERS[order[position]]
        return Reply("down", status=500) if position < right + down else "wrong"

    return reply


def run(server, qa, *more, name="mine"):
    return ("run", "--proxy", server.url, "--name", name, "--max-retries", "0", "--dataset", str(qa),
            "--dataset-name", "qa", "--no-progress", *more)  # fmt: skip


def test_fail_under_exits_3_after_the_report_with_the_mean_its_interval_and_the_bound(capsys, qa, tmp_path):
    report = tmp_path / "report.json"
    with FakeServer(answering(6)) as server:
        code, _, err = run_cli(
            capsys,
            *run(server, qa, "--fail-under", "exact_match=0.7", "--output", "json", "--out", str(report)),
        )
        assert code == 3, err
        assert json.loads(report.read_text())["summary"]["groups"][0]["scores"]["exact_match"] == 0.6
        (line,) = [line for line in err.splitlines() if "gate failed" in line]
        # the report's interval of the mean: Wilson's for 0/1 scores (statsmodels as the oracle)
        low, high = proportion_confint(6, 10, alpha=0.05, method="wilson")
        assert line == (
            "context-bench: error: gate failed: --fail-under exact_match=0.7: exact_match of mine on qa is "
            f"0.600 (95% CI {low:.3f} to {high:.3f}, n=10), below 0.7"
        )
        for passing in ("exact_match=0.6", "qa:f1=0.5", "mine/qa:exact_match=0.1"):
            code, _, err = run_cli(capsys, *run(server, qa, "--fail-under", passing))
            assert code == 0, (passing, err)
        for scoped in ("qa:exact_match=0.61", "mine/qa:exact_match=0.61"):
            code, _, err = run_cli(capsys, *run(server, qa, "--fail-under", scoped, "--fail-under", "f1=0.1"))
            assert code == 3 and err.count("gate failed") == 1 and f"--fail-under {scoped}:" in err


def test_fail_under_naming_nothing_in_the_run_is_a_usage_error(capsys, qa, tmp_path):
    """A scope naming no data set (or SYSTEM/DATASET) is refused before any row runs; a score
    field, which an evaluator wired per row only shows once it scored, after the report."""
    report = tmp_path / "report.md"
    with FakeServer(answering(10)) as server:
        for gate, said, before in (
            ("nosuch=0.5", "no group in this run has a score 'nosuch'", False),
            ("other:f1=0.5", "no data set or SYSTEM/DATASET 'other' in this run", True),
            ("theirs/qa:f1=0.5", "no data set or SYSTEM/DATASET 'theirs/qa' in this run", True),
            ("qa:nosuch=0.5", "no group of qa in this run has a score 'nosuch'", False),
        ):
            report.unlink(missing_ok=True)
            asked = len(server.requests)
            code, _, err = run_cli(capsys, *run(server, qa, "--fail-under", gate, "--output", "markdown",
                                                "--out", str(report)))  # fmt: skip
            assert code == 2 and err.strip().endswith(f"error: --fail-under {gate}: {said}"), err
            assert report.is_file() is not before and (len(server.requests) == asked) is before


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--fail-under", "f1"), "--fail-under f1: expected [[SYSTEM/]DATASET:]FIELD=VALUE"),
        (("--fail-under", "=0.5"), "--fail-under =0.5: expected [[SYSTEM/]DATASET:]FIELD=VALUE"),
        (("--fail-under", "qa:=0.5"), "--fail-under qa:=0.5: expected [[SYSTEM/]DATASET:]FIELD=VALUE"),
        (("--fail-under", "f1=high"), "--fail-under f1=high: 'high' is not a number"),
        (("--fail-under", "f1=nan"), "--fail-under f1=nan: 'nan' is not a number"),
        (("--fail-if-worse", "f1"), "--fail-if-worse needs --baseline NAME"),
        (
            ("--price", "gpt=1"),
            "--price gpt=1: expected MODEL=IN,OUT[,CACHED_IN[,CACHE_WRITE]] (dollars per million tokens)",
        ),
        (("--price", "gpt=1,-2"), "--price gpt=1,-2: '-2' is not a price"),
        (("--fail-if-worse", "f1=-0.1", "--baseline", "mine"), "'-0.1' is not a number from 0 to 1,000,000"),
        (
            ("--fail-if-worse", "=0.1", "--baseline", "mine"),
            "--fail-if-worse =0.1: expected [[SYSTEM/]DATASET:]FIELD[=MARGIN]",
        ),
        (("--fail-if-worse", "qa:=0.1", "--baseline", "mine"), "expected [[SYSTEM/]DATASET:]FIELD[=MARGIN]"),
        (("--alpha", "0"), "--alpha: must be a number above 0, at most 0.5 (got '0')"),
        (("--alpha", "nan"), "--alpha: must be a number above 0, at most 0.5 (got 'nan')"),
        (("--baseline", "nobody"), "--baseline nobody: no such system in this run (it has mine)"),
        (
            ("--fail-under", "other:f1=0.5"),
            "--fail-under other:f1=0.5: no data set or SYSTEM/DATASET 'other'",
        ),
        (
            ("--fail-if-worse", "mine/other:f1", "--baseline", "mine"),
            "--fail-if-worse mine/other:f1: no data set or SYSTEM/DATASET 'mine/other' in this run",
        ),
        (("--max-failure-rate", "1.5"), "--max-failure-rate: must be a number from 0 to 1 (got '1.5')"),
        (("--max-failure-rate", "nan"), "--max-failure-rate: must be a number from 0 to 1 (got 'nan')"),
    ],
)
def test_a_malformed_gate_is_refused_before_any_row_runs(capsys, qa, flags, said):
    with FakeServer(answering(10)) as server:
        code, _, err = run_cli(capsys, *run(server, qa, *flags))
        assert code == 2 and said in err and len(err.strip().splitlines()) == 1, err
        assert server.requests == []


def test_fail_if_worse_compares_each_system_with_the_baseline_row_by_row(capsys, qa):
    with (
        FakeServer(answering(10)) as good,
        FakeServer(answering(2)) as bad,
        FakeServer(answering(9)) as close,
    ):
        systems = ("--proxy", good.url, "--name", "good", "--proxy", bad.url, "--name", "bad",
                   "--proxy", close.url, "--name", "close")  # fmt: skip
        argv = ("run", "--max-retries", "0", *systems, "--dataset", str(qa), "--no-progress")
        code, _, err = run_cli(capsys, *argv, "--fail-if-worse", "exact_match", "--baseline", "good")
        assert code == 3, err
        (line,) = [line for line in err.splitlines() if "gate failed" in line]  # close: 1 of 10, p = 1
        # the report's paired test: McNemar's exact p (8 discordant pairs, all lost: 2 / 2**8)
        differences = paired([1.0] * 10, [1.0] * 2 + [0.0] * 8)
        assert (differences.test, differences.p_value) == ("mcnemar", 2 / 2**8)
        assert line == (
            "context-bench: error: gate failed: --fail-if-worse exact_match: exact_match of bad minus the "
            f"baseline good on qa is -0.800 (95% CI {differences.low:.3f} to {differences.high:.3f}, n=10) "
            "(McNemar's exact test, p=0.00781 < alpha 0.05), significantly below 0"
        )
        assert differences.high < 0
        margin = f"exact_match={-differences.high + 0.001:.3f}"
        code, _, err = run_cli(capsys, *argv, "--fail-if-worse", margin, "--baseline", "good")
        assert code == 0, err  # the upper bound is not below -MARGIN
        code, _, err = run_cli(capsys, *argv, "--fail-if-worse", "f1", "--baseline", "bad")
        assert code == 0, err  # better than the baseline is never a failure
        code, _, err = run_cli(capsys, *argv, "--fail-if-worse", "f1", "--baseline", "nobody")
        assert code == 2 and "--baseline nobody: no such system in this run (it has good, bad, close)" in err
        code, _, err = run_cli(capsys, *argv, "--fail-if-worse", "nosuch", "--baseline", "good")
        assert code == 2 and "--fail-if-worse nosuch: no group of this run has a score 'nosuch'" in err


def test_rows_the_system_could_not_answer_over_the_limit_exit_4(capsys, qa):
    with FakeServer(answering(7, down=2)) as server:
        code, out, err = run_cli(capsys, *run(server, qa, "--output", "json"))
        assert code == 4 and json.loads(out)["summary"]["errors"]["rows"] == 2  # the report is written
        assert err.strip().splitlines()[-1] == (
            "context-bench: error: too many failures: system mine could not answer 2 of 10 rows "
            "(20.0%, more than --max-failure-rate 0.1)"
        )
        assert run_cli(capsys, *run(server, qa, "--max-failure-rate", "0.2"))[0] == 0  # 20% is not more
        code, _, err = run_cli(
            capsys, *run(server, qa, "--max-failure-rate", "0.2", "--fail-under", "f1=0.8")
        )
        assert code == 3 and "too many failures" not in err
    with FakeServer(answering(9, down=1)) as server:  # 10%: within the default
        assert run_cli(capsys, *run(server, qa))[0] == 0


def test_an_evaluator_that_failed_on_too_many_rows_exits_4(capsys, tmp_path):
    data = tmp_path / "rows.jsonl"
    rows = [{"id": str(i), "answer": "a", "response": "a"} for i in range(4)]
    rows[0]["answer"] = {"not": "text"}  # AnswerQuality raises on this row: an evaluator error
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code, _, err = run_cli(capsys, "score", str(data), "--no-progress")
    assert (
        code == 4
        and (
            "error: too many failures: evaluator answer_quality failed on 1 of the 4 rows it scored (25.0%, "
            "more than --max-failure-rate 0.1)"
        )
        in err
    )
    assert run_cli(capsys, "score", str(data), "--no-progress", "--max-failure-rate", "0.25")[0] == 0


def test_unreadable_input_rows_count_against_the_system(capsys, tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text("{broken\n" + json.dumps({"id": "1", "answer": "a", "response": "a"}) + "\n")
    code, _, err = run_cli(capsys, "score", str(data), "--no-progress")
    said = "could not answer 1 of 2 rows (50.0%, more than --max-failure-rate 0.1); 1 of them unreadable"
    assert code == 4 and said in err


def test_precedence_every_row_errored_then_usage_then_failures_then_gates(capsys, qa):
    with FakeServer(answering(0, down=10)) as server:  # every row errored: 1, and only that is said
        code, _, err = run_cli(capsys, *run(server, qa, "--fail-under", "nosuch=1", "--output", "json"))
        assert code == 1 and err.strip().splitlines()[-1].endswith("none of the 10 rows could be scored")
        assert "gate failed" not in err and "too many failures" not in err
    with FakeServer(answering(5, down=3)) as server:
        code, _, err = run_cli(capsys, *run(server, qa, "--fail-under", "nosuch=1"))
        assert code == 2 and "too many failures" not in err  # a gate naming nothing is said first
        code, _, err = run_cli(capsys, *run(server, qa, "--fail-under", "f1=0.9"))
        assert code == 4  # too many failures wins over a failed gate; both are said
        assert "too many failures: system mine" in err and "gate failed: --fail-under f1=0.9" in err


def test_max_failure_rate_1_never_fails_and_0_fails_on_any_failure(capsys, qa):
    with FakeServer(answering(1, down=8)) as server:
        assert run_cli(capsys, *run(server, qa, "--max-failure-rate", "1"))[0] == 0
    with FakeServer(answering(9, down=1)) as server:
        assert run_cli(capsys, *run(server, qa, "--max-failure-rate", "0"))[0] == 4


# -- the pieces ---------------------------------------------------------------------------------


def test_t_quantiles_match_the_tables():
    table = {1: 12.706, 2: 4.303, 3: 3.182, 5: 2.571, 10: 2.228, 30: 2.042, 100: 1.984, 200: 1.972}
    table.update({201: 1.972, 1000: 1.962, 10**6: 1.960})
    for df, expected in table.items():
        assert t_quantile(0.975, df) == pytest.approx(expected, abs=5e-4), df
    assert t_quantile(0.95, 9) == pytest.approx(1.833, abs=5e-4)


def test_mean_interval():
    interval = mean_interval([1.0, 0.0, 1.0, 1.0, 0.0])
    half = 2.776445 * (0.5477226 / 5**0.5)  # t(0.975, 4) * s / sqrt(n)
    assert interval.mean == pytest.approx(0.6) and interval.n == 5
    assert (interval.low, interval.high) == pytest.approx((0.6 - half, 0.6 + half), abs=1e-5)
    assert mean_interval([0.5, 0.5, 0.5]).low == mean_interval([0.5, 0.5, 0.5]).high == 0.5
    single = mean_interval([0.3])
    assert single.mean == 0.3 and single.low == -float("inf") and "too few rows" in single.describe()
    weighted = mean_interval([1.0, 0.0], [3.0, 1.0])
    assert weighted.mean == 0.75 and weighted.low < 0.75 < weighted.high
    assert mean_interval([1.0, 0.0, 1.0], [1, 1, 1]) == mean_interval([1.0, 0.0, 1.0])
    with pytest.raises(ValueError):
        mean_interval([])


def test_failure_rates_by_system_and_evaluator():
    rows = [
        EvalRow(
            "s",
            "d",
            "1",
            scores={"j": 0.0},
            failures={"judge": "call_error: 500"},
            meta={"scored_by": ["judge"]},
        ),
        EvalRow("s", "d", "2", scores={"j": 1.0}, meta={"scored_by": ["judge"]}),
        EvalRow("s", "d", "3", errors=[RowError("evaluator", "judge", "TypeError", "x")]),
        EvalRow("s", "d", "4", errors=[RowError("system", "s", "EndpointError", "x")]),
    ]
    lines = failure_rates(rows, 0.5)
    assert lines == [
        "too many failures: evaluator judge failed on 2 of the 3 rows it scored (66.7%, more than "
        "--max-failure-rate 0.5)"
    ]
    assert len(failure_rates(rows, 0.2)) == 2 and failure_rates(rows, 1.0) == []
