"""``false_memory`` is lower-is-better through the ``memory`` command (issue 34): a memory system
that invents an answer is worse, whatever way the gates, the comparison and the reports look at it.

Two memory systems answer the same 8 questions: ``honest`` with what the conversation says,
``inventor`` with a name it never mentions.  The judge (a FakeServer) finds a false memory in
every answer of the inventor and in none of the honest one's: false_memory 1.0 against 0.0 on 8
pairs, McNemar's exact p = 2 / 2^8.
"""

from __future__ import annotations

import json
import re
import textwrap

import pytest
from scipy.stats import binomtest

from context_bench.cli import main
from context_bench.testing import FakeServer, last_user_message

pytest.importorskip("cbench_judge", reason="FalseMemoryRate comes from cbench-judge")

QUESTIONS = 8
SYSTEMS = """
class Honest:
    name = "honest"  # remembers nothing and needs nothing: its one answer is right
    reset = ingest = lambda self, *turns: None

    def query(self, question):
        return "Biscuit"


class Inventor(Honest):
    name = "inventor"

    def query(self, question):
        return "Whiskers"
"""
GATE = (
    "gate failed: --fail-if-worse false_memory: false_memory of inventor minus the baseline honest on "
    "chats is 1.000 (95% CI 1.000 to 1.000, n=8) (McNemar's exact test, p=0.00781 < alpha 0.05), "
    "significantly above 0: worse by 1.000, lower false_memory being better"
)


def judge(body):
    """FalseMemoryRate says YES to a name the conversation never mentions; MemoryJudge says NO."""
    prompt = last_user_message(body)
    invented = "false memor" in prompt.lower() and "Whiskers" in prompt
    return f"Checked.\nVERDICT: {'YES' if invented else 'NO'}"


@pytest.fixture
def memory(tmp_path, monkeypatch, capsys):
    """``memory(*argv)``: ``context-bench memory`` on the two systems, judged by a FakeServer;
    (status, stdout, stderr, the judge's requests)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "pets.py").write_text(textwrap.dedent(SYSTEMS))
    turns = [{"speaker": "Ann", "text": "My puppy is named Biscuit."}]
    qa = [{"question": f"What is my puppy called? ({i})", "answer": "Biscuit"} for i in range(QUESTIONS)]
    (tmp_path / "chats.json").write_text(json.dumps([{"id": "c1", "turns": turns, "qa_pairs": qa}]))

    def run(*argv):
        with FakeServer(judge) as server:
            code = main(
                ["memory", "--dataset", "chats.json", "--system", "pets:Honest", "--system", "pets:Inventor",
                 "--judge-url", server.url, "--baseline", "honest", "--no-progress", "--detail", *argv]
            )  # fmt: skip
            requests = list(server.requests)
        out, err = capsys.readouterr()
        return code, out, err, requests

    return run


def gate_lines(err):
    return [line.removeprefix("context-bench: error: ") for line in err.splitlines() if "gate failed" in line]


def test_an_invented_memory_fails_fail_if_worse_and_reads_worse_in_the_report(memory):
    assert binomtest(QUESTIONS, QUESTIONS, 0.5).pvalue == 2 / 2**QUESTIONS == 0.0078125
    code, out, err, _ = memory("--fail-if-worse", "false_memory", "--output", "json")
    assert code == 3, err
    assert gate_lines(err) == [GATE]
    summary = json.loads(out)["summary"]
    assert summary["score_fields"]["false_memory"] == {"direction": "lower", "failure_value": 1.0}
    assert summary["score_fields"]["memory_judge"]["direction"] == "higher"
    assert [(g["system"], g["scores"]["false_memory"]) for g in summary["groups"]] == [
        ("honest", 0.0),
        ("inventor", 1.0),
    ]
    (c,) = [c for c in summary["comparisons"] if c["field"] == "false_memory"]
    assert (c["direction"], c["delta"], c["p_value"], c["significant"]) == ("lower", 1.0, 2 / 2**8, True)
    assert len(c["lost"]) == QUESTIONS and c["gained"] == []
    # the baseline swapped: the honest system is better, and passes
    code, _, err, _ = memory("--baseline", "inventor", "--fail-if-worse", "false_memory")
    assert code == 0, err


def test_the_table_marks_false_memory_lower_is_better(memory):
    code, out, err, _ = memory("--score-field", "false_memory")
    assert code == 0, err
    assert "Key figures (pass: false_memory ≤ 0.7; in/out: mean tokens per row; front: rank)" in out
    assert "false_memory ↓" in out and "↓: lower is better" in out
    assert "+1.000 worse" in out and re.search(r"^lost\s+8 \(c1/0, c1/1, c1/2, …\)", out, re.M)


def test_fail_over_bounds_false_memory_and_fail_under_is_refused(memory):
    code, _, err, _ = memory("--fail-over", "false_memory=0.5")
    assert code == 3
    assert gate_lines(err) == [
        "gate failed: --fail-over false_memory=0.5: false_memory of inventor on chats is 1.000 "
        "(95% CI 0.676 to 1.000, n=8), above 0.5"
    ]
    code, out, err, requests = memory("--fail-under", "false_memory=0.5")
    assert (code, out, requests) == (2, "", [])
    assert err.splitlines() == [
        "context-bench: error: --fail-under false_memory=0.5: lower false_memory is better, so a floor "
        "fails the better system and passes the worse; bound it with --fail-over false_memory=0.5"
    ]
