"""The humaneval and mbpp data sets: loaded by name from a fixture mirror through the real
``datasets`` library, wired to CodeExecution, scored by real sandboxed runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from context_bench._autowire import Wirer
from context_bench.datasets import load
from context_bench.plugins import PluginHost
from context_bench.testing import FakeServer, last_user_message, offline_hub

MIRROR = Path(__file__).parent / "fixtures" / "hub"


@pytest.fixture
def hub(monkeypatch, tmp_path):
    offline_hub(monkeypatch, MIRROR, tmp_path)


@pytest.fixture(scope="module")
def host():
    return PluginHost()


def wired(host, name, row):
    return [type(e).__name__ for e in Wirer(host).wire(name).for_row(row)]


def test_humaneval_rows_ask_for_a_completion(hub, host):
    rows = load("humaneval", host=host).rows
    assert [r["id"] for r in rows] == ["HumanEval/0", "HumanEval/2"]
    first = rows[0]
    assert first["context"].startswith("from typing import List\n\n\ndef has_close_elements(")
    assert "```python" in first["question"] and "body" in first["question"]
    assert first["entry_point"] == "has_close_elements" and "def check(candidate)" in first["test"]
    assert "answer" not in first  # F1 against reference code would mean nothing
    assert wired(host, "humaneval", first) == ["CodeExecution"]


def test_humaneval_scores_a_right_and_a_wrong_completion(hub, host, evaluator):
    row = load("humaneval", host=host).rows[1]
    assert evaluator.score(row, {"response": "```python\n    return number % 1.0\n```"}) == {"pass_at_1": 1.0}
    assert evaluator.score(row, {"response": "    return number\n"}) == {"pass_at_1": 0.0}
    whole = load("humaneval", host=host).rows[0]
    function = "def has_close_elements(numbers, threshold):\n    return False\n"
    assert evaluator.score(whole, {"response": whole["canonical_solution"]}) == {"pass_at_1": 1.0}
    assert evaluator.score(whole, {"response": function}) == {"pass_at_1": 0.0}


def test_mbpp_rows_show_the_tests_to_pass(hub, host):
    rows = load("mbpp", host=host).rows
    assert [r["id"] for r in rows] == ["mbpp-2", "mbpp-3", "mbpp-4"]
    row = rows[2]
    assert row["question"].startswith("Write a function to find the n largest integers")
    assert row["test_list"][0] in row["question"] and row["test_list"][1] in row["question"]
    assert row["test_imports"] == ["import math"] and len(row["test_list"]) == 2
    assert row["code"].startswith("import heapq as hq")
    assert wired(host, "mbpp", row) == ["CodeExecution"]


def test_mbpp_scores_a_right_and_a_wrong_program(hub, host, evaluator):
    row = load("mbpp", host=host).rows[1]
    right = "```python\ndef is_not_prime(n):\n    return any(n % i == 0 for i in range(2, n))\n```"
    assert evaluator.score(row, {"response": right}) == {"pass_at_1": 1.0}
    assert evaluator.score(row, {"response": "def is_not_prime(n):\n    return True\n"}) == {"pass_at_1": 0.0}


def test_mbpp_full_config(hub, host):
    from cbench_code.benchmarks import mbpp

    rows = list(mbpp(config="full"))
    assert [r["id"] for r in rows] == ["mbpp-11", "mbpp-12"]
    assert rows[0]["question"].startswith("Write a python function to remove first and last occurrence")
    assert rows[0]["test_imports"] == [] and rows[0]["test_setup_code"] == ""


def test_listing_the_data_sets_imports_no_loader():
    code = (
        "import sys; from context_bench.plugins import PluginHost; h = PluginHost(); "
        "specs = {n: s for n, (_, s) in h.datasets().items()}; "
        "print(json.dumps([specs['humaneval'].source.repo, specs['mbpp'].source.config, "
        "'datasets' in sys.modules, 'cbench_code.benchmarks' in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import json; " + code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == ["openai/openai_humaneval", "sanitized", False, False]


def test_run_humaneval_by_name_end_to_end(monkeypatch, tmp_path, capsys):
    """``context-bench run --dataset humaneval`` from the mirror against a loopback model."""
    from context_bench.cli import main

    offline_hub(monkeypatch, MIRROR, tmp_path / "hf")
    answers = {
        "truncate_number": "```python\n    return number % 1.0\n```",
        "has_close_elements": "    return 0\n",
    }

    def reply(body):
        text = last_user_message(body)
        return next(code for name, code in answers.items() if f"def {name}(" in text)

    with FakeServer(reply) as server:
        argv = ["run", "--proxy", server.url, "--dataset", "humaneval", "--output", "json", "--no-progress"]
        code = main(argv)
    out = capsys.readouterr().out
    assert code == 0
    scores = {row["example_id"]: row["scores"]["pass_at_1"] for row in json.loads(out)["rows"]}
    assert scores == {"HumanEval/0": 0.0, "HumanEval/2": 1.0}
