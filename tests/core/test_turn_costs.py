"""Cost per turn of a multi-turn replay (issue 33): each metered call says its turn
(``X-Context-Bench-Turn``), a row's ``metered`` gives its figures per turn, and the summary each
group's mean dollars per turn and, against the baseline, the turn from which a compressor that
broke the provider's prefix cache stops paying off; through the real CLI with ``--meter``."""

from __future__ import annotations

import importlib.util
import json
import math
import shlex
import sys
import threading
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest

from context_bench._turn_costs import cost_per_turn, paired_cost_per_turn, stops_paying_from
from context_bench.cli import main
from context_bench.meter import Meter, MeterCall, Metered, Usage
from context_bench.metering import ROW_HEADER, TURN_HEADER
from context_bench.prices import Price
from context_bench.records import Comparison, GroupSummary, Summary
from context_bench.reports import _turn_sections as turn_sections
from context_bench.testing import FakeServer, Reply, free_port


def _load(name: str, file: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, Path(__file__).parents[1] / file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


browser = _load("cbench_browser", "browser.py")
_proxy = _load("cbench_truncating_proxy", "truncating_proxy.py")


@pytest.mark.parametrize(
    ("baseline", "system", "turn"),
    [
        ([1.0], [2.0], 1),  # n = 1: above from its only turn
        ([1.0], [1.0], None),  # equal is not above
        ([2.0], [1.0], None),
        ([1.0, 1.0], [2.0, 0.5], 1),  # running totals 1, 2 against 2, 2.5
        ([1.0, 1.0], [0.5, 2.0], 2),  # 1, 2 against 0.5, 2.5
        ([1.0, 1.0], [2.0, 0.0], None),  # 1, 2 against 2, 2: above, then not
        ([2.0, 1.0, 1.0], [1.0, 1.0, 3.0], 3),  # 2, 3, 4 against 1, 2, 5
        ([1.0, 1.0, 1.0], [2.0, 0.0, 2.0], 3),  # above, not, above again: from the last
        ([1.0, 1.0, 1.0], [2.0, 2.0, 2.0], 1),
        ([1.0, None, 1.0], [2.0, 2.0, 2.0], None),  # a turn of unknown cost: nothing said
        ([], [], None),
    ],
)
def test_stops_paying_from_is_the_first_turn_the_running_total_stays_above(baseline, system, turn):
    assert stops_paying_from(baseline, system) == turn


NAN = math.nan
#: $1,000 a million input tokens, $2,000 output, $100 cached: a token is $0.001, $0.002, $0.0001.
PRICED = Price(1000, 2000, 100)


def _turn(given, taken=1, cached=NAN, cost=NAN):
    return (given, taken, cached, NAN, cost)


@pytest.mark.parametrize(
    ("rows", "price", "means"),
    [
        ([], PRICED, None),
        ([{}, {}], PRICED, None),  # no row said a turn
        ([{1: _turn(10)}], PRICED, [0.012]),  # 10 x 0.001 + 1 x 0.002
        ([{1: _turn(10, cached=8)}], PRICED, [0.0048]),  # 2 x 0.001 + 8 x 0.0001 + 0.002
        # two rows at turn 1 (0.012 and 0.022), one at turn 2 (20 of 30 cached: 0.014)
        ([{1: _turn(10), 2: _turn(30, cached=20)}, {1: _turn(20)}], PRICED, [0.017, 0.014]),
        ([{1: _turn(10), 3: _turn(10)}, {}, {1: _turn(10)}], PRICED, [0.012, None, 0.012]),  # none reached 2
        ([{1: _turn(NAN)}, {1: _turn(10)}], PRICED, [None]),  # an uncounted input is unknown, not free
        ([{1: _turn(10, cost=0.5)}, {1: _turn(10, cost=0.25)}], None, [0.375]),  # unpriced: reported
        ([{1: _turn(10, cost=0.5)}, {1: _turn(10)}], None, [None]),  # a row without a reported cost
    ],
)
def test_a_groups_cost_per_turn_is_the_mean_of_the_rows_that_reached_each_turn(rows, price, means):
    assert cost_per_turn(rows, price) == means


def test_a_comparisons_cost_per_turn_pairs_the_rows_both_sides_reached_each_turn_with():
    """Pairs (0, 0) and (1, 1): the baseline's row 0 reached turn 2, the system's did not, so turn
    2 is over no pair; row 2 of the baseline has no partner. Turn 1: (0.012 + 0.022) / 2 against
    (0.012 + 0.012) / 2."""
    base = [{1: _turn(10), 2: _turn(10)}, {1: _turn(20)}, {1: _turn(99)}]
    own = [{1: _turn(10)}, {1: _turn(10), 2: _turn(10)}]
    found = paired_cost_per_turn(base, own, [(0, 0), (1, 1)], (PRICED, PRICED))
    assert found == {"baseline": [0.017], "system": [0.012]}
    assert paired_cost_per_turn(base, own, [(2, 0)], (PRICED, PRICED)) == {
        "baseline": [0.101],  # 99 x 0.001 + 0.002
        "system": [0.012],
    }
    assert paired_cost_per_turn([{}], [{}], [(0, 0)], (PRICED, PRICED)) is None


def test_a_row_s_calls_are_summed_per_turn_as_they_are_on_the_row():
    """Each turn's figures are its calls' alone, summed as the row's (a call without a turn counts
    on the row only), and keep no prompt: the row holds them once."""
    usage = Usage(10, 1, 4, None)
    calls = [
        MeterCall("r", "m", "/v1/chat/completions", 200, 0.0, usage=usage, prompt=f"p{n}", turn=n % 3 + 1)
        for n in range(6)
    ]
    calls.append(MeterCall("r", "m", "/v1/chat/completions", 200, 0.0, usage=usage))
    calls.append(MeterCall("r", "m", "/v1/chat/completions", 500, 0.0, turn=2))
    metered = Metered.of(calls)
    assert (metered.calls, metered.input_tokens, metered.failed_calls, len(metered.prompts)) == (8, 70, 1, 6)
    twice = Metered(calls=2, input_tokens=20, output_tokens=2, cached_input_tokens=8, stated_input_tokens=20)
    assert metered.turns == {1: twice, 2: attrs.evolve(twice, calls=3, failed_calls=1), 3: twice}


@pytest.mark.parametrize(
    ("header", "turn"),
    [("2", 2), ("03", 3), ("0", None), ("-1", None), ("two", None), ("100001", None), ("9" * 5000, None)],
)
def test_the_meter_gives_each_call_the_turn_its_header_says(header, turn):
    usage = {"prompt_tokens": 7, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 4}}
    with FakeServer(lambda body: Reply("ok", usage=usage)) as model, Meter(model.url) as meter:
        body = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
        httpx.post(f"{meter.url}/chat/completions", json=body, headers={ROW_HEADER: "r", TURN_HEADER: header})
        taken = meter.take("r")
    assert (taken.calls, taken.input_tokens) == (1, 7)  # on its row either way
    if turn is None:
        assert taken.turns == {}
    else:
        figures = Metered(
            calls=1, input_tokens=7, output_tokens=1, cached_input_tokens=4, stated_input_tokens=7
        )
        assert taken.turns == {turn: figures}


