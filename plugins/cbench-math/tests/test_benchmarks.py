"""The gsm8k, math and mgsm data sets: loaded by name from a fixture mirror through the real
``datasets`` library, wired to MathEquivalence, graded by the real worker."""

from __future__ import annotations

import json
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


@pytest.fixture
def hub(monkeypatch, tmp_path):
    offline_hub(monkeypatch, MIRROR, tmp_path)


@pytest.fixture(scope="module")
def host():
    return PluginHost()


def grader(host, name, row):
    """The evaluators auto-wiring gives the row: MathEquivalence by name (and AnswerQuality, which
    every row with an ``answer`` gets), and the MathEquivalence instance."""
    chosen = Wirer(host).wire(name).for_row(row)
    names = [type(e).__name__ for e in chosen]
    return names, chosen[names.index("MathEquivalence")]


def test_gsm8k_rows_ask_for_a_boxed_number(hub, host):
    rows = load("gsm8k", host=host).rows
    assert [r["id"] for r in rows] == ["gsm8k-test-0", "gsm8k-test-1", "gsm8k-test-2"]
    assert [r["answer"] for r in rows] == ["18", "3", "50000"]
    assert rows[0]["question"].startswith("Janet’s ducks lay 16 eggs per day.")
    assert rows[0]["question"].endswith("give the final answer alone in \\boxed{}.")
    assert rows[0]["solution"].endswith("#### 18")
    names, math = grader(host, "gsm8k", rows[0])
    assert names[0] == "MathEquivalence"
    right = "40 days at $1,250 is $50,000.\n\\boxed{50000}"
    assert math.score(rows[2], {"response": right}) == {"math_equiv": 1.0}
    assert math.score(rows[2], {"response": "\\boxed{1250}"}) == {"math_equiv": 0.0}


def test_math_reads_every_subject_or_one(hub, host):
    rows = load("math", host=host).rows
    assert [r["id"] for r in rows[:4]] == [
        "math-algebra-test-0",
        "math-algebra-test-1",
        "math-counting_and_probability-test-0",
        "math-geometry-test-0",
    ]
    assert len(rows) == 8 and rows[-1]["id"] == "math-precalculus-test-0"
    assert [r["answer"] for r in rows[:4]] == ["2", "10", "6", "\\sqrt{2}"]
    assert rows[6]["answer"] == "\\frac{3}{4}"
    assert rows[3]["level"] == "Level 1" and rows[3]["type"] == "Geometry"
    assert rows[0]["question"].startswith("How many vertical asymptotes")
    from cbench_math.benchmarks import competition_math

    assert [r["id"] for r in competition_math(config="geometry")] == ["math-geometry-test-0"]
    with pytest.raises(UsageError, match="valid configs are algebra, counting_and_probability"):
        list(competition_math(config="calculus"))
    names, math = grader(host, "math", rows[3])
    assert names[0] == "MathEquivalence"
    assert math.score(rows[3], {"response": "So it is $\\boxed{\\sqrt 2}$."}) == {"math_equiv": 1.0}
    assert math.score(rows[3], {"response": "$\\boxed{2}$"}) == {"math_equiv": 0.0}


def test_mgsm_reads_a_language_folder_of_the_parquet_branch(hub, host):
    rows = load("mgsm", host=host).rows
    assert [(r["id"], r["answer"]) for r in rows] == [("mgsm-en-test-0", "18"), ("mgsm-en-test-1", "3")]
    from cbench_math.benchmarks import mgsm

    french = list(mgsm(config="fr"))
    assert french[0]["id"] == "mgsm-fr-test-0" and french[0]["language"] == "fr"
    assert french[0]["question"].startswith("Les canards de Janet")
    with pytest.raises(UsageError, match="unknown config 'xx' of juletxara/mgsm"):
        list(mgsm(config="xx"))
    names, math = grader(host, "mgsm", french[0])
    assert names[0] == "MathEquivalence"
    assert math.score(french[0], {"response": "Réponse : \\boxed{18}"}) == {"math_equiv": 1.0}
    assert math.score(french[0], {"response": "\\boxed{16}"}) == {"math_equiv": 0.0}


def test_listing_the_data_sets_imports_no_loader():
    code = (
        "import json, sys; from context_bench.plugins import PluginHost; "
        "specs = {n: s for n, (_, s) in PluginHost().datasets().items()}; "
        "print(json.dumps([specs['mgsm'].source.revision, specs['gsm8k'].source.config, "
        "'datasets' in sys.modules, 'cbench_math.benchmarks' in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == ["refs/convert/parquet", "main", False, False]


def test_run_gsm8k_by_name_end_to_end(monkeypatch, tmp_path, capsys):
    """``context-bench run --dataset gsm8k`` from the mirror against a loopback model."""
    from context_bench.cli import main

    offline_hub(monkeypatch, MIRROR, tmp_path / "hf")
    replies = {"Janet": "9 eggs at $2: \\boxed{18}", "robe": "\\boxed{3}", "company": "\\boxed{2000}"}

    def reply(body):
        text = last_user_message(body)
        return next(answer for word, answer in replies.items() if word in text)

    with FakeServer(reply) as server:
        argv = ["run", "--proxy", server.url, "--dataset", "gsm8k", "--output", "json", "--no-progress"]
        code = main(argv)
    out = capsys.readouterr().out
    assert code == 0
    scores = {row["example_id"]: row["scores"]["math_equiv"] for row in json.loads(out)["rows"]}
    assert scores == {"gsm8k-test-0": 1.0, "gsm8k-test-1": 1.0, "gsm8k-test-2": 0.0}
