"""Where the loss comes from, through the real CLI: a compressor proxy written here truncates each
prompt and sends it on through the meter to FakeServer; every row that marks its ``evidence`` gets
the share of it the model received, every row the compressor lost against the baseline its cause,
and each comparison and group the counts and the retention (docs/savings.md)."""

from __future__ import annotations

import http.server
import json
import threading

import httpx

from context_bench.cli import main
from context_bench.metering import ROW_HEADER
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


def _model(body) -> str:
    words = " ".join(normalize_tokens(" ".join(m["content"] for m in body["messages"])))
    return "Paris" if "capital of france" in words and "where" in words.split() else "unknown"


class TruncatingCompressor:
    """A compressor proxy under test: it keeps the first ``KEEP`` words of each message and sends
    them on to the meter with the row header it was given."""

    def __init__(self, meter_url: str) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                for message in body["messages"]:
                    message["content"] = " ".join(message["content"].split()[:KEEP])
                answer = httpx.post(
                    f"{meter_url}/chat/completions", json=body, headers={ROW_HEADER: self.headers[ROW_HEADER]}
                )
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def _run(capsys, tmp_path, rows):
    data = tmp_path / "facts.jsonl"
    data.write_text(
        "".join(json.dumps({"id": str(n), **row, "answer": "Paris"}) + "\n" for n, row in enumerate(rows))
    )
    port = free_port()
    with FakeServer(_model) as model, TruncatingCompressor(f"http://127.0.0.1:{port}/v1") as compressor:
        flags = ["--meter", model.url, "--meter-port", str(port), "--proxy", model.url, "--name", "baseline"]
        flags += ["--proxy", compressor.url, "--name", "compressed", "--max-concurrency", "4"]
        code = main(["run", *flags, "--dataset", str(data), "--output", "json", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


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