class PrefixCache:
    """An upstream's prompt cache, as OpenAI's states it: a prompt's ``cached_tokens`` are its
    longest prefix (its messages' words, in order) that an earlier prompt began with."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        words = [word for message in body["messages"] for word in message["content"].split()]
        with self.lock:
            cached = max((_common(words, earlier) for earlier in self.seen), default=0)
            self.seen.append(words)
        details = {"cached_tokens": cached}
        return Reply(
            "ok",
            usage={"prompt_tokens": len(words), "completion_tokens": 1, "prompt_tokens_details": details},
        )


def _common(one: list[str], other: list[str]) -> int:
    count = 0
    for a, b in zip(one, other, strict=False):
        if a != b:
            break
        count += 1
    return count


def _halved(body: dict[str, Any], headers: dict[str, str]) -> None:
    """A compressor that rewrites the whole conversation at every turn: each message keeps the
    first half of its words (rounded up), after a marker naming the row and turn, so no prompt it
    sends begins like any earlier one."""
    for message in body["messages"]:
        words = message["content"].split()
        message["content"] = " ".join(words[: (len(words) + 1) // 2])
    body["messages"].insert(0, {"role": "user", "content": f"{headers[ROW_HEADER]}/{headers[TURN_HEADER]}"})


#: gpt-4o-mini at $1,000 a million input and output tokens, $100 a million cached.
PRICE = "gpt-4o-mini=1000,1000,100"


def _conversations(tmp_path) -> str:
    """Two conversations of four turns: 20 words, then 5 a turn, each word its row's own."""
    path = tmp_path / "chat.jsonl"
    lines = []
    for row in ("a", "b"):
        turns = [" ".join(f"{row}{turn}w{n}" for n in range(20 if turn == 1 else 5)) for turn in range(1, 5)]
        lines.append(json.dumps({"id": row, "turns": turns, "answer": "ok"}) + "\n")
    path.write_text("".join(lines))
    return str(path)


