"""evaluate_memory: rows, order, concurrency, error isolation, cache and resume."""

from __future__ import annotations

import json
import threading
import time
from functools import partial

import pytest

from cbench_memory import IngestFailed, QueryFailed
from cbench_memory.baselines import BM25Memory, FullContextMemory
from cbench_memory.loaders import load_locomo, load_longmemeval
from context_bench import Limits, Output, RunConfig, Scope, UsageError, evaluate_memory
from context_bench.systems import OpenAIProxy
from context_bench.testing import FakeServer, Reply, isolated_host

QUIET = RunConfig(output=Output(progress=False))


def conversations(n, questions=3):
    return [
        {
            "id": f"c{c}",
            "turns": [{"speaker": "Ann", "text": f"my number is {c}", "session": 1}],
            "qa_pairs": [
                {"question": f"c{c} q{q}", "answer": f"{c}", "qa_type": "single-hop" if q else "temporal"}
                for q in range(questions)
            ],
        }
        for c in range(n)
    ]


class Notebook:
    """A memory system that remembers the last number it was told, and logs what it is asked."""

    name = "notebook"

    def __init__(self, delay=0.0, fail_ingest=(), fail_query=(), stop_after=None):
        self.delay = delay
        self.fail_ingest = list(fail_ingest)
        self.fail_query = list(fail_query)
        self.stop_after = stop_after
        self.number = None
        self.events = []
        self.active = 0
        self.peak = 0
        self._lock = threading.Lock()

    def config(self):
        return {"kind": "notebook"}

    def reset(self):
        self.events.append(("reset", None))
        self.number = None

    def ingest(self, turns):
        turns = list(turns)
        self.events.append(("ingest", turns[0]["text"]))
        if any(text in turns[0]["text"] for text in self.fail_ingest):
            raise ConnectionError("memory store is down")
        self.number = turns[0]["text"].rsplit(" ", 1)[1]

    def query(self, question):
        with self._lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            self.events.append(("query", question))
            if self.stop_after is not None and sum(e[0] == "query" for e in self.events) > self.stop_after:
                raise KeyboardInterrupt
            time.sleep(self.delay)
            if question in self.fail_query:
                raise ValueError("lost the thread")
            return {"response": str(self.number), "input_tokens": 7, "output_tokens": 1, "context_tokens": 5}
        finally:
            with self._lock:
                self.active -= 1


def test_every_qa_pair_is_a_row_with_its_answer_meta_and_breakdown():
    result = evaluate_memory(Notebook(), conversations(2), QUIET, host=isolated_host())
    assert [r.example_id for r in result.rows] == [f"c{c}/{q}" for c in range(2) for q in range(3)]
    row = result.rows[4]
    assert row.response == "1" and row.scores["exact_match"] == 1.0
    assert row.input_tokens == 7 and row.output_tokens == 1 and row.latency is not None
    assert row.meta["conversation_id"] == "c1" and row.meta["qa_type"] == "single-hop"
    assert row.meta["ingest_latency"] >= 0 and row.meta["context_tokens"] == 5
    (group,) = result.summary.groups
    assert group.breakdown["qa_type"]["temporal"].rows == 2
    assert group.breakdown["qa_type"]["single-hop"].scores["f1"] == 1.0
    assert group.metrics["memory"]["conversations"] == 2.0


def test_a_jsonl_report_names_each_conversation_once_per_row_not_its_whole_text():
    from context_bench.reports import render

    result = evaluate_memory(Notebook(), conversations(1), QUIET, host=isolated_host())
    lines = [json.loads(line) for line in render(result, "jsonl").splitlines()]
    assert [line["question"] for line in lines] == ["c0 q0", "c0 q1", "c0 q2"]
    assert all("context" not in line and line["meta"]["conversation_id"] == "c0" for line in lines)


def test_an_instance_serves_one_conversation_at_a_time_questions_in_order():
    system = Notebook(delay=0.01)
    evaluate_memory(
        system,
        conversations(4),
        RunConfig(limits=Limits(max_concurrency=4), output=Output(progress=False)),
        host=isolated_host(),
    )
    assert system.peak == 1
    events = system.events
    for c in range(4):
        start = events.index(("ingest", f"my number is {c}"))
        assert events[start - 1] == ("reset", None)
        assert events[start + 1 : start + 4] == [("query", f"c{c} q{q}") for q in range(3)]


