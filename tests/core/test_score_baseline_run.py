"""``score FILE --baseline RUN`` (issue 32): the rows of a stored run (or a saved JSON report) are
the baseline of the rows scored now, as they were scored then.  Scored against run 1, a file gives
the comparison that scoring both files in one run gives (the baseline's rows named ``1:SYSTEM``);
``RUN:SYSTEM`` picks another system of it; an unknown run id or system is one line, exit 2, before
any row is scored or recorded; a name that is no run still names a system of the rows."""

from __future__ import annotations

import json

import pytest

from context_bench.store import open_store

QUESTIONS = [("q1", "Paris"), ("q2", "Berlin"), ("q3", "Rome"), ("q4", "Madrid")]
#: What each system answered: v1 gets q1 and q2 right, v2 all but q4, v3 q1 alone.
ANSWERS = {
    "v1": ["Paris", "Berlin", "Oslo", "Lima"],
    "v2": ["Paris", "Berlin", "Rome", "Lima"],
    "v3": ["Paris", "Oslo", "Lima", "Quito"],
}


@pytest.fixture
def store(workdir):
    return f"sqlite:///{workdir / 'runs.sqlite'}"


@pytest.fixture
def files(write_rows):
    for system, answers in ANSWERS.items():
        write_rows(
            [
                {
                    "system": system,
                    "dataset": "capitals",
                    "id": qid,
                    "question": f"Capital? {qid}",
                    "answer": answer,
                    "response": said,
                    "kind": "odd" if int(qid[1]) % 2 else "even",
                }
                for (qid, answer), said in zip(QUESTIONS, answers, strict=True)
            ],
            f"{system}.jsonl",
        )


def _summary(cbench, *argv):
    code, out, err = cbench("score", *argv, "--output", "json", "--evaluator", "AnswerQuality")
    assert code == 0, err
    return json.loads(out)["summary"]


def test_a_file_scored_against_a_stored_run_compares_as_one_run_of_both(cbench, store, files):
    _summary(cbench, "v1.jsonl", "v2.jsonl", "--store", store)  # run 1: v1 and v2
    against = _summary(cbench, "v3.jsonl", "--baseline", "1", "--store", store)
    together = _summary(cbench, "v1.jsonl", "v3.jsonl", "--store", "none")
    assert against["baseline"] == "1:v1"  # run 1's own baseline, its first system
    means = {g["system"]: g["scores"]["exact_match"] for g in against["groups"]}
    assert means == {"1:v1": 0.5, "v3": 0.25}  # 2 of 4 right as stored; 1 of 4 scored now
    (compared,) = [c for c in against["comparisons"] if c["field"] == "exact_match"]
    (expected,) = [c for c in together["comparisons"] if c["field"] == "exact_match"]
    assert compared == {**expected, "baseline": "1:v1"}
    assert (compared["delta"], compared["n"], compared["lost"]) == (-0.25, 4, ["q2"])
    with open_store(store) as kept:  # the run scored now is recorded, the baseline's rows with it
        (info, _) = kept.runs()
        assert (info.id, info.rows, sorted(info.systems)) == (2, 8, ["1:v1", "v3"])


def test_a_system_of_the_run_and_a_saved_report_are_baselines_too(cbench, store, files, workdir):
    _summary(cbench, "v1.jsonl", "v2.jsonl", "--store", store, "--baseline", "v2")
    against = _summary(cbench, "v3.jsonl", "--baseline", "1:v2", "--store", store)
    assert {g["system"]: g["scores"]["exact_match"] for g in against["groups"]} == {"1:v2": 0.75, "v3": 0.25}
    code, out, err = cbench(
        "score", "v2.jsonl", "--output", "json", "--evaluator", "AnswerQuality", "--store", "none"
    )
    (workdir / "saved.json").write_text(out, encoding="utf-8")
    by_file = _summary(cbench, "v3.jsonl", "--baseline", "saved.json", "--store", "none")
    assert by_file["baseline"] == "saved:v2"
    assert by_file["comparisons"] == [{**c, "baseline": "saved:v2"} for c in against["comparisons"]]


def test_an_unknown_run_or_system_is_one_line_before_any_row(cbench, store, files):
    _summary(cbench, "v1.jsonl", "--store", store)
    for given, said in [
        ("7", "context-bench: error: no run 7 in the store "),
        ("1:v9", "context-bench: error: --baseline 1:v9: 1 has no system 'v9' (it has v1)"),
    ]:
        code, out, err = cbench("score", "v3.jsonl", "--baseline", given, "--store", store)
        assert (code, out) == (2, "")
        (line,) = err.splitlines()
        assert line.startswith(said)
    with open_store(store) as kept:
        assert [info.id for info in kept.runs()] == [1]  # nothing recorded, nothing scored


def test_a_name_that_is_no_run_names_a_system_of_the_rows_as_before(cbench, store, files):
    summary = _summary(cbench, "v1.jsonl", "v3.jsonl", "--baseline", "v3", "--store", store)
    assert summary["baseline"] == "v3"
    assert sorted(g["system"] for g in summary["groups"]) == ["v1", "v3"]


def test_the_stored_runs_rows_keep_their_input_fields_for_by(cbench, store, files):
    _summary(cbench, "v1.jsonl", "--store", store)
    against = _summary(cbench, "v3.jsonl", "--baseline", "1", "--by", "kind", "--store", store)
    parts = {
        g["system"]: [(p["value"], p["group"]["scores"]["exact_match"]) for p in g["by"]["kind"]]
        for g in against["groups"]
    }
    # v1 right on q1 and q2, v3 on q1 alone: each half of the questions as the rows' own field says
    assert parts == {"1:v1": [("even", 0.5), ("odd", 0.5)], "v3": [("even", 0.0), ("odd", 0.5)]}
