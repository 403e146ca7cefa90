"""``run --meter URL``: the relay started for the run, each system pointed at it, every call counted
on its row, through the real CLI against FakeServer as the model endpoint."""

from __future__ import annotations

import json
import shlex
import sys

import httpx
import pytest

from context_bench import Metering, Output, RunConfig, evaluate
from context_bench.cli import main
from context_bench.metering import ROW_HEADER, current
from context_bench.testing import FakeServer, Reply

PY = shlex.quote(sys.executable)
KEY = "sk-metered-run-" + "0123456789abcdef" * 2
UNMETERED = {"cached_input_tokens": None, "cache_write_tokens": None, "cost": None}


@pytest.fixture
def upstream():
    with FakeServer(lambda body: "Paris") as server:
        yield server


def _data(tmp_path, count=3):
    path = tmp_path / "qa.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": str(n), "question": f"question {n}", "answer": "Paris"}) + "\n"
            for n in range(count)
        )
    )
    return str(path)


def _run(capsys, tmp_path, *flags, count=3):
    code = main(["run", *flags, "--dataset", _data(tmp_path, count), "--output", "json", "--no-progress"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out else None, err


def _program(tmp_path, calls: int, header: bool) -> str:
    """A ``--command`` agent that calls the meter ``calls`` times per row, with its row's header
    or without, and prints the last answer."""
    path = tmp_path / "agent.py"
    path.write_text(
        "import json, os, sys, urllib.request\n"
        "prompt = sys.stdin.read()\n"
        f"headers = {{'Content-Type': 'application/json'}}\n"
        f"if {header}:\n"
        f"    headers[{ROW_HEADER!r}] = os.environ['CBENCH_ROW']\n"
        f"for _ in range({calls}):\n"
        "    body = json.dumps({'model': 'm', 'messages': [{'role': 'user', 'content': prompt}]}).encode()\n"
        "    url = os.environ['CBENCH_METER_URL'] + '/chat/completions'\n"
        "    request = urllib.request.Request(url, body, headers)\n"
        "    with urllib.request.urlopen(request) as answer:\n"
        "        reply = json.load(answer)['choices'][0]['message']['content']\n"
        "print(reply)\n",
        encoding="utf-8",
    )
    return f"{PY} {shlex.quote(str(path))}"


def test_a_proxy_on_the_meters_upstream_is_sent_through_it_each_call_on_its_row(capsys, tmp_path, upstream):
    code, report, err = _run(
        capsys, tmp_path, "--meter", upstream.url, "--proxy", upstream.url, "--max-concurrency", "4"
    )
    assert code == 0
    assert err.count("context-bench: meter on http://127.0.0.1:") == 1
    assert [row["metered"] for row in report["rows"]] == [
        {"calls": 1, "input_tokens": 10, "output_tokens": 2, **UNMETERED}
    ] * 3
    assert sorted(seen.headers[ROW_HEADER.lower()] for seen in upstream.seen) == ["row-0", "row-1", "row-2"]
    totals = report["summary"]["metered"]
    assert (totals["calls"], totals["input_tokens"], totals["unattributed"]["calls"]) == (3, 30, 0)
    assert report["metadata"]["systems"][0]["endpoint"].startswith(upstream.url)  # the system's own


def test_a_command_program_gets_the_meter_and_its_row_and_every_call_is_summed(capsys, tmp_path, upstream):
    code, report, err = _run(
        capsys,
        tmp_path,
        "--meter",
        upstream.url,
        "--command",
        _program(tmp_path, calls=3, header=True),
        "--max-concurrency",
        "3",
    )
    assert code == 0, err
    assert [row["response"] for row in report["rows"]] == ["Paris"] * 3
    assert [row["metered"] for row in report["rows"]] == [
        {"calls": 3, "input_tokens": 30, "output_tokens": 6, **UNMETERED}
    ] * 3
    assert "could not be attributed" not in err


def test_calls_without_the_header_are_the_only_row_in_flights_at_concurrency_1(capsys, tmp_path, upstream):
    program = _program(tmp_path, calls=2, header=False)
    code, report, err = _run(
        capsys, tmp_path, "--meter", upstream.url, "--command", program, "--max-concurrency", "1"
    )
    assert code == 0, err
    assert [row["metered"]["calls"] for row in report["rows"]] == [2, 2, 2]
    assert report["summary"]["metered"]["unattributed"]["calls"] == 0


def test_calls_without_the_header_at_higher_concurrency_are_run_totals_said_once(capsys, tmp_path, upstream):
    program = _program(tmp_path, calls=2, header=False)
    code, report, err = _run(
        capsys, tmp_path, "--meter", upstream.url, "--command", program, "--max-concurrency", "2"
    )
    assert code == 0, err
    assert [row["metered"]["calls"] for row in report["rows"]] == [0, 0, 0]
    assert [row["metered"]["input_tokens"] for row in report["rows"]] == [None, None, None]
    totals = report["summary"]["metered"]
    assert (totals["calls"], totals["input_tokens"], totals["unattributed"]["calls"]) == (6, 60, 6)
    notice = (
        "6 calls could not be attributed to rows; run with --max-concurrency 1 or forward X-Context-Bench-Row"
    )
    assert report["summary"]["warnings"].count(notice) == 1
    assert err.count(notice) == 1


def test_a_python_system_reads_the_meter_through_the_system_api(upstream):
    class Agent:
        name = "agent"

        def process(self, example):
            link = current()
            body = {"model": "m", "messages": [{"role": "user", "content": example["question"]}]}
            for _ in range(2):
                answer = httpx.post(f"{link.url}/chat/completions", json=body, headers=link.headers)
            return {"response": answer.json()["choices"][0]["message"]["content"]}

    rows = [{"id": str(n), "question": "q", "answer": "Paris"} for n in range(4)]
    config = RunConfig(metering=Metering(upstream=upstream.url), output=Output(progress=False))
    result = evaluate(Agent(), rows, config)
    assert [row.metered["calls"] for row in result.rows] == [2, 2, 2, 2]
    assert [row.metered["input_tokens"] for row in result.rows] == [20, 20, 20, 20]
    assert current() is None  # only while a row's system runs


def test_a_key_a_system_sends_is_in_no_report_log_or_cache(capsys, tmp_path, upstream, monkeypatch):
    monkeypatch.setenv("METER_TEST_KEY", KEY)
    cache = tmp_path / "cache"
    out = tmp_path / "report.json"
    flags = ["--meter", upstream.url, "--proxy", upstream.url, "--api-key-env", "METER_TEST_KEY"]
    code = main(
        [
            "run",
            *flags,
            "--dataset",
            _data(tmp_path),
            "--output",
            "json",
            "--out",
            str(out),
            "--cache-dir",
            str(cache),
        ]
    )
    _, err = capsys.readouterr()
    assert code == 0
    assert all(seen.headers["authorization"] == f"Bearer {KEY}" for seen in upstream.seen)  # passed through
    written = [
        out.read_text(),
        err,
        *(p.read_text(errors="replace") for p in cache.rglob("*") if p.is_file()),
    ]
    assert not any(KEY in text for text in written)
    assert json.loads(out.read_text())["rows"][0]["metered"]["calls"] == 1


def test_the_tokenizer_counts_what_the_upstream_states_no_usage_for(capsys, tmp_path):
    """docs/savings.md's hand-worked count: one user message "hello world" is 3 + 1 + 2 + 3 = 9
    tokens in cl100k_base; with --keep-prompts the row holds what was sent."""
    data = tmp_path / "hello.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "hello world", "answer": "hi"}) + "\n")
    with FakeServer(lambda body: Reply("hi", usage={}), usage={}) as model:
        flags = ["--meter", model.url, "--tokenizer", "cl100k_base", "--keep-prompts", "--proxy", model.url]
        code = main(["run", *flags, "--dataset", str(data), "--output", "json", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    (row,) = json.loads(out)["rows"]
    assert row["metered"] == {
        "calls": 1,
        "input_tokens": 9,
        "output_tokens": None,
        **UNMETERED,
        "prompts": ["hello world"],
    }
    assert row["input_tokens"] is None  # the system's own: the endpoint stated none


def test_without_usage_or_tokenizer_a_rows_input_is_unknown_not_zero(capsys, tmp_path):
    with FakeServer(lambda body: Reply("hi", usage={}), usage={}) as model:
        code, report, err = _run(capsys, tmp_path, "--meter", model.url, "--proxy", model.url, count=1)
    assert code == 0, err
    assert report["rows"][0]["metered"]["calls"] == 1
    assert report["rows"][0]["metered"]["input_tokens"] is None
    assert "prompts" not in report["rows"][0]["metered"]  # captured only with --keep-prompts


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--tokenizer", "no_such_encoding"], "no_such_encoding"),
        (["--tokenizer", "missing/tokenizer.json"], "does not exist"),
    ],
)
def test_a_tokenizer_that_is_not_here_is_one_line_and_exit_2_before_any_row(
    capsys, tmp_path, upstream, flags, said
):
    code, report, err = _run(capsys, tmp_path, "--meter", upstream.url, *flags, "--proxy", upstream.url)
    assert code == 2 and report is None
    assert said in err and len(err.strip().splitlines()) == 1
    assert upstream.seen == []


def test_the_meters_flags_need_the_meter(capsys, tmp_path, upstream):
    code, _, err = _run(capsys, tmp_path, "--keep-prompts", "--proxy", upstream.url)
    assert code == 2
    assert "--keep-prompts works on the calls through the meter: give --meter URL too" in err
