"""The runner against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import pickle
import threading

import pytest

from context_bench import EvalResult, Limits, Output, RunConfig, Scope, Scores, evaluate
from context_bench._summary import Summarizer
from context_bench.systems import OpenAIProxy
from context_bench.testing import FakeServer, Reply, isolated_host, last_user_message

QUIET = RunConfig(output=Output(progress=False))


class Length:
    name = "length"

    def score(self, original, processed):
        return {"length": float(len(processed["response"]))}


class Explodes:
    name = "explodes"

    def score(self, original, processed):
        if original["id"] == "q2":
            raise ValueError("cannot score q2")
        return {"fine": 1.0}


class SlowAsync:
    """Counts how many of its calls overlap: proof that ascore is awaited concurrently.

    Calls wait until ``meet`` of them are active at once (or 30 s pass), so the peak is reached by
    design rather than by the scheduler's timing; a runner that awaits fewer at a time fails.
    """

    name = "slow_async"

    def __init__(self, meet=0):
        self.active = 0
        self.peak = 0
        self.meet = meet
        self._met: asyncio.Event | None = None

    def score(self, original, processed):  # pragma: no cover - the runner must prefer ascore
        raise AssertionError("sync score called although ascore exists")

    async def ascore(self, original, processed):
        self._met = self._met or asyncio.Event()
        self.active += 1
        self.peak = max(self.peak, self.active)
        if self.active >= self.meet:
            self._met.set()
        await asyncio.wait_for(self._met.wait(), timeout=30)
        self.active -= 1
        return {"slow": 1.0}


def rows(n, **extra):
    return [{"id": f"q{i}", "question": f"question {i}", "answer": f"answer {i}", **extra} for i in range(n)]


def test_concurrency_bound_is_respected_at_the_server():
    # Rows run in the calling thread, one at a time, until one of them waits for most of its time;
    # how many do depends on the CPU the first call costs (building the client's SSL context takes
    # 35 to 120 ms, against a 50 ms reply).  So the server answers each request after 50 ms until
    # two overlap (the rows fanned out), and holds every one from then on until four are in flight.
    def reply(body: dict) -> Reply:
        return Reply(text="ok", hold_until=4) if server.max_in_flight > 1 else Reply(text="ok", delay=0.05)

    server = FakeServer(reply)
    with server:
        result = evaluate(
            OpenAIProxy(server.url, model="m"),
            rows(24),
            RunConfig(
                scope=Scope(evaluators=[Length()]),
                limits=Limits(max_concurrency=4),
                output=Output(progress=False),
            ),
            host=isolated_host(),
        )
    assert server.expired_holds == 0 and server.max_in_flight == 4
    assert len(server.requests) == 24
    assert [r.example_id for r in result.rows] == [f"q{i}" for i in range(24)]
    assert all(r.scores == {"length": 2.0} for r in result.rows)


def test_failing_rows_are_recorded_and_the_run_goes_on():
    def reply(body):
        text = last_user_message(body)
        if text.endswith(" 3") or text.endswith(" 5"):
            return Reply(status=400, body={"error": {"message": "bad prompt"}})
        return "answer " + text.rsplit(" ", 1)[1]

    with FakeServer(reply) as server:
        result = evaluate(OpenAIProxy(server.url, max_retries=0), rows(8), QUIET, host=isolated_host())
    failed = [r for r in result.rows if r.errors]
    assert [r.example_id for r in failed] == ["q3", "q5"]
    assert failed[0].errors[0].stage == "system" and "HTTP 400" in failed[0].errors[0].message
    ok = [r for r in result.rows if not r.errors]
    assert len(ok) == 6 and all(r.scores["exact_match"] == 1.0 for r in ok)
    assert result.summary.errors.by_system == {"proxy": 2}
    assert ok[0].input_tokens == 10.0 and ok[0].output_tokens == 2.0


def test_a_key_echoed_in_a_200_error_body_never_reaches_a_row_or_a_report():
    key = "sk-SECRET-0123456789"

    def reply(body):
        return Reply(status=200, body={"error": {"message": "invalid key", "auth": f"Bearer {key}"}})

    with FakeServer(reply) as server:
        result = evaluate(
            OpenAIProxy(server.url, api_key=key, max_retries=0), rows(2), QUIET, host=isolated_host()
        )
        assert server.seen[0].headers["authorization"] == f"Bearer {key}"
    error = result.rows[0].errors[0]
    assert error.stage == "system" and "error in a 200 response" in error.message and "***" in error.message
    assert key not in result.to_json()


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ({"choices": ["x"]}, "first choice has no message"),
        ({"choices": [{"message": "x"}]}, "first choice has no message"),
        ({"choices": []}, "no choices"),
    ],
)
def test_a_malformed_200_reply_is_a_row_error_naming_the_url(payload, reason):
    with FakeServer(lambda body: Reply(status=200, body=payload)) as server:
        result = evaluate(OpenAIProxy(server.url, max_retries=0), rows(1), QUIET, host=isolated_host())
        url = server.url
    [error] = result.rows[0].errors
    assert error.type == "EndpointError" and url in error.message and reason in error.message


def test_unreadable_token_counts_keep_the_answer():
    payload = {"choices": [{"message": {"content": "answer 0"}}], "usage": {"prompt_tokens": "abc"}}
    with FakeServer(lambda body: Reply(status=200, body=payload)) as server:
        result = evaluate(OpenAIProxy(server.url), rows(1), QUIET, host=isolated_host())
    [row] = result.rows
    assert not row.errors and row.response == "answer 0" and row.scores["exact_match"] == 1.0
    assert row.input_tokens is None and row.output_tokens is None


def test_retries_honour_retry_after_then_succeed():
    attempts = []

    def reply(body):
        attempts.append(1)
        if len(attempts) == 1:
            return Reply(status=429, headers={"Retry-After": "0"})
        return "fine"

    with FakeServer(reply) as server:
        result = evaluate(
            OpenAIProxy(server.url, max_retries=2),
            rows(1),
            RunConfig(scope=Scope(evaluators=[Length()]), output=Output(progress=False)),
            host=isolated_host(),
        )
    assert len(attempts) == 2 and result.rows[0].scores == {"length": 4.0}


def test_evaluator_errors_are_isolated_per_evaluator():
    result = evaluate(
        None,
        [{**r, "response": "x"} for r in rows(3)],
        RunConfig(scope=Scope(evaluators=[Explodes(), Length()]), output=Output(progress=False)),
        host=isolated_host(),
    )
    row = result.rows[1]
    assert row.example_id == "q1" and row.scores == {"fine": 1.0, "length": 1.0}
    broken = result.rows[2]
    assert broken.scores == {"length": 1.0}
    assert broken.errors[0].source == "explodes" and "cannot score q2" in broken.errors[0].message
    assert result.summary.errors.by_evaluator == {"explodes": 1}


def test_async_evaluators_are_awaited_concurrently():
    slow = SlowAsync(meet=10)
    result = evaluate(
        None,
        [{**r, "response": "x"} for r in rows(20)],
        RunConfig(
            scope=Scope(evaluators=[slow, Length()]),
            limits=Limits(max_concurrency=10),
            output=Output(progress=False),
        ),
        host=isolated_host(),
    )
    assert slow.peak == 10
    assert all(r.scores == {"slow": 1.0, "length": 1.0} for r in result.rows)


def test_soft_failures_are_counted_and_warned():
    class FlakyJudge:
        name = "flaky_judge"

        def score(self, original, processed):
            if original["id"] in ("q0", "q1"):
                return Scores({"verdict": 0.0}, failure="call_error: HTTP 503")
            return Scores({"verdict": 1.0}, usage={"input_tokens": 5, "output_tokens": 1})

    result = evaluate(
        None,
        [{**r, "response": "x"} for r in rows(10)],
        RunConfig(scope=Scope(evaluators=[FlakyJudge()]), output=Output(progress=False)),
        host=isolated_host(),
    )
    failures = result.summary.failures["flaky_judge"]
    assert failures.count == 2 and failures.kinds == {"call_error": 2} and failures.rate == 0.2
    assert any("flaky_judge failed on 2 of 10 rows" in w for w in result.summary.warnings)
    assert result.summary.usage["flaky_judge"] == {"input_tokens": 40.0, "output_tokens": 8.0}
    assert result.rows[0].failures == {"flaky_judge": "call_error: HTTP 503"}


def test_the_soft_failure_rate_is_over_the_rows_an_evaluator_scored_not_those_it_raised_on():
    """Of 10 rows the judge raised on 6 and could not answer 1: 1 soft failure of the 4 rows it
    scored is 25%, over a 0.2 limit (of all 10 rows it would read 10%, under it)."""

    class HalfBroken:
        name = "half_broken"

        def score(self, original, processed):
            number = int(original["id"][1:])
            if number < 6:
                raise ValueError("no reference")
            if number == 6:
                return Scores({"verdict": 0.0}, failure="call_error: HTTP 503")
            return {"verdict": 1.0}

    result = evaluate(
        None,
        [{**r, "response": "x"} for r in rows(10)],
        RunConfig(scope=Scope(evaluators=[HalfBroken()]), output=Output(progress=False)),
        host=isolated_host(),
    )
    summary = Summarizer(failure_rate=0.2)(result.rows)
    failures = summary.failures["half_broken"]
    assert (failures.count, failures.rows, failures.rate) == (1, 4, 0.25)
    assert summary.warnings[0] == (
        "half_broken failed on 1 of 4 rows (25.0%: call_error 1); their scores are fallbacks, not verdicts"
    )
    assert summary.errors.by_evaluator == {"half_broken": 6}
    at_the_limit = Summarizer(failure_rate=0.25)(result.rows).warnings
    assert not any(warning.startswith("half_broken failed") for warning in at_the_limit)


def test_malformed_rows_are_named_and_do_not_stop_the_run():
    data = [
        {"question": "no id", "response": "x"},
        "not a dict",
        {"id": "ok", "answer": "x", "response": "x"},
        {"id": "ok", "answer": "y", "response": "y"},
    ]
    result = evaluate(
        None,
        data,
        RunConfig(scope=Scope(dataset_name="mine"), output=Output(progress=False)),
        host=isolated_host(),
    )
    messages = [str(r.errors[0]) if r.errors else "" for r in result.rows]
    assert "row 0 of data set 'mine' has no 'id' field" in messages[0]
    assert "row 1 of data set 'mine' is a str" in messages[1]
    assert messages[2] == "" and result.rows[2].scores["f1"] == 1.0
    assert "id 'ok' appears twice" in messages[3]


def test_mixed_run_wires_each_dataset_to_its_own_evaluators():
    data = [
        {"id": "a", "dataset": "squad", "answer": "Paris", "response": "Paris"},
        {"id": "b", "dataset": "mmlu", "correct_letter": "B", "response": "The answer is B."},
        {"id": "c", "dataset": "contract-nli", "answer": "Entailment", "response": "Yes."},
    ]
    result = evaluate(None, data, QUIET, host=isolated_host())
    by_id = {r.example_id: r.scores for r in result.rows}
    assert set(by_id["a"]) == {"f1", "exact_match", "recall", "contains"}
    assert set(by_id["b"]) == {"mc_accuracy"}
    assert set(by_id["c"]) == {"nli_accuracy", "f1", "exact_match", "recall", "contains"}
    fields = {g.dataset: set(g.scores) for g in result.summary.groups}
    assert fields["mmlu"] == {"mc_accuracy"}


def test_add_remove_replace_the_auto_wired_set():
    data = [{"id": "a", "dataset": "squad", "answer": "Paris", "response": "Paris"}]
    host = isolated_host()
    added = evaluate(
        None,
        data,
        RunConfig(scope=Scope(add_evaluators=[Length()]), output=Output(progress=False)),
        host=host,
    )
    assert "length" in added.rows[0].scores and "f1" in added.rows[0].scores
    removed = evaluate(
        None,
        data,
        RunConfig(scope=Scope(exclude_evaluators=["AnswerQuality"]), output=Output(progress=False)),
        host=host,
    )
    assert removed.rows[0].scores == {}
    nli = [{"id": "a", "dataset": "squad", "answer": "Entailment", "response": "Yes."}]
    replaced = evaluate(
        None,
        nli,
        RunConfig(scope=Scope(evaluators=["NLILabelMatch"]), output=Output(progress=False)),
        host=host,
    )
    assert set(replaced.rows[0].scores) == {"nli_accuracy"}


def test_missing_plugin_gives_a_one_line_hint_not_a_crash():
    data = [{"id": "g1", "dataset": "gsm8k", "answer": "18", "response": "#### 18"}]
    result = evaluate(None, data, QUIET, host=isolated_host())
    assert "install cbench-math to score gsm8k with MathEquivalence" in result.summary.warnings
    assert "f1" in result.rows[0].scores and "math_equiv" not in result.rows[0].scores


def test_result_filter_and_json():
    data = {
        "one": [{"id": "a", "answer": "x", "response": "x"}],
        "two": [{"id": "b", "answer": "x", "response": "y"}],
    }
    result = evaluate(None, data, QUIET, host=isolated_host())
    only = result.filter(dataset="two")
    assert [r.example_id for r in only.rows] == ["b"]
    assert [g.dataset for g in only.summary.groups] == ["two"]
    decoded = json.loads(result.to_json())
    assert decoded["rows"][0]["scores"]["f1"] == 1.0 and "fresh" not in decoded["rows"][0]


def test_merged_results_renumber_rows_and_keep_every_run_s_notices():
    host = isolated_host()
    gsm8k = [{"id": g, "dataset": "gsm8k", "answer": "1", "response": "1"} for g in ("g1", "g2")]
    runs = [
        evaluate(None, gsm8k, QUIET, host=host),
        evaluate(None, [{"id": "a", "answer": "x", "response": "x"}], QUIET, host=host),
        evaluate(None, gsm8k, QUIET, host=host),
    ]
    assert EvalResult.merge(runs[1:2]) is runs[1]
    merged = EvalResult.merge(runs)
    assert [(r.dataset, r.index) for r in merged.rows] == [
        ("gsm8k", 0),
        ("gsm8k", 1),
        ("dataset", 2),
        ("gsm8k", 3),
        ("gsm8k", 4),
    ]
    assert merged.summary.warnings == ["install cbench-math to score gsm8k with MathEquivalence"]
    assert [g.rows for g in merged.summary.groups] == [4, 1]
    assert all(merged.summarize is not run.summarize for run in runs)  # a copy: no run changes
    assert merged.filter(dataset="dataset").summary.warnings == merged.summary.warnings


def test_systems_and_tasks_are_picklable_for_other_executors():
    proxy = OpenAIProxy("http://127.0.0.1:1", model="m", api_key="sk-secret")
    proxy._http()
    clone = pickle.loads(pickle.dumps(proxy))
    assert clone.model == "m" and clone._clients == {} and isinstance(clone._lock, type(threading.Lock()))


def test_cache_resumes_and_keys_on_the_model(tmp_path):
    with FakeServer(lambda body: "answer " + last_user_message(body).rsplit(" ", 1)[1]) as server:

        def run(model, scope=None):
            proxy = OpenAIProxy(server.url, model=model)
            config = RunConfig(scope=scope or Scope(), output=Output(cache_dir=tmp_path, progress=False))
            return evaluate(proxy, rows(5), config, host=isolated_host())

        first = run("m1")
        assert len(server.requests) == 5
        again = run("m1")
        assert len(server.requests) == 5
        assert [r.scores for r in again.rows] == [r.scores for r in first.rows]
        run("m2")
        assert len(server.requests) == 10
        added = run("m1", Scope(add_evaluators=[Length()]))
        assert len(server.requests) == 10
        assert added.rows[0].scores["length"] == len("answer 0")


def test_api_key_never_reaches_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-123")
    with FakeServer(lambda body: "ok") as server:
        evaluate(
            OpenAIProxy(server.url, api_key="sk-very-secret-456"),
            rows(2),
            RunConfig(output=Output(cache_dir=tmp_path, progress=False)),
            host=isolated_host(),
        )
    assert server.seen[0].headers["authorization"] == "Bearer sk-very-secret-456"
    for path in tmp_path.rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert "sk-very-secret" not in text
        assert "sk-very-secret" not in str(path)


@pytest.mark.parametrize(
    "bad", [{"choices": []}, {"choices": [{"message": {"content": None}}]}, {"error": "x"}]
)
def test_bad_200_replies_are_row_errors(bad):
    with FakeServer(lambda body: Reply(body=bad)) as server:
        result = evaluate(OpenAIProxy(server.url), rows(1), QUIET, host=isolated_host())
    assert result.rows[0].errors and result.rows[0].errors[0].stage == "system"


class Fraction:
    """Scores the fraction of a row's items that are true, weighted by how many items it has."""

    name = "fraction"

    def score(self, original, processed):
        items = original["items"]
        return Scores({"share": sum(items) / len(items)}, weights={"share": len(items)})


