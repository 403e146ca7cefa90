"""Helpers for plugin authors: test a plugin without installing it.

from context_bench.testing import check_plugin, check_evaluator
import my_plugin

def test_plugin_registers():
    info = check_plugin(my_plugin)
    assert [e.name for e in info.evaluators] == ["WordCountDiff"]

def test_scores_are_floats():
    check_evaluator(WordCountDiff(), {"context": "a b"}, {"response": "a"})

A system or judge that calls an OpenAI-compatible endpoint is tested against
:class:`FakeServer` (with :class:`Reply`, :class:`Faults`, :class:`Seen` and
:func:`last_user_message`), a scripted server on 127.0.0.1.  It loads on first use, so importing
this module stays cheap::

    from context_bench.testing import FakeServer, Reply

    with FakeServer(lambda body: Reply(text="Paris", delay=0.05)) as server:
        OpenAIProxy(server.url).process({"question": "Capital of France?"})
"""

from __future__ import annotations

import pickle
from typing import Any

import attrs

from ._protocols import Evaluator
from .lazy import lazy_getattr
from .plugins import PluginHost, PluginInfo
from .settings import Settings
from .specs import resolve

#: Served lazily from :mod:`context_bench.fake_server` (asyncio and a server are not free to import).
_FAKE_SERVER = ("FakeServer", "Faults", "Reply", "Seen", "last_user_message")
__getattr__ = lazy_getattr(__name__, dict.fromkeys(_FAKE_SERVER, "context_bench.fake_server"))


def isolated_host(*plugins: Any, builtin: bool = True) -> PluginHost:
    """A host that discovers nothing installed and holds only ``plugins`` (plus the built-ins)."""
    host = PluginHost(autoload=False, allow=(), deny=(), strict=True, builtin=builtin)
    host.ensure_loaded()
    for plugin in plugins:
        host.register(plugin, name=getattr(plugin, "__name__", None))
    return host


def check_plugin(plugin: Any) -> PluginInfo:
    """Register ``plugin`` on an isolated, strict host (any failure raises) and check that what it
    registers resolves (factories, loaders, commands, executors, report formats) and is coherent."""
    host = isolated_host(plugin)
    info = host.plugins[getattr(plugin, "__name__", None) or type(plugin).__name__]
    assert info.status == "loaded", f"plugin did not load: {info.status}: {info.reason}"
    for spec in info.evaluators:
        assert spec.fields, f"evaluator {spec.name} declares no score fields"
        assert callable(resolve(spec.factory)), f"factory of {spec.name} is not callable"
    for dataset in info.datasets:
        assert callable(resolve(dataset.loader)), f"loader of data set {dataset.name} is not callable"
    for command in info.commands:
        for part in ("configure", "run"):
            assert callable(resolve(getattr(command, part))), (
                f"{part} of command {command.name} is not callable"
            )
    added = host._dests().get(info.name, set())
    for executor in info.executors:
        assert callable(resolve(executor.factory)), f"factory of executor {executor.name} is not callable"
        missing = sorted(set(executor.options) - added)
        assert not missing, f"executor {executor.name} takes options the plugin does not add: {missing}"
    for fmt in info.formats:
        for part in ("writer", "stream", "note", "side_file"):
            ref = getattr(fmt, part)
            assert ref is None or callable(resolve(ref)), (
                f"{part} of report format {fmt.name} is not callable"
            )
    for section in info.sections:
        assert callable(resolve(section.factory)), (
            f"factory of summary section {section.name} is not callable"
        )
    return info


def check_settings(plugin: Any, settings: type[Settings]) -> None:
    """Check that a plugin's :class:`~context_bench.settings.Settings` record and the flags it adds
    (``cbench_add_options``) are in step: one field per flag, each flag's dest the field's
    (``namespace`` + ``_`` + field), and the flags' defaults reading as the record's own."""
    import argparse

    host = isolated_host(plugin)
    parser = argparse.ArgumentParser(add_help=False)
    host.add_options(parser.add_argument_group())
    added = host._dests().get(getattr(plugin, "__name__", None) or type(plugin).__name__, set())
    fields = {settings.dest(field.name) for field in attrs.fields(settings)}
    assert added == fields, (
        f"{settings.__name__} and the plugin's flags differ: flags without a field "
        f"{sorted(added - fields)}, fields without a flag {sorted(fields - added)}"
    )
    defaults = settings.read(vars(parser.parse_args([])))
    assert defaults == settings(), f"the flags' defaults read as {defaults!r}, not {settings()!r}"


def check_evaluator(evaluator: Any, original: dict, processed: dict) -> dict[str, float]:
    """Score one example and check the evaluator keeps the protocol; returns the scores."""
    assert isinstance(evaluator, Evaluator), f"{evaluator!r} lacks a name or a score method"
    assert isinstance(evaluator.name, str) and evaluator.name, "an evaluator's name must be a non-empty str"
    scores = evaluator.score(original, processed)
    assert isinstance(scores, dict), f"score() returned {type(scores).__name__}, not a dict"
    for field, value in scores.items():
        assert isinstance(field, str), f"score field {field!r} is not a str"
        assert isinstance(value, float), f"score {field}={value!r} is not a float"
    pickle.loads(pickle.dumps(evaluator))  # executors may ship evaluators to other processes
    return scores


def scored_by_name(
    name: str, row: dict, response: str, host: PluginHost | None = None
) -> tuple[list[str], dict[str, float]]:
    """What the data set ``name`` wires for ``row`` (its evaluators' class names, sorted) and what
    they score ``response``: a plugin checks the data sets it registers end to end with it."""
    from ._autowire import Wirer

    evaluators = Wirer(host or isolated_host()).wire(name).for_row(row)
    scores: dict[str, float] = {}
    for evaluator in evaluators:
        scores.update(check_evaluator(evaluator, row, {"response": response}))
    return sorted(type(e).__name__ for e in evaluators), scores


def offline_hub(monkeypatch: Any, mirror: Any, cache: Any) -> None:
    """Load hub data sets from ``mirror`` (``DIR/<owner>/<name>/``) with the network off.

    ``cache`` (a temporary directory) becomes ``HF_HOME``, so a test neither reads nor writes the
    user's Hugging Face cache.  ``monkeypatch`` is pytest's fixture.
    """
    monkeypatch.setenv("CBENCH_HUB_MIRROR", str(mirror))
    monkeypatch.setenv("HF_HOME", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    _settled_hub(monkeypatch, cache)


def _settled_hub(monkeypatch: Any, cache: Any) -> None:
    """The same settings in ``datasets`` and ``huggingface_hub``, which read them once, at import."""
    from pathlib import Path

    try:
        import datasets.config
        import huggingface_hub.constants
    except ImportError:  # the hub extra is not installed: nothing read them
        return
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", Path(cache) / "datasets")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(Path(cache) / "hub"))


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on at this moment, for a server a test starts as a process."""
    import socket

    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def loopback_environment(**extra: str) -> dict[str, str]:
    """This process's environment for a server or client process a test starts: no proxy
    variables (its calls to 127.0.0.1 go straight there), unbuffered output, and ``extra``."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost", PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


def wait_until_serving(url: str, process: Any, timeout: float) -> float:
    """Seconds until ``GET url`` answers 200, polled while ``process`` (a ``subprocess.Popen``)
    runs; a RuntimeError saying why when it exits first or ``timeout`` seconds pass."""
    import time
    import urllib.request

    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if process.poll() is not None:
            raise RuntimeError(f"it exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return time.monotonic() - started
        except OSError:
            time.sleep(0.25)
    raise RuntimeError(f"it did not answer within {timeout:g}s")
