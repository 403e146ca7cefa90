"""The agent-trace sets load by name from a hub mirror: function calls as JSON, SWE-bench patches."""

from __future__ import annotations

import json

import pytest

from context_bench.cli import main
from context_bench.datasets import load
from context_bench.errors import DatasetUnavailable
from context_bench.testing import FakeServer, isolated_host, last_user_message, offline_hub, scored_by_name


def test_bfcl_gold_calls_take_the_first_accepted_values():
    rows = load("bfcl", host=isolated_host()).rows
    assert [r["id"] for r in rows] == ["simple_0", "simple_1"]
    assert json.loads(rows[0]["answer"]) == [
        {"name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5}}
    ]
    assert json.loads(rows[1]["answer"]) == [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    assert (
        rows[0]["tools"][0]["name"] == "calculate_triangle_area"
        and "calculate_triangle_area" in rows[0]["context"]
    )
    assert (
        rows[0]["question"].startswith("Find the area of a triangle") and '"arguments"' in rows[0]["question"]
    )
    evaluators, scores = scored_by_name(
        "bfcl", rows[1], '[{"name": "get_weather", "arguments": {"city": "Paris"}}]'
    )
    assert evaluators == ["AnswerQuality"] and scores["exact_match"] == 1.0
    assert scored_by_name("bfcl", rows[1], "I cannot help with that.")[1]["f1"] == 0.0


def test_apigen_answers_are_the_calls():
    rows = load("apigen", host=isolated_host()).rows
    assert [r["id"] for r in rows] == ["apigen-0", "apigen-1"]
    assert json.loads(rows[1]["answer"]) == [
        {"name": "convert", "arguments": {"amount": 100, "to": "EUR", "from": "USD"}}
    ]
    assert rows[0]["tools"][0]["name"] == "live_giveaways_by_type"
    assert scored_by_name("apigen", rows[1], rows[1]["answer"])[1]["exact_match"] == 1.0
    assert scored_by_name("apigen", rows[1], "Sorry.")[1]["f1"] == 0.0


@pytest.mark.parametrize("name", ["swebench", "swebench-verified", "swebench-lite"])
def test_swebench_rows_hold_the_issue_and_the_gold_patch(name):
    rows = load(name, host=isolated_host()).rows
    assert [r["id"] for r in rows] == ["astropy__astropy-12907", "django__django-11099"]
    first = rows[0]
    assert first["context"].startswith(
        "Repository: astropy/astropy\n\nIssue:\nModeling's `separability_matrix`"
    )
    assert first["answer"].startswith("--- a/astropy/modeling/separable.py") and first[
        "base_commit"
    ].startswith("d16bfe0")
    assert scored_by_name(name, first, first["answer"]) == (
        ["AnswerQuality"],
        {"f1": 1.0, "exact_match": 1.0, "recall": 1.0, "contains": 1.0},
    )
    assert scored_by_name(name, first, "I am unable to write patches.")[1]["f1"] == 0.0


@pytest.mark.parametrize("name", ["bfcl", "apigen", "swebench", "swebench-verified", "swebench-lite"])
def test_the_catalog_names_the_keys_its_rows_carry(name):
    """What ``context-bench datasets`` shows of a set (and the evaluators it wires) without loading it."""
    host = isolated_host()
    (spec,) = [spec for _, spec in host.datasets().values() if spec.name == name]
    rows = load(name, host=host).rows
    assert set(spec.fields) <= set().union(*rows)


def test_run_bfcl_end_to_end_against_a_loopback_server(capsys):
    def reply(body):
        if "triangle" in last_user_message(body):
            return '[{"name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5}}]'
        return '[{"name": "get_weather", "arguments": {"city": "Paris"}}]'

    with FakeServer(reply) as server:
        code = main(["run", "--proxy", server.url, "--dataset", "bfcl", "--output", "json", "--no-progress"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and [row["scores"]["exact_match"] for row in report["rows"]] == [1.0, 1.0]


def test_a_file_the_mirror_lacks_or_the_cache_has_not_is_one_line(monkeypatch, tmp_path):
    offline_hub(monkeypatch, tmp_path / "empty", tmp_path / "home")
    with pytest.raises(DatasetUnavailable, match="has no gorilla-llm/Berkeley-Function-Calling-Leaderboard/"):
        load("bfcl", host=isolated_host())
    monkeypatch.delenv("CBENCH_HUB_MIRROR")  # no mirror, offline, nothing cached
    with pytest.raises(DatasetUnavailable, match=r"could not fetch amodaresi/NoLiMa/.*--hub-mirror"):
        load("nolima", host=isolated_host())
