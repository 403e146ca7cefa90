"""Costs, prices, comparisons, the frontier, judges and the JSON report's names, through the
Summarizer and the real CLI (score, compare, --output csv)."""

from __future__ import annotations

import json

import attrs
import pytest

from context_bench import UsageError
from context_bench._summary import Summarizer
from context_bench.analysis import Analysis
from context_bench.cli import main
from context_bench.figures import frontier
from context_bench.prices import Price, Prices
from context_bench.records import EvalResult, EvalRow, RowError
from context_bench.reports import View
from context_bench.reports import _table as table


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def row(system, example, f1, *, tokens=(100.0, 10.0), cost=None, latency=None, dataset="qa", **more):
    return EvalRow(
        system, dataset, example, {"f1": f1}, input_tokens=tokens[0], output_tokens=tokens[1], cost=cost,
        latency=latency, **more,
    )  # fmt: skip


def test_prices_from_flags_and_a_toml_file(tmp_path):
    file = tmp_path / "prices.toml"
    file.write_text('[gpt-4o]\ninput = 2.5\noutput = 10\n["my/model"]\ninput = 0\noutput = 0.5\n')
    prices = Prices.parse(["gpt-4o=3,12"], str(file))
    assert prices.table == {"gpt-4o": Price(3.0, 12.0), "my/model": Price(0.0, 0.5)}  # the flag wins
    assert prices.find(None, "nobody", "my/model") == Price(0.0, 0.5)
    assert Price(2.5, 10).dollars(1_000_000, 500_000) == 7.5
    for bad, said in [
        (["x"], "expected MODEL=IN,OUT"),
        (["x=1"], "expected MODEL=IN,OUT"),
        (["x=a,1"], "'a' is not a price"),
    ]:
        with pytest.raises(UsageError, match=said):
            Prices.parse(bad)
    file.write_text("[m]\ninput = 1\n")
    with pytest.raises(UsageError, match=r"\[m\] needs input and output"):
        Prices.parse((), str(file))


def test_cached_and_cache_write_tokens_are_priced_at_their_own_prices(tmp_path):
    """1,000 input tokens of which 800 read from the cache and 100 written to it, and 10 output
    tokens, at $1 / $2 / $0.25 / $1.25 a million: 100 x 1 + 800 x 0.25 + 100 x 1.25 + 10 x 2 = 445
    millionths; without cache prices the cached ones cost the input's (1,000 x 1 + 10 x 2)."""
    prices = Prices.parse(["m=1,2,0.25,1.25", "plain=1,2", "read=1,2,0.25"])
    assert prices.table["m"] == Price(1.0, 2.0, 0.25, 1.25)
    assert prices.table["m"].dollars(1000, 10, 800, 100) == 445 / 1_000_000
    assert prices.table["plain"].dollars(1000, 10, 800, 100) == 1020 / 1_000_000
    assert prices.table["read"].dollars(1000, 10, 800, 100) == 420 / 1_000_000
    assert prices.table["m"].dollars(1000, 10) == 1020 / 1_000_000  # no cached figure: none cached
    # a cache larger than the input (an upstream's word, or a tokenizer's smaller count) is held
    # within it: all 1,000 cached (250) and none written, never a negative price for the rest
    assert prices.table["m"].dollars(1000, 10, 5000, 100) == 270 / 1_000_000
    assert prices.table["m"].dollars(1000, 10, 900, 500) == (225 + 125 + 20) / 1_000_000
    file = tmp_path / "prices.toml"
    file.write_text("[m]\ninput = 1\noutput = 2\ncached_input = 0.25\n")
    assert Prices.parse((), str(file)).table["m"] == Price(1.0, 2.0, 0.25)
    with pytest.raises(UsageError, match="expected MODEL=IN,OUT"):
        Prices.parse(["m=1,2,3,4,5"])


