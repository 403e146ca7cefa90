"""The pytest plugin, run in pytest's own ``pytester``: fixtures, the marker and assert_scores."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from context_bench import Output, RunConfig, assert_scores, evaluate
from context_bench.assertions import ScoreAssertionError
from context_bench.testing import FakeServer, last_user_message

pytest_plugins = ["pytester"]

# Each inner session runs in its own process: pytester's in-process runs drop the modules they
# imported afterwards, and an extension module (numpy and friends) cannot be imported twice.

ROWS = [
    {"id": "fr", "question": "capital of France", "answer": "Paris"},
    {"id": "it", "question": "capital of Italy", "answer": "Rome"},
    {"id": "de", "question": "capital of Germany", "answer": "Berlin"},
    {"id": "es", "question": "capital of Spain", "answer": "Madrid"},
]


def _capitals(body):
    question = last_user_message(body)
    return {"France": "Paris", "Italy": "Rome", "Germany": "Berlin"}.get(question.split()[-1], "Lisbon")


@pytest.fixture
def server():
    with FakeServer(_capitals) as running:
        yield running


def test_the_entry_point_registers_the_plugin():
    found = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert found.get("context_bench") == "context_bench._pytest_plugin"


def test_import_context_bench_imports_no_pytest():
    code = (
        "import sys, context_bench; "
        "print('pytest' in sys.modules, 'context_bench._pytest_plugin' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.split() == ["False", "False"]


TEST_FILE = """
import json
import pytest
from context_bench import (
    PLUGIN_API_VERSION, DatasetSpec, OpenAIProxy, Output, RunConfig, Scope, assert_scores, hookimpl
)
from context_bench.testing import isolated_host

ROWS = {rows}

def test_rows(cbench_evaluate, cbench_endpoint):
    result = cbench_evaluate(OpenAIProxy(cbench_endpoint, api_key_env=None), ROWS)
    assert_scores(result, exact_match={bound})

def test_file(cbench_evaluate, cbench_endpoint, tmp_path):
    path = tmp_path / "capitals.jsonl"
    path.write_text("".join(json.dumps(row) + "\\n" for row in ROWS))
    first_three = RunConfig(scope=Scope(max_examples=3), output=Output(progress=False))
    result = cbench_evaluate(OpenAIProxy(cbench_endpoint, api_key_env=None), str(path), first_three)
    assert len(result.rows) == 3 and result.rows[0].dataset == "capitals"
    assert_scores(result, f1=0.99)

@pytest.mark.cbench_endpoint
def test_marked():
    pass

class Capitals:
    CBENCH_PLUGIN_API = PLUGIN_API_VERSION

    @hookimpl
    def cbench_register_datasets(self, register):
        register(DatasetSpec("capitals", f"{{__name__}}:capitals"))

def capitals():
    return ROWS

def test_registered_name(cbench_evaluate, cbench_endpoint):
    system = OpenAIProxy(cbench_endpoint, api_key_env=None)
    first_two = RunConfig(scope=Scope(max_examples=2), output=Output(progress=False))
    result = cbench_evaluate(system, "capitals", first_two, host=isolated_host(Capitals()))
    assert [row.dataset for row in result.rows] == ["capitals", "capitals"]
    assert_scores(result, exact_match=1.0)
