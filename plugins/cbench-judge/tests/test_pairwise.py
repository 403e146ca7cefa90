"""Pairwise judging: both orders asked, figures checked against hand-worked cases and scipy, and
the command run against scripted judges on 127.0.0.1."""

from __future__ import annotations

import importlib.util
import json
import math
import re
import sys
import warnings
from pathlib import Path
from statistics import NormalDist
from typing import Any

import pytest

from cbench_judge.pairwise import LOSS, TIE, WIN, PairVerdict, read_verdict
from cbench_judge.pairwise_figures import pairwise_figures
from context_bench.cli import main
from context_bench.testing import Reply, last_user_message

Z = NormalDist().inv_cdf(0.975)

_spec = importlib.util.spec_from_file_location(
    "cbench_browser", Path(__file__).parents[3] / "tests" / "browser.py"
)
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)


def _figures(outcomes: list[str], differences: list[float] | None = None):
    verdicts = [PairVerdict(o, o) for o in outcomes]
    return pairwise_figures(
        verdicts, differences or [0.0] * len(outcomes), system="s", baseline="b", dataset="d"
    )


@pytest.mark.parametrize("n", [1, 2, 3])
def test_all_wins_at_small_n_match_the_hand_worked_figures(n: int) -> None:
    found = _figures([WIN] * n)
    assert (found.wins, found.ties, found.losses, found.n) == (n, 0, 0, n)
    assert found.win_rate == 1.0
    # Wilson's interval at p = 1 is [n / (n + z^2), 1]; the sign test's p is 2 / 2^n, at most 1
    assert found.ci == pytest.approx((n / (n + Z * Z), 1.0), abs=1e-12)
    assert found.p_value == min(1.0, 2 / 2**n)
    assert found.position_consistency == 1.0


def test_ties_count_half_and_leave_the_sign_test() -> None:
    # 1 win, 1 tie, 1 loss: (1 + 0.5) / 3; the sign test sees 1 win, 1 loss: p = 2 * 3/4, capped at 1
    found = _figures([WIN, TIE, LOSS])
    assert found.win_rate == 0.5
    assert found.p_value == 1.0
    # 2 wins, 1 loss: P(X <= 1 | 3, 1/2) = 4/8, two-sided 1.0; 3 wins of 3 as above 0.25
    assert _figures([WIN, WIN, LOSS]).p_value == 1.0
    assert _figures([WIN, TIE, WIN, WIN]).p_value == 0.25


def test_the_sign_test_is_scipys_binomial_test_at_large_n() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    for wins, losses, ties in ((40, 25, 10), (300, 240, 33), (7, 0, 2)):
        found = _figures([WIN] * wins + [LOSS] * losses + [TIE] * ties)
        expected = scipy_stats.binomtest(wins, wins + losses, 0.5).pvalue
        assert found.p_value == pytest.approx(expected, rel=1e-9)
        assert found.win_rate == (wins + ties / 2) / (wins + losses + ties)


def test_wilson_interval_matches_statsmodels() -> None:
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    found = _figures([WIN] * 30 + [TIE] * 5 + [LOSS] * 15)
    expected = proportion.proportion_confint(32.5, 50, alpha=0.05, method="wilson")
    assert found.ci == pytest.approx(expected, abs=1e-12)


def test_disagreeing_orders_are_a_position_inconsistent_tie_and_failures_are_not_counted() -> None:
    verdicts = [
        PairVerdict(WIN, WIN),
        PairVerdict(WIN, LOSS),  # each order preferred the first answer
        PairVerdict(None, None, "call_error: HTTP 500"),
    ]
    found = pairwise_figures(verdicts, [1.0, 2.0, 3.0], system="s", baseline="b", dataset="d")
    assert (found.wins, found.ties, found.losses, found.n, found.failed) == (1, 1, 0, 2, 1)
    assert found.win_rate == 0.75
    assert found.position_consistency == 0.5


