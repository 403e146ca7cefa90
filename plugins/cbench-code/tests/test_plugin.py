"""Registration, auto-wiring, the layer report, and a run through the core runner."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import context_bench
from cbench_code import CodeExecution, plugin
from cbench_code.pool import pack_tests
from context_bench import Output, RunConfig, Scope
from context_bench.plugins import PluginHost
from context_bench.specs import resolve

SRC = Path(__file__).resolve().parents[1] / "src"


def test_evaluator_is_registered_lazily():
    spec = PluginHost().find_evaluator("CodeExecution")
    assert spec.fields == ("pass_at_1",)
    assert spec.factory == "cbench_code.evaluator:CodeExecution"
    assert resolve(spec.factory) is CodeExecution


def test_autowire_rules():
    rules = [r for r in PluginHost().rules() if r.evaluator == "CodeExecution"]
    assert {(r.datasets, r.fields) for r in rules} == {
        (("humaneval", "mbpp"), ()),
        ((), ("test", "entry_point")),
        ((), ("test_list",)),
    }


def test_listing_plugins_imports_nothing_heavy():
    code = (
        "import sys; from context_bench.plugins import PluginHost; h = PluginHost(); h.ensure_loaded(); "
        "print(sorted(m for m in sys.modules if m.startswith('cbench_code')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert set(eval(out)) <= {
        "cbench_code",
        "cbench_code.plugin",
        "cbench_code.sources",
        "cbench_code.layers",
        "cbench_code.landlock",
        "cbench_code.seccomp",
    }


def test_server_imports_the_standard_library_only():
    """Children inherit what the server imported: no ``threading`` (its at-fork hook runs in every
    child), no ``attrs``, no ``context_bench``; the classes it holds count as known to the checks."""
    code = (
        "import sys, cbench_code.server; "
        "print(sorted(m for m in ('threading', 'attrs', 'attr', 'context_bench') if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert eval(proc.stdout) == []


def test_plugin_info_names_the_layers():
    info = plugin.cbench_plugin_info()
    active = info["sandbox layers"].split(", ")
    assert "process" in active and "rlimits" in active
    missing = [name for name in info.get("sandbox layers missing", "").split(", ") if name]
    everything = {"process", "netns", "mountns", "landlock", "seccomp", "unprivileged", "rlimits"}
    assert set(active) | set(missing) == everything
    assert all(info[f"sandbox {name}"].startswith("off: ") for name in missing)


def test_missing_layer_warns_once_naming_it():
    import warnings

    from cbench_code import SandboxWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = CodeExecution(timeout=5.0, disable=["landlock", "mountns"])
        second = CodeExecution(timeout=5.0, disable=["landlock", "mountns"])
        try:
            assert first.layers["landlock"] == "off: disabled"
            assert second.layers["mountns"] == "off: disabled"
        finally:
            first.close()
            second.close()
    messages = [
        str(w.message)
        for w in caught
        if issubclass(w.category, SandboxWarning) and "landlock (off" in str(w.message)
    ]
    assert len(messages) == 1 and "mountns (off: disabled)" in messages[0]


def test_core_runner_autowires_and_scores_humaneval_rows():
    rows = [
        {
            "id": "add",
            "context": "def add(a, b):\n",
            "test": "def check(c):\n    assert c(1, 2) == 3\n",
            "entry_point": "add",
            "response": "    return a + b\n",
        },
        {
            "id": "sub",
            "context": "def sub(a, b):\n",
            "test": "def check(c):\n    assert c(3, 2) == 1\n",
            "entry_point": "sub",
            "response": "```python\ndef sub(a, b):\n    return a + b\n```",
        },
        {"id": "mbpp", "test_list": ["assert sq(3) == 9"], "response": "def sq(x):\n    return x * x\n"},
    ]
    result = context_bench.evaluate(
        None, rows, RunConfig(scope=Scope(dataset_name="humaneval"), output=Output(progress=False))
    )
    scores = {row.example_id: row.scores.get("pass_at_1") for row in result.rows}
    assert scores == {"add": 1.0, "sub": 0.0, "mbpp": 1.0}


def _system_python() -> str | None:
    """A Python of our version (tests travel marshalled) that the nobody user can run."""
    name = f"python{sys.version_info.major}.{sys.version_info.minor}"
    path = shutil.which(name, path="/usr/bin:/usr/local/bin:/bin")
    return path if path and os.access(path, os.X_OK) else None


def test_server_as_an_unprivileged_user():
    """The user-namespace path: an unprivileged server still gets every layer it can."""
    python = _system_python()
    if os.geteuid() != 0 or python is None:
        pytest.skip("needs root (to start a process as nobody) and a system Python nobody can run")
    start = (
        f"import sys; sys.path.insert(0, {str(SRC)!r}); "
        "from cbench_code.server import main; sys.exit(main(['s', '{}']))"
    )
    proc = subprocess.Popen(
        [python, "-I", "-c", start],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={},
        user=65534,
        group=65534,
        extra_groups=[],
        cwd="/",
    )
    # A server that never answers is killed, so the reads below end (empty) instead of hanging.
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    try:
        hello = proc.stdout.readline()
        if not hello:
            pytest.skip(f"{python} cannot run the server as nobody: {proc.stderr.read().decode()[-300:]}")
        layers = json.loads(hello)["hello"]["layers"]
        requests = [
            (
                "def f():\n    import socket\n    try:\n"
                "        socket.create_connection(('127.0.0.1', 9), timeout=1)\n"
                "    except OSError:\n        return 'blocked'\n",
                "assert f() == 'blocked'",
            ),
            (
                "def f():\n    try:\n        open('/tmp/cbench-nobody-escape', 'w')\n"
                "    except OSError:\n        return 'blocked'\n",
                "assert f() == 'blocked'",
            ),
            ("def f():\n    return 2\n", "assert f() == 3"),
        ]
        for i, (program, tests) in enumerate(requests):
            message = {"id": i, "program": program, "tests": pack_tests(tests), "timeout": 5}
            proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
        replies = {r["id"]: r["status"] for r in (json.loads(proc.stdout.readline()) for _ in requests)}
    finally:
        watchdog.cancel()
        proc.stdin.close()
        proc.wait(timeout=10)
    assert layers["unprivileged"].startswith("on")
    assert replies == {0: "passed", 1: "passed", 2: "failed"}
    assert not os.path.exists("/tmp/cbench-nobody-escape")


def test_core_plugin_and_evaluator_checks():
    from context_bench.testing import check_evaluator, check_plugin

    info = check_plugin(plugin)
    assert [e.name for e in info.evaluators] == ["CodeExecution"]
    ev = CodeExecution(timeout=5.0, k=[1, 2])
    try:
        row = {"context": "def f():\n", "test": "def check(c):\n    assert c() == 1\n", "entry_point": "f"}
        assert check_evaluator(ev, row, {"response": "    return 1\n"}) == {"pass_at_1": 1.0}
    finally:
        ev.close()


def test_pickled_evaluator_keeps_its_configuration():
    import pickle

    ev = CodeExecution(timeout=7.0, k=[1, 3], disable=["landlock"])
    copy = pickle.loads(pickle.dumps(ev))
    assert (copy.timeout, copy.k, copy.pool.disable) == (7.0, (1, 3), ("landlock",))
    assert copy.pool is not ev.pool


def test_the_cache_key_follows_what_decides_a_verdict_not_the_worker_count():
    from cbench_code import CodeExecution
    from context_bench.identity import identity

    assert identity(CodeExecution(timeout=3.0, workers=1)) == identity(CodeExecution(timeout=3.0, workers=4))
    assert identity(CodeExecution(timeout=3.0)) != identity(CodeExecution(timeout=4.0))
    assert identity(CodeExecution()) != identity(CodeExecution(disable=["seccomp"]))


def test_a_green_run_says_which_sandbox_layers_were_off():
    """The sandbox's warning prints once per process; every run's summary says it again."""
    rows = [
        {
            "id": "1",
            "context": "def f():\n",
            "entry_point": "f",
            "test": "def check(candidate):\n    assert candidate() == 1\n",
            "response": "    return 1\n",
        }
    ]
    for _ in range(2):  # the second run in this process gets no printed warning, but the notice
        result = context_bench.evaluate(
            None,
            {"humaneval": rows},
            RunConfig(
                scope=Scope(evaluators=[CodeExecution(disable=["seccomp"])]), output=Output(progress=False)
            ),
        )
        assert result.rows[0].scores == {"pass_at_1": 1.0}
        off = [w for w in result.summary.warnings if w.startswith("cbench-code: sandbox layers unavailable")]
        assert len(off) == 1 and "seccomp (off" in off[0], result.summary.warnings
