"""cbench-ray as a plugin: what it registers, its flags, and that listing it starts no Ray."""

from __future__ import annotations

import json
import subprocess
import sys

import cbench_ray.plugin
from cbench_ray.executor import RayExecutor
from context_bench.cli._app import main
from context_bench.testing import check_plugin


def test_the_plugin_registers_the_ray_executor_and_the_flags_it_takes():
    info = check_plugin(cbench_ray.plugin)
    [spec] = info.executors
    assert (spec.name, spec.options) == ("ray", ("ray_address", "ray_batch_size"))
    built = spec.build(16, 30.0, {"ray_address": "auto", "ray_batch_size": None, "judge_url": "x"})
    assert isinstance(built, RayExecutor)
    assert (built.max_concurrency, built.call_timeout, built.address, built.batch_size) == (
        16,
        30.0,
        "auto",
        None,
    )
    assert info.info["ray"][0].isdigit()


def test_plugins_lists_the_executor(capsys):
    assert main(["plugins", "--json"]) == 0
    [ray] = [p for p in json.loads(capsys.readouterr().out) if p["name"] == "cbench-ray"]
    [executor] = ray["executors"]
    assert executor["name"] == "ray" and executor["options"] == ["ray_address", "ray_batch_size"]
    assert executor["description"].startswith("rows in batches on Ray workers")


def test_a_bad_batch_size_is_refused_before_any_row_runs(capsys):
    assert main(["score", "--executor", "ray", "--ray-batch-size", "0", "--no-progress"]) == 2
    assert "--ray-batch-size: must be a whole number of rows from 1 to 1,000,000" in capsys.readouterr().err


def test_listing_and_parsing_import_no_ray():
    code = (
        "import sys; from context_bench.cli._app import main; main(['plugins']); "
        "assert 'ray' not in sys.modules, 'ray was imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
