"""The summarization sets load by name from a hub mirror, with the reference SummarizationQuality reads."""

from __future__ import annotations

import json

import pytest

from context_bench.cli import main
from context_bench.datasets import load
from context_bench.testing import FakeServer, isolated_host, last_user_message, scored_by_name

#: name: (ids, the first row's reference, a text its context holds, a text its question holds)
EXPECTED = {
    "multi-news": (
        ["multi-news-test-0", "multi-news-test-1"],
        "The city council voted Monday to fund a new riverside park, to residents' delight.",
        "park budget on Monday.\n\nResidents cheered",
        "Summarize the news articles",
    ),
    "dialogsum": (
        ["test_0_1", "test_1_1"],
        "Mr. Smith is getting a check-up from Doctor Hawkins.",
        "#Person2#: I need a check-up.",
        "Summarize the dialogue",
    ),
    "qmsum": (
        ["qm1", "qm2"],
        ["The group decided on a yellow case with rubber buttons.", "A yellow remote with rubber buttons."],
        "Project Manager: We agreed",
        "What did the group decide about the remote?",
    ),
    "summscreenfd": (
        ["ss1", "ss2"],
        ["Ross tells his friends he got a job at the museum."],
        "Ross: I got the job",
        "Summarize the TV episode",
    ),
    "meetingbank": (
        ["SeattleCityCouncil_06132016_Res 31669", "BostonCityCouncil_01012020_Docket 0001"],
        "The council adopted a resolution on bike lanes.",
        "Speaker 1: The resolution",
        "Summarize the meeting",
    ),
    "govreport": (
        ["govreport-test-0", "govreport-test-1"],
        "GAO found weak controls over the agency's improper payments.",
        "GAO reviewed the agency's payment systems",
        "Summarize the report",
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_rows_and_rouge(name):
    ids, reference, in_context, in_question = EXPECTED[name]
    rows = load(name, host=isolated_host()).rows
    first = rows[0]
    assert [r["id"] for r in rows] == ids and first["reference"] == reference and "answer" not in first
    assert in_context in first["context"] and in_question in first["question"]
    best = reference[0] if isinstance(reference, list) else reference
    evaluators, scores = scored_by_name(name, first, best)
    assert evaluators == ["SummarizationQuality"] and scores["rouge_l_f1"] == 1.0
    assert scored_by_name(name, first, "zebra xylophone quartz")[1]["rouge_l_f1"] == 0.0


def test_qmsum_query_is_the_question_and_the_transcript_the_context():
    row = load("qmsum", host=isolated_host()).rows[0]
    assert row["context"].startswith("Project Manager:") and "What did the group decide" not in row["context"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_catalog_names_the_keys_its_rows_carry(name):
    """What ``context-bench datasets`` shows of a set (and the evaluators it wires) without loading it."""
    host = isolated_host()
    (spec,) = [spec for _, spec in host.datasets().values() if spec.name == name]
    rows = load(name, host=host).rows
    assert set(spec.fields) <= set().union(*rows)


def test_run_dialogsum_end_to_end_against_a_loopback_server(capsys):
    summaries = {
        "Doctor Hawkins": "Mr. Smith is getting a check-up from Doctor Hawkins.",
        "take the bus": "#Person2# prefers to walk rather than take the bus.",
    }

    def reply(body):
        text = last_user_message(body)
        return next(summary for cue, summary in summaries.items() if cue in text)

    with FakeServer(reply) as server:
        code = main(
            ["run", "--proxy", server.url, "--dataset", "dialogsum", "--output", "json", "--no-progress"]
        )
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and [row["scores"]["rouge_l_f1"] for row in report["rows"]] == [1.0, 1.0]
