"""The types are checked (issue 27): mypy's list of strict modules keeps every plugin's public
modules and the core's seams, docs/testing.md shows the checks .ci/run runs, and
bench/typing_report.py counts ``Any`` as code only."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEAMS = ("config", "defaults", "settings", "runner", "specs", "hookspecs", "_executor", "records", "_summary")


def _typing_report():
    spec = importlib.util.spec_from_file_location("typing_report", ROOT / "bench" / "typing_report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


report = _typing_report()
MYPY = report.mypy_config(ROOT)


def test_mypy_is_strict_on_the_seams_and_every_plugins_public_modules():
    files = set(MYPY["files"])
    assert MYPY["strict"] is True
    assert all((ROOT / name).is_file() for name in files)
    assert {f"core/src/context_bench/{seam}.py" for seam in SEAMS} <= files
    plugins = [path for path in (ROOT / "plugins").iterdir() if (path / "pyproject.toml").is_file()]
    assert len(plugins) == 8
    for plugin in plugins:
        (package,) = (plugin / "src").iterdir()
        public = {f"plugins/{plugin.name}/src/{package.name}/{name}" for name in ("__init__.py", "plugin.py")}
        assert public <= files, plugin.name


def test_the_documented_checks_are_the_ones_ci_runs():
    testing = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"## The checks beside the suite\n.*?```sh\n(.*?)```", testing, re.S)
    documented = {part.split("#")[0].strip() for line in block.splitlines() for part in line.split("&&")}
    ci = {line.split("||")[0].strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()}
    assert documented == {"lint-imports", "ruff check .", "ruff format --check .", "mypy"}
    assert documented <= ci


def test_the_report_counts_any_in_code_not_in_comments_or_strings():
    source = (
        "from typing import Any  # Any in a comment\n"
        'x: Any = "Any in a string"\n'
        "def f(a: dict[str, Any], b: AnyStr) -> Any:\n"
        '    """Any in a docstring."""\n'
    )
    assert report.count_any(source) == 4
    assert report.count_any("") == 0
    assert report.module_name(Path("core/src/context_bench/config.py")) == "context_bench.config"
    assert report.module_name(Path("plugins/cbench-ray/src/cbench_ray/__init__.py")) == "cbench_ray"
