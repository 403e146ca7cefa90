"""Whose token counts the savings are, said in every format: the key figures' title names each
group's ``tokens_source`` (metered, counted, reported) in the table, Markdown and HTML, as the JSON
report's groups do."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from context_bench.cli import main
from context_bench.records import GroupSummary, Summary
from context_bench.reports._figure_sections import key_figures
from context_bench.testing import FakeServer, Reply

_spec = importlib.util.spec_from_file_location("cbench_browser", Path(__file__).parents[1] / "browser.py")
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)

TITLE = "Key figures (pass: f1 ≥ 0.7; in/out: mean tokens per row{}; front: rank)"


def _run(capsys, tmp_path, fmt, *flags, detail=True):
    data = tmp_path / "qa.jsonl"
    data.write_text(
        "".join(json.dumps({"id": str(n), "question": "q", "answer": "Paris"}) + "\n" for n in range(2))
    )
    with FakeServer(lambda body: Reply("Paris", usage={"prompt_tokens": 7, "completion_tokens": 1})) as model:
        run = ["run", *flags, "--proxy", model.url, "--name", "a", "--proxy", model.url, "--name", "b"]
        if "--meter" in flags:
            run[run.index("--meter") + 1] = model.url
        code = main([*run, "--dataset", str(data), "--output", fmt, "--no-progress", *["--detail"] * detail])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


@pytest.mark.parametrize(("flags", "source"), [(("--meter", "URL"), "metered"), ((), "reported")])
def test_the_table_and_markdown_say_whose_tokens(capsys, tmp_path, flags, source):
    assert TITLE.format(f", {source}") in _run(capsys, tmp_path, "table", *flags).splitlines()
    assert f"### {TITLE.format(f', {source}')}" in _run(capsys, tmp_path, "markdown", *flags)
    screen = f"Key figures (pass: f1 ≥ 0.7; in/out: tokens/row, {source}; -v: every table)"
    assert screen in _run(capsys, tmp_path, "table", *flags, detail=False).splitlines()


@pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")
def test_the_html_report_says_whose_tokens_in_chromium(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _run(capsys, tmp_path, "html", "--meter", "URL", "--out", "report.html")
    dom, errors = browser.dump_dom(tmp_path / "report.html")
    assert errors == []
    assert f"<h2>{TITLE.format(', metered')}</h2>" in dom


def _group(system, dataset, source):
    return GroupSummary(system=system, dataset=dataset, tokens_source=source)


@pytest.mark.parametrize(
    ("sources", "said"),
    [
        ([None, None], ""),
        (["counted", "counted"], ", counted"),
        (["metered", "reported", None], " metered on qa, reported on long"),
    ],
)
def test_each_source_is_named_with_its_data_sets_where_they_differ(sources, said):
    sets = ["qa", "long", "long"]
    groups = [_group("s", dataset, source) for dataset, source in zip(sets, sources, strict=False)]
    (section,) = key_figures(Summary(groups=groups))
    assert section.title == TITLE.format(said)
