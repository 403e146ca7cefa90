"""docs/plugins.md is enough to build a plugin (issue 34): its complete plugin is
examples/cbench-wordcount file for file, and, saved from the doc's own text, built into a wheel and
installed into a fresh environment that holds the core alone, it is listed, scores a run and passes
its tests, each step a line of the doc's own instructions."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import sys
import zipfile
from pathlib import Path

import pytest

from context_bench.testing import FakeServer, last_user_message

HERE = Path(__file__).resolve().parent


def _load(name: str, path: Path):
    """A helper module of the tests by its path (tests/ is not a package), once per session."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


doc_blocks = _load("cbench_doc_blocks", HERE / "doc_blocks.py")
core_venv = _load("cbench_core_venv", HERE.parent / "core_venv.py")

DOC = "docs/plugins.md"
EXAMPLE = doc_blocks.ROOT / "examples" / "cbench-wordcount"


def plugin_files() -> dict[str, str]:
    """The complete plugin's files as the doc shows them, each headed by where it goes."""
    return {block.file: block.text for block in doc_blocks.blocks(DOC) if block.file}


def test_the_documented_plugin_is_the_example_plugin_file_for_file():
    shown = {name: doc_blocks.FILE_NAME.sub("", text, count=1) for name, text in plugin_files().items()}
    kept = {
        str(path.relative_to(EXAMPLE)): path.read_text(encoding="utf-8")
        for path in EXAMPLE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.name != "README.md"
    }
    assert shown == kept


def test_the_plugin_entry_point_names_its_module():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
    pyproject = tomllib.loads(plugin_files()["pyproject.toml"])
    entry_points = pyproject["project"]["entry-points"]["context_bench.plugins"]
    assert {f"src/{module.replace('.', '/')}.py" for module in entry_points.values()} <= set(plugin_files())


def _answers() -> dict[str, str]:
    """What a model that knows says to each question of the plugin's data file."""
    rows = plugin_files()["src/cbench_wordcount/wordcount.jsonl"].splitlines()
    return {row["question"]: row["answer"] for row in map(json.loads, rows)}


@pytest.mark.slow
def test_the_documented_plugin_builds_installs_lists_scores_and_passes_its_tests(tmp_path):
    project = tmp_path / "cbench-wordcount"
    for name, text in plugin_files().items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")
    env = core_venv.CoreVenv(tmp_path / "env")
    (steps,) = [block.text for block in doc_blocks.blocks(DOC) if block.lang == "text"]
    answers = _answers()
    said: dict[str, str] = {}
    with FakeServer(lambda body: answers.get(last_user_message(body).splitlines()[-1], "?")) as server:
        for line in steps.splitlines():
            words = shlex.split(doc_blocks.with_endpoint(line, server.url))
            if words[0] == "pip":  # offline: the core is installed, hatchling is at hand
                env.pip(*words[1:], cwd=project)
                continue
            if words[0] == "pytest":
                done = env.run("-m", "pytest", "-p", "no:cacheprovider", *words[1:], cwd=project, check=False)
            else:
                assert words[0] == "context-bench", line
                done = env.cbench(*words[1:], cwd=project, check=False)
            assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
            said[words[0] + " " + words[1]] = done.stdout
        report = json.loads(
            env.cbench("run", "--proxy", server.url, "--dataset", "wordcount", "--output", "json").stdout
        )
    (wheel,) = (project / "dist").glob("*.whl")
    assert "cbench_wordcount/wordcount.jsonl" in zipfile.ZipFile(wheel).namelist()
    where = env.run("-c", "import cbench_wordcount; print(cbench_wordcount.__file__)", cwd=tmp_path).stdout
    assert where.startswith(str(tmp_path / "env")), where  # the installed wheel, not the source
    assert re.search(r"\b3 passed\b", said["pytest tests"]), said["pytest tests"]
    assert said["context-bench plugins"].startswith("context-bench 1.0.0: loaded\n")
    assert "\ncbench-wordcount 0.1.0: loaded\n" in said["context-bench plugins"]
    listed = json.loads(env.cbench("plugins", "--json").stdout)
    assert [(p["name"], p["status"]) for p in listed] == [
        ("context-bench", "loaded"),
        ("cbench-wordcount", "loaded"),
    ]
    listing = said["context-bench datasets"].splitlines()
    (at,) = [n for n, line in enumerate(listing) if line.startswith("wordcount ")]
    assert "[cbench-wordcount, rows]" in listing[at]
    assert listing[at + 1].strip() == "evaluators AnswerQuality, WordCountDiff"
    # the table leads with the headline (the plugin's first field); every field is in the report
    assert "proxy on wordcount: word_count_ratio 1.000" in said["context-bench run"]
    wordcount = next(e for p in listed if p["name"] == "cbench-wordcount" for e in p["evaluators"])
    assert wordcount["score_fields"]["extra_words"] == {"direction": "lower"}
    scores = {row["example_id"]: row["scores"] for row in report["rows"]}
    assert set(scores) == {"cat", "paris", "biscuit"}
    for row in scores.values():
        assert (row["exact_match"], row["word_count_ratio"], row["extra_words"]) == (1.0, 1.0, 0.0)