def test_no_row_judged_has_no_rates() -> None:
    found = pairwise_figures(
        [PairVerdict(None, None, "parse_error: x")], [0.0], system="s", baseline="b", dataset="d"
    )
    assert (found.n, found.failed, found.win_rate, found.ci, found.p_value) == (0, 1, None, None, None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A is clearer. [[A]]", "A"),
        ("[[A]] at first... final: **[[B]]**", "B"),
        ("[[C]]", "C"),
        ("[[tie]]", "C"),
    ],
)
def test_the_last_bracketed_verdict_counts(text: str, expected: str) -> None:
    assert read_verdict(text) == expected


# -- the command against scripted judges ---------------------------------------------------------

_ANSWER = re.compile(r"\[The Start of Assistant ([AB])'s Answer\]\n(.*?)\n\[The End", re.S)


def _answers(body: Any) -> dict[str, str]:
    return dict(_ANSWER.findall(last_user_message(body)))


def first_position(body: Any) -> str:
    return "Both are fine, the first reads better. [[A]]"


def by_quality(body: Any) -> str:
    """A correct judge: the GOOD answer wins, equal quality is a tie."""
    a, b = (_answers(body)[k].startswith("GOOD") for k in "AB")
    return "[[C]]" if a == b else ("[[A]]" if a else "[[B]]")


def quality_then_length(body: Any) -> str:
    """Quality first, and between answers of equal quality, the longer: a length-biased judge."""
    answers = _answers(body)
    a, b = (answers[k].startswith("GOOD") for k in "AB")
    if a != b:
        return "[[A]]" if a else "[[B]]"
    return "[[A]]" if len(answers["A"]) > len(answers["B"]) else "[[B]]"


def _rows(path: Any, planted: list[tuple[str, str, int]]) -> Any:
    """A file of two systems: per row the system's quality, the baseline's, and the system's answer
    length minus the baseline's (the baseline's answers are 40 characters)."""
    with path.open("w") as handle:
        for i, (ours, theirs, difference) in enumerate(planted):
            for system, quality, length in (("short", theirs, 40), ("long", ours, 40 + difference)):
                response = quality + " " + "x" * (length - len(quality) - 1)
                row = {
                    "system": system,
                    "dataset": "qa",
                    "id": f"q{i}",
                    "question": f"Q{i}?",
                    "response": response,
                }
                handle.write(json.dumps(row) + "\n")
    return path


#: Quality independent of length: each pair of qualities meets each length difference equally often,
#: and the system's answers are longer on three rows of four.
_QUALITIES = [("GOOD", "GOOD"), ("GOOD", "POOR"), ("POOR", "GOOD"), ("POOR", "POOR")]
_PLANTED = [(*q, d * scale) for scale in (1, 2, 3) for d in (10, 20, 30, -15) for q in _QUALITIES]


def _pairwise(
    capsys: pytest.CaptureFixture[str], files: list[str], url: str, *extra: str
) -> tuple[int, Any, str]:
    code = main(["pairwise", *files, "--baseline", "short", "--judge-url", url, "--output", "json", *extra])
    captured = capsys.readouterr()
    found = json.loads(captured.out)["summary"]["pairwise"] if captured.out else None
    return code, found, captured.err


def test_a_judge_that_prefers_the_first_position_gives_only_ties(judge_server, tmp_path, capsys) -> None:
    server = judge_server(first_position)
    code, (found,), _ = _pairwise(capsys, [str(_rows(tmp_path / "r.jsonl", _PLANTED))], server.url)
    assert code == 0
    assert (found["wins"], found["ties"], found["losses"], found["n"]) == (0, 48, 0, 48)
    assert found["win_rate"] == 0.5
    assert found["position_consistency"] == 0.0
    assert len(server.requests) == 96  # every row asked twice, the answers swapped
    first, second = (_answers(body) for body in server.requests[:2])
    assert first in (dict(A=second["B"], B=second["A"]), second) and first["A"] != first["B"]


