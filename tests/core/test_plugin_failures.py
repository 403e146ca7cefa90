"""A broken plugin costs only what broke (issue 34): every hook runs at discovery on its own, a command
name the core or another plugin has is refused alone, a name that a failed or disabled plugin would
offer is said so, and a run that a failed plugin left without an evaluator stops before any row."""

from __future__ import annotations

import importlib.metadata
import json
import types
import warnings

import pytest

from context_bench import AutowireRule, CommandSpec, DatasetSpec, EvaluatorSpec, hookimpl
from context_bench.cli import build_parser, main
from context_bench.plugins import Failure, PluginHost, PluginWarning
from context_bench.testing import FakeServer, isolated_host

CORE_EVALUATORS = "AnswerQuality, MultipleChoiceAccuracy, NLILabelMatch, SummarizationQuality"
IMPORT_FAILED = "import failed: ImportError: No module named 'detoxify'"


class Profanity:
    name = "profanity"

    def score(self, original, processed):
        return {"profanity": float("darn" in processed["response"])}


PROFANITY = EvaluatorSpec("ProfanityRate", Profanity, fields=["profanity"])
TOXIC_RULE = AutowireRule("ProfanityRate", datasets=["toxic"])


def _says(word):
    def run(args, host):
        print(word)
        return 0

    return run


def _no_arguments(parser, host):
    pass


def plugin(name, *, raises=None, **records):
    """A plugin module registering ``records`` (by field: evaluators, rules, datasets, commands) through
    its hooks; ``raises`` maps a hook to the error it raises once it has registered its records."""
    hooks = {
        "evaluators": "cbench_register_evaluators",
        "rules": "cbench_register_autowire",
        "datasets": "cbench_register_datasets",
        "commands": "cbench_register_commands",
    }
    raises = raises or {}
    module = types.ModuleType(name)
    module.CBENCH_PLUGIN_API = 1
    for field, hook in hooks.items():
        items = records.get(field, ())
        if not items and hook not in raises:
            continue

        error = raises.get(hook)

        def implementation(register, items=items, error=error):
            for item in items:
                register(item)
            if error is not None:
                raise error

        setattr(module, hook, hookimpl(implementation))
    return module


def lenient(*plugins):
    """A host of the built-ins and ``plugins`` that warns (as the command line does), and what it said."""
    host = PluginHost(autoload=False, strict=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        host.ensure_loaded()
        for module in plugins:
            host.register(module, name=module.__name__)
    return host, [str(w.message) for w in caught if issubclass(w.category, PluginWarning)]


def cli(capsys, *argv, host=None):
    code = main(list(argv), host=host)
    out, err = capsys.readouterr()
    return code, out, err.strip().splitlines()


class EntryPoint:
    """An installed plugin as discovery sees it: its name, and a module or an import error."""

    dist = None

    def __init__(self, name, module=None, error=None):
        self.name, self.module, self.error = name, module, error

    def load(self):
        if self.error is not None:
            raise self.error
        return self.module


@pytest.fixture
def installed(monkeypatch):
    """Replaces the installed plugins (what entry-point discovery finds) with the given ones."""
    for name in ("CBENCH_PLUGINS", "CBENCH_STRICT_PLUGINS", "CBENCH_DISABLE_PLUGIN_AUTOLOAD"):
        monkeypatch.delenv(name, raising=False)

    def install(*points):
        monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: list(points))

    return install


def tox(**raises):
    return plugin(
        "tox",
        evaluators=[PROFANITY],
        rules=[TOXIC_RULE],
        datasets=[DatasetSpec("toxic", lambda: [{"id": "1", "text": "you darn fool"}])],
        commands=[CommandSpec("tox", "say tox", _no_arguments, _says("tox says hi"))],
        raises=raises,
    )


def responses(tmp_path):
    path = tmp_path / "answered" / "toxic.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"id": "1", "text": "hi", "response": "darn it"}) + "\n", encoding="utf-8")
    return str(path)


# -- every hook on its own ---------------------------------------------------------------------------


def test_a_hook_that_raises_loses_only_what_it_registers(capsys, tmp_path):
    host, said = lenient(tox(cbench_register_datasets=RuntimeError("no network")))
    reason = "cbench_register_datasets raised RuntimeError: no network"
    assert said == [f"context-bench: plugin tox partial: {reason}"]
    info = host.plugins["tox"]
    assert info.status == "partial" and info.reason == reason
    assert info.failures == [Failure("cbench_register_datasets", reason, ("toxic",))]
    assert [s.name for s in info.evaluators] == ["ProfanityRate"] and info.rules == [TOXIC_RULE]
    assert info.datasets == [] and "toxic" not in host.datasets()
    code, out, _ = cli(
        capsys, "score", responses(tmp_path), "--dataset-name", "toxic", "--output", "json", host=host
    )
    assert code == 0 and json.loads(out)["rows"][0]["scores"] == {"profanity": 1.0}
    code, out, _ = cli(capsys, "tox", host=host)
    assert (code, out) == (0, "tox says hi\n")
    code, _, err = cli(capsys, "run", "--proxy", "http://127.0.0.1:9", "--dataset", "toxic", host=host)
    assert code == 2 and err == [
        f"context-bench: error: data set 'toxic' of plugin tox is installed but failed: {reason}"
    ]
    code, out, _ = cli(capsys, "plugins", "--json", host=host)
    (listed,) = [p for p in json.loads(out) if p["name"] == "tox"]
    assert listed["status"] == "partial" and listed["failures"] == [
        {"hook": "cbench_register_datasets", "reason": reason, "names": ["toxic"], "raised": True}
    ]


