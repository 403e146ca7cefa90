"""The ``ifeval`` data set: a local file when one is named, else google/IFEval from the hub (a fixture
mirror here, through the real ``datasets`` library), with a clear error offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cbench_ifeval.dataset import ENV_VAR, load_ifeval
from context_bench import DatasetUnavailable
from context_bench.testing import FakeServer, offline_hub

MIRROR = Path(__file__).parent / "fixtures" / "hub"

ROW = {
    "key": 1000,
    "prompt": "Say hi without commas.",
    "instruction_id_list": ["punctuation:no_comma"],
    "kwargs": [{}],
}


@pytest.fixture
def prompts_file(tmp_path):
    path = tmp_path / "input_data.jsonl"
    path.write_text(json.dumps(ROW) + "\n" + json.dumps({**ROW, "key": 1001}) + "\n", encoding="utf-8")
    return path


def test_reads_a_local_file(prompts_file):
    assert load_ifeval(prompts_file) == [ROW, {**ROW, "key": 1001}]


def test_reads_the_file_named_by_the_environment(prompts_file, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(prompts_file))
    assert [row["key"] for row in load_ifeval()] == [1000, 1001]


def test_a_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(DatasetUnavailable, match="is not a file"):
        load_ifeval(tmp_path / "missing.jsonl")


def test_hub_offline_is_a_clear_error_naming_the_local_way(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.delenv("CBENCH_HUB_MIRROR", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    for load in (load_ifeval, lambda: load_ifeval(hub=True)):
        with pytest.raises(DatasetUnavailable) as info:
            load()
        message = str(info.value)  # the offline branch itself: not in the cache, the hub unreachable
        assert message.startswith("ifeval: google/IFEval is not in the Hugging Face cache"), message
        assert "the hub cannot be reached" in message and "--hub-mirror DIR" in message
        assert message.endswith(f"or set {ENV_VAR} to a local copy of its prompts")


@pytest.fixture
def hub(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV_VAR, raising=False)
    offline_hub(monkeypatch, MIRROR, tmp_path)


def test_without_a_file_the_rows_come_from_the_hub(hub):
    from context_bench.datasets import load

    rows = load("ifeval").rows
    assert [row["id"] for row in rows] == ["1000", "1001", "1005"]
    first = rows[0]
    assert first["key"] == 1000 and first["prompt"].startswith("Write a 300+ word summary")
    assert first["instruction_id_list"][1] == "detectable_format:number_highlighted_sections"
    assert first["kwargs"][1]["num_highlights"] == 3 and first["kwargs"][0]["num_highlights"] is None


def test_a_named_file_wins_over_the_hub(hub, prompts_file, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(prompts_file))
    assert [row["key"] for row in load_ifeval()] == [1000, 1001]
    assert [row["id"] for row in load_ifeval(hub=True)] == ["1000", "1001", "1005"]


def test_hub_rows_are_wired_and_scored(hub):
    from context_bench._autowire import Wirer
    from context_bench.plugins import get_host

    row = load_ifeval()[1]
    (checker,) = Wirer(get_host()).wire("ifeval").for_row(row)
    assert type(checker).__name__ == "IFEvalChecker"
    right = checker.score(row, {"response": "Day one: Tokyo. Day two: Kyoto."})
    wrong = checker.score(row, {"response": "Day one: Tokyo, then Kyoto."})
    assert right["ifeval_strict"] == 1.0 and wrong["ifeval_strict"] == 0.0


def test_run_ifeval_by_name_end_to_end(hub, capsys):
    from context_bench.cli import main

    with FakeServer(lambda body: "Thou shalt see Kyoto [name] [address]") as server:
        argv = ["run", "--proxy", server.url, "--dataset", "ifeval", "--output", "json", "--no-progress"]
        code = main(argv)
    out = capsys.readouterr().out
    assert code == 0
    scores = {row["example_id"]: row["scores"]["ifeval_strict"] for row in json.loads(out)["rows"]}
    assert scores == {"1000": 0.0, "1001": 1.0, "1005": 0.0}


def test_the_registered_loader_is_this_one():
    from context_bench.plugins import get_host

    _, spec = get_host().datasets()["ifeval"]
    assert spec.loader == "cbench_ifeval.dataset:load_ifeval"
