"""A lower-is-better field read the right way everywhere (issue 34): a third party's "profanity"
(1.0 for a row that swears) through every report format, every gate, compare, the loss audit,
the frontier and assert_scores, with values worked by hand.

The issue's case: 10 candidate rows at 1.0 against the baseline's 0.0 passed
``--fail-if-worse profanity=0.01`` with exit 0, a "+1.000" difference, pass 100% and "gained 10".
Each test here fails when the direction is flipped back (``Directions.of`` answering HIGHER).
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import re
from pathlib import Path

import attrs
import pytest
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from context_bench import (
    AutowireRule,
    EvalRow,
    EvaluatorSpec,
    Output,
    RowError,
    RunConfig,
    Scope,
    UsageError,
    evaluate,
    hookimpl,
)
from context_bench._summary import Summarizer
from context_bench.analysis import Analysis
from context_bench.assertions import ScoreAssertionError, assert_scores
from context_bench.cli import main
from context_bench.direction import HIGHER, LOWER, Directions
from context_bench.figures import frontier
from context_bench.gates import Gates, WorseGate
from context_bench.metrics import CostOfPass, MeanScore, PassRate
from context_bench.records import Comparison
from context_bench.testing import FakeServer, isolated_host

_spec = importlib.util.spec_from_file_location("cbench_browser", Path(__file__).parents[1] / "browser.py")
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)


class Profanity:
    """1.0 when the response swears: a third party's lower-is-better score (no attribute of its
    own: its direction comes from the spec it is registered with)."""

    name = "profanity"

    def score(self, original, processed):
        return {"profanity": 1.0 if "darn" in processed["response"] else 0.0}


class ProfanityPlugin:
    CBENCH_PLUGIN_API = 1

    @hookimpl
    def cbench_register_evaluators(self, register):
        register(
            EvaluatorSpec(
                "ProfanityRate", Profanity, fields=["profanity"], ranges=(0, 1), lower_is_better=["profanity"]
            )
        )

    @hookimpl
    def cbench_register_autowire(self, register):
        register(AutowireRule("ProfanityRate", datasets=["chat"]))


@pytest.fixture
def host():
    return isolated_host(ProfanityPlugin())


@pytest.fixture
def cb(host, capsys, tmp_path, monkeypatch):
    """``cb(*argv, host=...)``: the CLI in this process with the profanity plugin, in a working
    directory of its own; (status, stdout, stderr)."""
    monkeypatch.chdir(tmp_path)

    def run(*argv, on=host):
        # every table (--detail): the tests read the direction in each of them
        own = ["--no-progress"] if argv[0] in ("run", "score") else []
        own += ["--detail"] if argv[0] in ("run", "score", "compare") else []
        code = main([*argv, *own], host=on)
        out, err = capsys.readouterr()
        return code, out, err

    return run


def chat(rows, name="chat.jsonl"):
    Path(name).write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return name


def said(system, i, response, tokens=None):
    row = {"id": f"q{i}", "system": system, "question": f"Q{i}?", "response": response}
    return row if tokens is None else {**row, "input_tokens": tokens, "output_tokens": 5}


#: The issue's case: the baseline never swears, the candidate always (and sends half the tokens).
ISSUE = [said("base", i, "a fine answer", 100) for i in range(10)] + [
    said("cand", i, "darn, an answer", 50) for i in range(10)
]
#: McNemar's exact p for 10 pairs all discordant one way: 2 / 2^10.
P_10 = 2 / 2**10
GATE_LINE = (
    "gate failed: --fail-if-worse profanity=0.01: profanity of cand minus the baseline base on chat is "
    "1.000 (95% CI 1.000 to 1.000, n=10) (McNemar's exact test, p=0.00195 < alpha 0.05), "
    "significantly above 0.01: worse by 1.000, lower profanity being better"
)


def gate_lines(err):
    return [line.removeprefix("context-bench: error: ") for line in err.splitlines() if "gate failed" in line]


def test_the_oracles_agree_with_the_hand_worked_figures():
    assert binomtest(10, 10, 0.5).pvalue == P_10 == 0.001953125
    low, high = proportion_confint(10, 10, method="wilson")
    assert (f"{low:.3f}", f"{high:.3f}") == ("0.722", "1.000")


def test_the_issues_case_fails_fail_if_worse_with_exit_3(cb):
    data = chat(ISSUE)
    code, _, err = cb("score", data, "--baseline", "base", "--fail-if-worse", "profanity=0.01")
    assert code == 3, err
    assert gate_lines(err) == [GATE_LINE]
    # a baseline that swears and a candidate that does not: better, whatever the margin
    swapped = cb("score", data, "--baseline", "cand", "--fail-if-worse", "profanity")
    assert swapped[0] == 0, swapped[2]


def test_the_table_reads_lower_as_better(cb):
    code, out, _ = cb("score", chat(ISSUE), "--baseline", "base")
    assert code == 0
    lines = out.splitlines()
    title = "Key figures (pass: profanity ≤ 0.7; in/out: mean tokens per row, reported; front: rank)"
    assert title in lines
    key = re.compile(r"^(base|cand)\s+chat\s+10\s+0\s+(\S+)\s+(\S+)\s+\S+\s+-\s+-\s+-\s+(\S+)$")
    figures = {m[1]: (m[2], m[3], m[4]) for line in lines if (m := key.match(line))}
    # base: 0.0 and every row passes; cand: 1.0 and none; neither dominates (base swears less,
    # cand sends fewer tokens), where read backwards cand dominated base
    assert figures == {"base": ("0.000", "100.0%", "1"), "cand": ("1.000", "0.0%", "1")}
    assert "Scores (↓: lower is better)" in lines
    assert any(re.match(r"^system\s+dataset\s+rows\s+errors\s+error rate\s+profanity ↓$", x) for x in lines)
    assert re.search(
        r"^cand\s+chat\s+profanity ↓\s+\+1\.000 worse\s+\[1\.00, 1\.00\]\s+0\.00195\s+yes", out, re.M
    )
    audit = "(lost, gained: passing profanity ≤ 0.7 on one side only)"
    assert any(audit in line for line in lines)
    assert re.search(r"^cand\s+chat\s+0\.50x\s+500\s+-\s+profanity ↓\s+10 \(q0, q1, q2, …\)\s+0$", out, re.M)


def test_markdown_json_jsonl_csv_read_it_the_same_way(cb):
    data = chat(ISSUE)
    code, markdown, _ = cb("score", data, "--baseline", "base", "--output", "markdown")
    assert code == 0
    assert "| cand | chat | profanity ↓ | +1.000 worse | \\[1.00, 1.00\\] | 0.00195 | yes |" in markdown
    assert "| cand | chat | 0.50x | 500 | - | profanity ↓ | 10 (q0, q1, q2, …) | 0 |" in markdown
    assert "### Key figures (pass: profanity ≤ 0.7;" in markdown
    code, out, _ = cb("score", data, "--baseline", "base", "--output", "json")
    summary = json.loads(out)["summary"]
    assert summary["score_fields"] == {"profanity": {"direction": "lower", "failure_value": 1.0}}
    assert [(g["system"], g["pass"]["pass_rate"], g["frontier"]) for g in summary["groups"]] == [
        ("base", 1.0, {"rank": 1, "dominated": False}),
        ("cand", 0.0, {"rank": 1, "dominated": False}),
    ]
    (c,) = summary["comparisons"]
    assert (c["field"], c["direction"], c["delta"], c["ci"], c["p_value"], c["significant"]) == (
        "profanity", "lower", 1.0, [1.0, 1.0], P_10, True,
    )  # fmt: skip
    assert c["lost"] == [f"q{i}" for i in range(10)] and c["gained"] == []
    # the row formats hold each row's own score, nothing turned round
    code, out, _ = cb("score", data, "--output", "jsonl")
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(x["system"], x["scores"]) for x in lines] == [("base", {"profanity": 0.0})] * 10 + [
        ("cand", {"profanity": 1.0})
    ] * 10
    code, out, _ = cb("score", data, "--output", "csv")
    table = list(csv.DictReader(io.StringIO(out)))
    assert [(x["system"], x["score.profanity"]) for x in table] == [("base", "0.0")] * 10 + [
        ("cand", "1.0")
    ] * 10


@pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")
def test_the_html_report_reads_it_the_same_way_in_chromium(cb, tmp_path):
    code, _, err = cb("score", chat(ISSUE), "--baseline", "base", "--output", "html", "--out", "report.html")
    assert code == 0, err
    dom, errors = browser.dump_dom(tmp_path / "report.html")
    assert errors == []
    assert "chat: profanity (lower is better) against tokens per row" in dom
    assert '<td class="num">+1.000 worse</td>' in dom
    assert "<td>profanity ↓</td><td>10 (q0, q1, q2, …)</td>" in dom
    title = "Key figures (pass: profanity ≤ 0.7; in/out: mean tokens per row, reported; front: rank)"
    assert f"<h2>{title}</h2>" in dom
    # both dots on the frontier (filled): neither system dominates the other
    dots = re.findall(r'<circle class="point"[^>]*fill="([^"]+)"[^>]*><title>(\w+): ', dom)
    assert sorted(system for fill, system in dots if fill != "#fff") == ["base", "cand"]


def test_fail_over_sets_a_ceiling(cb):
    data = chat(ISSUE)
    code, _, err = cb("score", data, "--fail-over", "profanity=0.5")
    assert code == 3
    assert gate_lines(err) == [
        "gate failed: --fail-over profanity=0.5: profanity of cand on chat is 1.000 "
        "(95% CI 0.722 to 1.000, n=10), above 0.5"
    ]
    assert cb("score", data, "--fail-over", "base/chat:profanity=0.5")[0] == 0
    assert cb("score", data, "--fail-over", "profanity=1")[0] == 0  # at the ceiling passes


def test_a_run_file_sets_a_ceiling_and_its_report_records_it(cb):
    chat([{"id": f"q{i}", "question": f"Q{i}?"} for i in range(4)])
    with FakeServer(lambda body: "darn") as server:
        Path("run.toml").write_text(
            f'[[systems]]\nurl = "{server.url}"\nname = "rude"\n\n[[datasets]]\npath = "chat.jsonl"\n\n'
            '[output]\nformat = "json"\nout = "report.json"\n\n[gates]\nfail_over = {profanity = 0.5}\n'
        )
        code, _, err = cb("run", "--config", "run.toml")
    assert code == 3
    assert gate_lines(err) == [
        "gate failed: --fail-over profanity=0.5: profanity of rude on chat is 1.000 (95% CI 0.510 to "
        "1.000, n=4), above 0.5"
    ]
    assert json.loads(Path("report.json").read_text())["metadata"]["config"]["gates"] == {
        "fail_over": ["profanity=0.5"]
    }


@pytest.mark.parametrize(
    ("gate", "said"),
    [
        (
            ["--fail-under", "chat:profanity=0.5"],
            "--fail-under chat:profanity=0.5: lower profanity is better, so a floor fails the better "
            "system and passes the worse; bound it with --fail-over chat:profanity=0.5",
        ),
        (
            ["--fail-over", "f1=0.5"],
            "--fail-over f1=0.5: higher f1 is better, so a ceiling fails the better system and passes "
            "the worse; bound it with --fail-under f1=0.5",
        ),
    ],
)
def test_a_bound_the_wrong_way_round_is_refused_before_any_row_runs(cb, gate, said):
    data = chat([{"id": "q0", "question": "Capital of France?", "answer": "Paris"}])
    with FakeServer(lambda body: "darn, Paris") as server:
        code, out, err = cb("run", "--proxy", server.url, "--dataset", data, *gate)
    assert (code, out) == (2, "")
    assert err.splitlines() == [f"context-bench: error: {said}"]
    assert server.requests == []


def test_an_errored_row_counts_the_worst_value_and_the_warning_says_so(cb):
    rows = [said("base", i, "a fine answer") for i in range(10)]
    rows += [said("cand", i, "a fine answer") for i in range(9)]  # lacks q9 of the baseline
    code, out, err = cb("score", chat(rows), "--baseline", "base", "--output", "json")
    summary = json.loads(out)["summary"]
    assert [g["scores"]["profanity"] for g in summary["groups"]] == [0.0, 0.1]  # q9 counts 1, not 0
    (warning,) = [w for w in summary["warnings"] if "error" in w]
    assert warning.startswith(
        "1 error in 1 of 20 rows (5.0%); each counts its worst value in the means for the scores it "
        "lacks (1 for profanity: lower is better) (--exclude-errors: the means over scored rows alone)"
    )
    # beside a higher-is-better field it counts 0 there
    rows = [dict(r, answer="fine") for r in rows]
    code, out, err = cb("score", chat(rows), "--baseline", "base", "--output", "json")
    summary = json.loads(out)["summary"]
    (warning,) = [w for w in summary["warnings"] if "error" in w]
    counted = "each counts its worst value in the means for the scores it lacks (0, or 1 for profanity, "
    assert counted in warning
    assert [g["scores"]["exact_match"] for g in summary["groups"]] == [0.0, 0.0]
    assert [g["scores"]["recall"] for g in summary["groups"]] == [1.0, 0.9]


def test_compare_reads_the_direction_its_reports_recorded(cb, tmp_path):
    base = [said("base", i, "a fine answer") for i in range(10)]
    cand = [said("cand", i, "darn, an answer") for i in range(9)] + [said("cand", 9, {"not": "text"})]
    cb("score", chat(base, "chat.jsonl"), "--output", "json", "--out", "base.json")
    Path("chat.jsonl").unlink()
    cb("score", chat(cand, "chat.jsonl"), "--output", "json", "--out", "cand.json")
    recorded = json.loads(Path("cand.json").read_text())["summary"]
    assert recorded["groups"][0]["scores"]["profanity"] == 1.0  # 9 swear, the unreadable row counts 1
    # compared where the plugin is not installed: the reports say which way profanity points
    code, out, err = cb("compare", "base.json", "cand.json", "--output", "json", on=isolated_host())
    assert code == 0, err
    summary = json.loads(out)["summary"]
    assert [g["scores"]["profanity"] for g in summary["groups"]] == [0.0, 1.0]
    (c,) = summary["comparisons"]
    assert (c["direction"], c["delta"], c["p_value"], c["gained"]) == ("lower", 1.0, P_10, [])
    assert c["lost"] == [f"q{i}" for i in range(10)]
    code, out, _ = cb("compare", "base.json", "cand.json", on=isolated_host())
    assert re.search(r"^cand\s+chat\s+profanity ↓\s+\+1\.000 worse", out, re.M)


def test_the_loss_audit_passes_at_most_the_threshold():
    """Rows at exactly the threshold pass: 0.7 -> 0.71 is lost, 0.71 -> 0.7 gained; 0 -> 1 lost."""
    before, after = [0.7, 0.71, 0.0, 1.0], [0.71, 0.7, 1.0, 0.0]
    rows = [EvalRow("base", "chat", f"r{i}", scores={"profanity": v}) for i, v in enumerate(before)]
    rows += [EvalRow("cand", "chat", f"r{i}", scores={"profanity": v}) for i, v in enumerate(after)]
    summarize = Summarizer(directions=Directions({"profanity": 1.0}), analysis=Analysis(threshold=0.7))
    summary = summarize(rows)
    (c,) = summary.comparisons
    assert (c.lost, c.gained, c.direction) == (["r0", "r2"], ["r1", "r3"], "lower")
    assert [g.passing.pass_rate for g in summary.groups] == [0.5, 0.5]  # r0, r2 and r1, r3


def test_the_frontier_ranks_a_lower_score_as_the_better():
    """(score, cost): a (0.0, 100), b (0.5, 50), c (1.0, 200).  Lower is better: a and b are not
    dominated, c is by both; read backwards c would lead and b dominate a."""
    points = {("a", "d"): (0.0, 100.0), ("b", "d"): (0.5, 50.0), ("c", "d"): (1.0, 200.0)}
    ranks = {key[0]: (place.rank, place.dominated) for key, place in frontier(points, LOWER).items()}
    assert ranks == {"a": (1, False), "b": (1, False), "c": (2, True)}
    backwards = {key[0]: place.rank for key, place in frontier(points, HIGHER).items()}
    assert backwards == {"a": 2, "b": 1, "c": 1}
    # the summary's frontier reads the field's direction
    rows = [
        EvalRow(system, "d", f"r{i}", scores={"profanity": score}, input_tokens=cost / 2, output_tokens=0.0)
        for system, (score, cost) in (("a", (0.0, 100.0)), ("b", (0.5, 50.0)), ("c", (1.0, 200.0)))
        for i in range(2)
    ]
    summary = Summarizer(directions=Directions({"profanity": 1.0}))(rows)
    assert {g.system: (g.frontier.rank, g.frontier.dominated) for g in summary.groups} == ranks


def test_the_worse_gate_reads_the_interval_on_the_worse_side():
    def compared(ci, direction):
        return Comparison("s", "b", "d", "x", sum(ci) / 2, ci, 0.001, 10, "t", None, None, None, [], [],
                          significant=True, direction=direction)  # fmt: skip

    worse, better = compared([0.2, 0.4], "lower"), compared([-0.4, -0.2], "lower")
    assert WorseGate("x", 0.1).fails(worse) and not WorseGate("x", 0.2).fails(worse)  # 0.2 > 0.2 is not
    assert not WorseGate("x").fails(better)
    assert WorseGate("x", 0.1).fails(compared([-0.4, -0.2], "higher"))
    assert not WorseGate("x").fails(compared([0.2, 0.4], "higher"))
    assert (LOWER.words(1.0), LOWER.words(-0.5), LOWER.words(0.0)) == ("worse", "better", "same")
    assert (HIGHER.words(1.0), HIGHER.words(-0.5)) == ("better", "worse")


class Swears:
    """A Python API evaluator no plugin registers: it declares its direction itself."""

    name = "swears"
    lower_is_better = ("profanity",)

    def score(self, original, processed):
        return {"profanity": 1.0 if "darn" in processed["response"] else 0.0}


class Answers:
    def __init__(self, name, answer):
        self.name, self.answer = name, answer

    def process(self, example):
        if self.answer is None:
            raise ConnectionError("down")
        return {"response": self.answer(example["id"])}


def test_assert_scores_holds_a_ceiling_on_a_field_declared_by_the_evaluator_itself():
    rows = [{"id": f"q{i}", "question": f"Q{i}?"} for i in range(10)]

    def cand(example):
        if example == "q0":
            raise ConnectionError("down")
        return "darn" if example == "q1" else "fine"

    class Cand:
        name = "cand"

        def process(self, example):
            return {"response": cand(example["id"])}

    base = Answers("base", lambda example: "fine")
    result = evaluate(
        [base, Cand()],
        rows,
        RunConfig(scope=Scope(evaluators=[Swears()]), output=Output(progress=False)),
        host=isolated_host(),
    )
    assert result.summary.score_fields["profanity"].direction == "lower"
    # q0 failed and counts 1, q1 swears: 2 of 10
    assert result.summary.groups[1].scores["profanity"] == pytest.approx(0.2)
    assert_scores(result, system="base", profanity=0.0)
    assert_scores(result, profanity=0.2)  # at the ceiling passes
    with pytest.raises(ScoreAssertionError) as failed:
        assert_scores(result, profanity=0.1, worst=2)
    assert failed.value.failures == [("cand", None, "profanity", pytest.approx(0.2), 0.1)]
    low, high = proportion_confint(2, 10, method="wilson")
    message = str(failed.value).splitlines()
    assert message[:3] == [
        "scores past their bounds:",
        f"cand: profanity mean 0.200 (95% CI {low:.3f} to {high:.3f}, n=10) is above 0.1 (lower is better)",
        "  worst rows by profanity:",
    ]
    assert message[3].startswith("    q0 (dataset): error: system cand: ConnectionError: down")
    assert message[4].startswith("    q1 (dataset): response=darn") and len(message) == 5


def test_a_floor_on_a_field_the_runs_own_evaluator_declares_lower_is_refused_after_the_run():
    rows = [{"id": "q0", "question": "Q?"}]
    result = evaluate(
        [Answers("s", lambda example: "darn")],
        rows,
        RunConfig(scope=Scope(evaluators=[Swears()]), output=Output(progress=False)),
        host=isolated_host(),
    )
    with pytest.raises(UsageError, match=r"^--fail-under profanity=1: lower profanity is better, so a floor"):
        Gates.parse(fail_under=["profanity=1"]).judge(result)
    verdict = Gates.parse(fail_over=["profanity=0.5"]).judge(result)
    assert verdict.status == 3 and verdict.lines == [
        "gate failed: --fail-over profanity=0.5: profanity of s on dataset is 1.000 (n=1, too few rows for a "
        "95% interval), above 0.5"
    ]


def test_the_listings_say_which_way_each_field_points(cb):
    code, out, _ = cb("evaluators", "--json")
    (profanity,) = [e for e in json.loads(out) if e["name"] == "ProfanityRate"]
    assert profanity["score_fields"] == {"profanity": {"direction": "lower"}}
    (answer,) = [e for e in json.loads(out) if e["name"] == "AnswerQuality"]
    assert answer["score_fields"]["f1"] == {"direction": "higher"}
    code, out, _ = cb("plugins", "--json")
    listed = {e["name"]: e for plugin in json.loads(out) for e in plugin["evaluators"]}
    assert listed["ProfanityRate"]["score_fields"] == {"profanity": {"direction": "lower"}}
    code, out, _ = cb("evaluators")
    assert re.search(r"^ProfanityRate\s+\[\S+\]\s+profanity ↓$", out, re.M)
    assert out.splitlines()[-1] == "↓: lower is better"


def test_a_failed_row_of_a_python_api_evaluator_counts_its_declared_worst():
    class Rated(Swears):
        ranges = (0, 10)

    result = evaluate(
        [Answers("s", lambda example: "fine"), Answers("down", None)],
        [{"id": "q0", "question": "Q?"}],
        RunConfig(scope=Scope(evaluators=[Rated()]), output=Output(progress=False)),
        host=isolated_host(),
    )
    assert [g.scores["profanity"] for g in result.summary.groups] == [0.0, 10.0]
    assert result.summary.score_fields["profanity"].failure_value == 10.0
    errored = EvalRow("down", "dataset", "q0", errors=[RowError("system", "down", "ConnectionError", "down")])
    assert result.rows[1] == attrs.evolve(errored, index=1)  # the row itself keeps no invented score


def test_the_row_metrics_read_a_lower_is_better_field_when_told():
    """profanity 0.0, 0.4, 1.0 and a row that failed, each costing $1: 0.0 and 0.4 pass at most
    0.5 (2 of 4, $2 a pass); the failed row counts 1 in the mean, (0 + 0.4 + 1 + 1) / 4."""
    error = [RowError("system", "s", "ConnectionError", "down")]
    rows = [
        EvalRow("s", "d", f"r{i}", scores={"profanity": v}, cost=1.0) for i, v in enumerate((0.0, 0.4, 1.0))
    ]
    rows.append(EvalRow("s", "d", "r3", errors=error, cost=1.0))
    assert PassRate("profanity", 0.5, lower_is_better=True).compute(rows) == {"rate": 0.5, "passed": 2.0}
    assert CostOfPass("profanity", 0.5, lower_is_better=True).compute(rows)["cost_of_pass"] == 2.0
    assert MeanScore("profanity", lower_is_better=True).compute(rows) == {
        "mean": pytest.approx(0.6),
        "n": 4.0,
    }
    assert PassRate("profanity", 0.5).compute(rows)["passed"] == 1.0  # read backwards: 1.0 passes


def test_key_figures_say_each_fields_pass_where_the_primary_scores_point_both_ways():
    """Two data sets, one headed by profanity (0.5 passes at most 0.7) and one by f1 (0.5 fails
    at least 0.7): the title says both signs and each score is marked in its row."""
    from context_bench.reports._figure_sections import key_figures

    rows = [
        EvalRow("s", "chat", "r0", scores={"profanity": 0.5}),
        EvalRow("s", "qa", "r0", scores={"f1": 0.5}),
    ]
    summary = Summarizer(directions=Directions({"profanity": 1.0}))(rows)
    (section,) = key_figures(summary)
    assert (
        section.title
        == "Key figures (pass: score ≥ 0.7, ≤ for a score ↓; in/out: mean tokens per row; front: rank)"
    )
    assert [(row[1], row[4], row[5]) for row in section.rows] == [
        ("chat", "profanity ↓ 0.500", "100.0%"),
        ("qa", "f1 0.500", "0.0%"),
    ]
