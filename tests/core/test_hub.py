"""Hub data sets load only on request and fail with one clear line when they cannot."""

from __future__ import annotations

import sys
import types

import pytest

from context_bench import DatasetUnavailable
from context_bench.cli import main
from context_bench.datasets import load
from context_bench.testing import isolated_host


def test_missing_datasets_package_names_the_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(DatasetUnavailable, match=r"pip install 'context-bench\[hub\]'"):
        load("mmlu", host=isolated_host())
    assert main(["run", "--proxy", "http://127.0.0.1:9", "--dataset", "arc-challenge"]) == 2
    assert "context-bench[hub]" in capsys.readouterr().err


def test_unreachable_hub_is_one_clear_error(monkeypatch):
    def offline(*args, **kwargs):
        raise ConnectionError("no route to huggingface.co")

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=offline))
    with pytest.raises(
        DatasetUnavailable, match="could not load 'rajpurkar/squad' from the hub: ConnectionError"
    ):
        load("squad", host=isolated_host())


def test_hub_rows_come_out_in_evaluator_layout(monkeypatch):
    fake = [{"question": "2+2?", "choices": ["3", "4"], "answer": 1, "subject": "math"}]
    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=lambda *a, **k: fake))
    rows = load("mmlu", host=isolated_host()).rows
    assert (
        rows[0]["correct_letter"] == "B" and "B. 4" in rows[0]["question"] and rows[0]["id"] == "mmlu-math-0"
    )