def test_costs_from_one_source_priced_or_reported_never_zero():
    """A price for a system's model prices every row of it from its tokens, a cost the endpoint
    reported included (one source per group); without one, the reported costs; a row with tokens
    and neither has no dollars, never 0."""
    rows = [
        row("a", "1", 1.0, cost=0.02, latency=1.0),  # priced all the same: 100*1 + 10*2 per million
        row("a", "2", 0.5, tokens=(1000.0, 100.0), latency=2.0),  # 1000*1 + 100*2 per million
        row("b", "1", 1.0),
        row("b", "2", 0.0),
        row("c", "1", 1.0, cost=0.02),
        row("c", "2", 0.0, cost=0.01),
    ]
    summary = Summarizer(analysis=Analysis(prices=Prices({"m": Price(1.0, 2.0)}), models={"a": "m"}))(rows)
    a, b, c = summary.groups
    assert (a.cost.priced, a.cost.source) == (True, "priced") and a.cost.dollars == pytest.approx(0.00132)
    assert a.passing.pass_rate == 0.5 and a.passing.cost_of_pass == pytest.approx(0.00132)
    assert (a.latency.mean, a.latency.p50, a.latency.p95, a.latency.p99) == pytest.approx(
        (1.5, 1.5, 1.95, 1.99)
    )
    assert a.tokens.input_mean == 550 and a.tokens.total == 1210
    assert (b.cost.dollars, b.cost.priced, b.cost.source, b.passing.cost_of_pass) == (None, False, None, None)
    assert (c.cost.dollars, c.cost.source) == (pytest.approx(0.03), "reported")
    assert summary.prices == {"missing": ["b"]}
    assert [w for w in summary.warnings if "no price" in w] == [
        "no price for b: no dollars shown for it (--price MODEL=IN,OUT in dollars per million tokens, "
        "or --prices FILE)"
    ]


def test_comparison_against_the_first_system_row_by_row():
    """small lacks the baseline's row only-base: it counts as small's failure (a lost row) unless
    missing rows are allowed; the savings are over the rows both have either way."""
    rows = [
        row("base", "1", 1.0, tokens=(100.0, 10.0)),
        row("base", "2", 1.0, tokens=(300.0, 10.0)),
        row("base", "3", 0.0, tokens=(100.0, 10.0)),
        row("base", "only-base", 1.0),
        row("small", "3", 1.0, tokens=(50.0, 10.0)),
        row("small", "2", 0.0, tokens=(100.0, 5.0)),
        row("small", "1", 1.0, tokens=(50.0, 10.0)),
        row("small", "only-small", 1.0),
    ]
    prices = Prices({"base": Price(1.0, 1.0), "small": Price(1.0, 1.0)})
    for allow, n, delta, lost in ((False, 4, -0.25, ["2", "only-base"]), (True, 3, 0.0, ["2"])):
        summary = Summarizer(analysis=Analysis(prices=prices, allow_missing=allow))(rows)
        (c,) = summary.comparisons
        assert (c.system, c.baseline, c.dataset, c.field, c.n, c.test) == (
            "small",
            "base",
            "qa",
            "f1",
            n,
            "mcnemar",
        )
        # before 1, 1, 0 (1), after 1, 0, 1 (0): McNemar over 1 gained and 1 (2) lost is 1
        assert (c.delta, c.p_value, c.significant) == (delta, 1.0, False)
        assert (c.lost, c.gained) == (lost, ["3"])
        assert (c.coverage, c.only_baseline, c.only_system) == (0.75, ["only-base"], ["only-small"])
        assert c.compression_ratio == pytest.approx(200 / 500)
        assert c.tokens_saved == 530 - 225
        assert (c.cost_saved, c.cost_source) == (pytest.approx(305 / 1e6), "priced")
        assert c.shared() == "3 of 4 rows shared"
        assert any(
            w.startswith("small on qa: 3 of 4 rows shared with the baseline base; ") for w in summary.warnings
        )
    assert summary.baseline == "base"
    asked = Summarizer(analysis=Analysis(baseline="small"))(rows).comparisons
    assert [(x.system, x.baseline) for x in asked] == [("base", "small")]
    alone = Summarizer()([r for r in rows if r.system == "base"])
    assert alone.comparisons == [] and alone.baseline is None


