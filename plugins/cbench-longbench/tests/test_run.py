"""``context-bench run --dataset longbench-e:hotpotqa`` end to end: from the mirror, through a real
loopback endpoint, with THUDM's prompt and budget in every request, to the official scores."""

from __future__ import annotations

import json

from context_bench.cli import main
from context_bench.testing import FakeServer, last_user_message

RIVERS = {"Paris": "The Seine", "London": "Thames\nIt is long.", "Rome": "The Danube"}


def _reply(body):
    question = last_user_message(body).rsplit("Question: ", 1)[1]
    return next(answer for city, answer in RIVERS.items() if city in question)


def test_run_longbench_e_hotpotqa_against_a_loopback_server(hub, capsys, published):
    with FakeServer(_reply) as server:
        argv = [
            "run",
            "--proxy",
            server.url,
            "--dataset",
            "longbench-e:hotpotqa",
            "--output",
            "json",
            "--no-progress",
        ]
        code = main(argv)
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    scores = {row["example_id"]: row["scores"] for row in report["rows"]}
    # "The Seine" against "Seine": F1 2/3 ("the" is dropped, as are articles); eval.py does not cut
    # hotpotqa's answer to its first line, so "Thames\nIt is long." is 2*(1/4)/(1/4+1) = 0.4
    assert scores == {
        "lb-hpe-1": {"longbench_score": 1.0},
        "lb-hpe-2": {"longbench_score": 0.4},
        "lb-hpe-3": {"longbench_score": 0.0},
    }
    (group,) = report["summary"]["groups"]
    assert group["dataset"] == "longbench-e:hotpotqa"
    template = json.loads((published / "dataset2prompt.json").read_text("utf-8"))["hotpotqa"]
    sent = [(body["messages"], body["max_tokens"]) for body in server.requests]
    assert sent[0] == (
        [
            {
                "role": "user",
                "content": template.format(
                    context="Passage 1:\nThe Seine flows through Paris.",
                    input="Which river flows through Paris?",
                ),
            }
        ],
        32,
    )
    assert [tokens for _, tokens in sent] == [32, 32, 32]


def test_the_users_max_tokens_wins_over_the_tasks(hub, capsys):
    with FakeServer(lambda body: "City") as server:
        argv = [
            "run",
            "--proxy",
            server.url,
            "--max-tokens",
            "5",
            "--dataset",
            "longbench:trec",
            "--no-progress",
        ]
        assert main(argv) == 0
    capsys.readouterr()
    assert [body["max_tokens"] for body in server.requests] == [5, 5]


def test_an_unknown_task_is_one_line_and_exit_2_before_any_row(hub, capsys):
    with FakeServer(_reply) as server:
        code = main(["run", "--proxy", server.url, "--dataset", "longbench:hotpot", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and server.requests == []
    assert err == [
        "context-bench: error: unknown LongBench task 'hotpot': the tasks are narrativeqa, qasper, "
        "multifieldqa_en, multifieldqa_zh, hotpotqa, 2wikimqa, musique, dureader, gov_report, qmsum, "
        "multi_news, vcsum, trec, triviaqa, samsum, lsht, passage_count, passage_retrieval_en, "
        "passage_retrieval_zh, lcc, repobench-p"
    ]


def test_longbench_e_by_length_prints_the_papers_table(hub, capsys):
    """Done when of issue 30: the fixture's three rows (lengths 3500, 6000, 12000) one in each of
    eval.py's buckets, scored 1.0, 0.4 and 0.0 as above."""
    with FakeServer(_reply) as server:
        argv = ["run", "--proxy", server.url, "--dataset", "longbench-e:hotpotqa"]
        code = main([*argv, "--by", "length:0-4000,4000-8000,8000-", "--no-progress", "--store", "none"])
    table = capsys.readouterr().out
    assert code == 0
    head = table.index("By length: the primary score's mean in each part (rows)")
    lines = table[head:].splitlines()[1:4]
    assert lines[0].split() == ["system", "dataset", "score", "0-4000", "4000-8000", "8000-", "all"]
    assert lines[2].split()[2:] == [
        "longbench_score",
        "1.000",
        "(1)",
        "0.400",
        "(1)",
        "0.000",
        "(1)",
        "0.467",
        "(3)",
    ]
