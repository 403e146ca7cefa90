"""A saved summary read back (context_bench.saved): the typed Summary whose to_dict() is the saved
one, which every report renders as it renders the live run's."""

from __future__ import annotations

import json

from context_bench import Output, RunConfig, evaluate
from context_bench.cli import sample_path
from context_bench.datasets import read_file
from context_bench.records import EvalResult, Summary
from context_bench.reports import render
from context_bench.saved import summary_from_dict


def _live() -> EvalResult:
    rows = list(read_file(str(sample_path())))
    return evaluate(None, {"sample": rows}, RunConfig(output=Output(progress=False)))


def test_a_saved_summary_reads_back_to_the_same_summary_and_the_same_reports():
    live = _live()
    saved = json.loads(json.dumps(live.summary.to_dict()))
    back = summary_from_dict(saved)
    assert back == live.summary
    assert back.to_dict() == saved
    metadata = {"date": "2026-11-27T00:00:00+00:00"}
    for fmt in ("table", "markdown", "html"):
        assert render(EvalResult([], back, metadata=metadata), fmt) == render(
            EvalResult([], live.summary, metadata=metadata), fmt
        ), fmt


def test_fields_a_saved_summary_lacks_take_their_defaults_and_unknown_ones_are_left_out():
    back = summary_from_dict({"groups": [{"system": "s", "dataset": "d", "rows": 2, "later": 1}], "new": 3})
    [group] = back.groups
    assert back == Summary(groups=[group])
    assert (group.system, group.dataset, group.rows, group.errors, group.scores) == ("s", "d", 2, 0, {})
    assert back.errors.total == 0 and back.comparisons == []
