"""The core's catalog of named hub data sets: specs only, so listing it imports no loader.

Each family module holds a ``SPECS`` list of :class:`~context_bench.specs.DatasetSpec` whose
loaders live in ``context_bench.hub.<family>`` and run only when a run names the data set.
"""

from __future__ import annotations

from ..specs import DatasetSpec
from . import agents, choice, longcontext, nli, qa, reasoning, summarization

SPECS: list[DatasetSpec] = [
    *qa.SPECS,
    *choice.SPECS,
    *reasoning.SPECS,
    *summarization.SPECS,
    *nli.SPECS,
    *longcontext.SPECS,
    *agents.SPECS,
]
