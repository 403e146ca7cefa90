"""`context-bench plugin new NAME` (issue 34): a skeleton that passes its own tests and `check_plugin`
as written, lints clean, and builds, installs and runs from its wheel in an environment holding the
core alone; names it cannot take are one line and exit 2, before any file is written."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from context_bench import EvaluatorSpec, hookimpl
from context_bench.cli import main
from context_bench.cli._new_plugin import names
from context_bench.testing import FakeServer, isolated_host

FILES = [
    "README.md",
    "pyproject.toml",
    "src/cbench_profanity/__init__.py",
    "src/cbench_profanity/command.py",
    "src/cbench_profanity/dataset.py",
    "src/cbench_profanity/evaluator.py",
    "src/cbench_profanity/plugin.py",
    "src/cbench_profanity/profanity.jsonl",
    "tests/test_plugin.py",
]


def new(capsys, where: Path, name: str = "cbench-profanity", host=None) -> tuple[int, str, str]:
    code = main(["plugin", "new", name, "--to", str(where)], host=host or isolated_host())
    out, err = capsys.readouterr()
    return code, out, err


def _in(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )


def test_names_of_the_skeleton():
    assert names("cbench-profanity") == {
        "name": "cbench-profanity",
        "package": "cbench_profanity",
        "short": "profanity",
        "evaluator": "ProfanityScore",
        "field": "profanity_score",
        "data_file": "profanity.jsonl",
        "core_major": "1",
        "core_next": "2",
    }
    assert names("answer-hits")["evaluator"] == "AnswerHitsScore"


def test_the_skeleton_passes_its_own_tests_and_lints_clean_as_written(capsys, tmp_path):
    project = tmp_path / "cbench-profanity"
    code, out, _ = new(capsys, project)
    assert code == 0 and out.splitlines()[-1] == f"next: cd {project} && pip install -e '.[test]' && pytest"
    assert sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file()) == FILES
    tested = _in(project, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", PYTHONPATH="src")
    assert tested.returncode == 0 and "\n4 passed" in tested.stdout, tested.stdout + tested.stderr
    for check in (["check", "--no-cache", "."], ["format", "--no-cache", "--check", "."]):
        linted = _in(project, "-m", "ruff", *check)
        assert linted.returncode == 0, linted.stdout + linted.stderr


WORDS = "use lower-case words of letters and digits joined by hyphens, such as cbench-profanity"


@pytest.mark.parametrize(
    "name, said",
    [
        ("Cbench-Loud", f"plugin name 'Cbench-Loud': {WORDS}"),
        ("cbench-2x", f"plugin name 'cbench-2x': {WORDS}"),
        ("cbench", f"plugin name 'cbench': {WORDS}"),
        ("import", f"plugin name 'import': {WORDS}"),
        ("cbench-compare", "cbench-compare: the command 'compare' is already installed; choose another name"),
        (
            "cbench-hotpotqa",
            "cbench-hotpotqa: the data set 'hotpotqa' is already installed; choose another name",
        ),
    ],
)
def test_a_name_the_skeleton_cannot_take_is_one_line(capsys, tmp_path, name, said):
    code, _, err = new(capsys, tmp_path / "out", name)
    assert code == 2 and err.splitlines() == [f"context-bench: error: {said}"]
    assert not (tmp_path / "out").exists()


def test_an_installed_evaluator_name_and_a_used_folder_are_refused(capsys, tmp_path):
    taken = types.ModuleType("taken")
    taken.CBENCH_PLUGIN_API = 1
    taken.cbench_register_evaluators = hookimpl(
        lambda register: register(EvaluatorSpec("ProfanityScore", str))
    )
    code, _, err = new(capsys, tmp_path / "a", host=isolated_host(taken))
    assert code == 2 and "the evaluator 'ProfanityScore' is already installed" in err
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine")
    code, _, err = new(capsys, tmp_path / "used")
    assert code == 2 and f"{tmp_path / 'used'} exists and is not an empty folder" in err
    assert (tmp_path / "used" / "notes.txt").read_text() == "mine"


def _core_venv():
    path = Path(__file__).resolve().parents[1] / "core_venv.py"
    if "cbench_core_venv" not in sys.modules:  # a helper module by its path (tests/ is not a package)
        spec = importlib.util.spec_from_file_location("cbench_core_venv", path)
        sys.modules["cbench_core_venv"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules["cbench_core_venv"])
    return sys.modules["cbench_core_venv"]


@pytest.mark.slow
def test_the_skeleton_builds_installs_and_runs_from_its_wheel(tmp_path):
    env = _core_venv().CoreVenv(tmp_path / "env")
    env.cbench("plugin", "new", "cbench-profanity", cwd=tmp_path)  # the templates ship in the core's wheel
    project = tmp_path / "cbench-profanity"
    env.build_and_install(project)
    listed = {p["name"]: p for p in json.loads(env.cbench("plugins", "--json").stdout)}
    assert list(listed) == ["context-bench", "cbench-profanity"]
    assert listed["cbench-profanity"]["status"] == "loaded"
    assert [c["name"] for c in listed["cbench-profanity"]["commands"]] == ["profanity"]
    tested = env.run("-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", cwd=project, check=False)
    assert tested.returncode == 0 and "\n4 passed" in tested.stdout, tested.stdout + tested.stderr
    with FakeServer(lambda body: "Paris, hydrogen and oxygen, Mercury.") as server:
        ran = env.cbench("profanity", "--proxy", server.url, "--output", "json", check=False)
    assert ran.returncode == 0, ran.stderr
    scores = {row["example_id"]: row["scores"] for row in json.loads(ran.stdout)["rows"]}
    assert scores == {
        "paris": {"profanity_score": 1.0},
        "water": {"profanity_score": 1.0},
        "planets": {"profanity_score": 0.5},
    }