def test_a_factory_runs_conversations_concurrently_within_the_bound():
    with FakeServer(lambda body: Reply(text="Business Administration", hold_until=3)) as server:
        client = OpenAIProxy(server.url, model="m")
        result = evaluate_memory(
            partial(FullContextMemory, client),
            load_longmemeval_like(12),
            RunConfig(limits=Limits(max_concurrency=3), output=Output(progress=False)),
            host=isolated_host(),
        )
    assert not any(r.errors for r in result.rows)
    assert server.expired_holds == 0 and server.max_in_flight == 3 and len(server.requests) == 12
    assert all(r.response == "Business Administration" for r in result.rows)


def load_longmemeval_like(n):
    return [
        {
            "id": f"u{i}",
            "turns": [{"speaker": "user", "text": "I graduated in Business Administration."}],
            "qa_pairs": [
                {"question": "What degree did I graduate with?", "answer": "Business Administration"}
            ],
        }
        for i in range(n)
    ]


def test_an_ingest_failure_costs_its_conversation_only():
    system = Notebook(fail_ingest=["number is 1"])
    result = evaluate_memory(system, conversations(3), QUIET, host=isolated_host())
    failed = [r for r in result.rows if r.errors]
    assert [r.example_id for r in failed] == ["c1/0", "c1/1", "c1/2"]
    error = failed[0].errors[0]
    assert error.stage == "system" and error.type == IngestFailed.__name__
    assert error.message == "conversation 'c1': ConnectionError: memory store is down"
    assert all(r.scores["exact_match"] == 1.0 for r in result.rows if not r.errors)
    assert result.summary.errors.by_system == {"notebook": 3}


def test_a_query_failure_costs_its_row_only_and_the_conversation_goes_on():
    system = Notebook(fail_query=["c0 q1"])
    result = evaluate_memory(system, conversations(1), QUIET, host=isolated_host())
    assert [bool(r.errors) for r in result.rows] == [False, True, False]
    assert result.rows[1].errors[0].type == QueryFailed.__name__
    assert result.rows[1].errors[0].message == "ValueError: lost the thread"


def test_a_bad_answer_type_is_an_error_on_the_row():
    class Mute(Notebook):
        def query(self, question):
            return 42

    result = evaluate_memory(Mute(), conversations(1, questions=1), QUIET, host=isolated_host())
    assert "expected a str or a mapping with a 'response' str" in result.rows[0].errors[0].message


def test_a_class_is_a_factory_with_one_instance_per_conversation():
    made = []

    class Fresh(Notebook):
        def __init__(self):
            super().__init__()
            made.append(self)

    result = evaluate_memory(
        Fresh,
        conversations(3),
        RunConfig(limits=Limits(max_concurrency=2), output=Output(progress=False)),
        host=isolated_host(),
    )
    assert len(made) == 3 and all(len([e for e in m.events if e[0] == "ingest"]) == 1 for m in made)
    assert all(r.scores["exact_match"] == 1.0 for r in result.rows)


def test_malformed_input_becomes_input_errors_and_max_examples_cuts_rows():
    convs = conversations(2) + [{"id": "broken", "turns": "nope", "qa_pairs": []}]
    result = evaluate_memory(Notebook(), convs, QUIET, host=isolated_host())
    assert (
        result.rows[-1].errors[0].stage == "input"
        and "'turns' must be a list" in result.rows[-1].errors[0].message
    )
    system = Notebook()
    cut = evaluate_memory(
        system,
        conversations(3),
        RunConfig(scope=Scope(max_examples=4), output=Output(progress=False)),
        host=isolated_host(),
    )
    assert [r.example_id for r in cut.rows] == ["c0/0", "c0/1", "c0/2", "c1/0"]
    assert [e for e in system.events if e[0] == "ingest"] == [
        ("ingest", "my number is 0"),
        ("ingest", "my number is 1"),
    ]


