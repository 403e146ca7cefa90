"""The plugin as the host sees it, and a run through context_bench.evaluate."""

from __future__ import annotations

import subprocess
import sys

import context_bench
from cbench_ifeval import plugin
from cbench_ifeval.checker import IFEvalChecker
from context_bench import Output, RunConfig
from context_bench.plugins import get_host
from context_bench.specs import resolve

FIELDS = ["ifeval_strict", "ifeval_loose", "ifeval_inst_strict", "ifeval_inst_loose"]


def _registered(hook):
    found = []
    hook(found.append)
    return found


def test_registers_the_evaluator_with_its_four_fields():
    (spec,) = _registered(plugin.cbench_register_evaluators)
    assert spec.name == "IFEvalChecker"
    assert list(spec.fields) == FIELDS
    assert resolve(spec.factory) is IFEvalChecker


def test_autowires_for_the_dataset_and_for_rows_with_instruction_ids():
    rules = _registered(plugin.cbench_register_autowire)
    assert {(r.evaluator, r.datasets, r.fields) for r in rules} == {
        ("IFEvalChecker", ("ifeval",), ()),
        ("IFEvalChecker", (), ("instruction_id_list",)),
    }


def test_plugin_info_names_the_offline_models():
    info = plugin.cbench_plugin_info()
    assert "punkt_tab" in info["sentence splitting"] and "seed 0" in info["language detection"]


def test_listing_the_plugin_imports_nothing_heavy():
    script = (
        "import sys\nfrom cbench_ifeval import plugin\n"
        "plugin.cbench_register_evaluators(lambda s: None); plugin.cbench_register_datasets(lambda s: None)\n"
        "print(sorted(m for m in ('nltk', 'langdetect', 'numpy', 'punkt') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_evaluate_autowires_scores_and_reports_bad_rows():
    rows = [
        {
            "key": 1,
            "instruction_id_list": ["punctuation:no_comma", "keywords:existence"],
            "kwargs": [{}, {"keywords": ["hello"]}],
            "response": "hello world",
        },
        {"key": 2, "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}], "response": "a, b"},
        {"key": 3, "instruction_id_list": ["detectable_format:haiku"], "kwargs": [{}], "response": "x"},
    ]
    result = context_bench.evaluate(None, {"ifeval": rows}, RunConfig(output=Output(progress=False)))
    by_id = {row.example_id: row for row in result.rows}
    assert by_id["1"].scores == dict.fromkeys(FIELDS, 1.0)
    assert by_id["2"].scores == dict.fromkeys(FIELDS, 0.0)
    (error,) = by_id["3"].errors
    assert error.type == "InstructionError" and "'detectable_format:haiku'" in error.message
    assert set(result.summary.systems["responses"].scores) == set(FIELDS)


def test_the_host_loads_the_plugin_through_its_entry_point():
    host = get_host()
    assert host.find_evaluator("IFEvalChecker").factory == "cbench_ifeval.checker:IFEvalChecker"
    assert host.datasets()["ifeval"][0] == "cbench-ifeval"