def test_the_frontier_ranks_quality_against_cost():
    places = frontier(
        {("a", "d"): (0.9, 10.0), ("b", "d"): (0.8, 5.0), ("c", "d"): (0.7, 8.0), ("e", "d"): (None, 1.0)}
    )
    assert {key[0]: (p.rank, p.dominated) for key, p in places.items()} == {
        "a": (1, False),
        "b": (1, False),
        "c": (2, True),  # b scores more for less
        "e": (None, None),
    }


def test_judges_counted_apart_with_a_panels_agreement():
    def judged(system, example, verdicts, failure=None):
        scores = {
            "panel": sum(verdicts) / len(verdicts),
            **{f"panel_judge_{i}": v for i, v in enumerate(verdicts)},
        }
        found = EvalRow(
            system, "qa", example, scores, usage={"panel": {"input_tokens": 30.0, "output_tokens": 3.0}}
        )
        if failure:
            found.failures["panel"] = failure
        return found

    rows = [
        judged("a", "1", [1.0, 1.0]),
        judged("a", "2", [0.0, 0.0]),
        judged("a", "3", [1.0, 0.0], "parse_error: 1 of 2 judges failed"),
        judged("a", "4", [0.0, 0.0], "call_error: 1 of 2 judges failed"),
    ]
    summary = Summarizer(analysis=Analysis(prices=Prices({"panel": Price(1.0, 10.0)})))(rows)
    (judge,) = summary.judges
    assert (judge.name, judge.calls, judge.failures, judge.parse_errors) == ("panel", 4, 2, 1)
    assert (judge.input_tokens, judge.output_tokens) == (120.0, 12.0)
    assert judge.dollars == pytest.approx((120 + 120) / 1e6)
    # units (1,1), (0,0), (1,0), (0,0): alpha = 1 - 14/30 (test_statistics works it by hand)
    assert judge.alpha == pytest.approx(1 - 14 / 30)
    group = summary.to_dict()["groups"][0]
    assert group["judge"] == {
        "calls": 4, "failures": 2, "parse_errors": 1, "input_tokens": 120.0, "output_tokens": 12.0,
        "dollars": pytest.approx(240 / 1e6),
    }  # fmt: skip
    assert group["cost"] == {
        "dollars": None,
        "priced": False,
        "source": None,
    }  # the system reported no tokens


def test_the_json_reports_names():
    rows = [row("a", str(i), i / 4, latency=0.1) for i in range(4)] + [
        row("b", str(i), 1.0) for i in range(4)
    ]
    rows.append(EvalRow("b", "qa", "e", errors=[RowError("system", "b", "Timeout", "late")]))
    summary = EvalResult(rows, Summarizer()(rows)).to_dict()["summary"]
    group = summary["groups"][0]
    assert set(group) >= {"scores", "ci", "stderr", "tokens", "cost", "latency", "pass", "judge", "frontier"}
    assert set(group["tokens"]) == {"input_mean", "output_mean", "total"}
    assert set(group["cost"]) == {"dollars", "priced", "source"}
    assert set(group["latency"]) == {"mean", "p50", "p95", "p99"}
    assert set(group["pass"]) == {"field", "threshold", "pass_rate", "cost_of_pass"}
    assert set(group["judge"]) == {
        "calls",
        "failures",
        "parse_errors",
        "input_tokens",
        "output_tokens",
        "dollars",
    }
    assert set(group["frontier"]) == {"rank", "dominated"}
    assert len(group["ci"]["f1"]) == 2 and group["stderr"]["f1"] > 0
    (comparison,) = summary["comparisons"]
    assert set(comparison) == {
        "system", "baseline", "dataset", "field", "delta", "ci", "p_value", "n", "test",
        "compression_ratio", "tokens_saved", "cost_saved", "lost", "gained", "significant", "mdd",
        "coverage", "only_baseline", "only_system", "cost_source", "direction", "lost_by_cause",
        "cost_per_turn", "stops_paying_from_turn",
    }  # fmt: skip
    assert comparison["direction"] == "higher"
    assert summary["score_fields"] == {"f1": {"direction": "higher", "failure_value": 0.0}}
    assert comparison["n"] == 4 and comparison["only_system"] == ["e"]  # "e" has no baseline row
    assert (comparison["coverage"], comparison["only_baseline"], comparison["cost_source"]) == (1.0, [], None)
    assert summary["primary"] == {"field": None, "threshold": 0.7} and summary["baseline"] == "a"
    assert summary["alpha"] == 0.05
    assert summary["judges"] == [] and summary["prices"] == {"missing": ["a", "b"]}
    b = summary["groups"][1]
    assert b["pass"]["pass_rate"] == 4 / 5  # the errored row fails