def test_a_compressor_that_breaks_the_prefix_cache_stops_paying_off_from_the_turn_worked_out(
    capsys, tmp_path
):
    """The baseline sends each conversation whole: 20, 26, 32 and 38 words at turns 1 to 4 (each
    turn adds the reply "ok" and 5 words), of which 0, 20, 26 and 32 the cache has seen. At $1,000
    a million, $100 cached and $1,000 for the one output token:

        turn 1: 20 x 1000 + 1000 = 21,000 millionths, $0.021
        turn 2: 6 x 1000 + 20 x 100 + 1000 = $0.009;  turn 3: $0.0096;  turn 4: $0.0102
        running: 0.021, 0.030, 0.0396, 0.0498

    The compressor sends its marker and half of every message: 11, 15, 19 and 23 words, none
    cached: $0.012, $0.016, $0.020, $0.024, running 0.012, 0.028, 0.048, 0.072: below the
    baseline's at turns 1 and 2, above from turn 3 to the end. Priced as uncached, the baseline's
    turns would cost 0.021, 0.027, 0.033, 0.039 and the compressor would never stop paying off."""
    port = free_port()
    with (
        FakeServer(PrefixCache()) as model,
        _proxy.RewritingProxy(f"http://127.0.0.1:{port}/v1", _halved) as compressor,
    ):
        flags = ["--meter", model.url, "--meter-port", str(port), "--price", PRICE]
        flags += ["--proxy", model.url, "--name", "baseline"]
        flags += ["--proxy", compressor.url, "--name", "compressed"]
        flags += ["--dataset", _conversations(tmp_path), "--output", "json", "--no-progress"]
        code = main(["run", *flags])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    baseline_turns = [
        {
            "turn": turn,
            "calls": 1,
            "input_tokens": given,
            "output_tokens": 1,
            "cached_input_tokens": cached,
            "cache_write_tokens": None,
            "cost": None,
        }
        for turn, given, cached in ((1, 20, 0), (2, 26, 20), (3, 32, 26), (4, 38, 32))
    ]
    rows = {(row["system"], row["example_id"]): row["metered"] for row in report["rows"]}
    assert rows[("baseline", "a")]["turns"] == baseline_turns
    assert [turn["input_tokens"] for turn in rows[("compressed", "b")]["turns"]] == [11, 15, 19, 23]
    assert [turn["cached_input_tokens"] for turn in rows[("compressed", "b")]["turns"]] == [0, 0, 0, 0]
    summary = report["summary"]
    assert [c["stops_paying_from_turn"] for c in summary["comparisons"]] == [3] * len(summary["comparisons"])
    baseline, compressed = [0.021, 0.009, 0.0096, 0.0102], [0.012, 0.016, 0.02, 0.024]
    assert [(g["system"], g["cost_per_turn"]) for g in summary["groups"]] == [
        ("baseline", baseline),
        ("compressed", compressed),
    ]
    assert summary["comparisons"]  # one a score field, each with the same turns
    for comparison in summary["comparisons"]:
        assert comparison["cost_per_turn"] == {"baseline": baseline, "system": compressed}
        assert comparison["stops_paying_from_turn"] == 3
    saved = tmp_path / "replay.json"
    saved.write_text(out)
    _shown_in_every_format(capsys, tmp_path, saved)


TITLE = (
    "Cost per turn on chat (mean $ a row at each turn, running total in brackets; vs baseline: "
    "compressed stops paying off from turn 3)"
)
TABLE = [
    "| turn | baseline | compressed |",
    "| ---: | ---: | ---: |",
    "| 1 | $0.0210 ($0.0210) | $0.0120 ($0.0120) |",
    "| 2 | $0.0090 ($0.0300) | $0.0160 ($0.0280) |",
    "| 3 | $0.0096 ($0.0396) | $0.0200 ($0.0480) |",
    "| 4 | $0.0102 ($0.0498) | $0.0240 ($0.0720) |",
]


def _shown_in_every_format(capsys, tmp_path, saved):
    """The saved report shown again: the table on its one screen, Markdown and HTML (in Chromium)
    give the per-turn table, its title saying from which turn the compressor stops paying off."""
    shown = {}
    for fmt in ("table", "markdown"):
        assert main(["show", str(saved), "--output", fmt]) == 0
        shown[fmt] = capsys.readouterr().out
    markdown = shown["markdown"].splitlines()
    start = markdown.index(f"### {TITLE}")
    assert markdown[start + 2 : start + 2 + len(TABLE)] == TABLE
    table = [" ".join(line.split()) for line in shown["table"].splitlines()]
    assert "3 $0.0096 ($0.0396) $0.0200 ($0.0480)" in table
    assert TITLE in " ".join(shown["table"].split())  # wrapped at the terminal's width
    if browser.missing() is None:
        assert main(["show", str(saved), "--output", "html", "--out", str(tmp_path / "replay.html")]) == 0
        dom, errors = browser.dump_dom(tmp_path / "replay.html")
        assert errors == []
        assert f"<h2>{TITLE}</h2>" in dom
        assert '<td class="num">$0.0096 ($0.0396)</td>' in dom