def test_weighted_fields_average_over_items_not_rows(tmp_path):
    data = [{"id": "a", "items": [1, 1, 1], "response": ""}, {"id": "b", "items": [0], "response": ""}]
    first = evaluate(
        None,
        data,
        RunConfig(scope=Scope(evaluators=[Fraction()]), output=Output(cache_dir=tmp_path, progress=False)),
        host=isolated_host(),
    )
    assert first.summary.groups[0].scores["share"] == 0.75
    cached = evaluate(
        None,
        data,
        RunConfig(scope=Scope(evaluators=[Fraction()]), output=Output(cache_dir=tmp_path, progress=False)),
        host=isolated_host(),
    )
    assert cached.summary.groups[0].scores["share"] == 0.75
    assert cached.rows[0].weights == {"share": 3.0}


def test_an_error_body_echoing_the_key_is_redacted():
    with FakeServer(lambda body: Reply(status=401, body={"error": "bad key sk-echoed-secret"})) as server:
        result = evaluate(
            OpenAIProxy(server.url, api_key="sk-echoed-secret", max_retries=0),
            rows(1),
            QUIET,
            host=isolated_host(),
        )
    message = result.rows[0].errors[0].message
    assert "HTTP 401" in message and "sk-echoed-secret" not in message and "***" in message


