"""``--repeats K`` (issue 28): each row sent K times to each system, its score the mean of its
repeats, and per group the within-row standard deviation, the rows whose repeats disagree, pass@k
and pass^k, each checked against hand-worked cases at K = 1, 2, 3."""

from __future__ import annotations

import json
import math
import random
import re
import threading
from collections import Counter

import pytest

from context_bench.direction import Directions
from context_bench.records import EvalRow, RowError
from context_bench.repeats import RepeatTally, merged
from context_bench.testing import FakeServer, Reply, last_user_message


def _row(*values: float, field: str = "exact_match", errors=()) -> EvalRow:
    repeats = [{field: v} for v in values]
    return EvalRow("s", "d", "1", scores={}, errors=list(errors), repeats=repeats)


def _figures(*rows: tuple[float, ...], threshold: float = 0.7, field: str = "exact_match") -> dict:
    tally = RepeatTally()
    for values in rows:
        tally.add(_row(*values, field=field), threshold, Directions())
    return tally.figures()


def test_one_repeat_has_no_spread():
    assert _figures((1,), (0,)) == {
        "within_row_sd": {"exact_match": None},
        "unstable_rows": {"exact_match": 0},
        "pass_at_k": {"exact_match": 0.5},
        "pass_all_k": {"exact_match": 0.5},
    }


def test_two_repeats_by_hand():
    # [1, 0]: variance 0.5; [1, 1]: 0; sd = sqrt((0.5 + 0) / 2) = 0.5
    assert _figures((1, 0), (1, 1)) == {
        "within_row_sd": {"exact_match": 0.5},
        "unstable_rows": {"exact_match": 1},
        "pass_at_k": {"exact_match": 1.0},
        "pass_all_k": {"exact_match": 0.5},
    }


def test_three_repeats_by_hand():
    # [1, 0, 0]: mean 1/3, squares 4/9 + 1/9 + 1/9 = 2/3, variance 1/3; the others 0; sd = sqrt(1/9)
    figures = _figures((1, 0, 0), (0, 0, 0), (1, 1, 1))
    assert figures["within_row_sd"]["exact_match"] == pytest.approx(1 / 3, abs=1e-15)
    assert figures["unstable_rows"] == {"exact_match": 1}
    assert figures["pass_at_k"] == {"exact_match": 2 / 3} and figures["pass_all_k"] == {"exact_match": 1 / 3}


def test_a_field_that_is_not_zero_or_one_has_no_pass_at_k():
    figures = _figures((0.5, 0.7), (0.9, 0.9), field="f1")
    assert figures["within_row_sd"]["f1"] == pytest.approx(math.sqrt(0.02 / 2), abs=1e-15)
    assert figures["unstable_rows"] == {"f1": 1}  # 0.5 fails the 0.7 threshold, 0.7 passes it
    assert figures["pass_at_k"] == {} and figures["pass_all_k"] == {}


def test_pass_at_k_is_the_unbiased_estimator_with_n_equal_to_k():
    """Chen et al. (2021): pass@k = 1 - C(n - c, k) / C(n, k) per row, averaged over rows."""
    rng = random.Random(7)
    for k in (1, 2, 3, 5):
        rows = [tuple(rng.choice((0, 1)) for _ in range(k)) for _ in range(40)]
        expected = sum(1 - math.comb(k - sum(r), k) / math.comb(k, k) for r in rows) / len(rows)
        assert _figures(*rows)["pass_at_k"]["exact_match"] == pytest.approx(expected, abs=1e-15)
        assert _figures(*rows)["pass_all_k"]["exact_match"] == sum(all(r) for r in rows) / len(rows)


def test_an_errored_row_passes_nothing_and_has_no_spread():
    tally = RepeatTally()
    tally.add(_row(1, 1), 0.7, Directions())
    tally.add(_row(1, 0, errors=[RowError("system", "s", "HTTPError", "500")]), 0.7, Directions())
    assert tally.figures() == {
        "within_row_sd": {"exact_match": 0.0},
        "unstable_rows": {"exact_match": 0},
        "pass_at_k": {"exact_match": 0.5},
        "pass_all_k": {"exact_match": 0.5},
    }


def test_merged_rows_score_the_mean_and_a_failed_repeat_leaves_no_mean():
    rows = [
        EvalRow("s", "d", "1", scores={"f1": 1.0}, input_tokens=10, latency=1.0),
        EvalRow("s", "d", "1", scores={"f1": 0.0}, input_tokens=20, latency=3.0),
    ]
    row = merged(rows)
    assert (row.scores, row.repeats, row.input_tokens, row.latency) == (
        {"f1": 0.5},
        [{"f1": 1.0}, {"f1": 0.0}],
        15,
        2,
    )
    rows[1].errors.append(RowError("system", "s", "HTTPError", "500"))
    failed = merged(rows)
    assert failed.scores == {} and len(failed.errors) == 1 and failed.repeats == [{"f1": 1.0}, {"f1": 0.0}]


