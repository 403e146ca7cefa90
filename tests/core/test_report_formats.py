"""Report formats come through the ``cbench_register_formats`` hook, the core's own too: a test
plugin adds a format, ``--output`` offers it, ``run``, ``score``, ``show`` and ``compare`` write it,
a streaming one is handed each row as it finishes, and a name the core or another plugin has is
refused, that format alone, in one line."""

from __future__ import annotations

import json
import os
import sys
import types
import warnings

import attrs
import pytest

from context_bench import CommandSpec, EvalResult, FormatSpec, hookimpl
from context_bench.cli import main
from context_bench.errors import PluginError, UsageError
from context_bench.plugins import PluginHost, PluginWarning
from context_bench.reports import View, formats, render, summary_of
from context_bench.testing import check_plugin, isolated_host

CORE = ("table", "markdown", "json", "jsonl", "html", "csv")


def tsv(result: EvalResult, view: View) -> str:
    """Each row's system, data set, id and f1, then each group's mean f1 from the summary."""
    lines = ["system\tdataset\tid\tf1"]
    lines += [f"{r.system}\t{r.dataset}\t{r.example_id}\t{r.scores.get('f1', '')}" for r in result.rows]
    lines += [f"# {g.system}/{g.dataset}: mean f1 {g.scores['f1']:g}" for g in summary_of(result).groups]
    return "\n".join(lines) + "\n"


#: What the streaming format saw, in order: ("row", id) as each row finished, ("finish", rows held).
SEEN: list[tuple[str, object]] = []


class IdStream:
    """The ``ids`` format: each row's id written as the row finishes, then how many rows the
    finished result still holds (none: the rows streamed)."""

    def __init__(self, output):
        self.output = output
        self.lines: list[str] = []

    def __enter__(self):
        return self.add

    def add(self, row):
        SEEN.append(("row", row.example_id))
        self.lines.append(f"{row.example_id}\n")

    def __exit__(self, *exc):
        pass

    def finish(self, result):
        SEEN.append(("finish", len(result.rows)))
        text = "".join(self.lines) + f"{len(result.rows)} rows held\n"
        if self.output.out:
            with open(self.output.out, "w", encoding="utf-8") as handle:
                handle.write(text)
        else:
            sys.stdout.write(text)
        return 0


def ids(result: EvalResult, view: View) -> str:
    return "".join(f"{row.example_id}\n" for row in result.rows) + f"{len(result.rows)} rows held\n"


TSV = FormatSpec("tsv", tsv, "tab-separated rows, then each group's mean f1", extension=".tsv")
IDS = FormatSpec("ids", ids, "each row's id as it finishes", extension=".txt", stream=IdStream)


def plugin(name, *specs):
    """A plugin module registering ``specs`` through ``cbench_register_formats``."""
    module = types.ModuleType(name)
    module.CBENCH_PLUGIN_API = 1

    def cbench_register_formats(register):
        for spec in specs:
            register(spec)

    module.cbench_register_formats = hookimpl(cbench_register_formats)
    return module


@pytest.fixture
def host():
    return isolated_host(plugin("cbench-tsv", TSV, IDS))


@pytest.fixture
def qa(write_rows):
    """Two scored rows: f1 1 and 0, so a mean of 0.5."""
    write_rows(
        [
            {"id": "q1", "question": "Capital of France?", "answer": "Paris", "response": "Paris"},
            {"id": "q2", "question": "Capital of Spain?", "answer": "Madrid", "response": "Paris"},
        ]
    )
    return "qa.jsonl"


def cli(host, *argv):
    return main([*argv, "--store", "none"] if argv[0] in ("run", "score") else list(argv), host=host)


def test_the_core_registers_its_formats_through_the_hook_first():
    host = isolated_host()
    assert formats(host) == CORE
    assert [plugin for plugin, _ in host.formats()] == ["context-bench"] * 6
    specs = {spec.name: spec for _, spec in host.formats()}
    assert [name for name, spec in specs.items() if spec.streams] == ["json", "jsonl", "html"]
    assert [name for name, spec in specs.items() if spec.summary_only] == ["table", "markdown"]
    assert check_plugin(plugin("cbench-tsv", TSV, IDS)).formats == [TSV, IDS]