def test_a_plugin_whose_every_hook_failed_is_failed_and_keeps_nothing():
    host, said = lenient(
        plugin("dead", evaluators=[PROFANITY], raises={"cbench_register_evaluators": OSError("x")})
    )
    assert host.plugins["dead"].status == "failed" and not host.has_evaluator("ProfanityRate")
    assert said == ["context-bench: plugin dead failed: cbench_register_evaluators raised OSError: x"]
    assert "dead" not in [info.name for info in host.loaded()]


def test_an_options_hook_that_raises_takes_back_its_options_and_keeps_the_rest(capsys, tmp_path):
    module = tox()

    @hookimpl
    def cbench_add_options(group):
        group.add_argument("--tox-level", dest="tox_level")
        group.add_argument("--max-concurrency")  # the core's: argparse refuses it

    module.cbench_add_options = cbench_add_options
    host, _ = lenient(module)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = build_parser(lenient(module)[0]).parse_args(["run"])  # the parser where it raised
    assert not hasattr(parsed, "tox_level")  # added before the error, taken back after it
    code, out, err = cli(
        capsys, "score", responses(tmp_path), "--dataset-name", "toxic", "--output", "json", host=host
    )
    assert code == 0 and json.loads(out)["rows"][0]["scores"] == {"profanity": 1.0}
    assert err == [  # said once, however many parsers asked (run's, score's)
        "context-bench: plugin tox partial: cbench_add_options raised ArgumentError: "
        "argument --max-concurrency: conflicting option string: --max-concurrency",
        "context-bench: evaluators: toxic: ProfanityRate (name toxic)",
    ]
    assert host.option_dests() == set()
    code, _, err = cli(
        capsys, "run", "--proxy", "http://127.0.0.1:9", "--dataset", "x", "--tox-level", "3", host=host
    )
    assert code == 2 and "unrecognized arguments: --tox-level 3" in err[-1]


# -- commands: no plugin can break the command line ------------------------------------------------------


def _report(path, system):
    row = {"system": system, "dataset": "qa", "example_id": "1", "response": "Paris", "scores": {"f1": 1.0}}
    path.write_text(json.dumps({"summary": {}, "metadata": {}, "rows": [row]}), encoding="utf-8")
    return str(path)


def test_every_command_of_the_core_is_registered_through_the_hook_and_reserved():
    core = [command.name for plugin, command in isolated_host().commands()]
    assert set(core) >= {"run", "score", "compare", "plugins", "evaluators", "datasets", "plugin"}
    for name in core:
        taker = plugin("taker", commands=[CommandSpec(name, "mine", _no_arguments, _says("stolen"))])
        host, said = lenient(taker)
        assert said == [f"context-bench: plugin taker failed: command {name!r} is reserved for the core"]


def test_a_command_the_core_or_another_plugin_has_is_refused_alone(capsys, tmp_path):
    taker = plugin(
        "taker",
        evaluators=[PROFANITY],
        commands=[
            CommandSpec("compare", "steal compare", _no_arguments, _says("stolen")),
            CommandSpec("hello", "greet", _no_arguments, _says("hello from taker")),
        ],
    )
    second = plugin(
        "second",
        commands=[
            CommandSpec("hello", "greet again", _no_arguments, _says("hello from second")),
            CommandSpec("bye", "leave", _no_arguments, _says("bye")),
        ],
    )
    host, said = lenient(taker, second)
    assert said == [
        "context-bench: plugin taker partial: command 'compare' is reserved for the core",
        "context-bench: plugin second partial: command 'hello' is already added by taker",
    ]
    reports = [_report(tmp_path / "a.json", "a"), _report(tmp_path / "b.json", "b")]
    code, out, err = cli(capsys, "compare", *reports, "--output", "json", host=host)
    assert code == 0 and "stolen" not in out and json.loads(out)["summary"], err
    assert cli(capsys, "hello", host=host)[:2] == (0, "hello from taker\n")
    assert cli(capsys, "bye", host=host)[:2] == (0, "bye\n")
    code, out, _ = cli(capsys, "evaluators", host=host)
    assert code == 0 and "ProfanityRate" in out
    code, out, _ = cli(capsys, "plugins", "--json", host=host)
    statuses = {p["name"]: p["status"] for p in json.loads(out)}
    assert statuses == {"context-bench": "loaded", "taker": "partial", "second": "partial"}