def test_a_correct_judge_finds_the_planted_truth(judge_server, tmp_path, capsys) -> None:
    server = judge_server(by_quality)
    code, (found,), _ = _pairwise(capsys, [str(_rows(tmp_path / "r.jsonl", _PLANTED))], server.url)
    assert code == 0
    # 12 rows GOOD vs POOR, 12 POOR vs GOOD, 24 of equal quality
    assert (found["wins"], found["ties"], found["losses"]) == (12, 24, 12)
    assert found["win_rate"] == 0.5 and found["position_consistency"] == 1.0
    assert found["p_value"] == 1.0


def test_a_length_biased_judge_is_caught_by_the_length_control(judge_server, tmp_path, capsys) -> None:
    server = judge_server(quality_then_length)
    code, (found,), _ = _pairwise(capsys, [str(_rows(tmp_path / "r.jsonl", _PLANTED))], server.url)
    assert code == 0
    # 12 wins on quality, 18 of the 24 equal-quality rows by length: 30 of 48
    assert (found["wins"], found["ties"], found["losses"]) == (30, 0, 18)
    assert found["win_rate"] == 0.625
    assert abs(found["lc_win_rate"] - 0.5) < 0.05
    low, high = found["lc_ci"]
    assert low < 0.5 < high


def test_failed_judge_calls_are_counted_and_fail_the_run(judge_server, tmp_path, capsys) -> None:
    calls = {"n": 0}

    def sometimes_broken(body: Any) -> Reply | str:
        calls["n"] += 1
        return Reply(status=400, text="bad request") if "Q3?" in last_user_message(body) else by_quality(body)

    server = judge_server(sometimes_broken)
    code, (found,), err = _pairwise(capsys, [str(_rows(tmp_path / "r.jsonl", _PLANTED))], server.url)
    assert code == 4
    assert (found["n"], found["failed"]) == (47, 1)
    assert found["wins"] + found["ties"] + found["losses"] == 47
    assert "1 of 48 pairs got no verdict" in err and "the first: call_error: HTTP 400" in err


def test_unanswered_rows_are_counted_not_judged(judge_server, tmp_path, capsys) -> None:
    path = _rows(tmp_path / "r.jsonl", _PLANTED[:4])
    with path.open("a") as handle:
        handle.write(
            json.dumps({"system": "short", "dataset": "qa", "id": "x", "question": "?", "response": "a"})
            + "\n"
        )
        handle.write(
            json.dumps({"system": "long", "dataset": "qa", "id": "x", "errors": [{"kind": "system"}]}) + "\n"
        )
    server = judge_server(by_quality)
    code, (found,), _ = _pairwise(capsys, [str(path)], server.url, "--max-failure-rate", "0.2")
    assert (code, found["n"], found["unanswered"]) == (0, 4, 1)
    # an unanswered row is a pair with no verdict: over the limit (0 by default) it fails the run
    code, (found,), err = _pairwise(capsys, [str(path)], server.url)
    assert (code, found["n"], found["unanswered"]) == (4, 4, 1)
    assert "1 of 5 pairs got no verdict" in err and "the first: 1 row(s) of qa that long or short" in err


def test_an_empty_answer_is_judged_not_left_out(judge_server, tmp_path, capsys) -> None:
    """A system that answers "" where it cannot answer well loses those rows; leaving them out
    would raise its win rate."""
    path = _rows(tmp_path / "r.jsonl", _PLANTED[:4])
    with path.open("a") as handle:
        for system, response in (("short", "GOOD answer"), ("long", "")):
            row = {"system": system, "dataset": "qa", "id": "x", "question": "?", "response": response}
            handle.write(json.dumps(row) + "\n")
    server = judge_server(by_quality)
    code, (alone,), _ = _pairwise(capsys, [str(_rows(tmp_path / "four.jsonl", _PLANTED[:4]))], server.url)
    code, (found,), _ = _pairwise(capsys, [str(path)], server.url)
    assert (code, found["n"], found["unanswered"]) == (0, 5, 0)
    assert (found["losses"], found["wins"], found["ties"]) == (
        alone["losses"] + 1,
        alone["wins"],
        alone["ties"],
    )


