"""The memory data layout and the LoCoMo / LongMemEval loaders, on fixture files in the public layouts."""

from __future__ import annotations

import json
import sys

import pytest

from cbench_judge.context import conversation_text
from cbench_memory import plugin
from cbench_memory.layout import memory_rows, select_qa_types
from cbench_memory.loaders import (
    ADVERSARIAL_GOLD,
    load_locomo,
    load_longmemeval,
    load_memory,
    read_memory_file,
)
from context_bench import DatasetSpec, DatasetUnavailable, UsageError, hookimpl
from context_bench.datasets import MalformedRow
from context_bench.testing import isolated_host


def test_locomo_sessions_dates_images_and_categories(fixtures):
    convs = load_locomo(fixtures / "locomo_mini.json")
    assert [c["id"] for c in convs] == ["conv-a", "conv-b"]
    turns = convs[0]["turns"]
    assert [t["session"] for t in turns] == [
        1,
        1,
        2,
        2,
        10,
    ]  # session_10 after session_2, not after session_1
    assert turns[0] == {
        "speaker": "Caroline",
        "text": "I adopted a puppy named Biscuit last week!",
        "session": 1,
        "date": "1:56 pm on 8 May, 2023",
    }
    assert turns[2]["text"].endswith("[shares a photo of chewed red shoes]")
    types = [p["qa_type"] for p in convs[0]["qa_pairs"]]
    assert types == ["single-hop", "single-hop", "temporal", "multi-hop", "adversarial"]
    adversarial = convs[0]["qa_pairs"][4]
    assert adversarial["answer"] == ADVERSARIAL_GOLD and adversarial["adversarial_answer"] == "Biscuit"


def test_locomo_rows_carry_the_contract_fields(fixtures):
    (conv, other) = memory_rows(load_locomo(fixtures / "locomo_mini.json"), "locomo")
    row = conv.rows[0]
    assert row["id"] == "conv-a/0" and row["dataset"] == "locomo" and row["conversation_id"] == "conv-a"
    assert row["question"] == "What is the name of Caroline's puppy?" and row["answer"] == "Biscuit"
    assert row["qa_type"] == "single-hop" and row["evidence_ids"] == ["D1:1"]
    assert row["evidence"] == ["I adopted a puppy named Biscuit last week!"]  # the turn D1:1 names
    lines = row["context"].splitlines()
    assert lines[:2] == [
        "[Session 1, 1:56 pm on 8 May, 2023]",
        "Caroline: I adopted a puppy named Biscuit last week!",
    ]
    assert "[Session 10, 3:00 pm on 2 October, 2023]" in lines
    assert other.rows[1]["answer"] == "2023"  # a numeric gold reads as text


def test_longmemeval_types_abstention_dates_and_no_answer_marks(fixtures):
    convs = load_longmemeval(fixtures / "longmemeval_mini.json")
    assert [c["id"] for c in convs] == ["e47becba", "gpt4_2655b836", "e47becba_abs"]
    first = convs[0]
    assert all("has_answer" not in t for t in first["turns"])
    assert [t["speaker"] for t in first["turns"]] == ["user", "assistant", "user", "assistant"]
    assert [t["date"] for t in first["turns"]][::2] == ["2023/05/20 (Sat) 02:21", "2023/05/22 (Mon) 10:00"]
    (pair,) = first["qa_pairs"]
    assert pair["id"] == "e47becba" and pair["qa_type"] == "single-session-user"
    assert pair["question"] == "(Today is 2023/05/30 (Tue) 23:40.) What degree did I graduate with?"
    assert convs[1]["qa_pairs"][0]["qa_type"] == "temporal-reasoning"
    assert convs[2]["qa_pairs"][0]["qa_type"] == "abstention"
    assert convs[2]["qa_pairs"][0]["question_type"] == "single-session-user"
    rows = [c.rows[0] for c in memory_rows(convs, "longmemeval")]
    assert [r["id"] for r in rows] == ["e47becba", "gpt4_2655b836", "e47becba_abs"]
    assert rows[1]["answer"] == "3"


def test_conversation_text_without_sessions_is_plain_lines():
    assert (
        conversation_text([{"speaker": "A", "text": "hi"}, {"speaker": "B", "text": "yo"}]) == "A: hi\nB: yo"
    )
    dated = conversation_text(
        [{"speaker": "A", "text": "hi", "date": "May 1"}, {"speaker": "B", "text": "yo", "date": "May 1"}]
    )
    assert dated == "[May 1]\nA: hi\nB: yo"


