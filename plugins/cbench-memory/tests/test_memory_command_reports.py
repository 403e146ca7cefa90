"""What ``context-bench memory`` shows and reports: its two passes labelled on the progress line
(issue 12 #13), the run's metadata (#16), and one line, exit 2, for JSON nested too deeply to read
(issue 13 #9)."""

from __future__ import annotations

import io
import json

import pytest

from cbench_memory import evaluate_memory
from context_bench.cli import main
from context_bench.testing import isolated_host

DEPTH = 100_000


class TTY(io.StringIO):
    def isatty(self):
        return True


class Echo:
    name = "echo"

    def reset(self):
        self.turns = []

    def ingest(self, turns):
        self.turns = list(turns)

    def query(self, question):
        return self.turns[-1]["text"]


CONVERSATIONS = [
    {
        "id": "c1",
        "turns": [{"speaker": "Ann", "text": "Paris"}],
        "qa_pairs": [{"question": "Where?", "answer": "Paris"}],
    }
]


def test_the_two_passes_say_their_names(monkeypatch):
    tty = TTY()
    monkeypatch.setenv("COLUMNS", "100")  # room for the whole bar
    monkeypatch.setattr("sys.stderr", tty)
    evaluate_memory(Echo(), CONVERSATIONS, host=isolated_host())
    shown = [line.rpartition("\r")[2] for line in tty.getvalue().split("\n") if line]
    assert [line.split(" [", 1)[0] for line in shown] == ["answering", "scoring"]
    assert all("1/1 rows" in line for line in shown)


def nested(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


@pytest.fixture
def deep_files(tmp_path):
    """A LoCoMo, a LongMemEval and a conversations file, each with a value nested DEPTH deep."""
    deep = nested(DEPTH)
    files = {
        "locomo": '[{"sample_id": "s", "conversation": {"session_1": [{"speaker": "A", "text": "hi", "x": '
        + deep
        + '}]}, "qa": [{"question": "q", "answer": "a", "category": 1}]}]',
        "longmemeval": '[{"question_id": "q1", "question": "q", "answer": "a", "haystack_sessions": '
        '[[{"role": "user", "content": ' + deep + "}]]}]",
        "conversations": '[{"id": "c", "turns": [{"speaker": "A", "text": ' + deep + "}], "
        '"qa_pairs": [{"question": "q", "answer": "a"}]}]',
    }
    paths = {}
    for name, text in files.items():
        paths[name] = tmp_path / f"{name}_deep.json"
        paths[name].write_text(text)
    return paths


@pytest.mark.parametrize("layout", ["locomo", "longmemeval", "conversations"])
def test_a_file_nested_too_deeply_is_one_line_and_exit_2(deep_files, capsys, layout):
    path = deep_files[layout]
    code = main(["memory", "--dataset", str(path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.splitlines()[-1] == f"context-bench: error: {path}: JSON nested too deeply to read"


@pytest.mark.parametrize("layout", ["locomo", "longmemeval"])
def test_a_named_data_sets_file_nested_too_deeply_is_one_line_and_exit_2(deep_files, capsys, layout):
    path = deep_files[layout]
    code = main(["memory", "--dataset", layout, "--data-file", str(path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "RecursionError" not in err
    assert err.splitlines()[-1] == f"context-bench: error: {path}: JSON nested too deeply to read"


def test_the_report_names_the_systems_and_the_command(world, fixtures, tmp_path, capsys, monkeypatch):
    (tmp_path / "echo_memory.py").write_text(
        "class Echo:\n    name = 'echo'\n    def reset(self): pass\n    def ingest(self, turns): pass\n"
        "    def query(self, question): return 'no idea'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    relay = world.url.replace("http://", "http://me:relaypass@")
    argv = ["memory", "--dataset", str(fixtures / "locomo_mini.json"), "--system", "full-context"]
    argv += ["--system", "echo_memory:Echo", "--relay", relay, "--model", world.model, "-n", "2"]
    code = main([*argv, "--output", "json", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    metadata = json.loads(out)["metadata"]
    shown = relay.replace("relaypass", "***")
    assert metadata["command"].startswith(f"context-bench memory --dataset {fixtures / 'locomo_mini.json'}")
    assert f"--relay {shown} " in metadata["command"]
    baseline, echo = metadata["systems"]
    assert baseline["name"] == "full-context" and baseline["model"] == world.model
    assert baseline["endpoint"].startswith(shown)
    assert echo == {"name": "echo", "type": "echo_memory:Echo"}
    assert "relaypass" not in out


def test_a_memory_run_is_summarized_once_priced_by_its_model(world, fixtures, capsys, monkeypatch):
    """The relay's model prices the run from its first summary, which emit does not make again
    (it did: the flags' settings lacked the memory figures the run added, so they never matched)."""
    from context_bench._summary import Summarizer

    finished = []
    finish = Summarizer.finish
    monkeypatch.setattr(Summarizer, "finish", lambda self: finished.append(self) or finish(self))
    argv = ["memory", "--dataset", str(fixtures / "locomo_mini.json"), "--system", "full-context"]
    argv += ["--relay", world.url, "--model", world.model, "-n", "2", "--price", f"{world.model}=1,2"]
    code = main([*argv, "--output", "json", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert len(finished) == 1
    (group,) = json.loads(out)["summary"]["groups"]
    assert (group["cost"]["priced"], group["cost"]["source"]) == (True, "priced")


def test_the_run_is_recorded_in_the_store_with_its_report(world, fixtures, tmp_path, capsys):
    """``memory`` records itself as ``run`` and ``score`` do (issue 32): its rows, the summary of
    its JSON report, its tag, and no password of the relay's."""
    from context_bench.store import open_store

    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    relay = world.url.replace("http://", "http://me:relaypass@")
    argv = ["memory", "--dataset", str(fixtures / "locomo_mini.json"), "--system", "full-context"]
    argv += ["--relay", relay, "--model", world.model, "-n", "2", "--store", url, "--tag", "mem"]
    code = main([*argv, "--output", "json", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    with open_store(url) as store:
        (info,) = store.runs()
        run, stored = store.run(info.id), store.report(info.id)
    assert (run.kind, run.status, run.tags, run.rows) == ("memory", "finished", ("mem",), len(report["rows"]))
    assert stored["summary"] == report["summary"]
    assert "relaypass" not in json.dumps([run.config, run.metadata])