def test_gates_and_the_text_report(judge_server, tmp_path, capsys) -> None:
    server = judge_server(quality_then_length)
    files = [str(_rows(tmp_path / "r.jsonl", _PLANTED))]
    argv = ["pairwise", *files, "--baseline", "short", "--judge-url", server.url, "--fail-under"]
    code = main([*argv, "lc_win_rate=0.6"])
    out, err = capsys.readouterr()
    assert code == 3
    assert out.startswith(
        "pairwise: long vs short on qa: 30 wins, 0 ties, 18 losses of 48 judged; win rate 0.62 ["
    )
    assert "lc_win_rate" in err and "--fail-under lc_win_rate=0.6" in err
    assert main([*argv, "win_rate=0.6"]) == 0


def test_the_cache_makes_a_rerun_free(judge_server, tmp_path, capsys) -> None:
    server = judge_server(by_quality)
    files = [str(_rows(tmp_path / "r.jsonl", _PLANTED[:8]))]
    cache = ["--cache-dir", str(tmp_path / "cache")]
    argv = ["pairwise", *files, "--baseline", "short", "--judge-url", server.url, "--output", "json", *cache]
    summaries = []
    for _ in range(2):
        assert main(argv) == 0
        summaries.append(json.loads(capsys.readouterr().out)["summary"])
    first, again = summaries
    assert again["pairwise"] == first["pairwise"]
    assert len(server.requests) == 16
    # the judge_server fixture states 100 input and 10 output tokens a reply
    assert (first["judge"]["calls"], first["judge"]["cached"], first["judge"]["input_tokens"]) == (
        16,
        0,
        1600,
    )
    assert (again["judge"]["calls"], again["judge"]["cached"], again["judge"]["input_tokens"]) == (0, 16, 0)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--baseline", "nobody"], "--baseline nobody: no row of"),
        (["--baseline", "short", "--fail-under", "f1=0.5"], "a pairwise gate bounds win_rate or lc_win_rate"),
        (["--baseline", "short", "--pairwise-template", "nope"], "--pairwise-template nope: neither"),
        (["--baseline", "short"], "r.jsonl:1: short answers qa id q0 twice"),
    ],
)
def test_bad_input_is_one_line_and_status_2(judge_server, tmp_path, capsys, argv, said) -> None:
    server = judge_server(by_quality)
    files = [str(_rows(tmp_path / "r.jsonl", _PLANTED[:4]))]
    if "twice" in said:
        files.append(files[0])
    assert main(["pairwise", *files, "--judge-url", server.url, *argv]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1
    assert server.requests == []


def test_length_control_is_the_logistic_fit_statsmodels_makes() -> None:
    sm = pytest.importorskip("statsmodels.api")
    np = pytest.importorskip("numpy")
    from cbench_judge.length_control import length_controlled

    preferences = [1.0, 0.5, 0.0, 1.0, 1.0, 0.0, 0.5, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.5, 0.0, 1.0]
    differences = [30, -5, -40, 12, 80, 10, 0, -20, -60, 45, 25, -10, 5, 15, -30, 60]
    found = length_controlled(preferences, differences)
    x = np.tanh(np.array(differences, float) / np.std(differences))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # statsmodels warns of the fractional outcomes (ties)
        fit = sm.GLM(np.array(preferences), sm.add_constant(x), family=sm.families.Binomial()).fit(tol=1e-14)
    a, se = fit.params[0], fit.bse[0]
    assert found.rate == pytest.approx(1 / (1 + math.exp(-a)), abs=1e-12)
    assert found.slope == pytest.approx(fit.params[1], abs=1e-9)
    assert found.ci == pytest.approx(
        (1 / (1 + math.exp(-(a - Z * se))), 1 / (1 + math.exp(-(a + Z * se)))), abs=1e-9
    )


def test_length_control_hand_worked_cases() -> None:
    from cbench_judge.length_control import length_controlled

    # every row a tie: the likelihood's gradient is zero at a = b = 0, so the rate is exactly 1/2
    assert length_controlled([0.5, 0.5, 0.5], [3, -1, 7]).rate == 0.5
    # no length difference to control for: the plain rate, and the logit's interval +- z / sqrt(n p q)
    found = length_controlled([1.0, 1.0, 0.0, 1.0], [4, 4, 4, 4])
    assert found.rate == 0.75
    half = Z / math.sqrt(4 * 0.75 * 0.25)
    logit = math.log(3)
    assert found.ci == pytest.approx(
        (1 / (1 + math.exp(-(logit - half))), 1 / (1 + math.exp(-(logit + half))))
    )
    # the longer answer always wins and the shorter always loses: no finite fit, no rate
    assert length_controlled([1.0, 0.5, 0.0], [1, 0, -1]) is None
    assert length_controlled([], []) is None


def test_building_the_commands_imports_no_client() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from context_bench.cli import main\n"
        "for command in ('pairwise', 'judge-check'):\n"
        "    try: main([command, '--help'])\n"
        "    except SystemExit: pass\n"
        "print('httpx' in sys.modules, 'cbench_judge.client' in sys.modules, file=sys.stderr)"
    )
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stderr
    assert err.split() == ["False", "False"]