ROWS = [
    {"id": "1", "question": "flip number 1", "answer": "Paris"},
    {"id": "2", "question": "sure number 2", "answer": "Paris"},
    {"id": "3", "question": "never number 3", "answer": "Paris"},
]


class Flaky:
    """Per question, the n-th call's answer: "flip" is right on odd calls, "sure" always, "never" not."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, body):
        prompt = last_user_message(body)
        kind = re.search(r"(flip|sure|never) number", prompt).group(1)
        with self.lock:
            self.calls[kind] += 1
            call = self.calls[kind]
        right = kind == "sure" or (kind == "flip" and call % 2 == 1)
        return Reply(text="Paris" if right else "?")


@pytest.fixture
def run(cbench, write_rows):
    data = str(write_rows(ROWS))

    def go(server, *flags):
        code, out, err = cbench(
            "run", "--proxy", server.url, *flags, "--dataset", data, "--output", "json",
            "--evaluator", "AnswerQuality", "--no-autowire", "--score-field", "exact_match",
        )  # fmt: skip
        return code, json.loads(out) if out else None, err

    return go


def test_repeats_through_the_cli_count_the_spread_exactly(run):
    with FakeServer(Flaky()) as server:
        code, report, err = run(server, "--repeats", "3")
    assert code == 0, err
    assert len(server.requests) == 9
    group = report["summary"]["groups"][0]
    # flip: [1, 0, 1] (variance 1/3), sure: [1, 1, 1], never: [0, 0, 0]: sd = sqrt(1/9)
    assert group["scores"]["exact_match"] == pytest.approx(5 / 9, abs=1e-15)
    assert group["within_row_sd"]["exact_match"] == pytest.approx(1 / 3, abs=1e-15)
    assert group["unstable_rows"]["exact_match"] == 1
    assert (group["pass_at_k"]["exact_match"], group["pass_all_k"]["exact_match"]) == (2 / 3, 1 / 3)
    rows = {row["example_id"]: row for row in report["rows"]}
    assert sorted(s["exact_match"] for s in rows["1"]["repeats"]) == [0.0, 1.0, 1.0]
    assert rows["1"]["scores"]["exact_match"] == pytest.approx(2 / 3, abs=1e-15)
    assert len(report["rows"]) == 3


def test_the_table_shows_the_spread(cbench, write_rows):
    data = str(write_rows(ROWS))
    with FakeServer(Flaky()) as server:
        code, out, _ = cbench(
            "run", "--proxy", server.url, "--dataset", data, "--repeats", "3",
            "--evaluator", "AnswerQuality", "--no-autowire", "--score-field", "exact_match",
        )  # fmt: skip
    assert code == 0
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("Repeats"))
    row = next(line for line in lines[header:] if " exact_match " in line)
    assert row.split()[-4:] == ["0.333", "1", "66.7%", "33.3%"]


def test_each_repeat_is_cached_and_more_repeats_run_only_the_new_ones(run, workdir):
    cache = ("--cache-dir", str(workdir / "cache"))
    with FakeServer(Flaky()) as server:
        assert run(server, "--repeats", "2", *cache)[0] == 0
        assert len(server.requests) == 6
        code, report, _ = run(server, "--repeats", "2", *cache)
        assert code == 0 and len(server.requests) == 6
        code, report, _ = run(server, "--repeats", "3", *cache)
        assert code == 0 and len(server.requests) == 9
    assert all(len(row["repeats"]) == 3 for row in report["rows"])


def test_temperature_zero_with_repeats_is_warned_once(run):
    with FakeServer(Flaky()) as server:
        code, _, err = run(server, "--temperature", "0", "--repeats", "2")
    assert code == 0
    assert err.count("--repeats 2 with --temperature 0") == 1


def test_a_failed_repeat_fails_its_row(run):
    calls = Counter()

    def answer(body):
        calls[last_user_message(body)] += 1
        if "sure" in last_user_message(body) and calls[last_user_message(body)] == 2:
            return Reply(status=400, text="bad request")
        return Reply(text="Paris")

    with FakeServer(answer) as server:
        code, report, _ = run(server, "--repeats", "2", "--max-retries", "0")
    group = report["summary"]["groups"][0]
    # flip [1, 1] and never [1, 1] score 1; sure's failed repeat leaves its row errored, at 0
    assert group["errors"] == 1 and group["scores"]["exact_match"] == pytest.approx(2 / 3, abs=1e-15)
    assert code == 4 and group["error_rate"] == pytest.approx(1 / 3, abs=1e-15)  # past --max-failure-rate


def test_bad_repeats_are_one_line(run):
    with FakeServer(Flaky()) as server:
        code, _, err = run(server, "--repeats", "0")
    assert code == 2 and err.count("\n") == 1 and "--repeats" in err and server.requests == []
