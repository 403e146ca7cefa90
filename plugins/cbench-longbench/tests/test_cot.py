"""``--longbench-cot``: LongBench v2's chain of thought as THUDM's pred.py runs it with ``--cot``:
prompts/0shot_cot.txt with 1,024 new tokens, then, in a second call without the document,
prompts/0shot_cot_ans.txt with the first reply (stripped) where ``$COT$`` is and 128 new tokens;
the answer read from the second reply by ``extract_answer``.  Checked against the published files,
on the fixture rows, through a real loopback endpoint."""

from __future__ import annotations

import json

from cbench_longbench import longbench
from cbench_longbench.sources import LONGBENCH_V2
from context_bench.cli import main
from context_bench.datasets import load
from context_bench.hub import load_rows
from context_bench.testing import FakeServer, last_user_message

REASONING = "  The table shows revenue rising until 2021, then falling.\n"


def _filled(template: str, record: dict) -> str:
    """pred.py's replacements, written out in its order."""
    text = template.replace("$DOC$", record["context"].strip()).replace("$Q$", record["question"].strip())
    for letter in "ABCD":
        text = text.replace(f"$C_{letter}$", record[f"choice_{letter}"].strip())
    return text


def test_the_templates_are_pred_pys(published):
    assert longbench.V2_COT == (published / "v2_0shot_cot.txt").read_text("utf-8")
    assert longbench.V2_COT_ANSWER == (published / "v2_0shot_cot_ans.txt").read_text("utf-8")


def test_rows_carry_the_cot_prompt_and_the_answer_prompt(hub, host, published):
    records = list(load_rows(LONGBENCH_V2))
    rows = load("longbench-v2", host=host, options={"longbench_cot": True}).rows
    plain = load("longbench-v2", host=host, options={}).rows
    assert [row["id"] for row in rows] == [record["_id"] for record in records]
    cot = (published / "v2_0shot_cot.txt").read_text("utf-8")
    answer = (published / "v2_0shot_cot_ans.txt").read_text("utf-8")
    for row, record, zero_shot in zip(rows, records, plain, strict=True):
        assert (row["prompt"], row["max_tokens"]) == (_filled(cot, record), 1024)
        assert row["followup"] == {"prompt": _filled(answer, record), "reply": "$COT$", "max_tokens": 128}
        assert "followup" not in zero_shot and zero_shot["max_tokens"] == 128
        same = ("correct_choice", "difficulty", "length", "domain", "sub_domain")
        assert {k: row[k] for k in same} == {k: zero_shot[k] for k in same}


def _reply(body):
    prompt = last_user_message(body)
    if prompt.endswith("Let\u2019s think step by step:"):
        return REASONING
    return "**The correct answer is (C)**" if "Based on the above" in prompt else "no"


def test_a_run_makes_pred_pys_two_calls_and_reads_the_second_answer(hub, capsys, published):
    records = {record["_id"]: record for record in load_rows(LONGBENCH_V2)}
    with FakeServer(_reply) as server:
        argv = ["run", "--proxy", server.url, "--dataset", "longbench-v2", "--longbench-cot"]
        code = main([*argv, "--output", "json", "--no-progress", "--store", "none"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    sent = [(last_user_message(body), body["max_tokens"]) for body in server.requests]
    answer = (published / "v2_0shot_cot_ans.txt").read_text("utf-8")
    cot = (published / "v2_0shot_cot.txt").read_text("utf-8")
    expected = []
    for row in report["rows"]:
        record = records[row["example_id"]]
        expected += [
            (_filled(cot, record), 1024),
            (_filled(answer, record).replace("$COT$", REASONING.strip()), 128),
        ]
    assert sorted(sent) == sorted(expected)  # two calls a row; the rows run in parallel
    # the second reply is the response, read as pred.py reads it (asterisks dropped): C is the
    # first row's answer and not the second's
    assert {row["example_id"]: row["scores"] for row in report["rows"]} == {
        rid: {"longbench_score": 1.0 if record["answer"] == "C" else 0.0} for rid, record in records.items()
    }
    assert all(row["response"] == "**The correct answer is (C)**" for row in report["rows"])
    assert all(row["meta"]["output"]["replies"] == [REASONING] for row in report["rows"])  # kept whole