def test_cached_conversations_are_not_run_again(tmp_path):
    first = Notebook()
    evaluate_memory(
        first,
        conversations(3),
        RunConfig(output=Output(cache_dir=tmp_path, progress=False)),
        host=isolated_host(),
    )
    again = Notebook()
    result = evaluate_memory(
        again,
        conversations(3),
        RunConfig(output=Output(cache_dir=tmp_path, progress=False)),
        host=isolated_host(),
    )
    assert again.events == []
    assert [r.response for r in result.rows] == [str(c) for c in range(3) for _ in range(3)]
    assert result.rows[0].meta["ingest_latency"] >= 0 and result.rows[0].meta["conversation_id"] == "c0"
    changed = conversations(3)
    changed[2]["turns"][0]["text"] = "my number is 9"
    third = Notebook()
    result = evaluate_memory(
        third, changed, RunConfig(output=Output(cache_dir=tmp_path, progress=False)), host=isolated_host()
    )
    assert [e[1] for e in third.events if e[0] == "ingest"] == ["my number is 9"]
    assert result.rows[-1].response == "9"


def test_a_cache_that_cannot_be_written_costs_no_answer_and_is_reported(tmp_path, monkeypatch):
    from context_bench.cache import RunCache

    stores, first = [], []

    def full_disk_in_the_answer_pass(self, *args):  # the scoring pass's own cache keeps working
        first.append(first[0] if first else self)
        if self is first[0]:
            stores.append(args)
            self.failure = "caching stopped: cannot write: No space left on device"

    monkeypatch.setattr(RunCache, "store", full_disk_in_the_answer_pass)
    result = evaluate_memory(
        Notebook(),
        conversations(2),
        RunConfig(output=Output(cache_dir=tmp_path, progress=False)),
        host=isolated_host(),
    )
    assert len(stores) >= 6  # the answer pass tried every answer
    assert [r.response for r in result.rows] == [str(c) for c in range(2) for _ in range(3)]
    assert result.summary.warnings.count("caching stopped: cannot write: No space left on device") == 1


def test_an_interrupted_run_resumes_without_loss(tmp_path):
    interrupted = Notebook(stop_after=4)
    with pytest.raises(KeyboardInterrupt):
        evaluate_memory(
            interrupted,
            conversations(3),
            RunConfig(output=Output(cache_dir=tmp_path, progress=False)),
            host=isolated_host(),
        )
    resumed = Notebook()
    result = evaluate_memory(
        resumed,
        conversations(3),
        RunConfig(output=Output(cache_dir=tmp_path, progress=False)),
        host=isolated_host(),
    )
    asked_before = [e[1] for e in interrupted.events if e[0] == "query"][:4]
    asked_now = [e[1] for e in resumed.events if e[0] == "query"]
    assert asked_before == ["c0 q0", "c0 q1", "c0 q2", "c1 q0"]
    assert asked_now == ["c1 q1", "c1 q2", "c2 q0", "c2 q1", "c2 q2"]  # nothing lost, nothing asked twice
    assert [e[1] for e in resumed.events if e[0] == "ingest"] == ["my number is 1", "my number is 2"]
    assert all(r.scores["exact_match"] == 1.0 and not r.errors for r in result.rows) and len(result.rows) == 9


def test_failed_rows_are_retried_on_the_next_run(tmp_path):
    evaluate_memory(
        Notebook(fail_ingest=["number is 2"]),
        conversations(3),
        RunConfig(output=Output(cache_dir=tmp_path, progress=False)),
        host=isolated_host(),
    )
    retry = Notebook()
    result = evaluate_memory(
        retry,
        conversations(3),
        RunConfig(output=Output(cache_dir=tmp_path, progress=False)),
        host=isolated_host(),
    )
    assert [e[1] for e in retry.events if e[0] == "ingest"] == ["my number is 2"]
    assert not any(r.errors for r in result.rows)