def test_a_key_the_judge_echoes_never_reaches_the_output(judge_server, tmp_path, capsys, monkeypatch) -> None:
    secret = "sk-pairwise-0123456789abcdefSECRET"
    monkeypatch.setenv("MY_JUDGE_KEY", secret)
    server = judge_server(lambda body: Reply(status=400, text=f"bad key {secret}"))
    files = [str(_rows(tmp_path / "r.jsonl", _PLANTED[:2]))]
    argv = [
        "pairwise",
        *files,
        "--baseline",
        "short",
        "--judge-url",
        server.url,
        "--judge-api-key-env",
        "MY_JUDGE_KEY",
    ]
    for output in ("table", "json"):
        assert main([*argv, "--output", output]) == 4
        out, err = capsys.readouterr()
        assert "call_error: HTTP 400" in err and secret[:12] not in out + err
    assert server.seen[0].headers["authorization"] == f"Bearer {secret}"


def test_a_template_of_ones_own_is_filled_and_asked(judge_server, tmp_path, capsys) -> None:
    server = judge_server(lambda body: "[[B]]")
    template = tmp_path / "mine.txt"
    template.write_text("Q={question} | A={answer_a} | B={answer_b} | say [[A]], [[B]] or [[C]]")
    files = [str(_rows(tmp_path / "r.jsonl", [("GOOD", "POOR", 0)]))]
    code, (found,), _ = _pairwise(capsys, files, server.url, "--pairwise-template", str(template))
    long, short = "GOOD " + "x" * 35, "POOR " + "x" * 35
    sent = [last_user_message(body) for body in server.requests]
    assert sorted(sent) == sorted(
        [
            f"Q=Q0? | A={long} | B={short} | say [[A]], [[B]] or [[C]]",
            f"Q=Q0? | A={short} | B={long} | say [[A]], [[B]] or [[C]]",
        ]
    )
    assert (code, found["template"], found["ties"], found["position_consistency"]) == (0, "custom", 1, 0.0)


# -- --pairwise on run and score: the summary's pairwise section ---------------------------------

#: The names issue 31 gives each record of ``summary.pairwise``.
CONTRACT = {"system", "baseline", "dataset", "wins", "ties", "losses", "win_rate", "ci"}
CONTRACT |= {"lc_win_rate", "position_consistency", "n"}
#: 5 wins, 2 losses, 3 ties for the system when the judge is right.
_TRUTH = [("GOOD", "POOR", 10)] * 5 + [("POOR", "GOOD", 10)] * 2 + [("GOOD", "GOOD", 10)] * 3


