"""A sweep's curve and safe operating point (issue 28): each setting's achieved input ratio, mean and
paired difference from the baseline, read from the summary's own comparisons, and the setting with
the lowest input ratio whose paired interval reaches ``-margin``."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import attrs
import pytest

from context_bench.records import OperatingPoint, SweepPoint
from context_bench.sweep_curve import _safe
from context_bench.testing import FakeServer, Reply, last_user_message

_spec = importlib.util.spec_from_file_location("cbench_browser", Path(__file__).parents[1] / "browser.py")
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)

#: The operating point's line in the table and Markdown (and in docs/sweeps.md).
LINE = "safe operating point: compressed at rate=0.5 on qa: 0.50x input tokens, +0.000 vs the baseline"
#: Every row scored by exact match alone (AnswerQuality's other fields are beside it).
EXACT = ("--evaluator", "AnswerQuality", "--no-autowire", "--score-field", "exact_match")
CAPITALS = ["Paris", "Rome", "Madrid", "Berlin", "Vienna", "Lisbon", "Athens", "Oslo", "Bern", "Dublin"]


def rows(count: int, hard: bool = False) -> list[dict]:
    word = "hard capital" if hard else "capital"
    return [
        {"id": str(n), "question": f"{word} number {n}", "answer": CAPITALS[n % len(CAPITALS)]}
        for n in range(count)
    ]


def compressor(cut: float = 0.5, achieved=lambda rate: rate):
    """An endpoint whose answers survive compression down to rate ``cut`` (0.6 for a "hard"
    question), its input tokens ``100 * achieved(rate)`` (the baseline's 100)."""

    def answer(body):
        rate = body.get("rate", 1.0)
        prompt = last_user_message(body)
        kept = rate >= (0.6 if "hard" in prompt else cut)
        text = _capital(prompt) if kept else "?"
        return Reply(text=text, usage={"prompt_tokens": round(100 * achieved(rate))})

    return answer


@pytest.fixture
def sweep(cbench, write_rows):
    """``sweep(server, *flags, datasets=...)``: the JSON report of a baseline and a swept
    ``compressed`` system on the data sets (name -> rows)."""

    def run(server, *flags, datasets=None):
        given = []
        for name, listed in (datasets or {"qa": rows(10)}).items():
            given += ["--dataset", str(write_rows(listed, f"{name}.jsonl"))]
        code, out, err = cbench(
            "run", "--proxy", server.url, "--name", "baseline", "--proxy", server.url, "--name", "compressed",
            *flags, *given, "--output", "json", *EXACT,
        )  # fmt: skip
        assert code == 0, err
        return json.loads(out)["summary"]

    return run


def _point(summary, value, dataset="qa"):
    return next(p for p in summary["sweeps"] if p["value"] == value and p["dataset"] == dataset)


def test_the_sweep_finds_the_rate_where_quality_falls(sweep):
    with FakeServer(compressor()) as server:
        summary = sweep(server, "--sweep", "rate=0.2,0.4,0.5,0.6,0.8", "--margin", "0.02")
    assert summary["operating_points"] == [
        {
            "system": "compressed",
            "parameter": "rate",
            "value": 0.5,
            "dataset": "qa",
            "input_ratio": 0.5,
            "delta": 0.0,
            "delta_ci": None,
        },
        {
            "system": "compressed",
            "parameter": "rate",
            "value": 0.5,
            "dataset": None,
            "input_ratio": 0.5,
            "delta": 0.0,
            "delta_ci": None,
        },
    ]
    lost = _point(summary, 0.4)
    # ten rows lost, none gained: McNemar's exact p is 2 * 0.5 ** 10; every difference is -1
    assert lost == {
        "system": "compressed",
        "parameter": "rate",
        "value": 0.4,
        "dataset": "qa",
        "field": "exact_match",
        "input_ratio": 0.4,
        "mean": 0.0,
        "ci": lost["ci"],
        "delta": -1.0,
        "delta_ci": [-1.0, -1.0],
        "p_value": 0.001953125,
        "n": 10,
        "safe": False,
        "flagged": None,
    }
    assert [p["value"] for p in summary["sweeps"]] == [0.2, 0.4, 0.5, 0.6, 0.8]
    assert [p["safe"] for p in summary["sweeps"]] == [False, False, True, True, True]
    # the figures are the summary's own: the group's mean and interval, the comparison's difference
    group = next(g for g in summary["groups"] if g["system"] == "compressed[rate=0.4]")
    comparison = next(c for c in summary["comparisons"] if c["system"] == "compressed[rate=0.4]")
    assert lost["ci"] == group["ci"]["exact_match"] and lost["mean"] == group["scores"]["exact_match"]
    assert (lost["delta"], lost["delta_ci"], lost["p_value"]) == (
        comparison["delta"],
        comparison["ci"],
        comparison["p_value"],
    )


def test_a_loss_that_is_not_significant_is_safe_and_one_beyond_the_margin_is_not(sweep):
    """One row of twenty lost: the paired interval's upper end is 0 (no resample can gain), which
    reaches -0.02; every row lost is significantly beyond it."""

    def answer(body):
        prompt = last_user_message(body)
        lose = body.get("rate", 1.0) < 0.5 and _number(prompt) == 0
        return Reply(text="?" if lose or body.get("rate", 1.0) < 0.3 else _capital(prompt))

    with FakeServer(answer) as server:
        summary = sweep(server, "--sweep", "rate=0.2,0.4", datasets={"qa": rows(20)})
    half = _point(summary, 0.4)
    assert (half["delta"], half["delta_ci"][1], half["p_value"], half["safe"]) == (-0.05, 0.0, 1.0, True)
    assert _point(summary, 0.2)["safe"] is False
    # no input tokens reported differently: every ratio is 1, the safe setting the one that is safe
    assert [(p["value"], p["dataset"]) for p in summary["operating_points"]] == [(0.4, "qa"), (0.4, None)]


def _number(prompt: str) -> int:
    return int(re.search(r"number (\d+)", prompt).group(1))


def _capital(prompt: str) -> str:
    return CAPITALS[_number(prompt) % len(CAPITALS)]


def test_across_data_sets_the_point_is_safe_on_every_one(sweep):
    with FakeServer(compressor()) as server:
        summary = sweep(
            server, "--sweep", "rate=0.4,0.5,0.6", datasets={"easy": rows(10), "hard": rows(10, hard=True)}
        )
    points = {p["dataset"]: (p["value"], p["input_ratio"]) for p in summary["operating_points"]}
    assert points == {"easy": (0.5, 0.5), "hard": (0.6, 0.6), None: (0.6, 0.6)}


def test_a_rate_far_from_the_ratio_it_achieves_is_flagged(sweep):
    with FakeServer(compressor(achieved=lambda rate: 0.5 if rate < 1 else 1.0)) as server:
        summary = sweep(server, "--sweep", "rate=0.3,0.5", "--sweep-rate", "rate")
    assert [(p["value"], p["input_ratio"], p["flagged"]) for p in summary["sweeps"]] == [
        (0.3, 0.5, True),
        (0.5, 0.5, False),
    ]
    assert (
        "compressed at rate=0.3 on qa: achieved input ratio 0.5, more than 10% from the rate asked for"
        in summary["warnings"]
    )


def test_where_lower_is_better_the_lower_end_must_reach_the_margin():
    assert _safe(0.1, [0.01, 0.2], lower=True, margin=0.02) is True
    assert _safe(0.1, [0.03, 0.2], lower=True, margin=0.02) is False
    assert _safe(-0.1, [-0.2, -0.02], lower=False, margin=0.02) is True
    assert _safe(-0.1, [-0.2, -0.03], lower=False, margin=0.02) is False
    assert _safe(0.0, None, lower=False, margin=0.02) is True  # no pair changed
    assert _safe(-1.0, None, lower=False, margin=0.02) is False  # one pair: nothing to tell


def test_the_table_and_markdown_print_the_curve_and_the_operating_point(cbench, write_rows):
    data = str(write_rows(rows(10)))
    with FakeServer(compressor()) as server:
        flags = ("--proxy", server.url, "--name", "baseline", "--proxy", server.url, "--name", "compressed")
        common = (*flags, "--sweep", "rate=0.4,0.5", "--dataset", data, *EXACT)
        code, table, _ = cbench("run", *common)
        assert code == 0
        code, markdown, _ = cbench("run", *common, "--output", "markdown")
    line = LINE
    assert line in table.splitlines()
    assert "safe operating point: compressed at rate=0.5 on every data set" in table
    assert "Sweep: compressed on qa (exact_match vs baseline)" in table
    assert f"- {line}" in markdown.splitlines()
    assert "| rate=0.4 | 0.40x | 0.000 |" in markdown and "| rate=0.5 | 0.50x | 1.000 |" in markdown


def _documented() -> list[str]:
    """docs/sweeps.md's plain blocks: the curve's JSON names, the report's line, the operating
    points' JSON names, the gate's line."""
    text = (Path(__file__).parents[2] / "docs" / "sweeps.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```(\w*)\n(.*?)^```$", text, re.S | re.M)
    return [body for lang, body in blocks if not lang]


def test_the_documented_names_and_line():
    sweeps, line, points, _ = _documented()
    assert line.strip() == LINE
    for block, record in ((sweeps, SweepPoint), (points, OperatingPoint)):
        listed = re.search(r"\[\{(.*)\}\]", " ".join(block.split())).group(1)
        assert [name.strip() for name in listed.split(",")] == [f.name for f in attrs.fields(record)]


def test_show_reads_the_curve_back(sweep, cli, workdir):
    with FakeServer(compressor()) as server:
        summary = sweep(server, "--sweep", "rate=0.4,0.5")
    report = workdir / "report.json"
    report.write_text(json.dumps({"summary": summary, "rows": []}))
    code, out, _ = cli("show", str(report), "--output", "json")
    assert code == 0
    shown = json.loads(out)["summary"]
    assert shown["sweeps"] == summary["sweeps"] and shown["operating_points"] == summary["operating_points"]


@pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")
@pytest.mark.timeout(60)
def test_the_html_report_draws_the_curve(cbench, write_rows, workdir):
    data = str(write_rows(rows(10)))
    page = workdir / "report.html"
    with FakeServer(compressor()) as server:
        code, _, err = cbench(
            "run", "--proxy", server.url, "--name", "baseline", "--proxy", server.url, "--name", "compressed",
            "--sweep", "rate=0.2,0.5,0.8", "--dataset", data, *EXACT,
            "--output", "html", "--out", str(page),
        )  # fmt: skip
    assert code == 0, err
    with browser.Browser() as driver:
        driver.open(page)
        chart = (
            "[...document.querySelectorAll('svg.chart')].find(s => s.textContent.includes('achieved input'))"
        )
        points = driver.run(
            f"[...{chart}.querySelectorAll('circle.setting')].map(c => c.querySelector('title').textContent)"
        )
        # the groups' Wilson intervals of 0 and 10 right of 10: z^2 / (10 + z^2) = 0.2775 and 0.7225
        assert points == [
            "compressed rate=0.2: 0 [2.776e-17, 0.2775], input ratio 0.2000",
            "compressed rate=0.5: 1 [0.7225, 1], input ratio 0.5000",
            "compressed rate=0.8: 1 [0.7225, 1], input ratio 0.8000",
        ]
        baseline = driver.run(f"{chart}.querySelector('line.baseline title').textContent")
        assert baseline == "baseline: 1"
        assert driver.run(f"{chart}.querySelectorAll('polyline.curve').length") == 1
        assert driver.run(f"{chart}.querySelectorAll('polygon.band').length") == 1
        assert driver.errors == []


@pytest.fixture
def gated(cbench, write_rows):
    """``gated(*flags)``: a sweep of rates 0.4 and 0.5 (answers kept from 0.5) with ``flags``: its
    exit status and standard error."""
    data = str(write_rows(rows(10)))

    def run(*flags, sweep=("--sweep", "rate=0.4,0.5")):
        with FakeServer(compressor()) as server:
            systems = (
                "--proxy",
                server.url,
                "--name",
                "baseline",
                "--proxy",
                server.url,
                "--name",
                "compressed",
            )
            code, _, err = cbench("run", *systems, *sweep, *flags, "--dataset", data, *EXACT)
            return code, err, server.requests

    return run


def test_the_operating_point_gate_fails_a_point_past_its_bound(gated):
    assert gated("--require-operating-point", "rate<=0.5")[0] == 0
    assert gated("--require-operating-point", "rate>=0.5")[0] == 0
    code, err, _ = gated("--require-operating-point", "rate<=0.4")
    assert code == 3
    assert "gate failed: --require-operating-point rate<=0.4: compressed is safe at rate=0.5 at best" in err
    code, err, _ = gated("--require-operating-point", "rate<=0.3")
    assert code == 3 and f"context-bench: error: {_documented()[3].strip()}" in err.splitlines()
    code, err, _ = gated("--require-operating-point", "rate>=0.6")
    assert code == 3 and "compressed is safe at rate=0.5 at best" in err
    code, err, _ = gated("--require-operating-point", "rate<=1", sweep=("--sweep", "rate=0.2,0.4"))
    assert code == 3
    assert "--require-operating-point rate<=1: compressed has no setting safe on every data set" in err


def test_fail_if_worse_reads_every_setting_or_the_one_picked(gated):
    worse = ("--baseline", "baseline", "--fail-if-worse", "exact_match")
    code, err, _ = gated(*worse)
    assert code == 3 and "exact_match of compressed[rate=0.4] minus the baseline" in err
    assert "compressed[rate=0.5] minus" not in err
    assert gated(*worse, "--gate-setting", "rate=0.5")[0] == 0
    code, err, _ = gated(*worse, "--gate-setting", "rate=0.4")
    assert code == 3 and "compressed[rate=0.4] minus" in err


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--gate-setting", "rate=0.7"), "--gate-setting rate=0.7: not one value of a --sweep"),
        (("--gate-setting", "k=1"), "--gate-setting k=1: not one value of a --sweep"),
        (("--require-operating-point", "rate=0.3"), "expected NAME>=VALUE or NAME<=VALUE"),
        (("--require-operating-point", "k>=1"), "--require-operating-point k>=1: k is not swept"),
        (("--require-operating-point", "rate>=x"), "--require-operating-point"),
    ],
)
def test_bad_sweep_gates_are_one_line_before_any_row(gated, flags, said):
    code, err, requests = gated(*flags)
    assert code == 2 and err.count("\n") == 1 and said in err and requests == []


