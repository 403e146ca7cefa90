"""The memory data sets from the hub: locomo and longmemeval as files of a fixture mirror (the same
parsers as a local copy), oolong through the real ``datasets`` library; wired to the memory judges."""

from __future__ import annotations

from pathlib import Path

import pytest

from cbench_memory.layout import memory_rows
from cbench_memory.loaders import load_locomo, load_longmemeval, load_memory
from cbench_memory.oolong import answer_text, load_oolong
from context_bench import UsageError
from context_bench._autowire import Wirer
from context_bench.plugins import PluginHost
from context_bench.testing import FakeServer, offline_hub

MIRROR = Path(__file__).parent / "fixtures" / "hub"


@pytest.fixture
def hub(monkeypatch, tmp_path):
    offline_hub(monkeypatch, MIRROR, tmp_path)


def test_named_sets_without_a_file_come_from_the_mirror(hub, fixtures):
    host = PluginHost()
    locomo = load_memory("locomo", host=host)
    assert locomo.kind == "memory" and locomo.rows == load_locomo(fixtures / "locomo_mini.json")
    longmemeval = load_memory("longmemeval", host=host)
    assert longmemeval.rows == load_longmemeval(fixtures / "longmemeval_mini.json")
    assert longmemeval.rows[0]["id"] == "e47becba"


def test_a_mirror_without_the_file_names_it(hub):
    with pytest.raises(UsageError, match="has no xiaowu0162/longmemeval-cleaned/longmemeval_m_cleaned.json"):
        load_longmemeval(config="m")
    with pytest.raises(UsageError, match="variant 'xl': choose one of s, m, oracle"):
        load_longmemeval(config="xl")


def test_oolong_windows_become_conversations(hub):
    first, second = load_oolong()
    assert first["id"] == "oolong-validation-7" and second["id"] == "oolong-validation-8"
    assert first["turns"][0] == {
        "speaker": "context",
        "text": "The following lines contain 3 short messages, one per line.",
    }
    assert len(first["turns"]) == 4 and first["turns"][1]["text"].endswith("WIN a FREE cruise, reply now")
    assert [(p["id"], p["answer"], p["qa_type"]) for p in first["qa_pairs"]] == [
        ("oolong-1300", "spam", "MOST_FREQ"),
        ("oolong-1301", "2", "NUMERIC_ONE_CLASS"),
    ]
    assert first["qa_pairs"][1]["answer_type"] == "NUMERIC" and len(second["qa_pairs"]) == 1
    assert "Label:" not in " ".join(t["text"] for t in first["turns"])  # the unlabelled window only


def test_oolong_answers_read_as_text():
    assert answer_text("['spam']") == "spam"
    assert answer_text("[4]") == "4"
    assert answer_text("['a', 'b']") == "a, b"
    assert answer_text("more common than") == "more common than"
    assert answer_text("[unbalanced") == "[unbalanced"


def test_memory_rows_of_the_hub_sets_get_the_memory_judges(hub):
    from cbench_judge.testing import memory_verdict

    host = PluginHost()
    (conversation, _) = memory_rows(load_oolong(), "oolong")
    row = conversation.rows[0]
    assert row["question"].startswith("In the data above") and row["answer"] == "spam"
    assert "context: Date: Jan 02, 2023" in row["context"]
    with FakeServer(memory_verdict) as judge_server:  # YES when the gold is in the answer
        wiring = Wirer(host, {"judge_url": judge_server.url}, run="memory").wire("oolong")
        judges = {type(e).__name__: e for e in wiring.for_row(row)}
        assert {"MemoryJudge", "FalseMemoryRate"} <= set(judges)
        judge = judges["MemoryJudge"]
        assert judge.score(row, {"response": "Label: spam"})["memory_judge"] == 1.0
        assert judge.score(row, {"response": "Label: ham"})["memory_judge"] == 0.0


def test_memory_command_runs_oolong_from_the_mirror(hub, world, capsys):
    import json

    from context_bench.cli import main

    code = main(
        [
            "memory",
            "--dataset",
            "oolong",
            "--system",
            "full-context",
            "--relay",
            world.url,
            "--model",
            world.model,
            "--output",
            "json",
            "--no-progress",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    (group,) = json.loads(out)["summary"]["groups"]
    assert group["dataset"] == "oolong" and group["rows"] == 3
    assert set(group["breakdown"]["qa_type"]) == {"MOST_FREQ", "NUMERIC_ONE_CLASS", "LEAST_FREQ"}


def test_convomem_items_become_conversations(hub):
    from cbench_memory.convomem import load_convomem

    first, second = load_convomem(config="user_evidence")
    assert first["id"] == "convomem-user_evidence-0050e213-5032-42a0-8041-b5eef2f8ab91_Telemarketer-0"
    assert [t["session"] for t in first["turns"]] == [1, 1, 2, 2]
    assert first["turns"][2] == {"speaker": "User", "text": "My dog Pepper loves the beach.", "session": 2}
    (pair,) = first["qa_pairs"]
    assert (pair["question"], pair["answer"], pair["qa_type"]) == (
        "What is the name of my dog?",
        "Pepper",
        "user_evidence",
    )
    assert pair["evidence"] == ["My dog Pepper loves the beach."]
    assert second["qa_pairs"][0]["answer"] == "Denver"
    (changing,) = load_convomem(config="changing_evidence")  # its fewest-evidence folder is 2_evidence
    assert changing["qa_pairs"][0]["answer"] == "3 pm" and len(changing["qa_pairs"][0]["evidence"]) == 2
    with pytest.raises(UsageError, match="has no Salesforce/ConvoMem/.*/assistant_facts_evidence/1_evidence"):
        load_convomem()  # every category: this mirror holds two
    with pytest.raises(UsageError, match="valid configs are user_evidence, assistant_facts_evidence"):
        load_convomem(config="nope")


def test_membench_reads_a_local_copy_only(fixtures):
    from cbench_memory.membench import load_membench
    from context_bench import DatasetUnavailable

    host = PluginHost()
    with pytest.raises(DatasetUnavailable, match="GitHub only .*--data-file MemData/FirstAgent"):
        load_memory("membench", host=host)
    convs = load_memory("membench", path=fixtures / "membench" / "FirstAgent", host=host).rows
    assert [c["id"] for c in convs] == ["membench-simple-movie-0", "membench-simple-movie-1"]
    first = convs[0]
    assert first["turns"][2] == {
        "speaker": "user",
        "text": "My favourite director is Greta Gerwig.",
        "session": 1,
        "date": "2024-03-02 19:00",
    }
    (pair,) = first["qa_pairs"]
    assert pair["question"].startswith("Who is my favourite director?\n\nA. Christopher Nolan\nB. Greta")
    assert pair["answer"] == "Greta Gerwig" and pair["correct_choice"] == "B" and pair["qa_type"] == "simple"
    assert len(convs[1]["turns"]) == 2  # a message_list of one session, not a list of sessions
    assert [c["id"] for c in load_membench(fixtures / "membench" / "FirstAgent", config="simple")][:1] == [
        "membench-simple-movie-0"
    ]
    with pytest.raises(UsageError, match="no noisy.json"):
        load_membench(fixtures / "membench" / "FirstAgent", config="noisy")
