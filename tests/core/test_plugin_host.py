"""The plugin host: isolation, duplicates, versions, laziness, allow/deny lists."""

from __future__ import annotations

import sys
import types
import warnings

import pytest

import context_bench
from context_bench import AutowireRule, EvaluatorSpec, Output, RunConfig, Scope, SecondPass, hookimpl
from context_bench.errors import AmbiguousEvaluator, EvaluatorNotFound, PluginError
from context_bench.plugins import PluginHost, PluginWarning
from context_bench.testing import check_evaluator, check_plugin, isolated_host

QUIET = RunConfig(output=Output(progress=False))


class Upper:
    name = "upper"

    def score(self, original, processed):
        return {"upper": float(str(processed.get("response", "")).isupper())}


def make_plugin(name, evaluators=(), rules=(), api=1, register_raises=None):
    module = types.ModuleType(name)
    if api is not None:
        module.CBENCH_PLUGIN_API = api

    @hookimpl
    def cbench_register_evaluators(register):
        if register_raises:
            raise register_raises
        for spec in evaluators:
            register(spec)

    @hookimpl
    def cbench_register_autowire(register):
        for rule in rules:
            register(rule)

    module.cbench_register_evaluators = cbench_register_evaluators
    module.cbench_register_autowire = cbench_register_autowire
    return module


def lenient_host(*plugins):
    host = PluginHost(autoload=False, strict=False)
    host.ensure_loaded()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for plugin in plugins:
            host.register(plugin, name=plugin.__name__)
    return host, [str(w.message) for w in caught if issubclass(w.category, PluginWarning)]


def test_builtin_evaluators_are_registered_through_the_hooks():
    host = isolated_host()
    names = [spec.name for _, spec in host.evaluator_specs()]
    assert names[:4] == ["AnswerQuality", "MultipleChoiceAccuracy", "NLILabelMatch", "SummarizationQuality"]
    assert host.plugins["context-bench"].status == "loaded"


def test_registration_error_is_isolated_with_one_warning_naming_the_plugin():
    good = make_plugin("good", [EvaluatorSpec("Upper", Upper, fields=["upper"])])
    bad = make_plugin(
        "bad", [EvaluatorSpec("Never", Upper, fields=["x"])], register_raises=RuntimeError("boom")
    )
    host, messages = lenient_host(bad, good)
    assert host.plugins["bad"].status == "failed"
    assert "boom" in host.plugins["bad"].reason
    assert len(messages) == 1 and "bad" in messages[0] and "boom" in messages[0]
    assert host.has_evaluator("Upper") and not host.has_evaluator("Never")
    assert "bad" not in [p.name for p in host.loaded()]


def test_strict_mode_raises_on_a_broken_plugin():
    bad = make_plugin("bad", register_raises=ValueError("nope"))
    host = PluginHost(autoload=False, strict=True)
    with pytest.raises(PluginError, match="bad.*nope"):
        host.register(bad, name="bad")


def test_incompatible_api_version_is_skipped_before_any_hook_runs():
    called = []
    plugin = make_plugin("future", api=2)
    plugin.cbench_register_evaluators = hookimpl(lambda register: called.append(1))
    host, messages = lenient_host(plugin)
    info = host.plugins["future"]
    assert info.status == "incompatible"
    assert "plugin API 2" in info.reason and "provides API 1" in info.reason
    assert called == [] and messages


def test_missing_api_declaration_is_incompatible():
    host, _ = lenient_host(make_plugin("old", api=None))
    assert host.plugins["old"].status == "incompatible"
    assert "does not declare CBENCH_PLUGIN_API" in host.plugins["old"].reason


def test_duplicate_names_stay_reachable_by_qualified_name():
    one = make_plugin("one", [EvaluatorSpec("Shout", Upper, fields=["upper"])])
    two = make_plugin("two", [EvaluatorSpec("Shout", "json:dumps", fields=["y"])])
    host, _ = lenient_host(one, two)
    assert host.find_evaluator("one/Shout").factory is Upper
    assert host.find_evaluator("two/Shout").factory == "json:dumps"
    with pytest.raises(AmbiguousEvaluator) as error:
        host.find_evaluator("Shout")
    assert "one/Shout" in str(error.value) and "two/Shout" in str(error.value)


def test_builtin_names_are_reserved():
    thief = make_plugin("thief", [EvaluatorSpec("AnswerQuality", Upper, fields=["f1"])])
    host, messages = lenient_host(thief)
    assert host.plugins["thief"].status == "failed"
    assert "reserved" in host.plugins["thief"].reason
    assert host.find_evaluator("AnswerQuality").factory != Upper