def test_output_offers_a_plugin_format_with_its_description(host, capsys):
    with pytest.raises(SystemExit):
        main(["score", "--help"], host=host)
    help_text = " ".join(capsys.readouterr().out.split())
    assert "{table,markdown,json,jsonl,html,csv,tsv,ids}" in help_text
    assert "tsv: tab-separated rows, then each group's mean f1" in help_text
    assert main(["score", "--output", "tsv", "--store", "none"], host=isolated_host()) == 2
    said = capsys.readouterr().err
    assert "argument --output: invalid choice: 'tsv'" in said and said.count("\n") == 1


def test_score_writes_a_plugin_format(host, qa, capsys):
    assert cli(host, "score", qa, "--output", "tsv", "--no-progress") == 0
    assert capsys.readouterr().out == (
        "system\tdataset\tid\tf1\n"
        "responses\tqa\tq1\t1.0\n"
        "responses\tqa\tq2\t0.0\n"
        "# responses/qa: mean f1 0.5\n"
    )


def test_run_writes_a_plugin_format_to_stdout_and_out(host, qa, paris, capsys, workdir):
    lines = ["system\tdataset\tid\tf1", "proxy\tqa\tq1\t1.0", "proxy\tqa\tq2\t0.0", "# proxy/qa: mean f1 0.5"]
    # the summary's warning, said on stderr: a format that does not declare shows_warnings may not show it
    unpriced = (
        "context-bench: warning: no price for gpt-4o-mini: no dollars shown for it (--price "
        "MODEL=IN,OUT in dollars per million tokens, or --prices FILE)"
    )
    argv = ["run", "--proxy", paris.url, "--dataset", qa, "--output", "tsv", "--no-progress"]
    assert cli(host, *argv) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == lines and err.splitlines()[-1] == unpriced
    assert cli(host, *argv, "--out", "r.tsv") == 0
    assert (workdir / "r.tsv").read_text(encoding="utf-8").splitlines() == lines
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines()[-2:] == ["context-bench: wrote tsv report to r.tsv", unpriced]


def test_show_and_compare_write_a_plugin_format(host, qa, capsys, write_rows):
    assert cli(host, "score", qa, "--output", "json", "--out", "a.json", "--no-progress") == 0
    capsys.readouterr()
    assert main(["show", "a.json", "--output", "tsv"], host=host) == 0
    shown = capsys.readouterr().out
    assert shown.splitlines() == [
        "system\tdataset\tid\tf1",
        "responses\tqa\tq1\t1.0",
        "responses\tqa\tq2\t0.0",
        "# responses/qa: mean f1 0.5",
    ]
    right = [{"id": q, "answer": "Paris", "response": "Paris", "system": "other"} for q in ("q1", "q2")]
    write_rows(right, "b.jsonl")
    argv = ["b.jsonl", "--dataset-name", "qa", "--output", "json", "--out", "b.json", "--no-progress"]
    assert cli(host, "score", *argv) == 0
    capsys.readouterr()
    assert main(["compare", "a.json", "b.json", "--output", "tsv"], host=host) == 0
    assert capsys.readouterr().out.splitlines() == [
        "system\tdataset\tid\tf1",
        "responses\tqa\tq1\t1.0",
        "responses\tqa\tq2\t0.0",
        "other\tqa\tq1\t1.0",
        "other\tqa\tq2\t1.0",
        "# responses/qa: mean f1 0.5",
        "# other/qa: mean f1 1",
    ]
    assert render(EvalResult(rows=[]), "tsv", host=host) == "system\tdataset\tid\tf1\n"


def test_a_streaming_format_gets_each_row_as_it_finishes_and_the_run_holds_none(host, qa, capsys):
    SEEN.clear()
    assert cli(host, "score", qa, "--output", "ids", "--no-progress") == 0
    assert capsys.readouterr().out == "q1\nq2\n0 rows held\n"
    assert SEEN == [("row", "q1"), ("row", "q2"), ("finish", 0)]
    SEEN.clear()
    assert main(["show", "missing.json", "--output", "ids"], host=host) == 2  # before any writing
    assert SEEN == []


