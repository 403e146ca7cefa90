"""cbench-view as a plugin and a command: what it registers, that listing it starts no web stack,
and its mistakes (a bad port, a port taken, no store) as one line and exit 2."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import cbench_view.plugin
from context_bench.cli import main
from context_bench.store import open_store
from context_bench.testing import check_plugin


def test_the_plugin_registers_the_view_command():
    info = check_plugin(cbench_view.plugin)
    assert [command.name for command in info.commands] == ["view"]


def test_plugins_lists_the_command(capsys):
    assert main(["plugins", "--json"]) == 0
    [view] = [p for p in json.loads(capsys.readouterr().out) if p["name"] == "cbench-view"]
    assert [command["name"] for command in view["commands"]] == ["view"]


def test_listing_and_parsing_import_no_web_framework():
    code = (
        "import sys; from context_bench.cli._app import main; main(['plugins']); "
        "assert not {'starlette', 'uvicorn'} & set(sys.modules), 'a web framework was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_mistakes_are_one_line_and_exit_2(capsys, tmp_path):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    store = tmp_path / "runs.sqlite"
    open_store(str(store)).close()
    cases = [
        (
            ["view", "--port", "70000"],
            "view: argument --port: must be a whole number from 0 to 65,535 (got '70000')",
        ),
        (
            ["view", "--store", str(tmp_path / "none.sqlite")],
            f"no store at {tmp_path / 'none.sqlite'} (nothing has been recorded there)",
        ),
        (["view", "--store", "none"], "--store none: there is no store to view"),
        (
            ["view", "--store", str(store), "--port", str(port)],
            f"cannot listen on 127.0.0.1:{port}: Address already in use",
        ),
        (["view", "--store", "postgresql://me:hunter2-Secret@127.0.0.1:1/runs"], None),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1, err
        if message is not None:
            assert err == f"context-bench: error: {message}\n"
        assert "hunter2" not in err
    taken.close()
    assert not (tmp_path / "none.sqlite").exists()  # viewing never makes a store