def test_score_with_a_baseline_and_figure_flags(capsys, tmp_path):
    rows = tmp_path / "rows.jsonl"
    lines = [
        {"id": f"q{i}", "system": system, "answer": "Paris", "response": "Paris" if ok else "Rome",
         "input_tokens": tokens, "output_tokens": 5}
        for system, tokens, right in (("big", 100, 4), ("small", 60, 3))
        for i, ok in enumerate([True] * right + [False] * (4 - right))
    ]  # fmt: skip
    rows.write_text("".join(json.dumps(line) + "\n" for line in lines))
    argv = ("score", str(rows), "--dataset-name", "qa", "--no-progress", "--output", "json")
    code, out, err = run_cli(capsys, *argv, "--baseline", "small", "--score-field", "exact_match",
                             "--threshold", "1", "--price", "big=1,2", "--price", "small=1,2")  # fmt: skip
    assert code == 0, err
    summary = json.loads(out)["summary"]
    assert summary["primary"] == {"field": "exact_match", "threshold": 1.0} and summary["baseline"] == "small"
    (em,) = [c for c in summary["comparisons"] if c["field"] == "exact_match"]
    assert (em["system"], em["gained"], em["lost"], em["compression_ratio"]) == ("big", ["q3"], [], 100 / 60)
    assert em["cost_saved"] == pytest.approx(-(40 * 4) / 1e6)
    big = summary["groups"][0]
    assert big["cost"] == {"dollars": pytest.approx(4 * 110 / 1e6), "priced": True, "source": "priced"}
    assert big["pass"]["cost_of_pass"] == pytest.approx(110 / 1e6)
    code, out, err = run_cli(capsys, *argv[:-2], "--output", "markdown")
    assert (
        code == 0 and "Key figures" in out and "Compared with big" in out and "no price for big, small" in out
    )
    code, _, err = run_cli(capsys, *argv, "--baseline", "nobody")
    assert code == 2 and "--baseline nobody: no such system in this run (it has big, small)" in err


