"""Runs in bounded memory: tasks drawn lazily, rows handed on as they finish, the summary counted
row by row, the reports written as the run goes."""

from __future__ import annotations

import asyncio
import io
import json
import pickle
import threading

import pytest

from context_bench import Limits, Output, RunConfig, evaluate
from context_bench._compact import Ids, IdSet
from context_bench._executor import LocalExecutor
from context_bench._rowtask import RowTask
from context_bench._summary import Summarizer
from context_bench.cli import _inputs as cli_inputs
from context_bench.cli._app import main
from context_bench.records import EvalRow, RowError, encode_row
from context_bench.reports import _json as json_report
from context_bench.reports import _jsonl as jsonl
from context_bench.testing import isolated_host

ROWS = [{"id": str(i), "answer": "Paris", "response": "Paris" if i % 3 else "Rome"} for i in range(30)]


class Echo:
    name = "echo"

    def process(self, example):
        return {"response": example["answer"]}


class AsyncEcho:
    name = "async-echo"

    async def aprocess(self, example):
        await asyncio.sleep(0)
        return {"response": example["answer"], "loop": threading.current_thread().name}

    def process(self, example):  # never called: the row runs on a loop
        raise AssertionError("a row with an async system ran in a thread")


def _task(index, system):
    return RowTask(index, system, "d", str(index), {"id": str(index), "answer": "x"})


@pytest.mark.parametrize("timeout", [None, 30.0])
def test_the_local_executor_draws_tasks_lazily_with_bounded_rows_in_flight(timeout):
    drawn, finished = [0], []

    def tasks():
        for index in range(200):
            drawn[0] += 1
            assert drawn[0] - len(finished) <= 4 + 1, "more tasks drawn than rows in flight"
            yield _task(index, Echo())

    assert LocalExecutor(4, timeout).run(tasks(), finished.append) is None
    assert sorted(row.index for row in finished) == list(range(200))


def test_rows_after_the_first_async_one_run_on_an_event_loop():
    finished = []
    tasks = [_task(i, Echo()) for i in range(5)] + [_task(i, AsyncEcho()) for i in range(5, 10)]
    LocalExecutor(3).run(iter(tasks), finished.append)
    rows = sorted(finished, key=lambda row: row.index)
    assert [row.index for row in rows] == list(range(10))
    assert all(not row.errors for row in rows)
    assert {row.system for row in rows[5:]} == {"async-echo"}


def test_evaluate_streams_rows_in_order_and_keeps_none():
    host = isolated_host()
    held = evaluate(
        None, ROWS, RunConfig(limits=Limits(max_concurrency=4), output=Output(progress=False)), host=host
    )
    streamed_rows = []
    streamed = evaluate(
        None,
        iter(ROWS),
        RunConfig(
            limits=Limits(max_concurrency=4), output=Output(progress=False, stream=streamed_rows.append)
        ),
        host=host,
    )
    assert streamed.rows == []
    assert [r.index for r in streamed_rows] == list(range(len(ROWS)))
    assert [r.scores for r in streamed_rows] == [r.scores for r in held.rows]
    assert streamed.summary == held.summary


def _row(index, system="s", dataset="d", scores=None, errors=()):
    return EvalRow(system, dataset, f"e{index}", scores=scores or {}, errors=list(errors), index=index)


def test_the_summarizer_counts_row_by_row_and_fills_failed_rows_in_its_columns():
    error = RowError("system", "s", "TimeoutError", "slow")
    rows = [_row(0, scores={"f1": 1.0}), _row(1, errors=[error]), _row(2, scores={"f1": 0.5})]
    summarize = Summarizer()
    for row in rows:
        summarize.add(row)
    summary = summarize.finish()
    assert summary == Summarizer()(rows)
    assert summary.groups[0].scores == {"f1": 0.5}  # the errored row counts 0
    columns = summarize.groups[("s", "d")].columns
    assert list(columns.ids) == ["e0", "e1", "e2"] and list(columns.scores["f1"]) == [1.0, 0.0, 0.5]


def test_distinct_error_messages_are_capped(monkeypatch):
    import context_bench._summary as summary_module

    monkeypatch.setattr(summary_module, "MESSAGE_KINDS", 3)
    rows = [_row(i, errors=[RowError("system", "s", "ValueError", f"bad {i}")]) for i in range(10)]
    errors = Summarizer()(rows).errors
    assert errors.total == 10 and errors.rows == 10
    assert sum(m.count for m in errors.messages) == 10 and len(errors.messages) == 4


def test_the_streamed_json_report_is_the_held_one():
    result = evaluate(None, ROWS[:5], RunConfig(output=Output(progress=False)), host=isolated_host())
    result.metadata = {"command": "score"}
    for rows in (result.rows, []):
        result.rows = rows
        out = io.StringIO()
        json_report.write(result, map(encode_row, rows), out)
        assert out.getvalue() == json_report.render(result)


