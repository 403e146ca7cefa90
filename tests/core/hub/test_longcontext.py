"""The long-context sets load by name from a hub mirror, in the layout their evaluators score."""

from __future__ import annotations

import json

import pytest

from context_bench.cli import main
from context_bench.datasets import load
from context_bench.errors import UsageError
from context_bench.testing import FakeServer, isolated_host, last_user_message, scored_by_name


def test_infinitebench_tasks_are_configs():
    qa = load("infinitebench", host=isolated_host()).rows
    assert [(r["id"], r["answer"]) for r in qa] == [
        ("infinitebench-longbook_qa_eng-0", ["the northern isle"]),
        ("infinitebench-longbook_qa_eng-1", ["Oskar"]),
    ]
    assert scored_by_name("infinitebench", qa[1], "Oskar")[1]["exact_match"] == 1.0
    assert scored_by_name("infinitebench", qa[1], "Pip")[1]["exact_match"] == 0.0
    choice = load("infinitebench", host=isolated_host(), config="longbook_choice_eng").rows
    assert choice[0]["correct_letter"] == "B" and "B. Under the boat" in choice[0]["question"]
    assert scored_by_name("infinitebench", choice[0], "B") == (
        ["MultipleChoiceAccuracy"],
        {"mc_accuracy": 1.0},
    )
    with pytest.raises(UsageError, match="the valid configs are passkey, kv_retrieval"):
        load("infinitebench", host=isolated_host(), config="nope")


def test_nolima_expands_each_needle_test_into_the_haystack():
    rows = load("nolima", host=isolated_host()).rows
    assert [(r["id"], r["answer"]) for r in rows] == [
        ("nolima-0401-T01_C02", "Yuki"),
        ("nolima-0401-T02_C02", "Yuki"),
    ]
    lines = rows[0]["context"].split("\n")
    assert lines[0] == "The morning was grey over the harbour."
    assert "Actually, Yuki lives next to the Semper Opera House." in lines[1:-1]
    assert rows[0]["evidence"] == ["Actually, Yuki lives next to the Semper Opera House."]  # the needle
    assert rows[1]["question"].startswith("Which character has been to Helsinki?")
    assert scored_by_name("nolima", rows[0], "Yuki")[1]["exact_match"] == 1.0
    assert scored_by_name("nolima", rows[0], "Stuart")[1]["exact_match"] == 0.0


@pytest.mark.parametrize("name", ["infinitebench", "nolima"])
def test_the_catalog_names_the_keys_its_rows_carry(name):
    """What ``context-bench datasets`` shows of a set (and the evaluators it wires) without loading it."""
    host = isolated_host()
    (spec,) = [spec for _, spec in host.datasets().values() if spec.name == name]
    rows = load(name, host=host).rows
    if name == "infinitebench":
        rows += load(name, host=host, config="longbook_choice_eng").rows
    assert set(spec.fields) <= set().union(*rows)


def test_run_infinitebench_end_to_end_against_a_loopback_server(capsys):
    def reply(body):
        return "Oskar" if "Oskar" in last_user_message(body) else "the northern isle"

    with FakeServer(reply) as server:
        code = main(
            ["run", "--proxy", server.url, "--dataset", "infinitebench", "--output", "json", "--no-progress"]
        )
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and [row["scores"]["exact_match"] for row in report["rows"]] == [1.0, 1.0]


def test_sets_read_file_by_file_refuse_a_split():
    for name in ("infinitebench", "nolima", "bfcl"):
        with pytest.raises(UsageError, match="has no splits to choose"):
            load(name, host=isolated_host(), split="test")
