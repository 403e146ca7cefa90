"""Verdicts through the real CLI (issue 25): gates as strict as the report and per data set,
missing rows that count, one interval for the same pairs in every command, inputs that cannot
be right as row errors, one cost source per comparison, and every format saying so."""

from __future__ import annotations

import json
import math
import re

import pytest
from scipy import stats

from context_bench import Output, RunConfig, evaluate
from context_bench.assertions import ScoreAssertionError, assert_scores
from context_bench.comparisons import verdict
from context_bench.gates import WorseGate, _worse
from context_bench.metrics.paired import paired
from context_bench.records import Comparison
from context_bench.testing import FakeServer, Reply, last_user_message


def write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def qa(system, example, answer, response, dataset="qa", **more):
    return {"id": example, "system": system, "dataset": dataset, "question": f"Q {example}?",
            "answer": answer, "response": response, **more}  # fmt: skip


def gate_lines(err):
    return [line for line in err.splitlines() if "gate failed" in line]


def test_a_loss_on_one_data_set_fails_the_gate_beside_a_larger_untouched_one(cli, tmp_path):
    """The candidate loses 7 of myqa's 10 rows; 300 rows of big are untouched.  Pooled, the loss is
    -7/310 and within a 0.1 margin; per data set it is -0.7 (McNemar p = 2/2^7)."""
    rows = [qa("base", f"m{i}", "Paris", "Paris", "myqa") for i in range(10)]
    rows += [qa("cand", f"m{i}", "Paris", "Rome" if i < 7 else "Paris", "myqa") for i in range(10)]
    rows += [qa(s, f"b{i}", "Oslo", "Oslo", "big") for s in ("base", "cand") for i in range(300)]
    data = write(tmp_path / "rows.jsonl", rows)
    argv = ("score", data, "--no-progress", "--baseline", "base")
    code, _, err = cli(*argv, "--fail-if-worse", "exact_match=0.1")
    assert code == 3, err
    (line,) = gate_lines(err)
    assert "exact_match of cand minus the baseline base on myqa is -0.700 (95% CI" in line
    assert "(McNemar's exact test, p=0.0156 < alpha 0.05), significantly below -0.1" in line
    assert cli(*argv, "--fail-if-worse", "big:exact_match=0.1")[0] == 0
    code, _, err = cli(*argv, "--fail-if-worse", "cand/myqa:exact_match=0.1")
    assert code == 3 and len(gate_lines(err)) == 1


def test_a_candidate_missing_rows_fails_every_gate_unless_missing_rows_are_allowed(cli, tmp_path):
    rows = [qa("base", f"q{i}", "Paris", "Paris") for i in range(10)]
    rows += [qa("cand", f"q{i}", "Paris", "Paris") for i in range(4)]
    data = write(tmp_path / "rows.jsonl", rows)
    argv = ("score", data, "--no-progress", "--baseline", "base")
    code, _, err = cli(*argv, "--max-failure-rate", "0")
    assert (
        code == 4
        and (
            "too many failures: system cand could not answer 6 of 10 rows (60.0%, more than "
            "--max-failure-rate 0); 6 of them rows the baseline has and it lacks"
        )
        in err
    )
    code, _, err = cli(*argv, "--max-failure-rate", "1", "--fail-under", "exact_match=0.9")
    (line,) = gate_lines(err)
    assert code == 3 and "exact_match of cand on qa is 0.400 (95% CI" in line
    code, _, err = cli(*argv, "--max-failure-rate", "1", "--fail-if-worse", "exact_match")
    (line,) = gate_lines(err)
    assert code == 3 and "(McNemar's exact test, p=0.0312 < alpha 0.05; 4 of 10 rows shared)" in line
    allowed = ("--allow-missing", "--max-failure-rate", "0", "--fail-under", "exact_match=0.9")
    code, _, err = cli(*argv, *allowed, "--fail-if-worse", "exact_match")
    assert code == 0, err
    shared = "cand on qa: 4 of 10 rows shared with the baseline base"
    for fmt in ("table", "markdown", "json", "html", "csv", "jsonl"):
        code, out, err = cli(*argv, "--max-failure-rate", "1", "--output", fmt, "--detail")
        assert code == 0 and shared in (out if fmt in ("table", "markdown", "json", "html") else err), fmt
        if fmt in ("table", "markdown", "html"):  # and in the comparisons' own table
            assert {"table": "4 of 10", "markdown": "| 4 of 10 |", "html": '"num">4 of 10</td>'}[
                fmt
            ] in out.replace(shared, ""), fmt