def test_a_sweep_gate_without_a_sweep_is_refused(gated):
    code, err, requests = gated("--require-operating-point", "rate>=0.3", sweep=())
    assert code == 2 and "--require-operating-point reads a sweep: give --sweep NAME=V1,V2,..." in err
    assert requests == []


def test_refine_narrows_a_sweep_to_the_rate_where_quality_falls(sweep, cbench):
    with FakeServer(compressor()) as server:
        summary = sweep(server, "--sweep", "rate=0.4,0.6", "--refine", "2")
        sent = sorted(body.get("rate", 1.0) for body in server.requests)
    # 0.5 lies between the safe 0.6 and the unsafe 0.4, and is safe; 0.45 then is not
    assert [p["value"] for p in summary["sweeps"]] == [0.4, 0.6, 0.5, 0.45]
    assert [(p["value"], p["dataset"]) for p in summary["operating_points"]] == [(0.5, "qa"), (0.5, None)]
    # every row of every setting sent once: the passes share a cache
    assert sent == [0.4] * 10 + [0.45] * 10 + [0.5] * 10 + [0.6] * 10 + [1.0] * 10


def test_refine_needs_one_numeric_sweep(gated):
    code, err, requests = gated("--refine", "2", sweep=("--sweep", "rate=0.4,0.6", "--sweep", "k=1,2"))
    assert code == 2 and "--refine bisects one --sweep of numbers: give exactly one" in err
    assert requests == []