def test_malformed_conversations_and_pairs_are_located_not_fatal():
    convs = [
        {
            "id": "ok",
            "turns": [{"speaker": "A", "text": "x"}],
            "qa_pairs": [{"question": "q?", "answer": "x"}, {"answer": "no question"}],
        },
        {"id": "bad-turn", "turns": [{"speaker": "A"}], "qa_pairs": []},
        ["not", "a", "dict"],
        {"turns": [], "qa_pairs": []},
    ]
    ok, bad_turn, not_dict, no_id = memory_rows(convs, "mine")
    assert ok.rows[0]["id"] == "ok/0"
    assert isinstance(ok.rows[1], MalformedRow)
    assert ok.rows[1].location == "conversation 0 of data set 'mine' (id 'ok') QA pair 1"
    assert "question" in ok.rows[1].message
    assert isinstance(bad_turn, MalformedRow) and bad_turn.location == "conversation 1 of data set 'mine'"
    assert bad_turn.message == "id 'bad-turn': turn 0 has no 'text'"
    assert "not a conversation dict" in not_dict.message
    assert no_id.message == "has no 'id'"


def test_read_memory_file_detects_each_layout(fixtures, tmp_path):
    assert read_memory_file(fixtures / "locomo_mini.json").name == "locomo"
    assert read_memory_file(fixtures / "longmemeval_mini.json").name == "longmemeval"
    own = tmp_path / "chats.jsonl"
    own.write_text(json.dumps({"id": "c1", "turns": [], "qa_pairs": []}) + "\n{broken\n")
    loaded = read_memory_file(own)
    assert loaded.name == "chats" and loaded.kind == "memory"
    assert loaded.rows[0]["id"] == "c1" and isinstance(loaded.rows[1], MalformedRow)


def test_named_data_sets_read_a_local_path_and_say_how_otherwise(fixtures, monkeypatch):
    host = isolated_host(plugin)
    loaded = load_memory("locomo", path=fixtures / "locomo_mini.json", host=host)
    assert loaded.name == "locomo" and loaded.kind == "memory" and len(loaded.rows) == 2
    # without a path a named set comes from the hub: offline and not cached, that is one clear line
    import huggingface_hub.constants

    monkeypatch.delenv("CBENCH_HUB_MIRROR", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(DatasetUnavailable, match="--hub-mirror DIR.*--data-file PATH"):
        load_locomo(repo_id="cbench-tests/not-cached")
    with pytest.raises(DatasetUnavailable, match="longmemeval_oracle.json .*--data-file PATH"):
        load_longmemeval(variant="oracle", repo_id="cbench-tests/not-cached")
    with pytest.raises(UsageError, match="is a file"):
        load_memory(str(fixtures / "locomo_mini.json"), download=True, host=host)


def test_hub_download_without_the_extra_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("CBENCH_HUB_MIRROR", raising=False)
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import fails, as when the extra is absent
    with pytest.raises(DatasetUnavailable, match=r"pip install 'context-bench\[hub\]'"):
        load_longmemeval(download=True)


def test_a_rows_data_set_is_refused_by_the_memory_loader():
    class Plugin:
        CBENCH_PLUGIN_API = 1

        @hookimpl
        def cbench_register_datasets(self, register):
            register(DatasetSpec("plain-qa", lambda: [{"id": "1"}], kind="rows"))

    with pytest.raises(UsageError, match="not a memory data set"):
        load_memory("plain-qa", host=isolated_host(Plugin()))


def test_unreadable_locomo_file_names_the_file(tmp_path):
    broken = tmp_path / "locomo10.json"
    broken.write_text("[{")
    with pytest.raises(UsageError, match="locomo10.json: invalid JSON"):
        load_locomo(broken)
    wrong = tmp_path / "other.json"
    wrong.write_text(json.dumps([{"no": "conversation"}]))
    with pytest.raises(UsageError, match="other.json sample 0: no 'conversation'"):
        load_locomo(wrong)


def test_select_qa_types(fixtures):
    convs = load_locomo(fixtures / "locomo_mini.json")
    temporal = select_qa_types(convs, ["temporal"])
    assert [[p["question"] for p in c["qa_pairs"]] for c in temporal] == [
        ["When did Caroline start pottery classes?"],
        ["When did Gina lose her job?"],
    ]
    with pytest.raises(UsageError, match="temporl: not in this data set .*adversarial, multi-hop"):
        select_qa_types(convs, ["temporl"])


def test_a_broken_public_layout_names_the_place(tmp_path):
    broken = tmp_path / "lme.json"
    broken.write_text(json.dumps([{"question_id": "q1", "haystack_sessions": [["not a turn"]]}]))
    with pytest.raises(UsageError, match=r"lme.json item 0 session 1: expected a list of objects"):
        read_memory_file(broken)


def test_a_repeated_row_id_is_an_input_error_not_a_second_answer():
    convs = [
        {"id": "a", "turns": [], "qa_pairs": [{"id": "q1", "question": "x?"}]},
        {"id": "b", "turns": [], "qa_pairs": [{"id": "q1", "question": "y?"}, {"question": "z?"}]},
    ]
    first, second = memory_rows(convs, "mine")
    assert first.rows[0]["id"] == "q1"
    assert isinstance(second.rows[0], MalformedRow) and "row id 'q1' appears twice" in second.rows[0].message
    assert second.rows[1]["id"] == "b/1"