def test_the_same_pairs_give_the_same_interval_in_every_command(cli, tmp_path):
    """run, score, compare, the gate line and assert_scores: the seed is the values' own, so the
    candidate's mean and its difference to the baseline have one interval wherever computed."""
    answers = ["red car fast", "blue sky high", "green tree tall", "old man sea", "big city lights",
               "cold dark night", "warm sunny day", "deep blue ocean"]  # fmt: skip
    worse = ["red car", "blue", "green tree", "old man sea boat", "big", "cold night", "warm", "deep"]
    questions = [{"id": f"q{i}", "question": f"Q {i}?", "answer": a} for i, a in enumerate(answers)]
    data = write(tmp_path / "qa.jsonl", questions)
    by_question = {f"Q {i}?": (a, w) for i, (a, w) in enumerate(zip(answers, worse, strict=True))}

    def server(side):
        return FakeServer(lambda body: by_question[last_user_message(body).strip()][side])

    reports = {}
    with server(0) as good, server(1) as bad:
        argv = ("run", "--max-retries", "0", "--proxy", good.url, "--name", "base", "--proxy", bad.url,
                "--name", "cand", "--dataset", data, "--no-progress")  # fmt: skip
        code, _, err = cli(*argv, "--output", "json", "--out", str(tmp_path / "run.json"),
                               "--baseline", "base", "--fail-if-worse", "f1")  # fmt: skip
    assert code == 3, err
    reports["run"] = json.loads((tmp_path / "run.json").read_text())["summary"]
    (line,) = gate_lines(err)
    scored = [
        dict(q, system=s, response=(a if s == "base" else w))
        for s in ("base", "cand")
        for q, a, w in zip(questions, answers, worse, strict=True)
    ]
    rows = write(tmp_path / "responses.jsonl", scored)
    code, _, _ = cli("score", rows, "--dataset-name", "qa", "--no-progress", "--output", "json",
                         "--out", str(tmp_path / "score.json"))  # fmt: skip
    reports["score"] = json.loads((tmp_path / "score.json").read_text())["summary"]
    for system in ("base", "cand"):
        own = write(tmp_path / f"{system}.jsonl", [r for r in scored if r["system"] == system])
        cli("score", own, "--dataset-name", "qa", "--no-progress", "--output", "json",
                "--out", str(tmp_path / f"{system}.json"))  # fmt: skip
    code, out, _ = cli("compare", str(tmp_path / "base.json"), str(tmp_path / "cand.json"),
                           "--output", "json")  # fmt: skip
    reports["compare"] = json.loads(out)["summary"]

    def figures(summary):
        (c,) = [c for c in summary["comparisons"] if c["field"] == "f1"]
        cand = summary["groups"][1]
        return c["ci"], c["p_value"], c["test"], cand["ci"]["f1"]

    found = {name: figures(summary) for name, summary in reports.items()}
    assert found["run"] == found["score"] == found["compare"], found
    ci, p, test, mean_ci = found["run"]
    assert test == "sign_flip" and p == 2 / 2**8  # every pair lower: the exact test's smallest p
    assert f"(95% CI {ci[0]:.3f} to {ci[1]:.3f}, n=8) (exact sign-flip permutation test, p=0.00781" in line
    result = evaluate(
        None, {"qa": [r for r in scored if r["system"] == "cand"]}, RunConfig(output=Output(progress=False))
    )
    with pytest.raises(ScoreAssertionError) as failed:
        assert_scores(result, dataset="qa", f1=0.99)
    assert f"(95% CI {mean_ci[0]:.3f} to {mean_ci[1]:.3f}, n=8)" in str(failed.value)
    assert result.summary.groups[0].ci["f1"] == mean_ci


def test_assert_scores_shows_wilsons_interval_for_0_1_scores():
    rows = [
        {"id": str(i), "answer": "Paris", "response": "Paris" if i in (0, 7) else "Rome"} for i in range(8)
    ]
    result = evaluate(None, {"qa": rows}, RunConfig(output=Output(progress=False)))
    with pytest.raises(ScoreAssertionError) as failed:
        assert_scores(result, exact_match=0.5)
    # Wilson's interval of 2 of 8 (a t interval read 0.125 to 1.209 on such scores)
    assert "exact_match mean 0.250 (95% CI 0.071 to 0.591, n=8) is below 0.5" in str(failed.value)


