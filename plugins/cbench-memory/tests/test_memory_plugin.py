"""cbench-memory as a plugin: its hooks, its command, and the judge rules that serve memory runs."""

from __future__ import annotations

import json

import pytest

from cbench_memory import plugin
from context_bench import Output, RunConfig, Scope, UsageError, evaluate_memory
from context_bench.cli import build_parser, main
from context_bench.testing import check_plugin, isolated_host


def test_the_plugin_registers_its_data_sets_and_its_command():
    info = check_plugin(plugin)
    assert [d.name for d in info.datasets] == ["locomo", "longmemeval", "oolong", "convomem", "membench"]
    assert {d.kind for d in info.datasets} == {"memory"}
    assert [c.name for c in info.commands] == ["memory"]


def test_the_memory_command_comes_with_the_plugin_only(capsys):
    with pytest.raises(UsageError, match="invalid choice: 'memory'"):
        build_parser(isolated_host()).parse_args(["memory", "--help"])
    with pytest.raises(SystemExit) as exited:
        build_parser(isolated_host(plugin)).parse_args(["memory", "--help"])
    assert exited.value.code == 0 and "--relay" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exited:
        main(["memory", "--help"])  # the installed plugin, found through its entry point
    assert exited.value.code == 0 and "--max-concurrency" in capsys.readouterr().out
    assert main(["plugins"]) == 0
    assert "command memory:" in capsys.readouterr().out


def test_a_template_judge_still_grades_a_memory_run_and_the_rating_does_not(world, fixtures):
    judge_plugin = pytest.importorskip("cbench_judge.plugin")
    from cbench_memory.loaders import load_locomo

    conversations = load_locomo(fixtures / "locomo_mini.json")[:1]

    class Echo:
        name = "echo"

        def reset(self):
            pass

        def ingest(self, turns):
            pass

        def query(self, question):
            return "Biscuit"

    def fields(**options):
        result = evaluate_memory(
            Echo(),
            conversations,
            RunConfig(
                scope=Scope(max_examples=1),
                output=Output(progress=False),
                plugins={"judge_url": world.url, **options},
            ),
            host=isolated_host(judge_plugin),
        )
        return set(result.rows[0].scores) | set(result.rows[0].failures)

    assert "judge_score" not in fields()
    assert "judge_score" in fields(judge_template="binary_qa")


def test_the_memory_data_sets_are_refused_by_run(capsys):
    assert main(["run", "--proxy", "http://127.0.0.1:9", "--dataset", "locomo"]) == 2
    assert "use `context-bench memory --dataset locomo`" in capsys.readouterr().err


def test_json_listing_names_the_command(capsys):
    assert main(["plugins", "--json"]) == 0
    listed = {p["name"]: p for p in json.loads(capsys.readouterr().out)}
    assert listed["cbench-memory"]["commands"][0]["name"] == "memory"


def test_a_memory_file_that_is_not_utf8_is_one_line(tmp_path, capsys):
    path = tmp_path / "conversations.json"
    path.write_bytes(b'[{"id": "caf\xe9"}]')
    code = main(["memory", "--dataset", str(path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == f"context-bench: error: {path}: line 1 is not UTF-8 text"
