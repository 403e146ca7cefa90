"""Summary sections come through ``cbench_register_sections``: a test plugin's section is given
every finished row, its records land in ``summary.<name>`` and in every report, the gates read its
figures (a field no group and no section has stays a usage error), its failed work fails the run
(exit 4), a name the summary or another plugin has is refused, and a saved report reads it back."""

from __future__ import annotations

import json
import types

import pytest

from context_bench import SectionSpec, hookimpl
from context_bench.cli import main
from context_bench.errors import UsageError
from context_bench.metrics.intervals import wilson
from context_bench.plugins import PluginHost, PluginWarning
from context_bench.saved import summary_from_dict
from context_bench.summary_sections import Figure, SummarySection
from context_bench.testing import check_plugin, isolated_host


class YesShare:
    """Per (system, data set): the share of rows answered "yes"; a row answered "ERR" is failed
    work, left out of ``n``."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], list[int]] = {}

    def add(self, row) -> None:
        counts = self.counts.setdefault((row.system, row.dataset), [0, 0, 0])  # yes, n, failed
        if row.response == "ERR":
            counts[2] += 1
        else:
            counts[0] += row.response == "yes"
            counts[1] += 1

    def finish(self) -> SummarySection:
        records = [
            {"system": s, "dataset": d, "yes": yes, "n": n, "share": yes / n, "ci": list(wilson(yes, n))}
            for (s, d), (yes, n, _) in self.counts.items()
        ]
        failed = sum(c[2] for c in self.counts.values())
        total = failed + sum(c[1] for c in self.counts.values())
        return SummarySection(
            "Share of yes",
            records,
            figures=(Figure("share", "ci"),),
            failed=failed,
            total=total,
            failure="ERR" if failed else None,
            unit="rows",
        )


def share(config, options):
    return YesShare()


def plugin(name, *specs):
    module = types.ModuleType(name)
    module.CBENCH_PLUGIN_API = 1

    def cbench_register_sections(register):
        for spec in specs:
            register(spec)

    module.cbench_register_sections = hookimpl(cbench_register_sections)
    return module


SHARE = SectionSpec("share", share, "the share of rows answered yes")


@pytest.fixture
def host():
    return isolated_host(plugin("cbench-share", SHARE))


@pytest.fixture
def rows(write_rows):
    """base: 2 yes of 4; cand: 3 yes of 4."""
    answers = {"base": ["yes", "no", "yes", "no"], "cand": ["yes", "yes", "yes", "no"]}
    write_rows(
        [
            {"id": f"q{i}", "system": system, "question": "?", "answer": "yes", "response": said[i]}
            for system, said in answers.items()
            for i in range(4)
        ]
    )
    return "qa.jsonl"


def score(host, capsys, *argv):
    code = main(["score", *argv, "--store", "none", "--no-progress"], host=host)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_plugins_section_is_written_under_its_name(host, rows, capsys):
    code, out, _ = score(host, capsys, rows, "--output", "json")
    assert code == 0
    summary = json.loads(out)["summary"]
    assert summary["share"] == [
        {"system": "base", "dataset": "qa", "yes": 2, "n": 4, "share": 0.5, "ci": list(wilson(2, 4))},
        {"system": "cand", "dataset": "qa", "yes": 3, "n": 4, "share": 0.75, "ci": list(wilson(3, 4))},
    ]
    assert summary["sections"]["share"]["figures"] == [
        {"name": "share", "interval": "ci", "bounds": [0.0, 1.0], "reference": None}
    ]
    # read back from the report, the same section
    again = summary_from_dict(summary)
    assert again.sections["share"].records == summary["share"]
    assert again.sections["share"].figures == (Figure("share", "ci"),)


def test_every_report_shows_the_section(host, rows, capsys):
    code, out, _ = score(host, capsys, rows, "--output", "table")
    assert code == 0
    assert "Share of yes" in out and "0.750" in out
    code, out, _ = score(host, capsys, rows, "--output", "markdown")
    assert "### Share of yes" in out and "0.750" in out
    code, out, _ = score(host, capsys, rows, "--output", "html")
    assert "<h2>Share of yes</h2>" in out
    # one bar per record, its value and interval in its title
    low, high = wilson(3, 4)
    assert f"<title>cand on qa: 0.7500 [{low:.4f}, {high:.4f}]</title></rect>" in out
    assert out.count('<rect class="bar"') == 2


@pytest.mark.parametrize(
    ("gate", "status", "said"),
    [
        (
            ["--fail-under", "share=0.6"],
            3,
            "gate failed: --fail-under share=0.6: share of base on qa is 0.500, below 0.6",
        ),
        (["--fail-under", "share=0.5"], 0, ""),
        (["--fail-under", "cand/qa:share=0.8"], 3, "share of cand on qa is 0.750, below 0.8"),
        # the interval of 3 of 4 reaches 0.95: not wholly below 0.9, so not worse
        (["--fail-if-worse", "share=0.9", "--baseline", "base"], 3, "share of base on qa is 0.500"),
        (["--fail-under", "nosuch=0.5"], 2, "no group in this run has a score 'nosuch'"),
        (["--fail-over", "share=0.5"], 2, "bound it with --fail-under share=0.5"),
    ],
)
def test_the_gates_read_a_sections_figures(host, rows, capsys, gate, status, said):
    code, _, err = score(host, capsys, rows, *gate)
    assert code == status, err
    assert said in err
    if "--fail-if-worse" in gate:
        assert "cand" not in err  # 3 of 4: its interval reaches past 0.9


def test_failed_work_of_a_section_fails_the_run(host, write_rows, capsys):
    write_rows([{"id": f"q{i}", "question": "?", "response": r} for i, r in enumerate(["yes", "ERR", "no"])])
    code, _, err = score(host, capsys, "qa.jsonl", "--output", "json")
    assert code == 4
    assert (
        "too many failures: share: 1 of 3 rows got no result (33.3%, more than --max-failure-rate 0.1)" in err
    )
    assert "the first: ERR" in err
    code, _, _ = score(host, capsys, "qa.jsonl", "--output", "json", "--max-failure-rate", "0.5")
    assert code == 0


def test_a_usage_error_of_the_factory_stops_the_run_before_any_row(rows, capsys):
    def refusing(config, options):
        raise UsageError("--share needs something this run lacks")

    host = isolated_host(plugin("cbench-share", SectionSpec("share", refusing)))
    code, out, err = score(host, capsys, rows)
    assert (code, out) == (2, "")
    assert err.endswith("\ncontext-bench: error: --share needs something this run lacks\n")
    assert err.count("error") == 1


def test_a_name_the_summary_or_another_plugin_has_is_refused():
    host = PluginHost(autoload=False, allow=(), deny=(), strict=False)  # lenient: a refusal is a warning
    host.ensure_loaded()
    with pytest.warns(PluginWarning):
        host.register(plugin("cbench-share", SHARE, SectionSpec("groups", share)), name="cbench-share")
        host.register(plugin("cbench-other", SectionSpec("share", share)), name="cbench-other")
    assert [spec.name for _, spec in host.sections()] == ["share"]
    reasons = {name: info.reason for name, info in host.plugins.items() if name.startswith("cbench-")}
    assert reasons == {
        "cbench-share": "summary section 'groups' is a field of the core's summary",
        "cbench-other": "summary section 'share' is already registered by cbench-share",
    }


def test_check_plugin_resolves_a_sections_factory():
    assert check_plugin(plugin("cbench-share", SHARE)).sections == [SHARE]


def test_plugins_lists_a_section(host, capsys):
    assert main(["plugins"], host=host) == 0
    assert "  summary section share: the share of rows answered yes\n" in capsys.readouterr().out
    assert main(["plugins", "--json"], host=host) == 0
    listed = {p["name"]: p for p in json.loads(capsys.readouterr().out)}
    assert listed["cbench-share"]["sections"] == [
        {"name": "share", "description": "the share of rows answered yes"}
    ]