def test_one_pair_or_only_ties_is_too_few_rows_to_tell(cli, tmp_path):
    rows = [qa("base", "q0", "Paris", "Paris"), qa("cand", "q0", "Paris", "Rome")]
    rows += [qa(s, f"t{i}", "Oslo", "Oslo", "tied") for s in ("base", "cand") for i in range(3)]
    data = write(tmp_path / "rows.jsonl", rows)
    code, out, _ = cli("score", data, "--no-progress", "--output", "json")
    for c in json.loads(out)["summary"]["comparisons"]:
        assert (c["p_value"], c["ci"], c["significant"], c["mdd"], c["test"]) == (
            None,
            None,
            None,
            None,
            None,
        )
    for fmt in ("table", "markdown", "html"):
        code, out, _ = cli("score", data, "--no-progress", "--output", fmt, "--detail")
        assert code == 0 and out.count("too few rows") >= 2, fmt


def test_every_format_marks_significance_coverage_and_the_mdd(cli, tmp_path):
    rows = [qa("base", f"q{i}", "Paris", "Paris") for i in range(30)]
    rows += [qa("cand", f"q{i}", "Paris", "Rome" if i % 3 == 0 else "Paris") for i in range(30)]
    data = write(tmp_path / "rows.jsonl", rows)
    code, out, _ = cli("score", data, "--no-progress", "--output", "json")
    (c,) = [c for c in json.loads(out)["summary"]["comparisons"] if c["field"] == "exact_match"]
    # 10 of 30 lost: McNemar p = 2 / 2^10; sd of the differences sqrt(10/30 - 1/9) * sqrt(30/29)
    assert (c["significant"], c["p_value"], c["coverage"], c["cost_source"]) == (True, 2 / 2**10, 1.0, None)
    sd = math.sqrt((10 / 30 - 1 / 9) * 30 / 29)
    hand = (stats.t.ppf(0.975, 29) + stats.t.ppf(0.8, 29)) * sd / math.sqrt(30)
    assert c["mdd"] == pytest.approx(hand, rel=1e-9)
    for fmt in ("table", "markdown", "html"):
        code, out, _ = cli("score", data, "--no-progress", "--output", fmt, "--detail")
        assert all(word in out for word in ("significant", "mdd", f"{c['mdd']:.3f}")), fmt
        if fmt == "markdown":
            ci = rf"\[{c['ci'][0]:.2f}, {c['ci'][1]:.2f}\]"  # Markdown's escaped brackets
            # four fields' comparisons, wider than the page: the table turned sideways
            for line in ("| difference | -0.333 worse |", f"| 95% CI | {ci} |", "| p | 0.00195 |"):
                assert line in out
            assert "| significant | yes |" in out and f"| mdd | {c['mdd']:.3f} |" in out


def test_alpha_sets_significance_and_the_comparisons_interval(cli, tmp_path):
    rows = [qa("base", f"q{i}", "Paris", "Paris") for i in range(3)] + [
        qa("cand", f"q{i}", "Paris", "Rome") for i in range(3)
    ]
    data = write(tmp_path / "rows.jsonl", rows)
    argv = ("score", data, "--no-progress", "--baseline", "base", "--fail-if-worse", "exact_match")
    code, _, err = cli(*argv)  # 3 of 3 lost: p = 0.25, interval [-1, -1]: no failure
    assert code == 0 and not gate_lines(err)
    code, out, err = cli(*argv, "--alpha", "0.3", "--output", "markdown")
    assert code == 3 and "p=0.25 < alpha 0.3" in gate_lines(err)[0] and "70% CI" in out


def test_exhaustive_0_1_cases_never_fail_the_gate_unless_the_printed_p_is_below_alpha():
    """Every (lost, gained, tied) split of n <= 40 pairs of 0/1 scores, through the test and
    figures every comparison is made of (:func:`paired`, :func:`verdict`) and the gate's own rule
    and line: a failure always prints p below alpha."""
    gate, alpha, failures, cases = WorseGate("f1"), 0.05, 0, 0
    for n in range(1, 41):
        for lost in range(n + 1):
            for gained in range(n + 1 - lost):
                tied = n - lost - gained
                test = paired(
                    [1.0] * lost + [0.0] * gained + [1.0] * tied, [0.0] * lost + [1.0] * gained + [1.0] * tied
                )
                c = Comparison("s", "b", "d", "f1", **verdict(test, alpha), compression_ratio=None,
                               tokens_saved=None, cost_saved=None, lost=[], gained=[])  # fmt: skip
                lines = _worse(gate, [c], alpha)
                cases += 1
                if gate.fails(c):
                    failures += 1
                    printed = float(re.search(r"p=([0-9.e-]+) <", lines[0]).group(1))
                    assert printed < alpha and c.p_value < alpha, (lost, gained, tied, lines)
                else:
                    assert not lines
    assert cases == 12_340 and failures > 0


