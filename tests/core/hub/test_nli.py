"""contract-nli and scifact load by name from a hub mirror, with a prompt naming the label set."""

from __future__ import annotations

import json

import pytest

from context_bench.cli import main
from context_bench.datasets import load
from context_bench.testing import FakeServer, isolated_host, last_user_message, scored_by_name


def test_contract_nli_splits_hypothesis_from_contract():
    rows = load("contract-nli", host=isolated_host()).rows
    assert [(r["id"], r["answer"]) for r in rows] == [
        ("cn1", "Entailment"),
        ("cn2", "Contradiction"),
        ("cn3", "Not mentioned"),
    ]
    assert rows[0]["context"].startswith("NON-DISCLOSURE AGREEMENT")
    assert rows[0]["question"].startswith("Hypothesis: Receiving Party shall not disclose")
    assert "Entailment, Contradiction, Not mentioned" in rows[0]["question"]
    evaluators, scores = scored_by_name("contract-nli", rows[2], "Not mentioned")
    assert evaluators == ["AnswerQuality", "NLILabelMatch"] and scores["nli_accuracy"] == 1.0
    assert scored_by_name("contract-nli", rows[1], "Entailment")[1]["nli_accuracy"] == 0.0


def test_scifact_joins_each_claim_with_its_cited_abstracts():
    rows = load("scifact", host=isolated_host()).rows
    assert [(r["id"], r["answer"]) for r in rows] == [
        ("scifact-1", "Supports"),
        ("scifact-2", "Refutes"),
        ("scifact-3", "Not enough info"),
    ]
    assert rows[0]["context"] == (
        "Vitamin D and fractures\nVitamin D reduced fractures. In elders.\n\n"
        "A cohort study\nFracture risk fell with vitamin D. n=900."
    )
    assert "Claim: Vitamin D lowers fracture risk." in rows[0]["question"]
    assert "Supports, Refutes, Not enough info" in rows[0]["question"]
    evaluators, scores = scored_by_name("scifact", rows[1], "Refutes")
    assert evaluators == ["AnswerQuality", "NLILabelMatch"] and scores["nli_accuracy"] == 1.0
    assert scored_by_name("scifact", rows[2], "Supports")[1]["nli_accuracy"] == 0.0


@pytest.mark.parametrize("name", ["contract-nli", "scifact"])
def test_the_catalog_names_the_keys_its_rows_carry(name):
    """What ``context-bench datasets`` shows of a set (and the evaluators it wires) without loading it."""
    host = isolated_host()
    (spec,) = [spec for _, spec in host.datasets().values() if spec.name == name]
    rows = load(name, host=host).rows
    assert set(spec.fields) <= set().union(*rows)


def test_run_contract_nli_end_to_end_against_a_loopback_server(capsys):
    labels = {
        "fact that Agreement": "Entailment",
        "third-parties": "Contradiction",
        "any right": "Not mentioned",
    }

    def reply(body):
        text = last_user_message(body)
        return next(label for cue, label in labels.items() if cue in text)

    with FakeServer(reply) as server:
        code = main(
            ["run", "--proxy", server.url, "--dataset", "contract-nli", "--output", "json", "--no-progress"]
        )
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and [row["scores"]["nli_accuracy"] for row in report["rows"]] == [1.0, 1.0, 1.0]