def test_rows_no_evaluator_matches_are_said_once():
    rows = [{"id": str(i), "question": "q", "response": "r"} for i in range(3)]
    result = evaluate(None, {"plain": rows}, QUIET, host=isolated_host())
    assert [w for w in result.summary.warnings if "no evaluator matches" in w] == [
        "no evaluator matches 3 row(s) of data set 'plain' (the first: id '0'): they get no scores; "
        "name one with --evaluator"
    ]


def test_rows_missing_the_field_their_evaluator_needs_get_a_visible_hint():
    rows = [
        {"id": "a", "answer": "x", "response": "x"},
        {"id": "b", "response": "x"},
        {"id": "c", "response": "y"},
    ]
    result = evaluate(
        None,
        rows,
        RunConfig(scope=Scope(evaluators=["AnswerQuality"]), output=Output(progress=False)),
        host=isolated_host(),
    )
    assert [r.scores.get("f1") for r in result.rows] == [1.0, None, None]
    assert (
        "answer_quality gave no score to 2 row(s) of data set 'dataset': they lack a field it needs "
        "(such as 'answer')" in result.summary.warnings
    )


class _Vandal:
    """Assigns and appends to what it is given: no other evaluator, row or cache may see it."""

    name = "vandal"

    def score(self, original, processed):
        processed["response"] = "something else entirely"
        original["answer"] = "nothing"
        original["aliases"].append("nothing")
        processed["parts"]["a"] = "changed"
        return {"vandal": 1.0}