def saved_report(cli, tmp_path, name, rows):
    """A JSON report of ``score`` on ``rows``, as ``compare`` reads it (its data: the parsed JSON)."""
    path = tmp_path / f"{name}.json"
    code, _, err = cli("score", write(tmp_path / f"{name}.jsonl", rows), "--dataset-name", "qa",
                           "--no-progress", "--output", "json", "--out", str(path))  # fmt: skip
    assert code == 0, err
    return path


def test_compare_reads_numbers_that_cannot_be_right_as_row_errors(cli, tmp_path):
    """A NaN score, a score that is text, scores null, a latency that is text, a negative cost, a
    figure past the bound: each is an input error on its row (counted, failing the mean), not a
    number and not a traceback."""
    before = saved_report(cli, tmp_path, "before", [qa("s", f"q{i}", "Paris", "Paris") for i in range(8)])
    after = saved_report(cli, tmp_path, "after", [qa("s", f"q{i}", "Paris", "Paris") for i in range(8)])
    data = json.loads(after.read_text())
    rows = data["rows"]
    rows[0]["scores"]["f1"] = math.nan
    rows[1]["scores"]["f1"] = "high"
    rows[2]["scores"] = None
    rows[3]["latency"] = "slow"
    rows[4]["cost"] = -15
    rows[5]["input_tokens"] = 1e13
    after.write_text(json.dumps(data))  # NaN written as the NaN JSON literal Python reads back
    code, out, err = cli("compare", str(before), str(after), "--output", "json")
    assert code == 0 and "Traceback" not in err
    summary = json.loads(out)["summary"]
    errored = {r["example_id"]: r["errors"][0] for r in json.loads(out)["rows"] if r["errors"]}
    assert sorted(errored) == [f"q{i}" for i in range(6)] and summary["errors"]["by_input"] == {"qa": 6}
    assert errored["q0"]["message"] == "score 'f1' is nan, not a finite number within +-1e+12"
    assert errored["q1"]["message"] == "score 'f1' is 'high', not a number"
    assert errored["q2"]["message"] == "'scores' is None, not an object of scores"
    assert errored["q3"]["message"] == "'latency' is 'slow', not a number (seconds)"
    assert errored["q4"]["message"] == "'cost' is -15, not dollars from 0 to 1e+12"
    assert errored["q5"]["message"] == "'input_tokens' is 1e+13, not a token count from 0 to 1e+12"
    after_group = summary["groups"][1]
    assert (after_group["system"], after_group["errors"]) == ("after:s", 6)
    # q0-q2 lost their f1 (an errored row without it counts 0); q3-q5 lost only the bad figure
    assert after_group["scores"]["f1"] == 5 / 8
    assert after_group["cost"]["dollars"] is None or after_group["cost"]["dollars"] >= 0


def test_compare_refuses_a_duplicate_id_and_a_label_that_collides(cli, tmp_path):
    before = saved_report(cli, tmp_path, "before", [qa("x", f"q{i}", "Paris", "Paris") for i in range(3)])
    after = saved_report(cli, tmp_path, "after", [qa("x", f"q{i}", "Paris", "Paris") for i in range(3)])
    data = json.loads(after.read_text())
    twice = json.loads(json.dumps(data))
    twice["rows"].append(dict(twice["rows"][0]))
    (tmp_path / "twice.json").write_text(json.dumps(twice))
    code, _, err = cli("compare", str(before), str(tmp_path / "twice.json"))
    assert code == 2 and err.strip().splitlines()[-1] == (
        f"context-bench: error: {tmp_path / 'twice.json'}: system 'x' has id 'q0' twice in data set 'qa': "
        "compare pairs each id once (score refuses such a file too)"
    )
    for row in data["rows"]:  # a system literally named as before's x will be relabelled
        row["system"] = "before:x"
    data["rows"] += [dict(row, system="x") for row in data["rows"]]
    after.write_text(json.dumps(data))
    code, _, err = cli("compare", str(before), str(after))
    assert (
        code == 2 and "would be named 'before:x', the name of system" in err and "rename one of them" in err
    )