@pytest.mark.parametrize(("size", "count"), [(1, 5), (150, 5), (400, 3), (1 << 20, 1)])
def test_the_spooled_rows_read_in_blocks_are_the_report_s_rows(tmp_path, size, count):
    # five rows of about 350 characters: blocks shorter than a row (each then one whole row), of two
    # rows and the last alone, and all in one; each is whole rows joined as the report joins them
    result = evaluate(None, ROWS[:5], RunConfig(output=Output(progress=False)), host=isolated_host())
    result.metadata = {"command": "score"}
    with jsonl.Writer.spool(str(tmp_path / "report.json")) as spool:
        for row in result.rows:
            spool(row)
        blocks = list(spool.blocks(json_report.ROW_SEPARATOR, size))
    assert len(blocks) == count
    out = io.StringIO()
    json_report.write(result, blocks, out)
    assert out.getvalue() == json_report.render(result)


@pytest.fixture
def qa_file(tmp_path):
    path = tmp_path / "qa.jsonl"
    path.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "id"}) + "\n" for r in ROWS))
    return path


@pytest.mark.parametrize("fmt", ["jsonl", "json", "table"])
def test_a_file_longer_than_the_head_streams_through_every_report(
    monkeypatch, capsys, tmp_path, qa_file, fmt
):
    monkeypatch.setattr(cli_inputs, "HEAD", 4)
    out = tmp_path / f"report.{fmt}"
    code = main(["score", str(qa_file), "--output", fmt, "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "30 rows of" in err and "have no 'id'" in err  # said once the whole file was read
    text = out.read_text()
    if fmt == "jsonl":
        lines = [json.loads(line) for line in text.splitlines()]
        assert [line["id"] for line in lines] == [str(i) for i in range(1, 31)]
    elif fmt == "json":
        report = json.loads(text)
        assert len(report["rows"]) == 30 and report["summary"]["groups"][0]["rows"] == 30
    else:  # the run's counts go to standard error, the report's rows to the key figures
        assert "context-bench: 30 rows, 1 system, 1 data set" in err and "  30  " in text


def test_gates_read_a_streamed_run(capsys, qa_file):
    code = main(
        ["score", str(qa_file), "--output", "jsonl", "--no-progress", "--fail-under", "exact_match=0.9"]
    )
    captured = capsys.readouterr()
    assert code == 3 and "--fail-under exact_match=0.9" in captured.err
    assert len(captured.out.splitlines()) == 30


def test_a_failed_streamed_run_leaves_the_earlier_report(monkeypatch, tmp_path, qa_file):
    out = tmp_path / "report.jsonl"
    out.write_text("earlier\n")

    def broken(row):
        raise RuntimeError("boom")

    monkeypatch.setattr("context_bench.reports._jsonl.line", broken)
    with pytest.raises(RuntimeError):
        main(["score", str(qa_file), "--output", "jsonl", "--out", str(out), "--no-progress"])
    assert out.read_text() == "earlier\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "qa.jsonl",
        "report.jsonl",
    ]  # no temporary file left


def test_ids_and_id_sets_are_lists_and_sets_of_strings():
    ids = Ids(["a", "\ud800b", "", "é"])
    assert list(ids) == ["a", "\ud800b", "", "é"] == ids and ids[-1] == "é" and ids[1:3] == ["\ud800b", ""]
    assert pickle.loads(pickle.dumps(ids)) == ids
    with pytest.raises(IndexError):
        ids[4]
    seen, reference = IdSet(), set()
    for i in range(5000):
        text = str(i * 7919 % 3001)
        assert seen.add(text) == (text not in reference)
        reference.add(text)
    assert len(seen) == len(reference) and all(text in seen for text in reference) and "x" not in seen


class _TTY(io.StringIO):
    def isatty(self):
        return True


def test_progress_without_a_total_counts_rows():
    from context_bench import progress

    stream = _TTY()
    bar = progress.Progress(None, label="scoring", stream=stream)
    for _ in range(3):
        bar.update()
    bar.close()
    assert stream.getvalue().startswith("\rscoring 1 rows") and "errors 0" in stream.getvalue()


def test_a_streamed_result_is_not_summarized_again_as_an_empty_run():
    """Its rows were handed on: filtering or re-summarizing it would show no rows (and pass every
    gate), so both are refused; a kept result is filtered without touching its own summarizer."""
    rows = [{"id": str(i), "answer": "a", "response": "a" if i % 2 else "b"} for i in range(4)]
    streamed = evaluate(None, rows, RunConfig(output=Output(progress=False, stream=lambda row: None)))
    with pytest.raises(ValueError, match="kept no rows"):
        streamed.filter(system="responses")
    with pytest.raises(ValueError, match="kept no rows"):
        streamed.summarized(exclude_errors=True)
    kept = evaluate(None, rows, RunConfig(output=Output(progress=False)))
    assert kept.filter(dataset="nothing").rows == []
    assert kept.summarize.rows == 4 and kept.filter(system="responses").summary.systems["responses"].rows == 4