def test_compare_saved_results(capsys, tmp_path):
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    for path, answers in (
        (first, ["Paris", "Paris", "Paris"]),
        (second, ["Paris", "Rome", "Paris", "Paris"]),
    ):
        path.write_text(
            "".join(
                json.dumps({"id": f"q{i}", "answer": "Paris", "response": a}) + "\n"
                for i, a in enumerate(answers)
            )
        )
    reports = []
    for path in (first, second):
        report = tmp_path / f"{path.stem}.json"
        argv = ("score", str(path), "--dataset-name", "qa", "--no-progress", "--output", "json")
        assert run_cli(capsys, *argv, "--out", str(report))[0] == 0
        reports.append(str(report))
    code, out, err = run_cli(capsys, "compare", *reports, "--output", "json")
    assert code == 0, err
    result = json.loads(out)
    assert [g["system"] for g in result["summary"]["groups"]] == ["first:responses", "second:responses"]
    (f1,) = [c for c in result["summary"]["comparisons"] if c["field"] == "f1"]
    # every run's rows are kept (each group is its run's own); second's q3 has no pair
    assert (f1["n"], f1["lost"], f1["baseline"]) == (3, ["q1"], "first:responses")
    assert (f1["coverage"], f1["only_baseline"], f1["only_system"]) == (1.0, [], ["q3"])
    assert [g["rows"] for g in result["summary"]["groups"]] == [3, 4]
    for fmt in ("table", "markdown", "csv", "html"):
        code, out, err = run_cli(capsys, "compare", *reports, "--output", fmt)
        assert code == 0 and "first:responses" in out, err
    other = tmp_path / "other.json"
    data = json.loads((tmp_path / "first.json").read_text())
    for line in data["rows"]:
        line["example_id"] = "z" + line["example_id"]
    other.write_text(json.dumps(data))
    code, _, err = run_cli(capsys, "compare", reports[0], str(other))
    assert code == 2 and "share no row ids (by data set and id): nothing to compare" in err
    for line in data["rows"]:
        line["example_id"] = line["example_id"][1:]
        line["scores"] = {"judge": 1.0}
    other.write_text(json.dumps(data))
    code, out, err = run_cli(capsys, "compare", reports[0], str(other), "--output", "json")
    assert code == 0 and "the runs used different evaluators" in err


def test_csv_and_to_pandas_hold_one_line_per_row(capsys, tmp_path):
    rows = [
        row("a", "1", 0.5, latency=0.2),
        row("a", "2", 1.0),
        EvalRow("b", "qa", "1", errors=[RowError("system", "b", "E", "x")]),
    ]
    result = EvalResult(rows, Summarizer()(rows))
    frame = result.to_pandas()
    assert list(frame.columns)[:3] == ["system", "dataset", "example_id"] and len(frame) == 3
    assert frame["score.f1"].tolist()[:2] == [0.5, 1.0] and frame["errors"].tolist() == [0, 0, 1]
    from context_bench.reports import render

    lines = render(result, "csv").splitlines()
    assert lines[0].startswith("system,dataset,example_id,input_tokens") and len(lines) == 4
    assert lines[3].startswith("b,qa,1,,,,,1,")


def test_a_run_prices_each_system_by_its_model(capsys, tmp_path):
    from context_bench.testing import FakeServer

    data = tmp_path / "qa.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "question": "Capital?", "answer": "Paris"}) + "\n" for i in range(3)
        )
    )
    with FakeServer(lambda body: "Paris") as right, FakeServer(lambda body: "Rome") as wrong:
        code, out, err = run_cli(
            capsys, "run", "--proxy", right.url, "--name", "big", "--model", "m-big",
            "--proxy", wrong.url, "--name", "small", "--model", "m-small", "--dataset", str(data),
            "--no-progress", "--output", "json", "--price", "m-big=1000,2000",
        )  # fmt: skip
    assert code == 0, err
    summary = json.loads(out)["summary"]
    big, small = summary["groups"]
    # the fake endpoint states 10 prompt and 2 completion tokens per reply
    assert big["cost"] == {
        "dollars": pytest.approx(3 * (10 * 1000 + 2 * 2000) / 1e6),
        "priced": True,
        "source": "priced",
    }
    assert big["tokens"] == {"input_mean": 10.0, "output_mean": 2.0, "total": 36.0}
    assert big["pass"]["pass_rate"] == 1.0 and big["pass"]["cost_of_pass"] == pytest.approx(0.014)
    assert big["latency"]["p99"] is not None
    assert small["cost"] == {"dollars": None, "priced": False, "source": None}
    assert summary["prices"] == {"missing": ["m-small"]}
    (f1,) = [c for c in summary["comparisons"] if c["field"] == "f1"]
    assert (f1["system"], f1["lost"], f1["compression_ratio"], f1["cost_saved"]) == (
        "small",
        ["q0", "q1", "q2"],
        1.0,
        None,
    )


