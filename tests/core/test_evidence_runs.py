"""Where the loss comes from, through the real CLI: a compressor proxy (tests/truncating_proxy.py)
truncates each prompt and sends it on through the meter to FakeServer; every row that marks its
``evidence`` gets the share of it the model received, every row the compressor lost against the
baseline its cause, and each comparison and group the counts and the retention (docs/savings.md)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from context_bench.cli import main
from context_bench.testing import FakeServer, free_port
from context_bench.text import normalize_tokens

#: Each row: its context, question and evidence.  The compressor keeps the first 8 words of the
#: prompt (context, then question); the model answers "Paris" only when it reads both "capital of
#: France" and "where".  Worked by hand, for the compressor:
#:   0: "Paris is the capital of France. Where is"   kept 1/1, right
#:   1: "Rome is in Italy. Paris is the capital"     kept 1/2, wrong: evidence dropped
#:   2: "Paris is the capital of France. It is"      kept 1/1, wrong: evidence kept, answer wrong
#:   3: "Berlin is in Germany. Paris is the capital" kept 0/1, wrong: evidence dropped
ROWS = [
    ("Paris is the capital of France.", "Where is it?", ["Paris is the capital of France."]),
    (
        "Rome is in Italy. Paris is the capital of France.",
        "Where?",
        ["Rome is in Italy.", "Paris is the capital of France."],
    ),
    (
        "Paris is the capital of France. It is large and old.",
        "Where is it?",
        ["Paris is the capital of France."],
    ),
    ("Berlin is in Germany. Paris is the capital of France.", "Where?", ["Paris is the capital of France."]),
]
KEEP = 8

_spec = importlib.util.spec_from_file_location(
    "cbench_truncating_proxy", Path(__file__).parents[1] / "truncating_proxy.py"
)
_proxy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_proxy)
_spec = importlib.util.spec_from_file_location("cbench_browser", Path(__file__).parents[1] / "browser.py")
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)


def _model(body) -> str:
    words = " ".join(normalize_tokens(" ".join(m["content"] for m in body["messages"])))
    return "Paris" if "capital of france" in words and "where" in words.split() else "unknown"


def _run(capsys, tmp_path, rows, output=("--output", "json"), answer=_model, keep=KEEP):
    data = tmp_path / "facts.jsonl"
    data.write_text(
        "".join(json.dumps({"id": str(n), "answer": "Paris", **row}) + "\n" for n, row in enumerate(rows))
    )
    port = free_port()
    with (
        FakeServer(answer) as model,
        _proxy.TruncatingProxy(f"http://127.0.0.1:{port}/v1", keep) as compressor,
    ):
        flags = ["--meter", model.url, "--meter-port", str(port), "--proxy", model.url, "--name", "baseline"]
        flags += ["--proxy", compressor.url, "--name", "compressed", "--max-concurrency", "4"]
        code = main(["run", *flags, "--dataset", str(data), *output, "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out) if output == ("--output", "json") else out


def test_each_lost_row_says_whether_its_evidence_reached_the_model(capsys, tmp_path):
    rows = [{"context": c, "question": q, "evidence": e} for c, q, e in ROWS]
    report = _run(capsys, tmp_path, rows)
    by_system = {}
    for row in sorted(report["rows"], key=lambda row: int(row["example_id"])):
        by_system.setdefault(row["system"], []).append((row["evidence_kept"], row["loss_cause"]))
    assert by_system == {
        "baseline": [(1.0, None)] * 4,
        "compressed": [
            (1.0, None),
            (0.5, "evidence dropped"),
            (1.0, "evidence kept, answer wrong"),
            (0.0, "evidence dropped"),
        ],
    }
    summary = report["summary"]
    assert {(g["system"], g["evidence_retention"]) for g in summary["groups"]} == {
        ("baseline", 1.0),
        ("compressed", 0.625),  # (1 + 0.5 + 1 + 0) / 4
    }
    f1 = next(c for c in summary["comparisons"] if c["field"] == "f1")
    assert sorted(f1["lost"], key=int) == ["1", "2", "3"]
    assert f1["lost_by_cause"] == {"evidence_dropped": 2, "evidence_kept": 1}


#: Each row's (system, id, evidence_kept, loss_cause), worked by hand above.
CAUSES = {
    *(("baseline", str(n), 1.0, None) for n in range(4)),
    ("compressed", "0", 1.0, None),
    ("compressed", "1", 0.5, "evidence dropped"),
    ("compressed", "2", 1.0, "evidence kept, answer wrong"),
    ("compressed", "3", 0.0, "evidence dropped"),
}


def _page_causes(page: Path, rows: list[list] | None = None) -> set[tuple]:
    """Each row's (system, id, evidence kept, loss cause) as the page's script reads them
    (html_rows.RowEncoder's arrays), from the page or from ``rows``, the file beside it."""
    data = json.loads(re.search(r'id="cb-data">(.*?)</script>', page.read_text(), re.S)[1])
    at = dict(data["figures"])
    return {
        (data["systems"][row[1]], row[3], row[5][at["evidence kept"]], row[5][at["loss cause"]])
        for row in (data["rows"] if rows is None else rows)
    }


def test_the_jsonl_and_html_rows_carry_the_causes_too(capsys, tmp_path):
    rows = [{"context": c, "question": q, "evidence": e} for c, q, e in ROWS]
    jsonl = tmp_path / "run.jsonl"
    _run(capsys, tmp_path, rows, ("--output", "jsonl", "--out", str(jsonl)))
    lines = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert {(r["system"], r["id"], r["evidence_kept"], r["loss_cause"]) for r in lines} == CAUSES
    page = tmp_path / "run.html"
    _run(capsys, tmp_path, rows, ("--output", "html", "--out", str(page)))
    assert _page_causes(page) == CAUSES
    # past --html-inline-rows the rows are in a file beside the page
    paged = tmp_path / "paged.html"
    _run(capsys, tmp_path, rows, ("--output", "html", "--out", str(paged), "--html-inline-rows", "0"))
    beside = [json.loads(line) for line in (tmp_path / "paged.rows.jsonl").read_text().splitlines()]
    assert _page_causes(paged, beside) == CAUSES


@pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")
@pytest.mark.timeout(60)
def test_the_page_shows_each_rows_cause(capsys, tmp_path):
    rows = [{"context": c, "question": q, "evidence": e} for c, q, e in ROWS]
    page = tmp_path / "run.html"
    _run(capsys, tmp_path, rows, ("--output", "html", "--out", str(page)))
    with browser.Browser() as driver:
        driver.open(page)
        cells = driver.run("[...document.querySelectorAll('#cb-rows td')].map(td => td.textContent)")
        assert driver.errors == []
    assert cells.count("evidence dropped") == 2
    assert cells.count("evidence kept, answer wrong") == 1


def test_rows_without_evidence_have_no_retention_and_no_cause(capsys, tmp_path):
    report = _run(capsys, tmp_path, [{"context": c, "question": q} for c, q, _ in ROWS])
    assert not any("evidence_kept" in row or "loss_cause" in row for row in report["rows"])
    assert {g["evidence_retention"] for g in report["summary"]["groups"]} == {None}
    assert {c["lost_by_cause"] for c in report["summary"]["comparisons"]} == {None}
    assert sorted(
        next(c for c in report["summary"]["comparisons"] if c["field"] == "f1")["lost"], key=int
    ) == [
        "1",
        "2",
        "3",
    ]


#: LoCoMo's own layout (plugins/cbench-memory/tests/fixtures/locomo_mini.json's first conversation):
#: sessions of turns with dialog ids, QA pairs naming their evidence by those ids.
LOCOMO = json.loads(
    (Path(__file__).parents[2] / "plugins/cbench-memory/tests/fixtures/locomo_mini.json").read_text()
)[0]


def _locomo_rows() -> list[dict]:
    """One row per LoCoMo question with an answer: the conversation as its context ("Speaker: text"
    a line), LoCoMo's conversation and its evidence ids as they are."""
    conversation = LOCOMO["conversation"]
    turns = [
        t
        for key, ts in conversation.items()
        if key.startswith("session_") and isinstance(ts, list)
        for t in ts
    ]
    context = "\n".join(f"{t['speaker']}: {t['text']}" for t in turns)
    return [
        {
            "context": context,
            "conversation": conversation,
            **{k: qa[k] for k in ("question", "answer", "evidence")},
        }
        for qa in LOCOMO["qa"]
        if qa.get("answer")
    ]


def _reader(body) -> str:
    """Answers a question it can read; without one, "Biscuit" where the puppy's turn is there."""
    text = " ".join(m["content"] for m in body["messages"])
    for qa in LOCOMO["qa"]:
        if qa.get("answer") and qa["question"] in text:
            return qa["answer"]
    return "Biscuit" if "puppy named Biscuit" in text else "unknown"


def test_locomo_evidence_turns_are_checked_by_their_text(capsys, tmp_path):
    """LoCoMo names evidence by dialog id: each id is read as its turn's text.  The compressor keeps
    20 words, the first two turns (9 words each) and "Caroline: Biscuit", never the question:
      0: D1:1 (Biscuit)        kept 1/1, answers "Biscuit": right
      1: D1:2 (Lisbon)         kept 1/1, answers "Biscuit": evidence kept, answer wrong
      2: D10:1 (pottery)       kept 0/1: evidence dropped
      3: D2:1, D2:2 (shoes)    kept 0/2: evidence dropped"""
    report = _run(capsys, tmp_path, _locomo_rows(), answer=_reader, keep=20)
    found = {
        (row["system"], row["example_id"], row["evidence_kept"], row["loss_cause"]) for row in report["rows"]
    }
    assert found == {
        *(("baseline", str(n), 1.0, None) for n in range(4)),
        ("compressed", "0", 1.0, None),
        ("compressed", "1", 1.0, "evidence kept, answer wrong"),
        ("compressed", "2", 0.0, "evidence dropped"),
        ("compressed", "3", 0.0, "evidence dropped"),
    }
    assert {g["system"]: g["evidence_retention"] for g in report["summary"]["groups"]} == {
        "baseline": 1.0,
        "compressed": 0.5,
    }


def test_a_dialog_id_naming_no_turn_leaves_the_row_unchecked(capsys, tmp_path):
    """Evidence that names a turn the row does not have is not checked, neither kept nor dropped."""
    rows = _locomo_rows()
    rows[0]["evidence"] = ["D1:1", "D7:7"]
    del rows[1]["conversation"]
    report = _run(capsys, tmp_path, rows, answer=_reader, keep=20)
    unchecked = {row["example_id"] for row in report["rows"] if "evidence_kept" not in row}
    assert unchecked == {"0", "1"}


def test_the_stored_rows_carry_the_causes(capsys, tmp_path, monkeypatch):
    from context_bench.store import open_store

    monkeypatch.setenv("CBENCH_STORE", f"sqlite:///{tmp_path / 'runs.sqlite'}")
    rows = [{"context": c, "question": q, "evidence": e} for c, q, e in ROWS]
    _run(
        capsys, tmp_path, rows, ("--output", "jsonl")
    )  # to stdout: its rows go out before any cause is known
    with open_store(f"sqlite:///{tmp_path / 'runs.sqlite'}") as store:
        (run,) = store.runs()
        stored = store.report(run.id)["rows"]
    assert {(r["system"], r["example_id"], r["evidence_kept"], r["loss_cause"]) for r in stored} == CAUSES