def test_public_fixtures_run_end_to_end_with_the_bm25_baseline(world, fixtures):
    client = OpenAIProxy(world.url, model=world.model)
    data = {
        "locomo": load_locomo(fixtures / "locomo_mini.json"),
        "longmemeval": load_longmemeval(fixtures / "longmemeval_mini.json"),
    }
    result = evaluate_memory(partial(BM25Memory, client, top_k=3), data, QUIET, host=isolated_host())
    assert result.datasets == ["locomo", "longmemeval"]
    by_id = {r.example_id: r for r in result.rows}
    assert by_id["conv-a/0"].response == "Biscuit" and by_id["conv-a/0"].meta["qa_type"] == "single-hop"
    assert by_id["e47becba_abs"].meta["qa_type"] == "abstention"
    groups = {g.dataset: g for g in result.summary.groups}
    assert set(groups["locomo"].breakdown["qa_type"]) == {
        "single-hop",
        "temporal",
        "multi-hop",
        "adversarial",
    }
    assert groups["longmemeval"].metrics["memory"]["conversations"] == 3.0


def test_a_system_without_the_protocol_is_refused():
    with pytest.raises(UsageError, match="has no ingest\\(\\) method"):
        evaluate_memory(
            type("Half", (), {"name": "half", "reset": lambda self: None})(),
            conversations(1),
            QUIET,
            host=isolated_host(),
        )


def test_a_factory_that_fails_up_front_is_a_usage_error_and_later_costs_its_conversation():
    def broken():
        raise OSError("no memory store configured")

    with pytest.raises(UsageError, match="creating the memory system .* OSError: no memory store configured"):
        evaluate_memory(broken, conversations(1), QUIET, host=isolated_host())
    made = []

    def third_fails():
        made.append(1)
        if len(made) == 3:
            raise OSError("out of connections")
        return Notebook()

    result = evaluate_memory(
        third_fails,
        conversations(3),
        RunConfig(limits=Limits(max_concurrency=1), output=Output(progress=False)),
        host=isolated_host(),
    )
    failed = [r.example_id for r in result.rows if r.errors]
    assert len(failed) == 3 and result.rows[6].errors[0].message.endswith("OSError: out of connections")


class Hangs(Notebook):
    """A Notebook whose calls on the texts in ``hang`` do not return until ``release`` is set."""

    def __init__(self, release, hang=(), **options):
        super().__init__(**options)
        self.release = release
        self.hang = tuple(hang)

    def ingest(self, turns):
        turns = list(turns)
        if any(text in turns[0]["text"] for text in self.hang):
            self.release.wait(30)
        super().ingest(turns)

    def query(self, question):
        if question in self.hang:
            self.release.wait(30)
        return super().query(question)


def test_a_query_past_the_deadline_costs_its_conversation_only():
    started = time.monotonic()
    release = threading.Event()
    try:
        result = evaluate_memory(
            partial(Hangs, release, hang=["c1 q0"]),
            conversations(3, questions=2),
            RunConfig(limits=Limits(call_timeout=0.3), output=Output(progress=False)),
            host=isolated_host(),
        )
    finally:
        release.set()
    assert time.monotonic() - started < 10
    errors = {row.example_id: row.errors for row in result.rows}
    assert "DeadlineExceeded: query() did not return within 0.3 s" in errors["c1/0"][0].message
    assert "not asked" in errors["c1/1"][0].message
    assert not any(errors[f"c{c}/{q}"] for c in (0, 2) for q in (0, 1))


def test_an_instance_stuck_past_the_deadline_serves_no_further_conversation():
    release = threading.Event()
    system = Hangs(release, hang=["number is 1"])
    try:
        result = evaluate_memory(
            system,
            conversations(3, questions=1),
            RunConfig(limits=Limits(call_timeout=0.3), output=Output(progress=False)),
            host=isolated_host(),
        )
    finally:
        release.set()
    errors = {row.example_id: row.errors for row in result.rows}
    assert not errors["c0/0"]
    assert "DeadlineExceeded: ingest() did not return within 0.3 s" in errors["c1/0"][0].message
    assert "still busy" in errors["c2/0"][0].message  # not reset under the call still running
    assert ("ingest", "my number is 2") not in system.events
