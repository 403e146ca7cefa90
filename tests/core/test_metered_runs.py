"""``run --meter URL``: the relay started for the run, each system pointed at it, every call counted
on its row, through the real CLI against FakeServer as the model endpoint."""

from __future__ import annotations

import importlib.util
import json
import shlex
import sys
from pathlib import Path

import httpx
import pytest

from context_bench import Metering, Output, RunConfig, evaluate
from context_bench.cli import main
from context_bench.metering import ROW_HEADER, current
from context_bench.testing import FakeServer, Reply, free_port

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


def _program(tmp_path, calls: int, header: bool, stream: bool = False) -> str:
    """A ``--command`` agent that calls the meter ``calls`` times per row, with its row's header
    or without, streamed (then printing the answer's bytes) or not (printing its text)."""
    path = tmp_path / "agent.py"
    path.write_text(
        "import json, os, sys, urllib.request\n"
        "prompt = sys.stdin.read()\n"
        f"headers = {{'Content-Type': 'application/json'}}\n"
        f"if {header}:\n"
        f"    headers[{ROW_HEADER!r}] = os.environ['CBENCH_ROW']\n"
        f"for _ in range({calls}):\n"
        "    body = {'model': 'm', 'messages': [{'role': 'user', 'content': prompt}]}\n"
        f"    if {stream}:\n"
        "        body.update(stream=True, stream_options={'include_usage': True})\n"
        "    body = json.dumps(body).encode()\n"
        "    url = os.environ['CBENCH_METER_URL'] + '/chat/completions'\n"
        "    request = urllib.request.Request(url, body, headers)\n"
        "    with urllib.request.urlopen(request) as answer:\n"
        f"        reply = answer.read().decode() if {stream} else None\n"
        "        reply = reply or json.load(answer)['choices'][0]['message']['content']\n"
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
    program = _program(tmp_path, calls=3, header=True)
    flags = ["--meter", upstream.url, "--command", program]
    code, report, err = _run(capsys, tmp_path, *flags, "--max-concurrency", "3")
    assert code == 0, err
    assert [row["response"] for row in report["rows"]] == ["Paris"] * 3
    assert [row["metered"] for row in report["rows"]] == [
        {"calls": 3, "input_tokens": 30, "output_tokens": 6, **UNMETERED}
    ] * 3
    assert "could not be attributed" not in err


NOTICE = (
    "6 calls could not be attributed to rows; run with --max-concurrency 1 or forward X-Context-Bench-Row"
)


@pytest.mark.parametrize(
    ("concurrency", "per_row", "unattributed"),
    [("1", [2, 2, 2], 0), ("2", [0, 0, 0], 6)],  # the only row in flight; else run totals, said once
)
def test_calls_without_the_header_are_a_row_s_only_one_at_a_time(
    capsys, tmp_path, upstream, concurrency, per_row, unattributed
):
    program = _program(tmp_path, calls=2, header=False)
    code, report, err = _run(
        capsys, tmp_path, "--meter", upstream.url, "--command", program, "--max-concurrency", concurrency
    )
    assert code == 0, err
    assert [row["metered"]["calls"] for row in report["rows"]] == per_row
    assert [row["metered"]["input_tokens"] for row in report["rows"]] == [n * 10 or None for n in per_row]
    totals = report["summary"]["metered"]
    assert (totals["calls"], totals["input_tokens"], totals["unattributed"]["calls"]) == (6, 60, unattributed)
    said = 1 if unattributed else 0
    assert report["summary"]["warnings"].count(NOTICE) == said and err.count(NOTICE) == said


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


_spec = importlib.util.spec_from_file_location(
    "cbench_truncating_proxy", Path(__file__).parents[1] / "truncating_proxy.py"
)
_proxy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_proxy)


#: What the compressor under test says it sent, whatever it sent.
LIE = {"prompt_tokens": 1, "completion_tokens": 1}


def _words(body) -> int:
    return sum(len(message["content"].split()) for message in body["messages"])