def _wilson(successes: float, n: int) -> tuple[float, float]:
    """Wilson's score interval at 95%, from its formula (the oracle of the figures' own)."""
    p, z2 = successes / n, Z * Z
    centre, half = p + z2 / (2 * n), Z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return (centre - half) / (1 + z2 / n), (centre + half) / (1 + z2 / n)


def _scored(capsys: pytest.CaptureFixture[str], path: Any, url: str, *extra: str) -> tuple[int, Any, str]:
    """``score --pairwise`` of a file of two systems (no other judge wired: ``--judge-dataset none``)."""
    argv = ["score", str(path), "--pairwise", "--baseline", "short", "--judge-url", url]
    argv += ["--judge-dataset", "none", "--store", "none", "--no-progress"]
    code = main([*argv, *(extra or ("--output", "json"))])
    captured = capsys.readouterr()
    summary = json.loads(captured.out)["summary"] if captured.out.startswith("{") else None
    return code, summary, captured.err


def test_score_pairwise_with_a_first_position_judge_gives_only_ties(judge_server, tmp_path, capsys) -> None:
    server = judge_server(first_position)
    code, summary, _ = _scored(capsys, _rows(tmp_path / "r.jsonl", _PLANTED), server.url)
    assert code == 0
    (found,) = summary["pairwise"]
    assert CONTRACT <= set(found)
    assert (found["system"], found["baseline"], found["dataset"]) == ("long", "short", "qa")
    assert (found["wins"], found["ties"], found["losses"], found["n"]) == (0, 48, 0, 48)
    assert (found["win_rate"], found["position_consistency"]) == (0.5, 0.0)
    assert len(server.requests) == 96  # every row asked twice, the answers swapped


def test_score_pairwise_with_a_correct_judge_finds_the_planted_truth(judge_server, tmp_path, capsys) -> None:
    server = judge_server(by_quality)
    code, summary, _ = _scored(capsys, _rows(tmp_path / "r.jsonl", _TRUTH), server.url)
    assert code == 0
    (found,) = summary["pairwise"]
    assert (found["wins"], found["ties"], found["losses"], found["n"]) == (5, 3, 2, 10)
    assert found["win_rate"] == 0.65  # (5 + 3 / 2) / 10
    assert found["ci"] == pytest.approx(_wilson(6.5, 10), abs=1e-12)
    assert found["position_consistency"] == 1.0
    assert found["p_value"] == 58 / 128  # 2 P(X <= 2), X ~ Bin(7, 1/2): 2 (1 + 7 + 21) / 128
    # 10 pairs, both orders: 20 calls of 100 input and 10 output tokens, priced by --price
    assert (found["judge_calls"], found["judge_input_tokens"], found["judge_output_tokens"]) == (
        20,
        2000,
        200,
    )
    priced = _scored(
        capsys, tmp_path / "r.jsonl", server.url, "--output", "json", "--price", f"{found['judge_model']}=1,2"
    )
    assert priced[1]["pairwise"][0]["judge_dollars"] == pytest.approx((2000 * 1 + 200 * 2) / 1e6)


def test_score_pairwise_counts_a_failed_judge_call_and_fails_the_run(judge_server, tmp_path, capsys) -> None:
    def sometimes_broken(body: Any) -> Reply | str:
        return Reply(status=400, text="bad request") if "Q3?" in last_user_message(body) else by_quality(body)

    server = judge_server(sometimes_broken)
    path = _rows(tmp_path / "r.jsonl", _PLANTED)
    code, summary, err = _scored(capsys, path, server.url, "--output", "json", "--max-failure-rate", "0")
    assert code == 4
    (found,) = summary["pairwise"]
    assert (found["n"], found["failed"], found["wins"] + found["ties"] + found["losses"]) == (47, 1, 47)
    assert (
        "too many failures: pairwise: 1 of 48 pairs got no result (2.1%, more than --max-failure-rate 0)"
        in err
    )
    assert "the first: call_error: HTTP 400" in err
    assert _scored(capsys, path, server.url, "--output", "json", "--max-failure-rate", "0.05")[0] == 0