def test_a_command_program_run_once_a_turn_finds_its_turn_in_cbench_turn(capsys, tmp_path):
    """A ``--command`` program runs once per turn of a conversation and sends ``CBENCH_TURN`` as the
    turn header: its row's figures come per turn (the prompt grows with each turn's words)."""
    program = tmp_path / "agent.py"
    program.write_text(
        "import json, os, sys, urllib.request\n"
        "body = {'model': 'm', 'messages': [{'role': 'user', 'content': sys.stdin.read()}]}\n"
        f"headers = {{'Content-Type': 'application/json', {ROW_HEADER!r}: os.environ['CBENCH_ROW'],\n"
        f"           {TURN_HEADER!r}: os.environ['CBENCH_TURN']}}\n"
        "url = os.environ['CBENCH_METER_URL'] + '/chat/completions'\n"
        "request = urllib.request.Request(url, json.dumps(body).encode(), headers)\n"
        "with urllib.request.urlopen(request) as answer:\n"
        "    print(json.load(answer)['choices'][0]['message']['content'])\n",
        encoding="utf-8",
    )
    data = tmp_path / "chat.jsonl"
    data.write_text(json.dumps({"id": "1", "turns": ["one two three", "four"], "answer": "ok"}) + "\n")

    def words(body: dict[str, Any]) -> Reply:
        return Reply(
            "ok", usage={"prompt_tokens": len(body["messages"][0]["content"].split()), "completion_tokens": 1}
        )

    with FakeServer(words) as model:
        command = f"{shlex.quote(sys.executable)} {shlex.quote(str(program))}"
        flags = ["--meter", model.url, "--command", command, "--dataset", str(data)]
        code = main(["run", *flags, "--output", "json", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    (row,) = json.loads(out)["rows"]
    # turn 1 reads "one two three"; turn 2 "user: one two three\n\nassistant: ok\n\nuser: four"
    assert [(turn["turn"], turn["input_tokens"]) for turn in row["metered"]["turns"]] == [(1, 3), (2, 8)]


def _summary(base_costs, own_costs, stops):
    groups = [
        GroupSummary("baseline", "chat", cost_per_turn=base_costs),
        GroupSummary("compressed", "chat", cost_per_turn=own_costs),
    ]
    turns = {"baseline": base_costs, "system": own_costs}
    comparison = Comparison(
        "compressed", "baseline", "chat", "f1", None, None, None, 0, None, None, None, None, [], [],
        cost_per_turn=turns, stops_paying_from_turn=stops,
    )  # fmt: skip
    return Summary(groups=groups, comparisons=[comparison], baseline="baseline")


def test_a_long_conversation_shows_its_first_turns_the_stop_and_its_last_two():
    """20 turns: the baseline $0.001 each; the compressor $0.0001 for 14 turns, then $0.01, so its
    running total (0.0114 at turn 15, 0.0214 at 16) passes the baseline's (0.015, 0.016) at 16."""
    base, own = [0.001] * 20, [0.0001] * 14 + [0.01] * 6
    assert stops_paying_from(base, own) == 16
    (section,) = turn_sections.build(_summary(base, own, 16))
    assert [row[0] for row in section.rows] == ["1", "2", "3", "4", "5", "6", "7", "8", "16", "19", "20"]
    assert section.title.endswith("vs baseline: compressed stops paying off from turn 16)")
    assert section.rows[8] == ("16", "$0.0010 ($0.0160)", "$0.0100 ($0.0214)")


@pytest.mark.parametrize(
    ("own", "said"),
    [
        ([0.0005, 0.0005], "; vs baseline: compressed pays off to the end)"),
        ([0.0005, None], ")"),  # a turn of unknown cost: nothing said, its running total unknown
    ],
)
def test_the_title_says_a_system_pays_off_only_when_every_turn_is_known(own, said):
    (section,) = turn_sections.build(_summary([0.001, 0.001], own, None))
    assert (
        section.title == f"Cost per turn on chat (mean $ a row at each turn, running total in brackets{said}"
    )
    assert section.rows[-1][-1] == ("$0.0005 ($0.0010)" if own[1] else "- (-)")
