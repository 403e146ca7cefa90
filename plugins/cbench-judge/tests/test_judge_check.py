"""judge-check: kappa against hand-worked tables and statsmodels, and the command on labels."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from cbench_judge.kappa import cohen_kappa
from context_bench.cli import main
from context_bench.testing import Reply, last_user_message


def test_kappa_at_n_1_2_3_is_the_hand_worked_figure() -> None:
    # n = 1: one category, chance explains everything
    assert cohen_kappa([True], [True]).kappa is None
    # n = 2, perfect agreement on two categories: p_o = 1, p_e = 1/2, kappa 1, no spread
    found = cohen_kappa([True, False], [True, False])
    assert (found.kappa, found.ci) == (1.0, (1.0, 1.0))
    # n = 3: p_o = 2/3, p_e = 2/3 * 1/3 + 1/3 * 2/3 = 4/9, kappa = (2/9) / (5/9)
    assert cohen_kappa([True, True, False], [True, False, False]).kappa == pytest.approx(0.4, abs=1e-15)
    # quadratic weights on 1, 2, 3: p_o = (1 + 3/4 + 1) / 3, p_e = 7/12, kappa = (1/3) / (5/12)
    assert cohen_kappa([1, 2, 3], [1, 3, 3], ordinal=True).kappa == pytest.approx(0.8, abs=1e-15)


def test_kappa_of_a_two_by_two_table() -> None:
    # people pass 25, fail 25; the judge passes 20 + 10 = 30: p_o = 0.7, p_e = 0.5, kappa 0.4
    people = [True] * 25 + [False] * 25
    judge = [True] * 20 + [False] * 5 + [True] * 10 + [False] * 15
    assert cohen_kappa(people, judge).kappa == pytest.approx(0.4, abs=1e-15)


@pytest.mark.parametrize("ordinal", [False, True])
def test_kappa_and_its_standard_error_are_statsmodels(ordinal: bool) -> None:
    np = pytest.importorskip("numpy")
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    rng = random.Random(3)
    people = [rng.randint(1, 5) for _ in range(80)]
    judge = [min(5, max(1, x + rng.choice([-1, 0, 0, 1]))) for x in people]
    table = np.zeros((5, 5))
    for a, b in zip(people, judge, strict=True):
        table[a - 1, b - 1] += 1
    expected = inter_rater.cohens_kappa(table, wt="quadratic" if ordinal else None)
    found = cohen_kappa(people, judge, ordinal=ordinal)
    assert found.kappa == pytest.approx(expected.kappa, abs=1e-12)
    half = (found.ci[1] - found.ci[0]) / 2
    assert half == pytest.approx(1.959963984540054 * expected.std_kappa, abs=1e-12)


# -- the command --------------------------------------------------------------------------------


def _write(path: Any, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def _report(path: Any, scores: list[float], failures: set[int] = frozenset()) -> str:
    rows = [
        {
            "system": "s",
            "dataset": "qa",
            "id": f"q{i}",
            "scores": {"judge_score": score},
            "failures": {"judge_score": "call_error: x"} if i in failures else {},
        }
        for i, score in enumerate(scores)
    ]
    path.write_text(json.dumps({"summary": {}, "rows": rows}))
    return str(path)


def _check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    code = main(["judge-check", *argv, "--output", "json"])
    out, err = capsys.readouterr()
    return code, json.loads(out)["summary"]["judge_check"] if out else None, err


def test_pass_fail_labels_against_a_saved_report(tmp_path, capsys) -> None:
    # people: 4 pass, 2 fail; the judge passes 3 of the 4 and 1 of the 2
    labels = _write(
        tmp_path / "l.jsonl",
        [{"id": f"q{i}", "label": "pass" if v == "P" else "fail"} for i, v in enumerate("PPPPFF")],
    )
    report = _report(tmp_path / "r.json", [1.0, 1.0, 1.0, 0.0, 1.0, 0.0])
    code, found, _ = _check(capsys, "--labels", labels, "--report", report)
    assert code == 0
    assert (found["n"], found["kind"], found["failed"]) == (6, "pass/fail", 0)
    assert found["accuracy"] == 4 / 6
    assert (found["tpr"], found["tnr"]) == (0.75, 0.5)
    # p_o = 4/6, p_e = 4/6 * 4/6 + 2/6 * 2/6 = 5/9, kappa = (1/9) / (4/9)
    assert found["kappa"] == pytest.approx(0.25, abs=1e-15)
    assert main(["judge-check", "--labels", labels, "--report", report, "--min-agreement", "0.3"]) == 3
    assert "kappa 0.250 is under --min-agreement 0.3" in capsys.readouterr().err


def test_a_failed_judge_row_is_counted_apart_and_fails_the_run(tmp_path, capsys) -> None:
    labels = _write(tmp_path / "l.jsonl", [{"id": f"q{i}", "label": i < 2} for i in range(4)])
    report = _report(tmp_path / "r.json", [1.0, 0.0, 0.0, 0.0], failures={1})
    code, found, err = _check(capsys, "--labels", labels, "--report", report)
    assert code == 4
    assert (found["n"], found["failed"], found["tpr"]) == (3, 1, 1.0)
    assert "1 of 4 labelled rows got no judge score" in err


def test_the_judge_runs_on_labelled_rows(judge_server, tmp_path, capsys) -> None:
    def grader(body: Any) -> Reply | str:
        text = last_user_message(body)
        return "GRADE: C" if "Paris" in text.split("Response to grade:")[-1] else "GRADE: I"

    server = judge_server(grader)
    rows = _write(
        tmp_path / "rows.jsonl",
        [
            {"id": "a", "question": "Capital of France?", "answer": "Paris", "response": "Paris."},
            {"id": "b", "question": "Capital of France?", "answer": "Paris", "response": "Lyon."},
            {"id": "c", "question": "Capital of France?", "answer": "Paris", "response": "Not Paris: Lyon."},
        ],
    )
    labels = _write(
        tmp_path / "l.jsonl", [{"id": k, "label": v} for k, v in (("a", True), ("b", False), ("c", False))]
    )
    code, found, _ = _check(capsys, rows, "--labels", labels, "--judge-url", server.url, "--judge-model", "m")
    assert code == 0
    assert (found["template"], found["judge_model"], found["n"]) == ("binary_qa", "m", 3)
    assert (found["tpr"], found["tnr"], found["accuracy"]) == (1.0, 0.5, 2 / 3)
    assert found["kappa"] == pytest.approx(0.4, abs=1e-15)  # the n = 3 table worked above
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("labels", "said"),
    [
        ([{"id": "q0", "label": True}, {"id": "zz", "label": False}], "1 labelled ids are not in"),
        (
            [{"id": "q0", "label": True}, {"id": "q1", "label": 0.5}],
            "labels of mixed kinds (pass/fail, score)",
        ),
        ([{"id": "q0", "label": "A"}], "A/B/tie labels are checked against the pairwise judge"),
        (
            [{"id": "q0", "label": "A"}, {"id": "q1", "label": "pass"}],
            "labels of mixed kinds (A/B/tie, pass/fail)",
        ),
        ([{"id": "q0"}], "a label row needs 'id' and 'label'"),
        ([{"id": "q0", "label": True}], "--min-agreement: must be a number from -1 to 1"),
    ],
)
def test_bad_labels_are_one_line_and_status_2(tmp_path, capsys, labels, said) -> None:
    report = _report(tmp_path / "r.json", [1.0, 0.0])
    gate = ["--min-agreement", "1e308"] if "min-agreement" in said else []
    assert (
        main(["judge-check", "--labels", _write(tmp_path / "l.jsonl", labels), "--report", report, *gate])
        == 2
    )
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1


# -- A/B/tie labels against the pairwise judge ------------------------------------------------------


def _agreement(people: list[str], judge: list[str | None]):
    from cbench_judge.judge_check import agreement

    return agreement("A/B/tie", people, judge, "pairwise", "mt_bench", "m", baseline="b")


def _per_class(found) -> dict[str, tuple[int, int]]:
    return {c.label: (c.agreed, c.n) for c in found.per_class}


def test_ab_tie_agreement_at_n_1_2_3_is_the_hand_worked_table() -> None:
    from context_bench.metrics.intervals import wilson

    # n = 1: one category, chance explains everything; accuracy 1 with Wilson's [1 / (1 + z^2), 1]
    found = _agreement(["A"], ["A"])
    assert (found.kappa, found.accuracy, found.accuracy_ci, found.n) == (None, 1.0, wilson(1, 1), 1)
    assert _per_class(found) == {"A": (1, 1), "B": (0, 0), "tie": (0, 0)}
    assert [c.rate for c in found.per_class] == [1.0, None, None]
    # n = 2: people A, B; judge A, tie. p_o = 1/2; people's margins A 1/2, B 1/2, the judge's A 1/2,
    # tie 1/2: p_e = 1/4, kappa = (1/4) / (3/4) = 1/3
    found = _agreement(["a", "B"], ["A", "tie"])
    assert found.kappa == pytest.approx(1 / 3, abs=1e-15)
    assert (found.accuracy, _per_class(found)) == (0.5, {"A": (1, 1), "B": (0, 1), "tie": (0, 0)})
    # n = 3: people A, B, tie; judge A, B, A. p_o = 2/3; margins 1/3 each against A 2/3, B 1/3,
    # tie 0: p_e = 2/9 + 1/9 = 1/3, kappa = (1/3) / (2/3) = 1/2
    found = _agreement(["A", "B", "TIE"], ["A", "B", "A"])
    assert found.kappa == pytest.approx(0.5, abs=1e-15)
    assert (found.accuracy, _per_class(found)) == (2 / 3, {"A": (1, 1), "B": (1, 1), "tie": (0, 1)})
    # a failed pair (None) is counted apart, not a disagreement
    found = _agreement(["A", "B", "tie"], ["A", None, "tie"])
    assert (found.n, found.failed, found.accuracy) == (2, 1, 1.0)


def _random_verdicts(n: int) -> tuple[list[str], list[str]]:
    rng = random.Random(31)
    people = [rng.choice(("A", "B", "tie")) for _ in range(n)]
    return people, [p if rng.random() < 0.6 else rng.choice(("A", "B", "tie")) for p in people]


@pytest.mark.parametrize(
    ("people", "judge"),
    [
        (["A", "B"], ["A", "tie"]),  # the hand-worked tables above, whose intervals statsmodels gives
        (["A", "B", "tie"], ["A", "B", "A"]),
        _random_verdicts(120),
    ],
    ids=["n=2", "n=3", "n=120"],
)
def test_ab_tie_agreement_is_statsmodels(people: list[str], judge: list[str]) -> None:
    np = pytest.importorskip("numpy")
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    labels, n = ("A", "B", "tie"), len(people)
    table = np.zeros((3, 3))
    for a, b in zip(people, judge, strict=True):
        table[labels.index(a), labels.index(b)] += 1
    expected = inter_rater.cohens_kappa(table)  # unweighted: A, B and tie are not ordered
    found = _agreement(people, judge)
    assert found.kappa == pytest.approx(expected.kappa, abs=1e-12)
    half = (found.kappa_ci[1] - found.kappa_ci[0]) / 2
    assert half == pytest.approx(1.959963984540054 * expected.std_kappa, abs=1e-12)
    assert found.accuracy == np.trace(table) / n
    for i, rate in enumerate(found.per_class):
        given, agreed = int(table[i].sum()), int(table[i, i])
        assert (rate.label, rate.n, rate.agreed) == (labels[i], given, agreed)
        if given:
            expected_ci = proportion.proportion_confint(agreed, given, method="wilson")
            assert rate.ci == pytest.approx(expected_ci, abs=1e-12)


def _answers(body: Any) -> list[str]:
    import re

    return re.findall(r"Start of Assistant [AB]'s Answer\]\n(.*?)\n\[The End", last_user_message(body), re.S)


def _right_then_longer(body: Any) -> str:
    """The answer that says Paris; between two that do (or neither), the longer; else a tie."""
    a, b = (("Paris" in x, len(x)) for x in _answers(body))
    return "[[C]]" if a == b else ("[[A]]" if a > b else "[[B]]")


def _pairs(tmp_path: Any) -> str:
    answers = {"q1": ("Paris.", "Lyon."), "q2": ("Lyon.", "Paris."), "q3": ("Paris, France.", "Paris.")}
    return _write(
        tmp_path / "systems.jsonl",
        [
            {"system": system, "dataset": "qa", "id": key, "question": "Capital of France?", "response": said}
            for key, pair in answers.items()
            for system, said in zip(("compressed", "baseline"), pair, strict=True)
        ],
    )


def _preferences(tmp_path: Any) -> str:
    return _write(
        tmp_path / "prefs.jsonl", [{"id": f"q{i}", "label": v} for i, v in enumerate("A B tie".split(), 1)]
    )


def test_ab_tie_labels_against_the_pairwise_judge(judge_server, tmp_path, capsys) -> None:
    server = judge_server(_right_then_longer)
    argv = [_pairs(tmp_path), "--labels", _preferences(tmp_path), "--baseline", "baseline"]
    code, found, _ = _check(capsys, *argv, "--judge-url", server.url, "--judge-model", "m")
    assert code == 0
    # the judge says A, B, A (it prefers the longer right answer); people said A, B, tie: the n = 3 table
    assert (found["kind"], found["field"], found["template"], found["baseline"]) == (
        "A/B/tie",
        "pairwise",
        "mt_bench",
        "baseline",
    )
    assert found["kappa"] == pytest.approx(0.5, abs=1e-15)
    assert (found["n"], found["failed"], found["accuracy"]) == (3, 0, 2 / 3)
    assert [(c["label"], c["agreed"], c["n"]) for c in found["per_class"]] == [
        ("A", 1, 1),
        ("B", 1, 1),
        ("tie", 0, 1),
    ]
    assert len(server.requests) == 6  # each pair in both orders
    assert main(["judge-check", *argv, "--judge-url", server.url, "--min-agreement", "0.6"]) == 3
    out, err = capsys.readouterr()
    assert "against 3 A/B/tie labels (A: the labelled system, B: baseline): kappa 0.50" in out
    assert "agreed on A 1 of 1 (1.00 [0.21, 1.00]), B 1 of 1 (1.00 [0.21, 1.00]), tie 0 of 1" in out
    assert "kappa 0.500 is under --min-agreement 0.6" in err


def test_a_judge_that_prefers_a_position_agrees_no_better_than_chance(judge_server, tmp_path, capsys) -> None:
    server = judge_server(lambda body: "[[A]]")
    argv = [_pairs(tmp_path), "--labels", _preferences(tmp_path), "--baseline", "baseline"]
    code, found, _ = _check(capsys, *argv, "--judge-url", server.url)
    # both orders disagree on every pair: three ties against A, B, tie; p_o = 1/3 = p_e
    assert code == 0
    assert (found["kappa"], found["accuracy"]) == (0.0, 1 / 3)
    assert [c["agreed"] for c in found["per_class"]] == [0, 0, 1]


def test_a_failed_pair_is_counted_apart_and_fails_the_check(judge_server, tmp_path, capsys) -> None:
    server = judge_server(
        lambda body: (
            Reply(status=400, text="no") if "Lyon." in _answers(body)[0] else _right_then_longer(body)
        )
    )
    argv = [_pairs(tmp_path), "--labels", _preferences(tmp_path), "--baseline", "baseline"]
    code, found, err = _check(capsys, *argv, "--judge-url", server.url)
    # q1 and q2 each have Lyon first in one order: both pairs fail, only q3 is judged (A against tie)
    assert code == 4
    assert (found["n"], found["failed"], found["accuracy"]) == (1, 2, 0.0)
    assert "2 of 3 labelled pairs got no judge verdict" in err


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("unknown", "1 labelled ids are not in the rows both baseline and another system answered: q9"),
        ("unanswered", "1 labelled ids are not in the rows both baseline and another system answered: q3"),
        (
            "no baseline",
            "A/B/tie labels are checked against the pairwise judge: give --judge-url, --baseline",
        ),
        ("a report", "A/B/tie labels are checked against the pairwise judge"),
    ],
)
def test_bad_ab_tie_input_is_one_line_and_status_2_before_any_judge_call(
    judge_server, tmp_path, capsys, given, said
) -> None:
    server = judge_server(_right_then_longer)
    rows = _pairs(tmp_path)
    labels = _preferences(tmp_path)
    if given == "unknown":
        labels = _write(tmp_path / "prefs.jsonl", [{"id": "q1", "label": "A"}, {"id": "q9", "label": "B"}])
    if given == "unanswered":
        kept = [r for r in map(json.loads, open(rows)) if not (r["id"] == "q3" and r["system"] == "baseline")]
        rows = _write(tmp_path / "systems.jsonl", kept)
    argv = [rows, "--labels", labels, "--judge-url", server.url]
    if given != "no baseline":
        argv += ["--baseline", "baseline"]
    if given == "a report":
        argv += ["--report", _report(tmp_path / "r.json", [1.0, 0.0])]
    assert main(["judge-check", *argv]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1
    assert server.requests == []


# -- bias probes ----------------------------------------------------------------------------------


def _longer_else_tie(body: Any) -> str:
    import re

    a, b = re.findall(r"Start of Assistant [AB]'s Answer\]\n(.*?)\n\[The End", last_user_message(body), re.S)
    return "[[C]]" if len(a) == len(b) else ("[[A]]" if len(a) > len(b) else "[[B]]")


@pytest.mark.parametrize(
    ("judge", "expected"),
    [
        # always the first answer: every identical pair is a preference, padding wins in one order of two
        (lambda body: "[[A]]", {"position": (8, 8), "length": (8, 16), "verbosity": (8, 16)}),
        # the longer answer, else a tie: no position bias, every padded or reformatted answer wins
        (_longer_else_tie, {"position": (0, 8), "length": (16, 16), "verbosity": (16, 16)}),
        # a fair judge that sees no difference in content
        (lambda body: "Same facts. [[C]]", {"position": (0, 8), "length": (0, 16), "verbosity": (0, 16)}),
    ],
)
def test_probes_measure_each_bias(judge_server, capsys, judge, expected) -> None:
    from context_bench.metrics.intervals import wilson

    server = judge_server(judge)
    code = main(["judge-check", "--probes", "--judge-url", server.url, "--output", "json"])
    found = {p["probe"]: p for p in json.loads(capsys.readouterr().out)["summary"]["probes"]}
    assert code == 0
    assert {k: (p["biased"], p["n"]) for k, p in found.items()} == expected
    for probe, (biased, n) in expected.items():
        assert found[probe]["rate"] == biased / n
        assert found[probe]["ci"] == list(wilson(biased, n))
    assert len(server.requests) == 8 + 16 + 16


def test_a_failing_probe_judge_is_counted_and_fails_the_run(judge_server, capsys) -> None:
    server = judge_server(
        lambda body: Reply(status=400, text="no") if "Hamlet" in last_user_message(body) else "[[C]]"
    )
    assert main(["judge-check", "--probes", "--judge-url", server.url]) == 4
    out, err = capsys.readouterr()
    assert "0 of 7 verdicts show the bias" in out and "1 verdicts lost to failed judge calls" in out
    assert "5 of 40 probe verdicts got no answer" in err
