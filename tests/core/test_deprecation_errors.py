"""The repository's pytest configuration makes our own DeprecationWarnings errors (issue 27): a test
that goes on using a name of earlier releases fails, a test of the deprecated path passes with
pytest.warns, and another library's DeprecationWarning stays a warning."""

from __future__ import annotations

from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the core brings tomli there
    import tomli as tomllib

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]

TESTS = """
import pytest

from context_bench import evaluate
from context_bench.cli._run_options import RunOptions

ROWS = [{"id": "1", "answer": "Paris", "response": "Paris"}]


def test_old_keywords():
    evaluate(None, ROWS, progress=False)


def test_old_run_options_field():
    RunOptions().max_examples


def test_old_formats_tuple():
    import context_bench.reports

    context_bench.reports.FORMATS


def test_the_deprecated_path_asserted():
    with pytest.warns(DeprecationWarning, match="progress= is deprecated"):
        evaluate(None, ROWS, progress=False)


def test_another_librarys_deprecation_of_a_name_the_test_calls():
    import oldlib

    oldlib.old()  # the warning is the test's line, as ours are


def test_another_librarys_deprecation_inside_it():
    import oldlib

    oldlib.inside()
"""

#: Another library's deprecations: one of a name its caller uses (stacklevel=2, the warning is the
#: caller's line), one inside the library itself.
LIBRARY = """
import warnings


def old():
    warnings.warn("oldlib.old is deprecated: use oldlib.new", DeprecationWarning, stacklevel=2)


def inside():
    warnings.warn("oldlib.inside is deprecated", DeprecationWarning)
"""


def test_our_deprecations_fail_a_test_and_another_librarys_do_not(pytester):
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    filters = settings["tool"]["pytest"]["ini_options"]["filterwarnings"]
    pytester.makeini("[pytest]\nfilterwarnings =\n" + "".join(f"    {line}\n" for line in filters))
    pytester.makepyfile(test_old_names=TESTS, oldlib=LIBRARY)
    # in a process of its own: an in-process run drops the extension modules it imported (numpy and
    # friends), which cannot be imported twice
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=3, warnings=2)
    for name in ("test_old_keywords", "test_old_run_options_field", "test_old_formats_tuple"):
        result.stdout.fnmatch_lines([f"FAILED test_old_names.py::{name} - DeprecationWarning: *"])