@pytest.mark.parametrize(
    ("planted", "gate", "status", "said"),
    [
        (_PLANTED, ["--fail-under", "win_rate=0.7"], 3, "win_rate of long on qa is 0.625, below 0.7"),
        (_PLANTED, ["--fail-under", "win_rate=0.6"], 0, ""),
        (
            _PLANTED,
            ["--fail-under", "qa:lc_win_rate=0.6"],
            3,
            "--fail-under qa:lc_win_rate=0.6: lc_win_rate of long",
        ),
        # 10 losses and 2 ties: 1 / 12, its interval wholly below 0.45
        (
            [("POOR", "GOOD", 5)] * 10 + [("GOOD", "GOOD", 5)] * 2,
            ["--fail-if-worse", "win_rate=0.45"],
            3,
            "wholly below 0.45",
        ),
        (_TRUTH, ["--fail-if-worse", "win_rate=0.45"], 0, ""),
        (_TRUTH, ["--fail-under", "win_ratio=0.5"], 2, "no group in this run has a score 'win_ratio'"),
    ],
)
def test_score_pairwise_gates(judge_server, tmp_path, capsys, planted, gate, status, said) -> None:
    server = judge_server(quality_then_length if planted is _PLANTED else by_quality)
    code, _, err = _scored(
        capsys, _rows(tmp_path / "r.jsonl", planted), server.url, "--output", "json", *gate
    )
    assert code == status, err
    assert said in err


def test_score_pairwise_a_second_run_with_the_cache_asks_the_judge_nothing(
    judge_server, tmp_path, capsys
) -> None:
    server = judge_server(by_quality)
    path = _rows(tmp_path / "r.jsonl", _TRUTH)
    cache = ("--output", "json", "--cache-dir", str(tmp_path / "cache"))
    first = _scored(capsys, path, server.url, *cache)[1]["pairwise"][0]
    asked = len(server.requests)
    again = _scored(capsys, path, server.url, *cache)[1]["pairwise"][0]
    assert asked == 20 and len(server.requests) == asked
    assert (again["judge_calls"], again["judge_cached"], again["judge_input_tokens"]) == (0, 20, 0)
    assert {k: v for k, v in again.items() if not k.startswith("judge_")} == {
        k: v for k, v in first.items() if not k.startswith("judge_")
    }