def test_a_run_priced_by_model_is_summarized_once(capsys, tmp_path, monkeypatch):
    """The run's prices by model are known before it runs, so its summary is made once, and emit
    does not make it again (planted: evaluate giving the run no models, emit summarizes a second
    time)."""
    from context_bench.testing import FakeServer

    finished = []
    finish = Summarizer.finish
    monkeypatch.setattr(Summarizer, "finish", lambda self: finished.append(self) or finish(self))
    data = tmp_path / "qa.jsonl"
    data.write_text(json.dumps({"id": "q0", "question": "Capital?", "answer": "Paris"}) + "\n")
    with FakeServer(lambda body: "Paris") as server:
        code, out, err = run_cli(
            capsys, "run", "--proxy", server.url, "--model", "m", "--dataset", str(data), "--no-progress",
            "--output", "csv", "--price", "m=1000,2000",
        )  # fmt: skip
    assert code == 0, err
    assert len(finished) == 1
    assert list(finished[0].analysis.models.values()) == ["m"]


def test_a_plugin_commands_run_is_priced_by_its_systems_model_and_summarized_once(capsys, monkeypatch):
    """The path hookspecs.py documents for a plugin's command, evaluate(systems, rows,
    options.config) then emit(result, options): evaluate prices each system by its model (10 and 2
    tokens a reply at $1000 and $2000 a million: $0.014), and emit does not summarize again."""
    from context_bench import evaluate
    from context_bench.cli import RunOptions, emit
    from context_bench.config import Output, RunConfig
    from context_bench.metadata import run_metadata
    from context_bench.systems import OpenAIProxy
    from context_bench.testing import FakeServer, isolated_host

    finished = []
    finish = Summarizer.finish
    monkeypatch.setattr(Summarizer, "finish", lambda self: finished.append(self) or finish(self))
    prices = Prices({"m": Price(1000.0, 2000.0)})
    options = RunOptions(
        RunConfig(analysis=Analysis(prices=prices), output=Output(progress=False, format="json"))
    )
    with FakeServer(lambda body: "Paris") as server:
        systems = [OpenAIProxy(server.url, "m")]
        rows = [{"id": "q0", "question": "Capital?", "answer": "Paris"}]
        result = evaluate(systems, rows, options.config, host=isolated_host())
    result.metadata = run_metadata(systems=systems)
    assert emit(result, options) == 0
    cost = json.loads(capsys.readouterr().out)["summary"]["groups"][0]["cost"]
    assert cost == {"dollars": pytest.approx(0.014), "priced": True, "source": "priced"}
    assert len(finished) == 1


def test_emit_summarizes_again_only_for_what_the_run_lacked(capsys, monkeypatch):
    """A plugin's command that gave evaluate no models: emit prices its system by the model its
    metadata names, with one summary more; a result summarized with that model already is not
    summarized again.  Either way the report is priced: 100 and 10 tokens at $1 and $2 a million."""
    from context_bench.cli import RunOptions, emit
    from context_bench.config import Output, RunConfig

    rows = [row("a", "1", 1.0)]
    analysis = Analysis(prices=Prices({"m": Price(1.0, 2.0)}))
    options = RunOptions(RunConfig(analysis=analysis, output=Output(format="json")))
    made = [Summarizer(analysis=attrs.evolve(analysis, models=models)) for models in ({}, {"a": "m"})]
    results = [EvalResult(rows, s(rows), s, {"systems": [{"name": "a", "model": "m"}]}) for s in made]
    finished = []
    finish = Summarizer.finish
    monkeypatch.setattr(Summarizer, "finish", lambda self: finished.append(self) or finish(self))
    for result in results:
        assert emit(result, options) == 0
        cost = json.loads(capsys.readouterr().out)["summary"]["groups"][0]["cost"]
        assert cost == {"dollars": pytest.approx(120 / 1e6), "priced": True, "source": "priced"}
    assert len(finished) == 1 and finished[0].analysis.models == {"a": "m"}


