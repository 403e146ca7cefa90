"""A user's own systems, sync and async, and several systems in one run (Python and the CLI)."""

from __future__ import annotations

import asyncio
import json

from context_bench import Limits, Output, RunConfig, Scope, evaluate
from context_bench.cli import main
from context_bench.evaluators._answer import AnswerQuality
from context_bench.systems import OpenAIProxy
from context_bench.testing import FakeServer, isolated_host, last_user_message

ROWS = [
    {"id": "fr", "question": "Capital of France?", "answer": "Paris"},
    {"id": "de", "question": "Capital of Germany?", "answer": "Berlin"},
    {"id": "it", "question": "Capital of Italy?", "answer": "Rome"},
]
CAPITALS = {"France": "Paris", "Germany": "Berlin", "Italy": "Rome"}


def capital(question: str) -> str:
    return next((city for country, city in CAPITALS.items() if country in question), "unknown")


class Lookup:
    """A user's own system: any object with a name and process(example) -> {"response": ...}."""

    name = "lookup"

    def process(self, example):
        return {"response": capital(example["question"]), "input_tokens": 7, "output_tokens": 1}


class AsyncLookup:
    """A user's own async system: the runner awaits aprocess, many rows at once.

    Each call waits until every row is in flight (or 30 s pass): a runner that ran them one by one,
    or called a sync method instead, could not finish with the rows answered.
    """

    name = "async-lookup"

    def __init__(self, rows: int):
        self.rows = rows
        self.active = 0
        self.peak = 0
        self._all_in: asyncio.Event | None = None

    def process(self, example):  # pragma: no cover - the runner must prefer aprocess
        raise AssertionError("sync process called although aprocess exists")

    async def aprocess(self, example):
        self._all_in = self._all_in or asyncio.Event()
        self.active += 1
        self.peak = max(self.peak, self.active)
        if self.active == self.rows:
            self._all_in.set()
        await asyncio.wait_for(self._all_in.wait(), timeout=30)
        self.active -= 1
        return {"response": capital(example["question"])}


class Wrong:
    name = "wrong"

    def process(self, example):
        return {"response": "Madrid"}


def _run(systems, limits=None):
    config = RunConfig(
        scope=Scope(evaluators=[AnswerQuality()]), limits=limits or Limits(), output=Output(progress=False)
    )
    return evaluate(systems, ROWS, config, host=isolated_host())


def test_a_users_own_sync_system():
    result = _run(Lookup())
    assert [(r.system, r.example_id, r.response) for r in result.rows] == [
        ("lookup", "fr", "Paris"),
        ("lookup", "de", "Berlin"),
        ("lookup", "it", "Rome"),
    ]
    assert all(r.scores["exact_match"] == 1.0 and r.input_tokens == 7 for r in result.rows)
    assert result.summary.systems["lookup"].scores["exact_match"] == 1.0


def test_a_users_own_async_system_is_awaited_concurrently():
    system = AsyncLookup(rows=len(ROWS))
    result = _run(system, Limits(max_concurrency=len(ROWS)))
    assert system.peak == len(ROWS)
    assert not any(r.errors for r in result.rows)
    assert [r.response for r in result.rows] == ["Paris", "Berlin", "Rome"]


def test_several_systems_in_one_run_and_filtering_by_system():
    result = _run([Lookup(), Wrong()])
    assert [(r.system, r.example_id) for r in result.rows] == [
        ("lookup", "fr"),
        ("lookup", "de"),
        ("lookup", "it"),
        ("wrong", "fr"),
        ("wrong", "de"),
        ("wrong", "it"),
    ]
    assert result.summary.systems["lookup"].scores["exact_match"] == 1.0
    assert result.summary.systems["wrong"].scores["exact_match"] == 0.0
    wrong = result.filter(system="wrong")
    assert {r.system for r in wrong.rows} == {"wrong"} and len(wrong.rows) == 3
    assert list(wrong.summary.systems) == ["wrong"]
    assert result.filter(system="nobody").rows == []


def test_several_proxies_from_the_command_line(capsys, tmp_path):
    data = tmp_path / "capitals.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    with (
        FakeServer(lambda body: capital(last_user_message(body))) as good,
        FakeServer(lambda body: "Madrid") as bad,
    ):
        code = main(
            ["run", "--max-retries", "0", "--proxy", good.url, "--proxy", bad.url, "--dataset", str(data)]
            + ["--output", "json", "--no-progress"]
        )
        out = capsys.readouterr().out
        named = main(
            ["run", "--proxy", good.url, "--name", "good", "--proxy", bad.url, "--name", "bad"]
            + ["--dataset", str(data), "--output", "json", "--no-progress", "--fail-under", "exact_match=0"]
        )
        named_out, named_err = capsys.readouterr()
    assert code == 0 and named == 0, named_err
    systems = json.loads(out)["summary"]["systems"]
    assert list(systems) == ["proxy1", "proxy2"]  # default names, in the order given
    assert (
        systems["proxy1"]["scores"]["exact_match"] == 1.0
        and systems["proxy2"]["scores"]["exact_match"] == 0.0
    )
    assert list(json.loads(named_out)["summary"]["systems"]) == ["good", "bad"]


def test_openai_proxies_are_systems_of_their_own_name():
    assert OpenAIProxy("http://127.0.0.1:1", name="mine").name == "mine"
