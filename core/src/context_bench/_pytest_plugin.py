"""The pytest plugin (entry point ``pytest11``): evaluations as tests.

pytest loads it in every session where context-bench is installed, so it defines hooks and
fixtures only and imports the runner when a test first evaluates.  ``import context_bench`` never
imports this module (pytest stays optional).

- ``cbench_evaluate(system, dataset, config=None, **kwargs)``: a fixture returning a function that
  runs :func:`context_bench.evaluate` (no progress line) on rows, a file path or a registered
  data set name, and returns the :class:`~context_bench.EvalResult`;
- ``cbench_endpoint``: a fixture giving the endpoint URL from ``--cbench-endpoint URL`` or
  ``$CBENCH_ENDPOINT``, and skipping the test when neither is set;
- ``@pytest.mark.cbench_endpoint``: the same skip for a test that takes no fixture;
- :func:`context_bench.assert_scores` makes the assertion.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ENDPOINT_VARIABLE = "CBENCH_ENDPOINT"
MARKER = "cbench_endpoint"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("context-bench")
    group.addoption(
        "--cbench-endpoint",
        metavar="URL",
        default=None,
        help=f"the endpoint evaluation tests run against (default ${ENDPOINT_VARIABLE}); tests marked "
        f"{MARKER} or using the cbench_endpoint fixture are skipped without one",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}: an evaluation against an endpoint; skipped unless --cbench-endpoint URL or "
        f"${ENDPOINT_VARIABLE} names one",
    )


def configured_endpoint(config: pytest.Config) -> str | None:
    """``--cbench-endpoint``, else ``$CBENCH_ENDPOINT``; None when neither is set (or blank)."""
    url = config.getoption("--cbench-endpoint") or os.environ.get(ENDPOINT_VARIABLE, "")
    return url.strip() or None


def _skip_reason() -> str:
    return f"no endpoint configured (--cbench-endpoint URL or ${ENDPOINT_VARIABLE})"


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker(MARKER) is not None and configured_endpoint(item.config) is None:
        pytest.skip(_skip_reason())


@pytest.fixture
def cbench_endpoint(request: pytest.FixtureRequest) -> str:
    """The configured endpoint URL; the test is skipped when there is none."""
    url = configured_endpoint(request.config)
    if url is None:
        pytest.skip(_skip_reason())
    return url


@pytest.fixture
def cbench_evaluate() -> Callable[..., Any]:
    """``cbench_evaluate(system, dataset, config=None, *, host=None)``: run an evaluation, return
    its result.

    ``dataset`` is a list of rows, a path to a JSONL, JSON or CSV file, or a registered data set
    name (looked up on ``host`` when given, like the runner's); ``config`` is the run's
    :class:`~context_bench.config.RunConfig` (None: the defaults, without the progress line).
    Keywords of :func:`context_bench.evaluate` go to it (the deprecated flat ones too).
    """

    def run(system: Any, dataset: Any, config: Any = None, *, host: Any = None, **kwargs: Any) -> Any:
        from .config import LEGACY_NAMES, Output, RunConfig
        from .datasets import load
        from .runner import evaluate

        settings = {key: kwargs.pop(key) for key in list(kwargs) if key in LEGACY_NAMES}
        if config is None and not settings:
            config = RunConfig(output=Output(progress=False))
        elif settings:
            settings.setdefault("progress", False)
        if isinstance(dataset, (str, Path)):
            limit = (
                config.scope.max_examples
                if isinstance(config, RunConfig)
                else settings.pop("max_examples", None)
            )
            dataset = load(str(dataset), max_examples=limit, host=host, kind="rows")
        return evaluate(system, dataset, config, host=host, **kwargs, **settings)

    return run
