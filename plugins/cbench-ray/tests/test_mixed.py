"""The command line on Ray: a mixed run (QA, multiple choice, NLI, summaries, math, code, IFEval, and
a judge on a loopback server) reports exactly what the local executor reports; a run resumes from
a cache written on Ray; the code sandbox holds on a Ray worker as it does locally."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from cbench_judge.testing import memory_verdict
from cbench_ray.executor import RayExecutor
from context_bench import Output, RunConfig, UsageError, evaluate
from context_bench.cli._app import main
from context_bench.cli._commands import sample_path
from context_bench.testing import FakeServer, last_user_message


def rating(body) -> str:
    """A judge that rates by the length of the answer it is shown (deterministic, and not constant),
    and gives the memory judges a verdict."""
    if "RATING" not in last_user_message(body):
        return memory_verdict(body)
    answer = last_user_message(body).rsplit("Answer:", 1)[-1]
    return f"Fair.\nRATING: {1 + len(''.join(answer.split())) % 5}"


@pytest.fixture(scope="module")
def judge():
    with FakeServer(rating) as server:
        yield server


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    """The bundled sample (every kind of row the first-party plugins score), three times over."""
    rows = [json.loads(line) for line in sample_path().read_text().splitlines() if line.strip()]
    path = tmp_path_factory.mktemp("mixed") / "mixed.jsonl"
    with path.open("w") as f:
        for copy in range(3):
            for row in rows:
                f.write(json.dumps({**row, "id": f"{row['id']}-{copy}"}) + "\n")
    return path


def report(capsys, *argv: str) -> dict:
    status = main(["score", *argv, "--output", "json", "--no-progress"])
    out = json.loads(capsys.readouterr().out)
    assert status in (0, 3, 4), status
    return {"summary": out["summary"], "rows": out["rows"]}


def test_a_mixed_run_on_ray_reports_what_the_local_run_reports(ray_session, capsys, judge, mixed):
    flags = [str(mixed), "--judge-url", judge.url]
    local = report(capsys, *flags)
    asked = judge.count
    on_ray = report(capsys, *flags, "--executor", "ray", "--ray-batch-size", "4")
    assert judge.count == 2 * asked  # the judge was asked again, from the workers
    assert {s for row in local["rows"] for s in row["scores"]} >= {
        "f1", "mc_accuracy", "nli_accuracy", "rouge_l_f1", "math_equiv", "pass_at_1", "ifeval_strict",
        "judge_score",
    }  # fmt: skip
    assert on_ray == local


def test_a_run_on_ray_resumes_locally_from_its_cache(ray_session, capsys, judge, mixed, tmp_path):
    flags = [str(mixed), "--judge-url", judge.url, "--cache-dir", str(tmp_path)]
    on_ray = report(capsys, *flags, "--executor", "ray")
    asked = judge.count
    resumed = report(capsys, *flags)
    assert judge.count == asked  # every row came from the cache the Ray run wrote
    assert resumed == on_ray


def untimed(value):
    """A report without what a clock measured (latencies differ between any two runs)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if "latency" not in k}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


CONVERSATION = {
    "sample_id": "conv-1",
    "conversation": {
        "speaker_a": "Alice",
        "speaker_b": "Bob",
        "session_1_date_time": "8 May 2023",
        "session_1": [
            {"speaker": "Alice", "dia_id": "D1:1", "text": "I grew up in Paris, you know."},
            {"speaker": "Bob", "dia_id": "D1:2", "text": "Nice. What about your puppy?"},
            {"speaker": "Alice", "dia_id": "D1:3", "text": "I adopted my puppy Biscuit last week."},
        ],
    },
    "qa": [
        {"question": "Where did Alice grow up?", "answer": "Paris", "evidence": ["D1:1"], "category": 4},
        {"question": "What is the puppy's name?", "answer": "Biscuit", "evidence": ["D1:3"], "category": 4},
        {"question": "What is Bob's cat called?", "answer": "unknown", "evidence": [], "category": 5},
    ],
}


def relay(body) -> str:
    """The memory system's model (it says Paris whatever it is asked) and the memory judges."""
    prompt = last_user_message(body)
    if "Gold answer:" in prompt or "Conversation:\n" in prompt:
        return memory_verdict(body)
    return "Alice grew up in Paris; the cat is Whiskers."


def test_the_memory_command_scores_on_ray_as_it_does_locally(ray_session, capsys, tmp_path):
    data = tmp_path / "conversations.json"
    data.write_text(json.dumps([CONVERSATION]))
    with FakeServer(relay) as server:
        argv = ["memory", "--dataset", str(data), "--system", "full-context", "--relay", server.url]
        reports = []
        for extra in ([], ["--executor", "ray"]):
            assert main([*argv, *extra, "--output", "json", "--no-progress"]) == 0
            reports.append(json.loads(capsys.readouterr().out))
    local, on_ray = reports
    assert untimed(on_ray["summary"]) == untimed(local["summary"])
    [group] = local["summary"]["groups"]
    assert group["rows"] == 3 and {"memory_judge", "false_memory"} <= set(group["scores"])


def test_an_unknown_executor_is_one_line(capsys):
    assert main(["score", "--executor", "spark", "--no-progress"]) == 2
    assert "no executor named 'spark'; installed: local, ray" in capsys.readouterr().err


@pytest.mark.slow
def test_the_code_sandbox_contains_an_escape_on_a_ray_worker(ray_session, tmp_path):
    tmp_path.chmod(0o777)  # only the sandbox, not file permissions, may stop the write
    targets = [str(tmp_path / "escaped.txt"), f"/tmp/cbench-ray-escape-{os.getpid()}.txt"]
    attack = textwrap.dedent(
        f"""
        import os, signal, subprocess
        def attack():
            escaped = []
            for path in {targets!r}:
                try:
                    with open(path, "w") as f:
                        f.write("escaped")
                    escaped.append(path)
                except OSError:
                    pass
            try:
                subprocess.run(["/bin/sh", "-c", "echo spawned"], check=True)
                escaped.append("shell")
            except Exception:
                pass
            for pid in (os.getppid(), 1):  # the sandbox server, then the Ray worker's node
                try:
                    os.kill(pid, signal.SIGKILL)
                    escaped.append(pid)
                except OSError:
                    pass
            return escaped
        """
    )
    row = {
        "dataset": "humaneval",
        "id": "escape",
        "context": "",
        "test": "def check(candidate):\n    assert candidate() == []\n",
        "entry_point": "attack",
        "response": attack,
    }
    plain = {**row, "id": "add", "entry_point": "add", "response": "def add(a, b):\n    return a + b\n"}
    plain["test"] = "def check(candidate):\n    assert candidate(2, 3) == 5\n"
    result = evaluate(
        None,
        [row, plain, {**plain, "id": "add-2"}],
        RunConfig(output=Output(progress=False)),
        executor=RayExecutor(),
    )
    by_id = {r.example_id: r for r in result.rows}
    assert not any(r.errors for r in result.rows), [r.errors for r in result.rows]
    assert by_id["escape"].scores["pass_at_1"] == 1.0  # it ran, and every attempt was refused
    assert by_id["add"].scores["pass_at_1"] == by_id["add-2"].scores["pass_at_1"] == 1.0
    assert not any(os.path.exists(path) for path in targets)


def test_the_executor_refuses_nonsense():
    with pytest.raises(ValueError):
        RayExecutor(0)
    with pytest.raises(ValueError):
        RayExecutor(ray_batch_size=0)
    assert issubclass(UsageError, Exception)