def test_registering_the_wrong_record_type_fails_the_plugin():
    plugin = make_plugin("sloppy")
    plugin.cbench_register_evaluators = hookimpl(lambda register: register({"name": "x"}))
    host, _ = lenient_host(plugin)
    assert host.plugins["sloppy"].status == "failed"
    assert "expected a EvaluatorSpec" in host.plugins["sloppy"].reason


def test_missing_evaluator_error_names_the_distribution():
    host = isolated_host()
    with pytest.raises(EvaluatorNotFound, match="pip install cbench-math"):
        host.find_evaluator("MathEquivalence")
    with pytest.raises(EvaluatorNotFound, match="available: .*AnswerQuality"):
        host.find_evaluator("NoSuchThing")


def test_lazy_factories_are_not_imported_by_listing():
    module_name = "cbench_test_heavy_module"
    plugin = make_plugin("lazy", [EvaluatorSpec("Heavy", f"{module_name}:Heavy", fields=["h"])])
    host = isolated_host(plugin)
    assert [s.name for _, s in host.evaluator_specs()][-1] == "Heavy"
    assert module_name not in sys.modules


def test_check_helpers_accept_a_good_plugin_and_evaluator():
    plugin = make_plugin(
        "helpers",
        [EvaluatorSpec("Upper", Upper, fields=["upper"])],
        [AutowireRule("Upper", datasets=["shouting"])],
    )
    info = check_plugin(plugin)
    assert [e.name for e in info.evaluators] == ["Upper"]
    assert check_evaluator(Upper(), {}, {"response": "HEY"}) == {"upper": 1.0}


def test_check_evaluator_rejects_non_float_scores():
    class Bad:
        name = "bad"

        def score(self, original, processed):
            return {"x": "1"}

    with pytest.raises(AssertionError, match="not a float"):
        check_evaluator(Bad(), {}, {"response": ""})


def test_protocols_are_structural():
    assert isinstance(Upper(), context_bench.Evaluator)
    assert not isinstance(object(), context_bench.Evaluator)


