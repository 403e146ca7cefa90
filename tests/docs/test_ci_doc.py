"""docs/ci.md's GitHub Actions job: its context-bench step runs as written, each endpoint pointed at
the scripted one, and its gates pass on right answers and fail (exit 3, then 4) on wrong ones."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from context_bench.cli import main
from context_bench.testing import FakeServer, Reply, last_user_message

ROOT = Path(__file__).resolve().parents[2]
URL = re.compile(r"https?://(?:localhost|127\.0\.0\.1|api\.openai\.com)(?::\d+)?")


def gate_step() -> list[str]:
    yaml = pytest.importorskip("yaml", reason="PyYAML reads the workflow (LiteLLM's proxy extra brings it)")
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    (workflow,) = re.findall(r"```yaml\n(.*?)```", text, re.S)
    steps = yaml.safe_load(workflow)["jobs"]["evaluate"]["steps"]
    (command,) = [step["run"] for step in steps if step.get("run", "").startswith("context-bench")]
    argv = shlex.split(command)
    assert argv[:2] == ["context-bench", "run"]
    return argv[1:]


def test_the_workflows_gate_step_runs_and_gates(tmp_path, monkeypatch, input_files, capsys):
    argv = gate_step()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-ci-0123456789abcdef")
    dataset = argv[argv.index("--dataset") + 1]
    (tmp_path / dataset).parent.mkdir(parents=True)
    # the docs' qa.jsonl eight times over: two rows lost of two could not be significant
    rows = [json.loads(line) for line in input_files["qa.jsonl"][0].splitlines()]
    rows = [
        {**row, "id": f"{row['id']}-{n}", "question": f"{row['question']} ({n})"}
        for n in range(4)
        for row in rows
    ]
    (tmp_path / dataset).write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    answers = {row["question"]: row["answer"] for row in rows}

    def right(body):
        text = last_user_message(body)
        return next(answer for question, answer in answers.items() if question in text)

    def wrong(body):
        return "I do not know"

    def down(body):
        return Reply("down", status=500)

    def run(model, candidate):
        shutil.rmtree(tmp_path / ".cbench-cache", ignore_errors=True)  # every run asks its endpoints
        with FakeServer(model) as first, FakeServer(candidate) as second:
            urls = iter([first.url, second.url])
            words = [URL.sub(lambda _: next(urls), word) if URL.match(word) else word for word in argv]
            code = main([words[0], "--max-retries", "0", *words[1:], "--no-progress"])
        return code, capsys.readouterr().err

    code, err = run(right, right)
    assert code == 0, err
    assert (tmp_path / "report.html").stat().st_size > 0
    code, err = run(right, wrong)
    assert (
        code == 3 and "gate failed: --fail-if-worse f1=0.02: f1 of candidate minus the baseline model" in err
    )
    assert "gate failed: --fail-under f1=0.7: f1 of candidate on qa" in err
    code, err = run(right, down)
    assert code == 4 and "too many failures: system candidate could not answer" in err, err
