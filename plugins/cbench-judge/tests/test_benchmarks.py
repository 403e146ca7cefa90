"""The alpaca-eval and mt-bench data sets: loaded by name from a fixture mirror through the real
``datasets`` library, wired to the rating judge once a judge is configured, rated by a loopback judge."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from context_bench import UsageError
from context_bench._autowire import Wirer
from context_bench.datasets import load
from context_bench.plugins import PluginHost
from context_bench.testing import FakeServer, last_user_message, offline_hub

MIRROR = Path(__file__).parent / "fixtures" / "hub"
_REFERENCE = re.compile(r"Reference answer \(for comparison\):\n(.*?)\n\nResponse:\n(.*?)\n\nRate it", re.S)
_RESPONSE = re.compile(r"Response:\n(.*?)\n\nRate it", re.S)


def fake_judge(body) -> str:
    """Rates 5 a response that gives the reference answer; without a reference, one that does what
    MT-Bench's second writing turn asks (every sentence starts with A); else 1."""
    text = last_user_message(body)
    if (found := _REFERENCE.search(text)) is not None:
        reference, response = found.groups()
        return "RATING: 5" if reference.lower() in response.lower() else "RATING: 1"
    response = _RESPONSE.search(text).group(1)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", response.strip()) if s]
    asked = "Start every sentence with the letter A." in text and "travel blog post" in text
    return "RATING: 5" if asked and all(s.startswith("A") for s in sentences) else "RATING: 1"


@pytest.fixture
def hub(monkeypatch, tmp_path):
    offline_hub(monkeypatch, MIRROR, tmp_path)


@pytest.fixture(scope="module")
def host():
    return PluginHost()


@pytest.fixture
def judge():
    with FakeServer(fake_judge) as server:
        yield server


def wired(host, name, row, judge=None):
    options = {"judge_url": judge.url} if judge else {}
    return Wirer(host, options).wire(name).for_row(row)


def test_alpaca_eval_rows_are_instructions_with_a_reference(hub, host, judge):
    rows = load("alpaca-eval", host=host).rows
    assert [row["id"] for row in rows] == ["alpaca-eval-0", "alpaca-eval-1"]
    row = rows[0]
    assert row["question"].startswith("What are the names of some famous actors")
    assert row["reference"].startswith("Some famous actors") and "answer" not in row
    assert row["reference_generator"] == "text_davinci_003" and row["source_dataset"] == "helpful_base"
    assert "dataset" not in row  # a row's `dataset` would rename the data set it is reported under
    assert wired(host, "alpaca-eval", row) == []  # nothing to score without a judge
    (rating,) = wired(host, "alpaca-eval", row, judge)
    assert type(rating).__name__ == "LLMJudge"
    assert rating.score(row, {"response": row["reference"]}) == {"judge_score": 1.0}
    assert rating.score(row, {"response": "I would rather not say."}) == {"judge_score": 0.0}


def test_alpaca_eval_configs_are_folders_of_the_parquet_branch(hub):
    from cbench_judge.benchmarks import alpaca_eval

    with pytest.raises(UsageError, match="valid configs are alpaca_eval, alpaca_eval_gpt4_baseline"):
        list(alpaca_eval(config="nope"))


def test_mt_bench_rows_keep_their_turns(hub, host, judge):
    rows = load("mt-bench", host=host).rows
    assert [row["id"] for row in rows] == ["mt-bench-2638765", "mt-bench-94826549"]
    writing, maths = rows
    assert writing["turns"] == [
        "Compose an engaging travel blog post about a recent trip to Hawaii, highlighting cultural "
        "experiences and must-see attractions.",
        "Rewrite your previous response. Start every sentence with the letter A.",
    ]
    assert writing["category"] == "writing" and "reference" not in writing
    assert writing["question"].startswith("Earlier in this conversation:\n\nTurn 1: Compose an engaging")
    assert writing["question"].endswith("The request to answer now:\n\n" + writing["turns"][1])
    assert maths["reference"] == "5pi"  # the final turn's reference answer
    (rating,) = wired(host, "mt-bench", writing, judge)
    assert type(rating).__name__ == "LLMJudge"
    right = "Aloha from Hawaii! A luau on Maui was the highlight. And Pearl Harbor moved us."
    assert rating.score(writing, {"response": right}) == {"judge_score": 1.0}
    assert rating.score(writing, {"response": "Hawaii was lovely. A luau was fun."}) == {"judge_score": 0.0}
    assert rating.score(maths, {"response": "The circle's area is 5pi."}) == {"judge_score": 1.0}
    assert rating.score(maths, {"response": "It is 3."}) == {"judge_score": 0.0}


def test_listing_the_data_sets_imports_no_loader():
    code = (
        "import json, sys; from context_bench.plugins import PluginHost; "
        "specs = {n: s for n, (_, s) in PluginHost().datasets().items()}; "
        "print(json.dumps([specs['alpaca-eval'].source.revision, specs['mt-bench'].source.split, "
        "'datasets' in sys.modules, 'cbench_judge.benchmarks' in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == ["refs/convert/parquet", "train", False, False]


def test_run_alpaca_eval_by_name_end_to_end(hub, capsys):
    """``context-bench run --dataset alpaca-eval --judge-url URL``: one loopback server is the model
    (it knows the first answer only) and the judge."""
    from context_bench.cli import main

    known = load("alpaca-eval").rows[0]

    def reply(body):
        text = last_user_message(body)
        if "RATING: <1-5>" in text:
            return fake_judge(body)
        return known["reference"] if text == known["question"] else "No idea."

    with FakeServer(reply) as server:
        argv = ["run", "--proxy", server.url, "--judge-url", server.url, "--dataset", "alpaca-eval"]
        code = main([*argv, "--output", "json", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    scores = {row["example_id"]: row["scores"]["judge_score"] for row in json.loads(out)["rows"]}
    assert scores == {"alpaca-eval-0": 1.0, "alpaca-eval-1": 0.0}
