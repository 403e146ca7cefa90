"""The data sets load by name from the fixture mirror through the real ``datasets`` library, carry
the fields eval.py and ``--by`` read, and are scored by their evaluators: a right response 1.0 and
a wrong one 0.0 per task family (ROUGE-L's best is 2/(2+1e-8), the ``rouge`` package's F)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import cbench_longbench.plugin as plugin
from context_bench import DatasetUnavailable, UsageError
from context_bench.datasets import load
from context_bench.testing import check_plugin, scored_by_name

ROUGE_BEST = 2.0 * (1.0 / (2.0 + 1e-8))


def test_the_plugin_registers_coherently():
    info = check_plugin(plugin)
    assert [spec.name for spec in info.evaluators] == [
        "LongBenchScore",
        "SubspanEM",
        "ZeroScrollsScore",
        "MeetingBankSummary",
    ]
    assert [spec.name for spec in info.datasets] == [
        "longbench",
        "longbench-e",
        "longbench-v2",
        "nq-multidoc",
        "meetingbank-qa",
        "meetingbank-summary",
        "zeroscrolls",
    ]


def test_a_longbench_row_keeps_what_eval_py_and_breakdowns_read(hub, host):
    rows = load("longbench:trec", host=host).rows
    assert [row["id"] for row in rows] == ["lb-trec-1", "lb-trec-2"]
    first = rows[0]
    assert first == {
        "id": "lb-trec-1",
        "dataset": "longbench:trec",
        "prompt": "Please determine the type of the question below. Here are some examples of questions.\n\n"
        "Question: Who invented the telephone?\nType: Individual\n\nWhat is the capital of Peru?",
        "answers": ["City"],
        "all_classes": ["City", "Individual"],
        "length": 12,
        "language": "en",
        "max_tokens": 64,
    }
    assert "Who painted {the} Mona Lisa?" in rows[1]["prompt"]  # braces in the data stay


def test_longbench_e_reads_the_e_folders_and_keeps_the_length(hub, host):
    rows = load("longbench-e:hotpotqa", host=host).rows
    assert [(row["id"], row["dataset"], row["length"]) for row in rows] == [
        ("lb-hpe-1", "longbench-e:hotpotqa", 3500),
        ("lb-hpe-2", "longbench-e:hotpotqa", 6000),
        ("lb-hpe-3", "longbench-e:hotpotqa", 12000),
    ]
    assert rows[1]["answers"] == ["Thames", "River Thames"]
    assert scored_by_name("longbench-e:hotpotqa", rows[1], "River Thames", host) == (
        ["LongBenchScore"],
        {"longbench_score": 1.0},
    )


@pytest.mark.parametrize(
    ("name", "right", "wrong", "best"),
    [
        ("longbench:hotpotqa", "Paris", "Lyon", 1.0),
        ("longbench:multifieldqa_zh", "中国", "日本", 1.0),
        (
            "longbench:gov_report",
            "The agency reviewed its budget and found that spending rose.",
            "Cats purr",
            ROUGE_BEST,
        ),
        ("longbench:vcsum", "会议讨论了预算，成员认为预算需要增加。", "天气很好", ROUGE_BEST),
        ("longbench:trec", "City\nIndividual", "Individual\nCity", 1.0),
        ("longbench:lsht", "体育", "财经", 1.0),
        ("longbench:passage_count", "2", "3", 1.0),
        ("longbench:passage_retrieval_en", "Paragraph 1", "Paragraph 2", 1.0),
        ("longbench:passage_retrieval_zh", "段落2", "段落1", 1.0),
        ("longbench:lcc", "```python\n    return total\n```", "KKK", 1.0),
    ],
)
def test_each_family_scores_a_right_and_a_wrong_response(hub, host, name, right, wrong, best):
    row = load(name, host=host).rows[0]
    assert scored_by_name(name, row, right, host) == (["LongBenchScore"], {"longbench_score": best})
    assert scored_by_name(name, row, wrong, host)[1] == {"longbench_score": 0.0}


def test_longbench_v2_uses_pred_pys_prompt_and_extraction(hub, host):
    rows = load("longbench-v2", host=host).rows
    first = rows[0]
    assert [row["correct_choice"] for row in rows] == ["C", "B"]
    assert (first["difficulty"], first["length"], first["max_tokens"]) == ("easy", "short", 128)
    assert first["prompt"].startswith(
        "Please read the following text and answer the question below.\n\n<text>\nRevenue:"
    )
    assert "(C) 2021\n(D) 2022\n\nFormat your response" in first["prompt"]
    right = "Revenue peaked in 2021. The correct answer is (C)"
    assert scored_by_name("longbench-v2", first, right, host) == (
        ["LongBenchScore"],
        {"longbench_score": 1.0},
    )
    assert scored_by_name("longbench-v2", first, "C", host)[1] == {"longbench_score": 0.0}


def test_nq_multidoc_moves_the_gold_document_through_the_published_positions(hub, host):
    rows = load("nq-multidoc:10", host=host).rows
    assert [(row["id"], row["gold_position"]) for row in rows] == [
        ("nq-multidoc-10-gold0-0", 0),
        ("nq-multidoc-10-gold4-0", 4),
        ("nq-multidoc-10-gold9-0", 9),
    ]
    for row in rows:
        documents = row["prompt"].split("\n\n")[1].split("\n")
        assert len(documents) == 10 and row["max_tokens"] == 100
        assert documents[row["gold_position"]].startswith(
            f"Document [{row['gold_position'] + 1}](Title: Nobel Prize in Physics)"
        )
    right = "Wilhelm Conrad Röntgen, in 1901.\nHe was German."
    assert scored_by_name("nq-multidoc:10", rows[1], right, host) == (["SubspanEM"], {"subspan_em": 1.0})
    assert scored_by_name("nq-multidoc:10", rows[1], "\nWilhelm Conrad Röntgen", host)[1] == {
        "subspan_em": 0.0
    }


def test_meetingbank_qa_and_summary_follow_llmlingua2(hub, host):
    questions = load("meetingbank-qa", host=host).rows
    assert [row["id"] for row in questions] == ["meetingbank-0-qa0", "meetingbank-0-qa1", "meetingbank-1-qa0"]
    assert questions[0]["prompt"] == (
        "Write a high-quality answer for the given question using the provided meeting transcript "
        "(which may be compressed).\nSpeaker 1: The council will vote on the bike lane ordinance. "
        "Speaker 2: The ordinance passes with seven votes.\nQuestion:What did the council vote on?\nAnswer:"
    )
    # LLMLingua-2 strips leading newlines before it takes the first line
    right = "\nThey voted on the bike lane ordinance.\nIt passed."
    assert scored_by_name("meetingbank-qa", questions[0], right, host) == (["SubspanEM"], {"subspan_em": 1.0})
    assert scored_by_name("meetingbank-qa", questions[0], "the budget", host)[1] == {"subspan_em": 0.0}
    summaries = load("meetingbank-summary", host=host).rows
    assert [(row["id"], row["max_tokens"]) for row in summaries] == [
        ("meetingbank-0", 400),
        ("meetingbank-1", 400),
    ]
    names, scores = scored_by_name(
        "meetingbank-summary", summaries[1], "The council approved the library budget.", host
    )
    assert names == ["MeetingBankSummary"]
    assert scores == {"rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0, "rougeLsum": 1.0}
    assert (
        scored_by_name("meetingbank-summary", summaries[1], "Cats purr.\nThe council", host)[1]["rouge1"]
        == 0.0
    )


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        ("longbench:nope", UsageError, "unknown LongBench task 'nope': the tasks are narrativeqa, qasper,"),
        ("longbench-e:musique", UsageError, "unknown LongBench task 'musique': the tasks are qasper,"),
        (
            "nq-multidoc:15",
            UsageError,
            "unknown nq-multidoc setting '15': the numbers of documents are 10, 20, 30",
        ),
        (
            "meetingbank-qa:x",
            UsageError,
            "meetingbank-qa has no configs to choose (meetingbank-qa:CONFIG given)",
        ),
    ],
)
def test_a_bad_name_is_one_line(hub, host, spec, error, message):
    with pytest.raises(error, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        load(spec, host=host)


def test_nq_multidoc_without_its_files_says_where_they_are(monkeypatch, host):
    monkeypatch.delenv("CBENCH_HUB_MIRROR", raising=False)
    monkeypatch.delenv("CBENCH_NQ_MULTIDOC_DATA", raising=False)
    with pytest.raises(DatasetUnavailable, match="GitHub repository nelson-liu/lost-in-the-middle"):
        load("nq-multidoc", host=host)


def test_a_score_file_names_its_task_and_is_scored_the_same(tmp_path, capsys):
    from context_bench.cli import main

    rows = [
        {
            "id": "a",
            "dataset": "longbench:trec",
            "answers": ["City"],
            "all_classes": ["City", "Individual"],
            "response": "City\nIndividual",
        },
        {
            "id": "b",
            "dataset": "longbench:trec",
            "answer": "City",
            "all_classes": ["City", "Individual"],
            "response": "City or Individual",
        },
        {"id": "c", "dataset": "longbench:passage_count", "answers": ["2"], "response": "2 and 3"},
    ]
    path = tmp_path / "responses.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    assert main(["score", str(path), "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {row["example_id"]: row["scores"]["longbench_score"] for row in report["rows"]} == {
        "a": 1.0,
        "b": 0.5,
        "c": 0.5,
    }


def test_listing_names_source_revision_and_paper_and_imports_no_loader():
    code = (
        "import json, sys; from context_bench.cli import main; main(['datasets', '--json']); "
        "prefixes = ('cbench_longbench.', 'datasets', 'jieba'); "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(prefixes))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    listing, modules = out.rsplit("\n", 2)[0], json.loads(out.rsplit("\n", 2)[1])
    assert modules == ["cbench_longbench.plugin", "cbench_longbench.sources", "cbench_longbench.tasks"]
    ours = {entry["name"]: entry for entry in json.loads(listing) if entry["plugin"] == "cbench-longbench"}
    assert list(ours) == [spec.name for spec in plugin._DATASETS]
    assert ours["longbench"]["source"]["revision"] == "refs/convert/parquet"
    assert ours["longbench-v2"]["source"]["repo"] == "THUDM/LongBench-v2"
    assert ours["meetingbank-qa"]["source"]["repo"] == "microsoft/MeetingBank-QA-Summary"
    assert ours["zeroscrolls"]["source"]["repo"] == "tau/zero_scrolls"
    assert ours["zeroscrolls"]["source"]["revision"] == "refs/convert/parquet"
    assert "revision 29b8a6d042ce29abccee3db1a73171a107d7e6af" in ours["nq-multidoc"]["description"]
    for name, paper in [
        ("longbench", "arXiv:2308.14508"),
        ("longbench-e", "arXiv:2308.14508"),
        ("longbench-v2", "arXiv:2412.15204"),
        ("nq-multidoc", "arXiv:2307.03172"),
        ("meetingbank-qa", "arXiv:2403.12968"),
        ("meetingbank-summary", "arXiv:2403.12968"),
        ("zeroscrolls", "arXiv:2305.14196"),
    ]:
        assert paper in ours[name]["description"]
    wired = {
        name: [e["name"] for e in entry["evaluators"] if not e["requires"]] for name, entry in ours.items()
    }
    assert wired == {
        "longbench": ["LongBenchScore"],
        "longbench-e": ["LongBenchScore"],
        "longbench-v2": ["LongBenchScore"],
        "nq-multidoc": ["SubspanEM"],
        "meetingbank-qa": ["SubspanEM"],
        "meetingbank-summary": ["MeetingBankSummary"],
        "zeroscrolls": ["ZeroScrollsScore"],
    }
