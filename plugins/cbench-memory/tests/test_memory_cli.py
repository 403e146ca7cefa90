"""``context-bench memory`` end to end: the scripted server answers as the baseline's model and the judge."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from context_bench.cli import main
from context_bench.testing import FakeServer, Reply, last_user_message

HAS_JUDGE = importlib.util.find_spec("cbench_judge") is not None


def run_json(capsys, *argv):
    code = main(["memory", *argv, "--output", "json", "--no-progress"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


def test_locomo_file_with_the_relay_as_judge(world, fixtures, capsys):
    code, report, err = run_json(
        capsys,
        "--dataset",
        str(fixtures / "locomo_mini.json"),
        "--system",
        "full-context",
        "--relay",
        world.url,
        "--model",
        world.model,
    )
    assert code == 0, err
    (group,) = report["summary"]["groups"]
    assert group["system"] == "full-context" and group["dataset"] == "locomo" and group["rows"] == 7
    assert set(group["breakdown"]["qa_type"]) == {"single-hop", "temporal", "multi-hop", "adversarial"}
    assert group["scores"]["exact_match"] == pytest.approx(5 / 7)  # "January 2023" vs gold "2023"; "Whiskers"
    assert len(world.memory_requests()) == 7
    if not HAS_JUDGE:
        pytest.skip("cbench-judge is not installed: the judge half of this test needs it")
    # the judge defaulted to the relay: MemoryJudge and FalseMemoryRate only, no 1-5 rating
    assert len(world.judge_requests()) == 14
    adversarial = group["breakdown"]["qa_type"]["adversarial"]["scores"]
    assert (
        adversarial["false_memory"] == 1.0 and adversarial["memory_judge"] == 0.0
    )  # "Whiskers" was invented
    assert group["breakdown"]["qa_type"]["single-hop"]["scores"] == {
        "f1": 1.0,
        "exact_match": 1.0,
        "recall": 1.0,
        "contains": 1.0,
        "memory_judge": 1.0,
        "memory_judge_raw": 1.0,
        "false_memory": 0.0,
    }
    assert "judge_score" not in group["scores"]


def test_named_longmemeval_with_data_file_qa_types_and_table(world, fixtures, capsys):
    with FakeServer(lambda body: "Looks right.\nVERDICT: NO") as judge:
        code = main(
            [
                "memory",
                "--dataset",
                "longmemeval",
                "--data-file",
                str(fixtures / "longmemeval_mini.json"),
                "--system",
                "bm25",
                "--top-k",
                "1",
                "--relay",
                world.url,
                "--model",
                world.model,
                "--qa-types",
                "abstention,temporal-reasoning",
                "--no-progress",
                "--judge-url",
                judge.url,
                "--detail",
            ]
        )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "2 rows, 1 system, 1 data set" in err and "Breakdown by qa_type" in out
    assert "abstention" in out and "temporal-reasoning" in out and "single-session-user" not in out
    assert (
        len(world.memory_requests()) == 2 and world.judge_requests() == []
    )  # --judge-url wins over the relay
    assert len(judge.requests) == (4 if HAS_JUDGE else 0)


def test_user_system_class_and_max_examples(tmp_path, fixtures, monkeypatch, capsys):
    (tmp_path / "keyword_memory.py").write_text(
        textwrap.dedent("""
        class KeywordMemory:
            name = "keywords"

            def reset(self):
                self.turns = []

            def ingest(self, turns):
                self.turns.extend(turns)

            def query(self, question):
                words = set(question.lower().strip("?").split())
                best = max(self.turns, key=lambda t: len(words & set(t["text"].lower().split())))
                return best["text"].split()[-1].strip(".!")
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    code, report, err = run_json(
        capsys,
        "--dataset",
        str(fixtures / "locomo_mini.json"),
        "--system",
        "keyword_memory:KeywordMemory",
        "-n",
        "3",
    )
    assert code == 0, err
    assert "no judge configured" in err
    rows = report["rows"]
    assert [r["example_id"] for r in rows] == ["conv-a/0", "conv-a/1", "conv-a/2"]
    assert rows[0]["system"] == "keywords" and rows[0]["response"] == "week"
    assert rows[2]["response"] == "Tuesdays" and rows[2]["meta"]["qa_type"] == "temporal"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--dataset", "locomo"], "--data-file"),
        (["--dataset", "nowhere/file.json"], "data set file not found"),
        (["--dataset", "{fixtures}/locomo_mini.json", "--system", "bm25"], "give --relay URL"),
        (["--dataset", "{fixtures}/locomo_mini.json", "--system", "nope"], "not one of full-context, bm25"),
        (
            ["--dataset", "{fixtures}/locomo_mini.json", "--system", "no_such_module_x:Thing"],
            "cannot load it",
        ),
        (
            ["--dataset", "{fixtures}/locomo_mini.json", "--qa-types", "single_hop"],
            "single_hop: not in this data set",
        ),
        (
            ["--dataset", "{fixtures}/locomo_mini.json", "--relay", "http://127.0.0.1:9"],
            "--relay http://127.0.0.1:9: endpoint unreachable",
        ),
    ],
)
def test_user_mistakes_are_one_line_and_exit_2(argv, message, fixtures, capsys):
    code = main(["memory", *[a.format(fixtures=fixtures) for a in argv], "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


def test_killed_memory_run_resumes_without_loss(tmp_path):
    convs = [
        {
            "id": f"c{c}",
            "turns": [{"speaker": "Ann", "text": f"my code is {c}"}],
            "qa_pairs": [{"question": f"code {c} question {q}", "answer": f"code {c}"} for q in range(5)],
        }
        for c in range(6)
    ]
    data = tmp_path / "chats.jsonl"
    data.write_text("".join(json.dumps(c) + "\n" for c in convs))
    cache_dir = tmp_path / "cache"

    def reply(body):
        if "VERDICT:" in last_user_message(body):
            return "VERDICT: YES"  # the judges, at the relay (and its model) by default
        question = last_user_message(body).rpartition("Question: ")[2]
        return Reply(text="code " + question.split()[1], delay=0.05)

    def answered():
        return sum(len(p.read_text().splitlines()) for p in cache_dir.rglob("*.jsonl"))

    command = [
        sys.executable,
        "-m",
        "context_bench",
        "memory",
        "--dataset",
        str(data),
        "--system",
        "full-context",
        "--relay",
        "",
        "--cache-dir",
        str(cache_dir),
        "--max-concurrency",
        "2",
        "--output",
        "json",
        "--no-progress",
    ]
    with FakeServer(reply) as server:
        command[command.index("--relay") + 1] = server.url
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
        )
        deadline = time.monotonic() + 60
        while answered() < 8 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate(timeout=60)
        finished = answered()
        assert 8 <= finished < 30, "the run was not interrupted mid-way"
        before = len(server.requests)
        resumed = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
        fresh = server.requests[before:]
    result = json.loads(resumed.stdout)
    assert len(result["rows"]) == 30 and not any(r["errors"] for r in result["rows"])
    assert all(r["scores"]["exact_match"] == 1.0 for r in result["rows"])
    asked = [r for r in fresh if "VERDICT:" not in last_user_message(r)]
    assert len(asked) == 30 - finished  # no answer asked twice


def _docs_example() -> tuple[str, list[str]]:
    """docs/memory.md's custom system (``my_memory.py``) and the command line that runs it, as written."""
    docs = (Path(__file__).parents[3] / "docs" / "memory.md").read_text()
    module = re.search(r"```python\n(# my_memory\.py\n.*?)```", docs, re.S)[1]
    console = re.search(r"```console\n\$ (context-bench memory .*?--system my_memory.*?)```", docs, re.S)[1]
    return module, shlex.split(console.replace("\\\n", " "))


def test_the_worked_example_in_the_docs_runs_as_written(world, fixtures, tmp_path):
    """The example module and command run as the docs show them: from the module's folder, with no
    PYTHONPATH, sending the key, against the endpoint the environment names."""
    module, command = _docs_example()
    (tmp_path / "my_memory.py").write_text(module)
    secret = "sk-docs-example-0123456789"
    command = [Path(sys.executable).with_name("context-bench").as_posix(), *command[1:]]
    command[command.index("--data-file") + 1] = str(fixtures / "locomo_mini.json")
    command[command.index("--relay") + 1] = world.url
    command[command.index("--model") + 1] = world.model
    command += ["--output", "json", "--no-progress"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(MEMORY_LLM_URL=world.url, MEMORY_LLM_MODEL=world.model, OPENAI_API_KEY=secret)
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    rows = {(r["system"], r["example_id"]): r for r in report["rows"]}
    assert not any(r["errors"] for r in rows.values())
    first = rows[("notes", "conv-a/0")]
    assert first["response"] == "Biscuit"
    assert first["meta"]["context_tokens"] > 0 and first["input_tokens"] > 0
    notes = [s for s in world.server.seen if last_user_message(s.body).startswith("Notes:")]
    assert len(notes) == 7 and all(s.headers["authorization"] == f"Bearer {secret}" for s in notes)
    assert secret not in done.stdout + done.stderr


def test_the_docs_example_checks_the_http_status(tmp_path, monkeypatch):
    module, _ = _docs_example()
    (tmp_path / "my_memory.py").write_text(module)
    with FakeServer(lambda body: Reply(status=401)) as server:
        monkeypatch.setenv("MEMORY_LLM_URL", server.url)
        spec = importlib.util.spec_from_file_location("my_memory_status", tmp_path / "my_memory.py")
        example = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(example)
        with pytest.raises(httpx.HTTPStatusError, match="401"):
            example.NotesMemory().query("Where?")  # a refused request is an error, not an answer


def test_the_python_examples_in_the_docs_run(world, fixtures, tmp_path, monkeypatch, capsys):
    """docs/memory.md's Python blocks, with the endpoint and the data file pointed at the test's."""
    docs = (Path(__file__).parents[3] / "docs" / "memory.md").read_text()
    module, _ = _docs_example()
    (tmp_path / "my_memory.py").write_text(module)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # a Python caller imports its own module as usual
    monkeypatch.delitem(sys.modules, "my_memory", raising=False)
    monkeypatch.setenv("MEMORY_LLM_URL", world.url)
    monkeypatch.setenv("MEMORY_LLM_MODEL", world.model)
    blocks = re.findall(r"```python\n(.*?)```", docs, re.S)
    run_block = next(b for b in blocks if "evaluate_memory(" in b)
    run_block = run_block.replace("~/data/locomo10.json", str(fixtures / "locomo_mini.json"))
    exec(compile(run_block.replace("http://localhost:8080", world.url), "memory.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == f"{6 / 7} {1 / 7}"  # memory_judge, false_memory: the invented cat is caught
    assert printed[1:] == ["adversarial 1 0.0", "multi-hop 1 1.0", "single-hop 3 1.0", "temporal 2 1.0"]
    baselines = next(b for b in blocks if "BM25Memory" in b and "partial" in b)
    scope: dict = {}
    exec(compile(baselines.replace("http://localhost:8080", world.url), "memory.md", "exec"), scope)
    assert len(scope["systems"]) == 2


def test_without_cbench_judge_the_run_says_how_to_get_the_judges(world, fixtures, capsys):
    code = main(
        [
            "-p",
            "no:cbench-judge",
            "memory",
            "--dataset",
            str(fixtures / "longmemeval_mini.json"),
            "--relay",
            world.url,
            "--model",
            world.model,
            "--output",
            "json",
            "--no-progress",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "install cbench-judge to judge the answers" in captured.err
    assert world.judge_requests() == [] and len(world.memory_requests()) == 3
    assert set(json.loads(captured.out)["summary"]["groups"][0]["scores"]) == {
        "f1",
        "exact_match",
        "recall",
        "contains",
    }