def test_score_reads_figures_that_cannot_be_right_as_input_errors(cli, tmp_path):
    rows = [
        qa("s", f"q{i}", "Paris", "Paris", input_tokens=100, output_tokens=5, cost=0.01) for i in range(6)
    ]
    rows[0]["input_tokens"] = -100
    rows[1]["cost"] = "abc"
    rows[2]["latency"] = math.nan
    rows[3]["output_tokens"] = 1e13
    code, out, err = cli("score", write(tmp_path / "rows.jsonl", rows), "--output", "json",
                             "--no-progress", "--max-failure-rate", "1")  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    messages = [r["errors"][0]["message"] for r in result["rows"] if r["errors"]]
    assert messages == [
        "row 0 of data set 'rows': 'input_tokens' is -100, not a token count from 0 to 1e+12",
        "row 1 of data set 'rows': 'cost' is 'abc', not a number (dollars)",
        "row 2 of data set 'rows': 'latency' is nan, not seconds from 0 to 1e+12",
        "row 3 of data set 'rows': 'output_tokens' is 1e+13, not a token count from 0 to 1e+12",
    ]
    (group,) = result["summary"]["groups"]
    assert (group["errors"], group["scores"]["f1"], group["cost"]["dollars"]) == (
        4,
        2 / 6,
        pytest.approx(0.02),
    )
    assert group["tokens"]["total"] == 2 * 105


def test_mixed_cost_sources_give_no_dollars_saved_and_say_so(cli, tmp_path):
    """The baseline's endpoint reports its cost (LiteLLM's header), the candidate is priced by
    its own name: no dollars saved, one warning; --price for the model both run prices both."""
    data = write(
        tmp_path / "qa.jsonl", [{"id": f"q{i}", "question": "Capital?", "answer": "Paris"} for i in range(3)]
    )
    with (
        FakeServer(lambda body: Reply("Paris", headers={"x-litellm-response-cost": "0.01"})) as base,
        FakeServer(lambda body: Reply("Paris", usage={"prompt_tokens": 5, "completion_tokens": 2})) as small,
    ):
        argv = ("run", "--proxy", base.url, "--name", "base", "--model", "m", "--proxy", small.url,
                "--name", "small", "--model", "m", "--dataset", data, "--no-progress",
                "--output", "json")  # fmt: skip
        code, out, err = cli(*argv, "--price", "small=1,1")
        summary = json.loads(out)["summary"]
        (c,) = [c for c in summary["comparisons"] if c["field"] == "f1"]
        assert (c["cost_saved"], c["cost_source"]) == (None, None)
        assert [g["cost"]["source"] for g in summary["groups"]] == ["reported", "priced"]
        assert any("small (priced) against base (reported) on qa" in w for w in summary["warnings"])
        assert "small (priced) against base (reported) on qa" in err
        code, out, _ = cli(*argv, "--price", "m=1000,1000")
        summary = json.loads(out)["summary"]
        (c,) = [c for c in summary["comparisons"] if c["field"] == "f1"]
        # 10 + 2 tokens a row on the baseline (the server's default usage), 5 + 2 on small
        assert c["cost_source"] == "priced" and c["cost_saved"] == pytest.approx(3 * (12 - 7) * 1000 / 1e6)


def test_a_judge_is_priced_by_its_model_and_else_by_its_reported_cost(cli, tmp_path):
    rows = [qa(s, f"q{i}", "Paris", "Paris") for s in ("a", "b") for i in range(3)]
    data = write(tmp_path / "rows.jsonl", rows)
    with FakeServer(lambda body: Reply("RATING: 5", headers={"x-litellm-response-cost": "0.5"})) as judge:
        argv = (
            "score",
            data,
            "--judge-url",
            judge.url,
            "--judge-model",
            "jm",
            "--no-progress",
            "--output",
            "json",
        )
        code, out, err = cli(*argv)
        assert code == 0, err
        (figures,) = json.loads(out)["summary"]["judges"]
        assert (figures["calls"], figures["dollars"]) == (6, 3.0)  # the judge endpoint's own cost
        code, out, err = cli(*argv, "--price", "jm=1000,2000")
        (figures,) = json.loads(out)["summary"]["judges"]
        # 10 prompt and 2 completion tokens a call (the server's usage), priced by the judge's model
        assert figures["dollars"] == pytest.approx(6 * (10 * 1000 + 2 * 2000) / 1e6)