def test_a_set_without_the_primary_score_is_figured_on_its_own_first_score():
    """A math set beside a QA set: pass rate, frontier and the key figures read math_equiv there
    (no f1 in it), f1 on the QA set; one rule for every figure."""
    math = [
        EvalRow(system, "gsm8k", str(i), {"math_equiv": value, "exact": 0.0}, input_tokens=tokens)
        for system, tokens, values in (("a", 100.0, (1.0, 1.0, 0.0, 1.0)), ("b", 50.0, (1.0, 0.0, 0.0, 0.0)))
        for i, value in enumerate(values)
    ]
    qa = [row("a", "1", 1.0), row("a", "2", 0.5), row("b", "1", 0.8), row("b", "2", 0.0)]
    summary = Summarizer(analysis=Analysis(baseline="a"))(qa + math)
    by = {(g.system, g.dataset): g for g in summary.groups}
    assert (by["a", "gsm8k"].passing.field, by["a", "gsm8k"].passing.pass_rate) == ("math_equiv", 0.75)
    assert (by["b", "gsm8k"].passing.field, by["b", "gsm8k"].passing.pass_rate) == ("math_equiv", 0.25)
    assert (by["a", "qa"].passing.field, by["a", "qa"].passing.pass_rate) == ("f1", 0.5)
    # the frontier ranks gsm8k on math_equiv: a scores more, b costs less, neither dominated
    assert [by[s, "gsm8k"].frontier.dominated for s in "ab"] == [False, False]
    text = table.render(EvalResult(rows=[], summary=summary), View(detail=True))
    key = text.split("Key figures")[1].split("\n\n")[0]
    audit = text.split("loss audit")[1].split("\n\n")[0]
    qa_line, gsm8k_line = audit.splitlines()[3:]
    # b lost rows 1 and 3 of gsm8k on math_equiv (a count, then the ids), none of qa on f1
    assert qa_line.split()[-3:] == ["f1", "0", "0"]
    assert gsm8k_line.split()[-5:] == ["math_equiv", "2", "(1,", "3)", "0"]
    assert "(pass: score ≥ 0.7;" in key
    assert "math_equiv 0.750" in key and "math_equiv 0.250" in key and "f1 0.750" in key


def test_the_headline_is_the_first_score_unless_the_user_names_one():
    """gsm8k's rows carry math_equiv (its own evaluator, wired by name, scores first) and the f1
    AnswerQuality also gives them: the pass rate reads math_equiv, or f1 when asked for."""
    rows = [
        EvalRow("a", "gsm8k", str(i), {"math_equiv": m, "f1": f})
        for i, (m, f) in enumerate([(1.0, 0.2), (1.0, 0.9)])
    ]
    (own,) = Summarizer()(rows).groups
    (asked,) = Summarizer(analysis=Analysis(score_field="f1"))(rows).groups
    (absent,) = Summarizer(analysis=Analysis(score_field="rouge_l_f1"))(rows).groups
    assert (own.passing.field, own.passing.pass_rate) == ("math_equiv", 1.0)
    assert (asked.passing.field, asked.passing.pass_rate) == ("f1", 0.5)
    assert absent.passing.field == "math_equiv"


def test_the_cache_hit_share_holds_each_rows_cache_within_its_input():
    """Rows of 100 and 50 input tokens, the upstream saying 80 and 500 of them cached: the second
    row counts 50 (all of it), so the share is (80 + 50) / 150, never above 1."""
    from array import array

    from context_bench._measured import cache_hit_share
    from context_bench.columns import Columns

    columns = Columns(input_tokens=array("d", [100, 50]), cached_input_tokens=array("d", [80, 500]))
    assert cache_hit_share(columns) == 130 / 150
