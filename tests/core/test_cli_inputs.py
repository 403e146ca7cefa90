"""What ``run`` and ``score`` read: data set names, -n per data set, ids, files for other commands."""

from __future__ import annotations

import json

import pytest

from context_bench.cli import _inputs as cli_inputs
from context_bench.cli import main
from context_bench.runner import ID_KEYS
from context_bench.testing import FakeServer, last_user_message


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write_rows(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


@pytest.fixture
def server():
    with FakeServer(lambda body: last_user_message(body).split()[-1]) as running:
        yield running


def _math_rows():
    return [{"id": str(i), "question": f"what is {i}", "answer": str(i)} for i in range(3)]


def test_a_split_suffix_still_names_the_data_set(capsys, tmp_path, server):
    """Issue 12 #8: gsm8k_test.jsonl gets MathEquivalence, and one line says why."""
    data = write_rows(tmp_path / "gsm8k_test.jsonl", _math_rows())
    code, out, err = run_cli(
        capsys, "run", "--proxy", server.url, "--dataset", data, "--output", "json", "--no-progress"
    )
    assert code == 0
    assert "math_equiv" in json.loads(out)["rows"][0]["scores"]
    wiring = [line for line in err.splitlines() if line.startswith("context-bench: evaluators:")]
    assert len(wiring) == 1 and "gsm8k_test: MathEquivalence (name gsm8k)" in wiring[0], err
    assert "AnswerQuality (fields answer)" in wiring[0]


@pytest.mark.parametrize(
    "stem, wired",
    [("mmlu-dev", "MultipleChoiceAccuracy (name mmlu)"), ("my_test", "my_test: AnswerQuality (fields")],
)
def test_only_a_known_name_loses_its_split(capsys, tmp_path, stem, wired):
    rows = [{"id": "1", "answer": "A", "correct_letter": "A", "response": "A"}]
    code, _, err = run_cli(capsys, "score", write_rows(tmp_path / f"{stem}.jsonl", rows), "--no-progress")
    assert code == 0 and wired in err, err


def test_run_accepts_dataset_name(capsys, tmp_path, server):
    data = write_rows(tmp_path / "numbers.jsonl", _math_rows())
    code, out, err = run_cli(
        capsys,
        "run",
        "--proxy",
        server.url,
        "--dataset",
        data,
        "--dataset-name",
        "gsm8k",
        "--output",
        "json",
        "--no-progress",
    )
    rows = json.loads(out)["rows"]
    assert code == 0 and {row["dataset"] for row in rows} == {"gsm8k"} and "math_equiv" in rows[0]["scores"]


@pytest.mark.parametrize("command", ["run", "score"])
@pytest.mark.parametrize(
    "record, benchmark",
    [
        ({"sample_id": "c1", "conversation": {"speaker_a": "A"}, "qa": []}, "LoCoMo"),
        ({"question_id": "q1", "question": "?", "answer": "x", "haystack_sessions": []}, "LongMemEval"),
    ],
)
def test_a_memory_benchmark_file_is_refused_with_the_command_to_use(
    capsys, tmp_path, server, command, record, benchmark
):
    """Issue 12 #9: not an error per row, but one line pointing at `context-bench memory`."""
    data = tmp_path / "bench.json"
    data.write_text(json.dumps([record]))
    argv = (
        ["run", "--proxy", server.url, "--dataset", str(data)] if command == "run" else ["score", str(data)]
    )
    code, _, err = run_cli(capsys, *argv, "--no-progress")
    assert code == 2 and f"looks like a {benchmark} file" in err and "context-bench memory" in err
    assert len(err.strip().splitlines()) == 1 and server.requests == []


def test_rows_without_an_id_are_numbered_and_said_once(capsys, tmp_path):
    """Issue 12 #9: instead of every row failing with 'no id'."""
    rows = [{"answer": "Paris", "response": "Paris"}, {"answer": "Rome", "response": "Oslo"}]
    code, out, err = run_cli(
        capsys, "score", write_rows(tmp_path / "qa.jsonl", rows), "--output", "json", "--no-progress"
    )
    result = json.loads(out)
    assert code == 0 and [row["example_id"] for row in result["rows"]] == ["1", "2"]
    assert not any(row["errors"] for row in result["rows"])
    assert err.count("have no 'id'") == 1 and "2 rows of" in err


def test_rows_of_each_system_are_numbered_alike(capsys, tmp_path):
    rows = [
        {"system": "a", "answer": "x", "response": "x"},
        {"system": "b", "answer": "x", "response": "y"},
    ]
    code, out, _ = run_cli(
        capsys, "score", write_rows(tmp_path / "qa.jsonl", rows), "--output", "json", "--no-progress"
    )
    assert code == 0 and [row["example_id"] for row in json.loads(out)["rows"]] == ["1", "1"]


def test_n_counts_rows_per_data_set_across_files(capsys, tmp_path):
    """Issue 13 #10: -n was per file, so two files of one data set gave twice the rows."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    rows = [{"id": str(i), "answer": "x", "response": "x"} for i in range(3)]
    first = write_rows(tmp_path / "a" / "qa.jsonl", rows)
    second = write_rows(tmp_path / "b" / "qa.jsonl", [{**row, "id": f"b{row['id']}"} for row in rows])
    mixed = write_rows(
        tmp_path / "mixed.jsonl", [{**row, "dataset": name} for name in ("p", "q") for row in rows]
    )
    code, out, _ = run_cli(
        capsys, "score", first, second, mixed, "-n", "2", "--output", "json", "--no-progress"
    )
    counts = {}
    for row in json.loads(out)["rows"]:
        counts[row["dataset"]] = counts.get(row["dataset"], 0) + 1
    assert code == 0 and counts == {"qa": 2, "p": 2, "q": 2}


@pytest.mark.parametrize("command", ["run", "score"])
def test_out_naming_an_input_file_is_refused(capsys, tmp_path, server, command):
    """Issue 13 #10: the report would overwrite the data set."""
    data = write_rows(tmp_path / "qa.jsonl", [{"id": "1", "answer": "x", "response": "x"}])
    before = (tmp_path / "qa.jsonl").read_text()
    argv = ["run", "--proxy", server.url, "--dataset", data] if command == "run" else ["score", data]
    code, _, err = run_cli(capsys, *argv, "--out", str(tmp_path / "." / "qa.jsonl"), "--no-progress")
    assert code == 2 and "is an input file" in err and len(err.strip().splitlines()) == 1
    assert (tmp_path / "qa.jsonl").read_text() == before and server.requests == []


def test_a_runs_jsonl_rows_are_read_back_by_id(capsys, tmp_path, server):
    """Issue 12 #14 (the reading side): a run's rows carry example_id, and score takes it as the id;
    a row whose system gave no response is an error again, not a response of None."""
    rows = [
        {
            "system": "s",
            "dataset": "qa",
            "example_id": "7",
            "scores": {},
            "response": "Paris",
            "answer": "Paris",
        },
        {"system": "s", "dataset": "qa", "example_id": "8", "scores": {}, "response": None, "answer": "x"},
        {"system": "s", "dataset": "qa", "id": "9", "example_id": "9", "scores": {}, "response": None},
    ]
    code, out, _ = run_cli(
        capsys, "score", write_rows(tmp_path / "run.jsonl", rows), "--output", "json", "--no-progress"
    )
    scored = {row["example_id"]: row for row in json.loads(out)["rows"]}
    assert code == 4 and scored["7"]["scores"]["exact_match"] == 1.0  # 2 of 3 rows unanswered
    assert scored["8"]["errors"] and not scored["8"]["scores"]
    assert scored["9"]["errors"] and not scored["9"]["scores"]  # with its id written out, too


def test_the_id_keys_are_the_runners():
    assert cli_inputs.ID_KEYS is ID_KEYS


@pytest.mark.parametrize("listed", ["gsm8k_test", "GSM8K"])
def test_a_rule_limited_to_data_sets_takes_either_name_of_a_split_file(listed):
    from context_bench import AutowireRule, EvaluatorSpec, hookimpl
    from context_bench._autowire import Wirer
    from context_bench.testing import isolated_host

    class Echo:
        name = "echo"

        def score(self, original, processed):
            return {"echoed": 1.0}

    class Plugin:
        CBENCH_PLUGIN_API = 1

        @hookimpl
        def cbench_register_evaluators(self, register):
            register(EvaluatorSpec("Echo", Echo))

        @hookimpl
        def cbench_register_autowire(self, register):
            register(AutowireRule("Echo", datasets=("gsm8k",), datasets_option="echo_dataset"))

    host = isolated_host(Plugin())
    wired = Wirer(host, {"echo_dataset": [listed]}).wire("gsm8k_test").by_name
    assert [e.name for e in wired] == ["echo"]
    assert Wirer(host, {"echo_dataset": ["other"]}).wire("gsm8k_test").by_name == []


def test_the_wiring_line_says_what_the_user_added_or_named(capsys, tmp_path):
    data = write_rows(tmp_path / "qa.jsonl", [{"id": "1", "answer": "x", "response": "x"}])
    _, _, err = run_cli(capsys, "score", data, "--evaluator", "NLILabelMatch", "--no-progress")
    assert "qa: NLILabelMatch (--evaluator), AnswerQuality (fields answer)" in err, err
    _, _, err = run_cli(
        capsys, "score", data, "--no-autowire", "--evaluator", "AnswerQuality", "--no-progress"
    )
    assert "evaluators (named with --evaluator): AnswerQuality" in err, err
    _, _, err = run_cli(capsys, "score", data, "--no-evaluator", "AnswerQuality", "--no-progress")
    assert "qa: none" in err, err