def test_score_pairwise_needs_a_judge_before_any_row(tmp_path, capsys) -> None:
    path = _rows(tmp_path / "r.jsonl", _TRUTH)
    assert main(["score", str(path), "--pairwise", "--store", "none", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == "context-bench: error: --pairwise needs a judge: --judge-url URL"


_ANSWERING = """
import sys
planted = {planted!r}
question = sys.stdin.read()
i = next(n for n in range(len(planted)) if f"Q{{n}}?" in question)
ours, theirs, difference = planted[i]
quality, length = (ours, 40 + difference) if sys.argv[1] == "long" else (theirs, 40)
print(quality + " " + "x" * (length - len(quality) - 1))
"""


def test_run_pairwise_judges_two_command_systems(judge_server, tmp_path, capsys) -> None:
    server = judge_server(by_quality)
    program = tmp_path / "answer.py"
    program.write_text(_ANSWERING.format(planted=_TRUTH))
    rows = tmp_path / "qa.jsonl"
    rows.write_text(
        "".join(json.dumps({"id": f"q{i}", "question": f"Q{i}?"}) + "\n" for i in range(len(_TRUTH)))
    )
    systems = []
    for name in ("short", "long"):
        systems += ["--command", f"{sys.executable} {program} {name}", "--name", name]
    argv = ["run", *systems, "--dataset", str(rows), "--pairwise", "--baseline", "short"]
    argv += ["--judge-url", server.url, "--judge-dataset", "none", "--store", "none", "--no-progress"]
    assert main([*argv, "--output", "json"]) == 0
    (found,) = json.loads(capsys.readouterr().out)["summary"]["pairwise"]
    assert (found["wins"], found["ties"], found["losses"], found["win_rate"]) == (5, 3, 2, 0.65)
    assert main([*argv, "--output", "table"]) == 0
    out = capsys.readouterr().out
    assert "Pairwise judging against short, answers in both orders" in out
    assert "0.650" in out


@pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")
def test_the_html_report_draws_a_bar_per_data_set_in_chromium(judge_server, tmp_path, capsys) -> None:
    server = judge_server(by_quality)
    page = tmp_path / "report.html"
    code, _, err = _scored(
        capsys, _rows(tmp_path / "r.jsonl", _TRUTH), server.url, "--output", "html", "--out", str(page)
    )
    assert code == 0, err
    dom, errors = browser.dump_dom(page)
    assert errors == []
    low, high = _wilson(6.5, 10)
    bars = re.findall(r'<rect class="bar"[^>]*width="([\d.]+)"[^>]*><title>([^<]*)</title>', dom)
    assert [title for _, title in bars] == [f"long on qa: 0.6500 [{low:.4f}, {high:.4f}]"]
    assert float(bars[0][0]) > 0
    assert "<th>win_rate</th>" in dom or ">win_rate<" in dom


def test_score_pairwise_keeps_a_key_the_judge_echoes_out_of_every_report(
    judge_server, tmp_path, capsys, monkeypatch
) -> None:
    secret = "sk-pairwise-0123456789abcdefSECRET"
    monkeypatch.setenv("MY_JUDGE_KEY", secret)
    server = judge_server(lambda body: Reply(status=400, text=f"bad key {secret}"))
    path = _rows(tmp_path / "r.jsonl", _TRUTH[:2])
    argv = [
        "score",
        str(path),
        "--pairwise",
        "--judge-url",
        server.url,
        "--judge-api-key-env",
        "MY_JUDGE_KEY",
    ]
    argv += ["--judge-dataset", "none", "--store", "none", "--no-progress"]
    for output in ("table", "markdown", "json", "html"):
        assert main([*argv, "--output", output]) == 4
        out, err = capsys.readouterr()
        assert "call_error: HTTP 400" in out and "call_error: HTTP 400" in err
        assert secret[:12] not in out + err
    assert server.seen[0].headers["authorization"] == f"Bearer {secret}"


def test_score_pairwise_of_one_system_says_there_is_nothing_to_judge(judge_server, tmp_path, capsys) -> None:
    server = judge_server(by_quality)
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"system": "short", "id": "q0", "question": "Q0?", "response": "GOOD"}) + "\n")
    code, summary, err = _scored(capsys, path, server.url)
    assert (code, summary["pairwise"], server.requests) == (0, [], [])
    assert "--pairwise: the run has one system, so nothing to judge" in summary["warnings"]
    assert "warning: --pairwise: the run has one system, so nothing to judge" in err


def test_score_pairwise_with_a_reference_template_needs_a_reference(judge_server, tmp_path, capsys) -> None:
    server = judge_server(by_quality)
    path = _rows(tmp_path / "r.jsonl", _TRUTH)
    flags = ("--output", "json", "--pairwise-template", "mt_bench_reference")
    code, summary, err = _scored(capsys, path, server.url, *flags)
    assert (code, summary["pairwise"], server.requests) == (4, [], [])
    assert "10 of 10 pairs got no result" in err and "needs a reference answer ('answer') in every row" in err
    with_answers = tmp_path / "answered.jsonl"
    lines = path.read_text().splitlines()
    with_answers.write_text("".join(json.dumps({**json.loads(x), "answer": "GOOD"}) + "\n" for x in lines))
    code, summary, _ = _scored(capsys, with_answers, server.url, *flags)
    (found,) = summary["pairwise"]
    assert (code, found["template"], found["win_rate"]) == (0, "mt_bench_reference", 0.65)
    assert all("[The Start of Reference Answer]\nGOOD\n" in last_user_message(b) for b in server.requests)