def test_the_file_a_format_writes_beside_out_is_checked_before_any_row_runs(host, qa, capsys, workdir):
    here = os.path.realpath(workdir)
    (workdir / "report.rows.jsonl").mkdir()  # where a big run's HTML rows would go
    assert cli(host, "score", qa, "--output", "html", "--out", "report.html", "--no-progress") == 2
    said = f"context-bench: error: --out (its rows file) {here}/report.rows.jsonl: is a directory\n"
    assert capsys.readouterr().err == said
    SEEN.clear()
    indexed = attrs.evolve(IDS, side_file=lambda out: out + ".idx")
    (workdir / "ids.txt.idx").mkdir()
    assert cli(isolated_host(plugin("ids", indexed)), "score", qa, "--output", "ids", "--out", "ids.txt") == 2
    assert (
        capsys.readouterr().err
        == f"context-bench: error: --out (its rows file) {here}/ids.txt.idx: is a directory\n"
    )
    assert SEEN == []


def test_a_format_the_core_or_another_plugin_has_is_refused_alone_in_one_line(capsys, qa):
    stolen = FormatSpec("json", tsv, "not the core's JSON")
    taker = plugin("taker", stolen, TSV)
    second = plugin("second", FormatSpec("tsv", ids, "another tsv"), IDS)
    host = PluginHost(autoload=False, allow=(), deny=(), strict=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PluginWarning)
        host.register(taker, name="taker")
        host.register(second, name="second")
    assert [str(w.message) for w in caught] == [
        "context-bench: plugin taker partial: report format 'json' is reserved for the core",
        "context-bench: plugin second partial: report format 'tsv' is already registered by taker",
    ]
    assert formats(host) == (*CORE, "tsv", "ids")
    assert host.find_format("tsv") is TSV and host.find_format("json").stream is not None
    assert cli(host, "score", qa, "--output", "json", "--no-progress") == 0
    assert json.loads(capsys.readouterr().out)["rows"][0]["scores"]["f1"] == 1.0  # the core's JSON
    with pytest.raises(PluginError, match="report format 'csv' is reserved for the core"):
        isolated_host(plugin("strict", FormatSpec("csv", tsv)))


def test_an_unknown_format_names_every_valid_one(host):
    with pytest.raises(UsageError) as info:
        render(EvalResult(rows=[]), "pdf", host=host)
    assert str(info.value) == (
        "unknown report format 'pdf'; valid formats: table, markdown, json, jsonl, html, csv, tsv, ids"
    )


def test_the_plugins_listing_shows_each_format(host, capsys):
    assert main(["plugins"], host=host) == 0
    out = capsys.readouterr().out
    assert "  report format jsonl (.jsonl, streamed): one row per line" in out
    assert "  report format tsv (.tsv): tab-separated rows, then each group's mean f1\n" in out
    assert "  report format ids (.txt, streamed): each row's id as it finishes\n" in out


def test_a_plugin_command_with_the_run_flags_offers_plugin_formats(host):
    seen = {}

    def configure(parser, host):
        from context_bench.cli import add_run_options

        add_run_options(parser, host)

    def run(args, host):
        seen["output"] = args.output
        return 0

    both = isolated_host(
        plugin("cbench-tsv", TSV), _command_plugin(CommandSpec("mine", "mine", configure, run))
    )
    assert main(["mine", "--output", "tsv"], host=both) == 0 and seen == {"output": "tsv"}


def _command_plugin(spec):
    module = types.ModuleType("cbench-mine")
    module.CBENCH_PLUGIN_API = 1
    module.cbench_register_commands = hookimpl(lambda register: register(spec))
    return module


def test_the_formats_tuple_of_earlier_releases_still_reads_with_a_deprecation_warning():
    import context_bench.reports as reports

    with pytest.warns(DeprecationWarning, match=r"call context_bench.reports.formats\(\)"):
        assert reports.FORMATS == formats()
    assert formats()[:6] == CORE