def test_environment_controls(monkeypatch):
    monkeypatch.setenv("CBENCH_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert PluginHost().autoload is False
    monkeypatch.setenv("CBENCH_PLUGINS", "cbench-math, cbench-code")
    assert PluginHost().allow == {"cbench-math", "cbench-code"}
    monkeypatch.setenv("CBENCH_STRICT_PLUGINS", "1")
    assert PluginHost().strict is True


# -- commands, option routing, rules that say which runs they serve ----------------------------


class Seen:
    """An evaluator whose build records the options it was given."""

    name = "seen"

    def score(self, original, processed):
        return {"seen": 1.0}


def _option_plugin(name, flag, dest, seen=None):
    module = types.ModuleType(name)
    module.CBENCH_PLUGIN_API = 1

    @hookimpl
    def cbench_add_options(group):
        group.add_argument(flag, dest=dest)

    module.cbench_add_options = cbench_add_options
    if seen is not None:

        @hookimpl
        def cbench_register_evaluators(register):
            register(EvaluatorSpec("Seen", Seen))

        @hookimpl
        def cbench_register_autowire(register):
            register(
                AutowireRule("Seen", datasets=("*",), build=lambda options: seen.update(options) or Seen())
            )

        module.cbench_register_evaluators = cbench_register_evaluators
        module.cbench_register_autowire = cbench_register_autowire
    return module


def test_a_plugin_gets_its_own_options_the_shared_ones_and_undeclared_keys_only(tmp_path):
    seen: dict = {}
    host = isolated_host(
        _option_plugin("mine", "--mine-level", "mine_level", seen),
        _option_plugin("other", "--other-x", "other_x"),
    )
    options = {"mine_level": 3, "other_x": "secret", "free_key": 1}
    context_bench.evaluate(
        None,
        [{"id": "1", "response": "r"}],
        RunConfig(output=Output(cache_dir=tmp_path, progress=False), plugins=options),
        host=host,
    )
    assert seen == {"mine_level": 3, "free_key": 1, "cache_dir": str(tmp_path)}
    assert host.option_dests() == {"mine_level", "other_x"}


def test_a_rule_serves_only_the_runs_it_names():
    only_memory = make_plugin(
        "only_memory",
        [EvaluatorSpec("Upper", Upper)],
        [AutowireRule("Upper", datasets=("*",), runs=("memory",))],
    )
    host = isolated_host(only_memory)
    rows = [{"id": "1", "response": "HI"}]
    assert context_bench.evaluate(None, rows, QUIET, host=host).rows[0].scores == {}
    memory = context_bench.evaluate(None, rows, QUIET, host=host, second_pass=SecondPass(kind="memory"))
    assert memory.rows[0].scores == {"upper": 1.0}
    with pytest.raises(ValueError):
        AutowireRule("Upper", datasets=("*",), runs=("conversations",))


def _command_plugin(name, command):
    module = types.ModuleType(name)
    module.CBENCH_PLUGIN_API = 1

    @hookimpl
    def cbench_register_commands(register):
        register(command)

    module.cbench_register_commands = cbench_register_commands
    return module


def test_a_command_name_is_taken_once():
    from context_bench import CommandSpec

    noop = CommandSpec("hello", "say hello", lambda parser, host: None, lambda args, host: 0)
    for core in ("run", "compare", "plugins"):
        with pytest.raises(PluginError, match=f"command '{core}' is reserved for the core"):
            isolated_host(_command_plugin("taker", CommandSpec(core, "no", noop.configure, noop.run)))
    with pytest.raises(PluginError, match="command 'hello' is already added by first"):
        isolated_host(_command_plugin("first", noop), _command_plugin("second", noop))
    host = isolated_host(_command_plugin("first", noop))
    assert [(plugin, c.name) for plugin, c in host.commands()][-1] == ("first", "hello")
    assert host.plugins["first"].to_dict()["commands"] == [{"name": "hello", "help": "say hello"}]


def test_evaluate_memory_without_cbench_memory_names_the_distribution(monkeypatch):
    monkeypatch.delitem(context_bench.__dict__, "evaluate_memory", raising=False)
    monkeypatch.setitem(sys.modules, "cbench_memory", None)  # as when the plugin is not installed
    with pytest.raises(
        ImportError, match=r"cbench-memory plugin, which is not installed \(pip install cbench-memory\)"
    ):
        from context_bench import evaluate_memory  # noqa: F401


class Lower:
    name = "lower"

    def score(self, original, processed):
        return {"lower": float(str(processed.get("response", "")).islower())}


def _clashing_host():
    """``real`` registers Shout with a rule on rows with ``shout``; ``evil`` reuses the name."""
    real = make_plugin(
        "real", [EvaluatorSpec("Shout", Upper, fields=["upper"])], [AutowireRule("Shout", fields=("shout",))]
    )
    evil = make_plugin("evil", [EvaluatorSpec("Shout", Lower, fields=["lower"])])
    host, _ = lenient_host(real, evil)
    return host


def test_a_name_clash_does_not_break_auto_wiring_of_rows_that_do_not_use_it():
    host = _clashing_host()
    qa = [{"id": "1", "answer": "Paris", "response": "Paris"}]
    result = context_bench.evaluate(None, qa, QUIET, host=host)
    assert result.rows[0].scores["exact_match"] == 1.0 and not result.rows[0].errors
    # The rule's own plugin registers the name: its rule wires its own evaluator, not the other's.
    shouted = [{"id": "1", "shout": 1, "response": "LOUD"}]
    result = context_bench.evaluate(None, shouted, QUIET, host=host)
    assert result.rows[0].scores == {"upper": 1.0}


def test_a_qualified_name_builds_exactly_that_plugins_evaluator():
    host = _clashing_host()
    rows = [{"id": "1", "response": "quiet"}]
    evil = context_bench.evaluate(
        None,
        rows,
        RunConfig(scope=Scope(evaluators=["evil/Shout"]), output=Output(progress=False)),
        host=host,
    )
    assert evil.rows[0].scores == {"lower": 1.0}
    real = context_bench.evaluate(
        None,
        rows,
        RunConfig(scope=Scope(evaluators=["real/Shout"]), output=Output(progress=False)),
        host=host,
    )
    assert real.rows[0].scores == {"upper": 0.0}
    with pytest.raises(AmbiguousEvaluator):
        context_bench.evaluate(
            None, rows, RunConfig(scope=Scope(evaluators=["Shout"]), output=Output(progress=False)), host=host
        )
    with pytest.raises(EvaluatorNotFound, match="no plugin 'nobody' registers 'Shout'"):
        host.find_evaluator("nobody/Shout")


def test_a_qualified_name_does_not_borrow_another_plugins_build():
    """cbench-evil/MathEquivalence once built cbench-math's evaluator through cbench-math's rule."""
    real = make_plugin(
        "real",
        [EvaluatorSpec("Shout", Upper, fields=["upper"])],
        [AutowireRule("Shout", fields=("shout",), build=lambda options: Upper())],
    )
    evil = make_plugin("evil", [EvaluatorSpec("Shout", Lower, fields=["lower"])])
    host, _ = lenient_host(real, evil)
    rows = [{"id": "1", "response": "quiet"}]
    assert context_bench.evaluate(
        None,
        rows,
        RunConfig(scope=Scope(evaluators=["evil/Shout"]), output=Output(progress=False)),
        host=host,
    ).rows[0].scores == {"lower": 1.0}