def test_a_command_whose_parser_cannot_be_set_up_costs_only_itself(capsys):
    def broken(parser, host):
        raise ValueError("no such option group")

    host, _ = lenient(plugin("shaky", commands=[CommandSpec("shake", "shake it", broken, _says("shaken"))]))
    code, out, err = cli(capsys, "evaluators", host=host)
    reason = "command 'shake' could not be set up: ValueError: no such option group"
    assert code == 0 and "AnswerQuality" in out and err == [f"context-bench: plugin shaky failed: {reason}"]
    code, _, err = cli(capsys, "shake", host=host)
    assert code == 2 and err == [
        f"context-bench: error: command 'shake' of plugin shaky is installed but failed: {reason}"
    ]


# -- names asked for: installed but failed, disabled ----------------------------------------------------


def test_names_a_failed_registration_would_have_offered_say_so(capsys, tmp_path):
    reason = "cbench_register_evaluators raised RuntimeError: model file missing"
    host, _ = lenient(tox(cbench_register_evaluators=RuntimeError("model file missing")))
    code, _, err = cli(capsys, "score", responses(tmp_path), "--evaluator", "ProfanityRate", host=host)
    assert code == 2 and err == [
        f"context-bench: error: evaluator 'ProfanityRate' of plugin tox is installed but failed: {reason}"
    ]


def test_names_an_installed_plugin_that_failed_to_import_would_offer_say_so(capsys, installed, tmp_path):
    installed(EntryPoint("cbench-tox", error=ImportError("No module named 'detoxify'")))
    failed = f"plugin cbench-tox is installed but failed: {IMPORT_FAILED}"
    code, _, err = cli(capsys, "score", responses(tmp_path), "--evaluator", "ProfanityRate")
    assert code == 2 and err == [
        f"context-bench: plugin cbench-tox failed: {IMPORT_FAILED}",
        "context-bench: error: no loaded plugin registers an evaluator named 'ProfanityRate' "
        f"(available: {CORE_EVALUATORS}); {failed}",
    ]
    code, _, err = cli(capsys, "run", "--proxy", "http://127.0.0.1:9", "--dataset", "toxic")
    assert code == 2 and err[-1].startswith("context-bench: error: unknown data set 'toxic'")
    assert err[-1].endswith(f"; {failed}")
    code, _, err = cli(capsys, "tox")
    assert (
        code == 2
        and err[-1] == f"context-bench: error: no loaded plugin adds a command named 'tox'; {failed}"
    )
    code, _, err = cli(capsys, "score", responses(tmp_path), "--executor", "spark")
    assert (
        code == 2
        and err[-1] == f"context-bench: error: no executor named 'spark'; installed: local; {failed}"
    )


def test_names_a_disabled_plugin_would_offer_say_so(capsys, installed, tmp_path):
    installed(EntryPoint("cbench-tox", module=tox()))
    assert cli(capsys, "tox")[:2] == (0, "tox says hi\n")
    disabled = "plugin cbench-tox is disabled by -p no:cbench-tox"
    code, _, err = cli(capsys, "tox", "-p", "no:cbench-tox")
    assert code == 2 and err == [
        f"context-bench: error: no loaded plugin adds a command named 'tox'; {disabled}"
    ]
    code, _, err = cli(
        capsys, "-p", "no:cbench-tox", "score", responses(tmp_path), "--evaluator", "ProfanityRate"
    )
    assert code == 2 and err == [
        "context-bench: error: no loaded plugin registers an evaluator named 'ProfanityRate' "
        f"(available: {CORE_EVALUATORS}); {disabled}"
    ]
    code, _, err = cli(
        capsys, "run", "--proxy", "http://127.0.0.1:9", "--dataset", "toxic", "-p", "no:cbench-tox"
    )
    assert code == 2 and err[-1].endswith(f"; {disabled}")


# -- a run left with no evaluator ------------------------------------------------------------------------


def test_a_run_a_failed_plugin_left_without_evaluators_exits_2_before_any_row(capsys, installed, tmp_path):
    rows = tmp_path / "toxic.jsonl"
    rows.write_text(json.dumps({"id": "1", "question": "say something"}) + "\n", encoding="utf-8")
    with FakeServer(lambda body: "darn it") as server:
        installed(EntryPoint("cbench-tox", error=ImportError("No module named 'detoxify'")))
        code, _, err = cli(capsys, "run", "--proxy", server.url, "--dataset", str(rows))
        assert code == 2 and server.requests == []
        assert err[-2:] == [
            "context-bench: evaluators: toxic: none",
            "context-bench: error: no evaluator scores any row of this run: "
            f"plugin cbench-tox is installed but failed: {IMPORT_FAILED}",
        ]
        code, _, err = cli(capsys, "score", responses(tmp_path))
        assert code == 2 and err[-1].startswith("context-bench: error: no evaluator scores any row")
        installed(EntryPoint("cbench-tox", module=tox()))
        code, out, err = cli(capsys, "run", "--proxy", server.url, "--dataset", str(rows), "--output", "json")
        assert code == 0 and json.loads(out)["rows"][0]["scores"] == {"profanity": 1.0}, err
        installed()  # no plugin failed: a run no evaluator scores measures cost and latency alone
        code, out, err = cli(capsys, "run", "--proxy", server.url, "--dataset", str(rows), "--output", "json")
        assert code == 0 and json.loads(out)["rows"][0]["scores"] == {}, err