"""


def test_fixtures_evaluate_rows_files_and_registered_names(pytester, server):
    pytester.makepyfile(TEST_FILE.format(rows=json.dumps(ROWS), bound=0.7))
    result = pytester.runpytest_subprocess("--cbench-endpoint", server.url, "-p", "no:cacheprovider")
    # 3 of 4 capitals right: 0.75 clears 0.7; the file run takes 3 rows, all right; the marked
    # test runs; the registered data set's first two rows are right
    result.assert_outcomes(passed=4)


def test_a_failing_bound_shows_the_mean_its_interval_and_the_worst_rows(pytester, server):
    pytester.makepyfile(TEST_FILE.format(rows=json.dumps(ROWS), bound=0.9))
    result = pytester.runpytest_subprocess(
        "--cbench-endpoint", server.url, "-p", "no:cacheprovider", "-k", "test_rows"
    )
    result.assert_outcomes(failed=1, deselected=3)
    result.stdout.fnmatch_lines(
        [
            # the report's interval of 3 of 4: Wilson's (a t interval read -0.046 to 1.546)
            "*proxy: exact_match mean 0.750 (95% CI 0.301 to 0.954, n=4) is below 0.9*",
            "*worst rows by exact_match:*",
            "*es (dataset): response=Lisbon  reference=Madrid  scores: contains=0, exact_match=0, f1=0, *",
        ]
    )
    assert "fr (dataset)" not in result.stdout.str()  # a row that meets the bound is not "worst"


@pytest.mark.parametrize(
    "args, env, outcome",
    [
        ([], {}, {"skipped": 2, "passed": 1}),
        ([], {"CBENCH_ENDPOINT": "http://127.0.0.1:9"}, {"passed": 2}),
        (["--cbench-endpoint", "http://127.0.0.1:9"], {}, {"passed": 2}),
    ],
)
def test_without_an_endpoint_the_tests_that_need_one_are_skipped(pytester, monkeypatch, args, env, outcome):
    monkeypatch.delenv("CBENCH_ENDPOINT", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.cbench_endpoint
        def test_marked():
            pass

        def test_fixture(cbench_endpoint):
            assert cbench_endpoint == "http://127.0.0.1:9"

        def test_plain():
            pass
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs", "--strict-markers", *args)
    if "skipped" in outcome:
        result.assert_outcomes(**outcome)
        result.stdout.fnmatch_lines(["*no endpoint configured (--cbench-endpoint URL or $CBENCH_ENDPOINT)*"])
    else:
        result.assert_outcomes(passed=outcome["passed"] + 1)


def test_assert_scores_checks_every_system_and_names_the_failing_ones(server):
    from context_bench import OpenAIProxy

    good = OpenAIProxy(server.url, name="good", api_key_env=None)
    result = evaluate([good], ROWS, RunConfig(output=Output(progress=False)))
    assert_scores(result, exact_match=0.75, f1=0.75)
    with pytest.raises(ScoreAssertionError) as raised:
        assert_scores(result, exact_match=0.8, f1=0.5, worst=1)
    message = str(raised.value)
    assert raised.value.failures == [("good", None, "exact_match", 0.75, 0.8)]
    assert "good: exact_match mean 0.750" in message and "f1" not in message.split("worst")[0]
    assert message.count("response=") == 1
    with pytest.raises(AssertionError, match="rouge_l was not scored on any row"):
        assert_scores(result, rouge_l=0.1)
    with pytest.raises(AssertionError, match="no system 'other'"):
        assert_scores(result, system="other", f1=0.1)
    with pytest.raises(AssertionError, match="did not run data set 'x'"):
        assert_scores(result, dataset="x", f1=0.1)
    assert_scores(result, system="good", dataset="dataset", f1=0.7)


def test_a_row_the_system_could_not_answer_counts_zero_and_shows_its_error():
    class Broken:
        name = "broken"

        def process(self, example):
            if example["id"] == "it":
                raise RuntimeError("endpoint down")
            return {"response": example["answer"]}

    result = evaluate(Broken(), ROWS, RunConfig(output=Output(progress=False)))
    with pytest.raises(ScoreAssertionError) as raised:
        assert_scores(result, f1=0.9)
    message = str(raised.value)
    assert "f1 mean 0.750 (95% CI" in message and "n=4) is below" in message
    assert (
        "it (dataset): error: system broken: RuntimeError: endpoint down  reference=Rome  scores: none\n"
        in (message + "\n")
    )


DOC = Path(__file__).resolve().parents[2] / "docs" / "pytest.md"


def _doc_blocks(lang: str) -> list[str]:
    """The fenced blocks of docs/pytest.md in ``lang`` ("" for none)."""
    pairs = re.findall(r"^```(\w*)\n(.*?)^```$", DOC.read_text(encoding="utf-8"), flags=re.S | re.M)
    return [text for found, text in pairs if found == lang]


def test_the_documented_example_passes_with_an_endpoint_and_skips_without(pytester, monkeypatch):
    monkeypatch.delenv("CBENCH_ENDPOINT", raising=False)
    (example,) = _doc_blocks("python")
    pytester.makepyfile(test_quality=example)
    with FakeServer(lambda body: "Paris" if "France" in last_user_message(body) else "Tokyo") as server:
        pytester.runpytest_subprocess(
            "--cbench-endpoint", server.url, "-p", "no:cacheprovider"
        ).assert_outcomes(passed=1)
        assert {body["model"] for body in server.requests} == {"gpt-4o-mini"}
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(skipped=1)


def test_the_documented_failure_message_is_the_one_shown(pytester, server):
    (message,) = _doc_blocks("")
    pytester.makepyfile(TEST_FILE.format(rows=json.dumps(ROWS), bound=0.9))
    result = pytester.runpytest_subprocess(
        "--cbench-endpoint", server.url, "-p", "no:cacheprovider", "-k", "test_rows"
    )
    result.stdout.fnmatch_lines([f"E *{line}" for line in message.splitlines()], consecutive=True)