class _System:
    name = "fixed"

    def process(self, example):
        return {"response": "Paris", "parts": {"a": "original"}}


def test_an_evaluator_that_mutates_its_arguments_cannot_change_another_s_score_or_the_cache(tmp_path):
    rows = [{"id": "a", "answer": "Paris", "aliases": ["paris"]}]
    host = isolated_host()
    run = evaluate(
        _System(),
        rows,
        RunConfig(
            scope=Scope(evaluators=[_Vandal(), "AnswerQuality"]),
            output=Output(cache_dir=tmp_path, progress=False),
        ),
        host=host,
    )
    assert run.rows[0].scores["exact_match"] == 1.0 and run.rows[0].response == "Paris"
    assert rows == [{"id": "a", "answer": "Paris", "aliases": ["paris"]}]
    [cache_file] = tmp_path.rglob("*.jsonl")
    assert json.loads(cache_file.read_text())["output"]["response"] == "Paris"
    assert json.loads(cache_file.read_text())["output"]["parts"] == {"a": "original"}
    again = evaluate(
        _System(),
        rows,
        RunConfig(
            scope=Scope(evaluators=["AnswerQuality"]), output=Output(cache_dir=tmp_path, progress=False)
        ),
        host=host,
    )
    assert again.rows[0].scores["exact_match"] == 1.0