def test_a_compressor_that_lies_about_its_usage_is_measured_and_caught(capsys, tmp_path):
    """The issue's case: the report shows the measured compression ratio (5 of 20 words reached
    the model: 0.25, where the compressor's own word gives 0.05) and the discrepancy."""
    port = free_port()
    stated = lambda body: Reply("Paris", usage={"prompt_tokens": _words(body), "completion_tokens": 1})  # noqa: E731
    data = tmp_path / "long.jsonl"
    question = " ".join(f"word{i}" for i in range(20))
    data.write_text(
        "".join(json.dumps({"id": str(n), "question": question, "answer": "Paris"}) + "\n" for n in range(3))
    )
    with (
        FakeServer(stated) as model,
        _proxy.TruncatingProxy(f"http://127.0.0.1:{port}/v1", 5, LIE) as compressor,
    ):
        flags = ["--meter", model.url, "--meter-port", str(port), "--proxy", model.url, "--name", "baseline"]
        flags += ["--proxy", compressor.url, "--name", "compressed"]
        code = main(["run", *flags, "--dataset", str(data), "--output", "json", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    summary = report["summary"]
    assert [(g["system"], g["tokens_source"], g["tokens"]["input_mean"]) for g in summary["groups"]] == [
        ("baseline", "metered", 20),
        ("compressed", "metered", 5),
    ]
    assert {c["compression_ratio"] for c in summary["comparisons"]} == {0.25}
    assert summary["discrepancies"] == [
        {
            "system": "compressed",
            "dataset": "long",
            "reported_input_tokens": 3,
            "metered_input_tokens": 15,
            "rows": 3,
        }
    ]
    warning = (
        "compressed on long reported 3 input tokens where the meter measured 15 over 3 rows (-80%); "
        "the meter's count is what reached the model"
    )
    assert warning in summary["warnings"] and f"warning: {warning}" in err
    assert [row["input_tokens"] for row in report["rows"] if row["system"] == "compressed"] == [1, 1, 1]


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
    assert "--tokenizer cl100k_base" in json.loads(out)["metadata"]["command"]  # no secret
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
    assert "--keep-prompts keeps what the calls through the meter sent: give --meter URL too" in err


def _group(system, dataset, own, metered, counted=None):
    """A group of rows, each with the system's own input count, the meter's and the tokenizer's
    count of its prompt (None: none)."""
    from context_bench.columns import Columns
    from context_bench.records import EvalRow

    columns = Columns()
    for n, (given, seen, prompt) in enumerate(zip(own, metered, counted or [None] * len(own), strict=True)):
        row = EvalRow(system, dataset, str(n), input_tokens=given, counted_input_tokens=prompt)
        row.metered = None if seen is None else {"calls": 1, "input_tokens": seen}
        columns.add(row, {})
    return columns


def test_the_meters_counts_are_read_only_where_every_system_on_the_data_set_has_them():
    from context_bench._measured import sourced

    columns = {
        ("base", "a"): _group("base", "a", [100, 100], [100, 100]),
        ("comp", "a"): _group("comp", "a", [1, 1], [40, 40]),
        ("base", "b"): _group("base", "b", [100], [100]),
        ("comp", "b"): _group("comp", "b", [1], [None]),  # not metered: b reads the systems' own
        ("base", "c"): _group("base", "c", [None], [None]),
        ("base", "e"): _group("base", "e", [None, 7], [None, None], [50, 50]),
        ("comp", "e"): _group("comp", "e", [None, None], [None, None], [None, 20]),
        ("base", "f"): _group("base", "f", [3], [None], [50]),
        ("comp", "f"): _group("comp", "f", [3], [None], [None]),  # not counted: f reads their own
    }
    chosen, sources = sourced(columns)
    assert sources == {
        ("base", "a"): "metered",
        ("comp", "a"): "metered",
        ("base", "b"): "reported",
        ("comp", "b"): "reported",
        ("base", "c"): None,
        ("base", "e"): "counted",
        ("comp", "e"): "counted",
        ("base", "f"): "reported",
        ("comp", "f"): "reported",
    }
    assert list(chosen[("comp", "a")].input_tokens) == [40, 40]
    assert list(chosen[("comp", "e")].input_tokens)[1:] == [20]  # the first row was not counted
    assert list(chosen[("comp", "b")].input_tokens) == [1]


@pytest.mark.parametrize(
    ("own", "metered", "listed"),
    [
        ([105], [100], False),  # 5% exactly: within the tolerance
        ([106], [100], True),
        ([95], [100], False),
        ([94], [100], True),
        ([1, 50, None], [10, 50, 1000], True),  # 51 of 60 over the 2 rows with both: -15%
        ([None], [100], False),  # nothing reported: nothing to compare
    ],
)
def test_a_discrepancy_is_an_own_count_more_than_5_percent_off_the_meters(own, metered, listed):
    from context_bench._measured import discrepancies

    found = discrepancies({("s", "d"): _group("s", "d", own, metered)})
    assert bool(found) is listed
    if len(own) == 3:
        assert [(f.reported_input_tokens, f.metered_input_tokens, f.rows) for f in found] == [(51, 60, 2)]


def test_a_saved_summary_keeps_its_discrepancies_and_sources(capsys, tmp_path, upstream):
    from context_bench.saved import summary_from_dict

    code, report, _ = _run(capsys, tmp_path, "--meter", upstream.url, "--proxy", upstream.url, count=1)
    assert code == 0
    saved = summary_from_dict(report["summary"])
    assert saved.to_dict() == report["summary"]
    assert saved.groups[0].tokens_source == "metered" and saved.metered["calls"] == 1


@pytest.mark.parametrize(
    ("usage", "price", "metered", "dollars"),
    [
        (  # OpenAI's form (vLLM's too): 1,000 prompt tokens, 800 of them read from the cache
            {"prompt_tokens": 1000, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 800}},
            "gpt-4o-mini=1,2,0.25",
            (1000, 10, 800, None),
            200 * 1 + 800 * 0.25 + 10 * 2,
        ),
        (  # Anthropic's: its input_tokens leaves out the 1,000 read and the 50 written
            {
                "input_tokens": 200,
                "cache_read_input_tokens": 1000,
                "cache_creation_input_tokens": 50,
                "output_tokens": 10,
            },
            "gpt-4o-mini=1,2,0.25,1.25",
            (1250, 10, 1000, 50),
            200 * 1 + 1000 * 0.25 + 50 * 1.25 + 10 * 2,
        ),
    ],
)
def test_cached_tokens_are_priced_at_the_cache_prices_given(capsys, tmp_path, usage, price, metered, dollars):
    with FakeServer(lambda body: Reply("Paris", usage=usage)) as model:
        code, report, err = _run(
            capsys, tmp_path, "--meter", model.url, "--proxy", model.url, "--price", price, count=2
        )
    assert code == 0, err
    figures = ("input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens")
    assert [tuple(row["metered"][f] for f in figures) for row in report["rows"]] == [metered] * 2
    (group,) = report["summary"]["groups"]
    assert group["tokens_source"] == "metered"
    assert group["cost"] == {"dollars": 2 * (dollars / 1_000_000), "priced": True, "source": "priced"}
    assert group["cache_hit_share"] == 0.8


def test_a_429_and_a_500_pass_through_and_are_counted_as_calls_without_tokens(capsys, tmp_path):
    """The first call of each row is refused with a 429 (Retry-After: 0), which the system retries;
    every call of row 2 answers 500. What failed reached no model: a call, no tokens."""
    seen: dict[str, int] = {}

    def answer(body):
        question = body["messages"][-1]["content"]
        seen[question] = seen.get(question, 0) + 1
        if question == "question 2":
            return Reply(status=500, text="upstream broke")
        if seen[question] == 1:
            return Reply(status=429, headers={"Retry-After": "0"}, text="slow down")
        return "Paris"

    with FakeServer(answer) as model:
        code, report, err = _run(
            capsys, tmp_path, "--meter", model.url, "--proxy", model.url, "--max-retries", "1"
        )
    rows = report["rows"]
    assert [(row["metered"]["calls"], row["metered"]["input_tokens"]) for row in rows] == [
        (2, 10),
        (2, 10),
        (2, None),
    ]
    assert [bool(row["errors"]) for row in rows] == [False, False, True]
    assert "500" in rows[2]["errors"][0]["message"]


def test_a_streamed_call_is_counted_from_its_usage_chunk_and_passed_on_whole(capsys, tmp_path, upstream):
    program = _program(tmp_path, 1, True, stream=True)
    code, report, err = _run(capsys, tmp_path, "--meter", upstream.url, "--command", program, count=1)
    assert code == 0, err
    (row,) = report["rows"]
    assert row["response"].startswith("data: ") and row["response"].endswith("data: [DONE]")
    assert '"content": "Paris"' in row["response"]
    assert row["metered"] == {"calls": 1, "input_tokens": 10, "output_tokens": 2, **UNMETERED}


def test_a_resumed_row_keeps_the_figures_of_the_run_that_made_it(capsys, tmp_path, upstream):
    flags = ["--meter", upstream.url, "--proxy", upstream.url, "--cache-dir", str(tmp_path / "cache")]
    code, first, _ = _run(capsys, tmp_path, *flags, count=2)
    assert code == 0 and len(upstream.seen) == 2
    code, again, _ = _run(capsys, tmp_path, *flags, count=2)
    assert code == 0 and len(upstream.seen) == 2  # every row from the cache
    assert [row["metered"] for row in again["rows"]] == [row["metered"] for row in first["rows"]]
    assert again["rows"][0]["metered"]["input_tokens"] == 10
    assert "metered" not in again["rows"][0]["meta"].get("output", {})
    assert again["summary"]["metered"]["calls"] == 0  # this run relayed nothing


def test_without_the_meter_the_tokenizer_counts_the_prompt_each_system_is_given(capsys, tmp_path):
    """A --command system reports no tokens; with --tokenizer the harness counts the prompt it gave
    it: 'hello world' as one user message is 3 + 1 + 2 + 3 = 9 tokens in cl100k_base."""
    data = tmp_path / "hello.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "hello world", "answer": "hi"}) + "\n")
    echo = f"{PY} -c 'import sys; print(sys.stdin.read())'"
    argv = ["run", "--command", echo, "--tokenizer", "cl100k_base", "--dataset", str(data)]
    code = main([*argv, "--output", "json", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    (row,) = report["rows"]
    assert (row["input_tokens"], row["counted_input_tokens"], "metered" in row) == (None, 9, False)
    (group,) = report["summary"]["groups"]
    assert (group["tokens_source"], group["tokens"]["input_mean"]) == ("counted", 9)


def test_a_run_file_names_the_meter_and_the_report_records_it(capsys, tmp_path, upstream):
    run = tmp_path / "run.toml"
    run.write_text(f'[options]\nmeter = "{upstream.url}"\ntokenizer = "cl100k_base"\n', encoding="utf-8")
    data = tmp_path / "hello.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "hello world", "answer": "hi"}) + "\n")
    argv = ["run", "--config", str(run), "--proxy", upstream.url, "--dataset", str(data)]
    code = main([*argv, "--output", "json", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    assert report["rows"][0]["metered"]["calls"] == 1
    assert report["rows"][0]["counted_input_tokens"] == 3 + 1 + 2 + 3  # docs/savings.md's count
    # a tokenizer is no secret: recorded, so --config REPORT runs it again
    assert report["metadata"]["config"]["options"] == {"meter": upstream.url, "tokenizer": "cl100k_base"}


@pytest.mark.timeout(20)  # the meter's wait for a row's calls in flight is 30 s
def test_a_row_given_up_at_the_deadline_does_not_wait_for_its_call_in_the_meter(capsys, tmp_path):
    """The model never answers row 0; at --call-timeout 1 its row is given up while its call is
    still in the meter, and its figures are taken at once (no call finished: none counted) rather
    than after the meter's wait for calls in flight, which held the executor's thread."""

    def answer(body):
        return Reply(fault="hang") if body["messages"][-1]["content"] == "question 0" else "Paris"

    with FakeServer(answer, hang_seconds=60) as model:
        flags = ["--meter", model.url, "--proxy", model.url, "--call-timeout", "1", "--max-retries", "0"]
        _, report, _ = _run(capsys, tmp_path, *flags, count=2)
    first, second = report["rows"]
    assert first["errors"][0]["type"] == "DeadlineExceeded"
    assert first["metered"]["calls"] == 0 and first["metered"]["input_tokens"] is None
    assert second["metered"]["calls"] == 1 and not second["errors"]
