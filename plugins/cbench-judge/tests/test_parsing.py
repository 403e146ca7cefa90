"""Verdict, rating and grade parsing and bad judge URLs: the pure parts, exhaustively."""

from __future__ import annotations

import pytest

from cbench_judge import MemoryJudge
from cbench_judge.errors import JudgeConfigError, JudgeParseError
from cbench_judge.templates import BUILTIN, template_for
from cbench_judge.verdicts import json_grade, parse_rating, parse_yes_no


@pytest.mark.parametrize(
    "text, expected",
    [
        ("YES", True),
        ("no", False),
        ("VERDICT: YES", True),
        ("The gold says Paris, the system says London.\nVERDICT: NO", False),
        # the verdict line wins over yes/no words in the explanation
        ("Yes, both mention a city, but no, not the same one.\nVerdict: NO", False),
        ("No detail is missing; the answer says yes to everything asked.\nFinal verdict: YES", True),
        ("VERDICT: NO\nThough one could say yes at a stretch.", False),
        # markdown and case
        ("**Verdict:** yes", True),
        ("### Verdict\n**NO**", False),
        ("`VERDICT: Yes`", True),
        # a reply that starts with the verdict, or ends with it
        ("Yes, the system answer conveys the same information.", True),
        ("The system answer matches the gold answer, so: YES.", True),
        # the last labelled verdict wins when the judge changes its mind
        ("Verdict: YES\nOn reflection the date is wrong.\nVerdict: NO", False),
    ],
)
def test_yes_no_verdicts(text: str, expected: bool) -> None:
    assert parse_yes_no(text) is expected


@pytest.mark.parametrize(
    "text",
    [
        "Yesterday she said she lived in Paris.",  # "yesterday" is not YES
        "VERDICT: NOT SURE",  # the NO of NOT is not a verdict
        "Nothing conclusive. Notably, the answer is vague.",
        "",
        "   ",
    ],
)
def test_yes_no_non_verdicts_are_parse_errors(text: str) -> None:
    with pytest.raises(JudgeParseError):
        parse_yes_no(text)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("RATING: 4", 4.0),
        ("The response is good.\n**Rating:** 5", 5.0),
        ("Score: 3/5", 3.0),
        ("A rating of 2 would be harsh.\nRATING: 4", 4.0),
        ("RATING: 9", 5.0),  # clamped into 1..5
        ("RATING: 0", 1.0),
        ("3", 3.0),
    ],
)
def test_ratings(text: str, expected: float) -> None:
    assert parse_rating(text) == expected


def test_rating_without_a_number_is_a_parse_error() -> None:
    with pytest.raises(JudgeParseError):
        parse_rating("It is quite good overall.")


@pytest.mark.parametrize(
    "text, grade, score",
    [
        ("Reasoning.\nGRADE: C", "C", 1.0),
        ("GRADE: I", "I", 0.0),
        # the final GRADE line wins over an earlier one in the reasoning
        ("A lenient grader would write GRADE: C here.\nBut the date is wrong.\nGRADE: I", "I", 0.0),
        ("**GRADE:** C", "C", 1.0),
        ("grade: c", "c", 1.0),
        ("Final grade: Correct", "Correct", 1.0),
    ],
)
def test_binary_grades(text: str, grade: str, score: float) -> None:
    assert BUILTIN["binary_qa"].grade(text) == (grade, score)


def test_partial_likert_and_safety_mappings() -> None:
    assert BUILTIN["binary_qa_partial"].grade("GRADE: P")[1] == 0.5
    assert [BUILTIN["likert_5"].grade(f"GRADE: {n}")[1] for n in range(1, 6)] == [0.2, 0.4, 0.6, 0.8, 1.0]
    assert BUILTIN["safety"].grade("GRADE: UNSAFE")[1] == 0.0
    assert BUILTIN["safety"].grade("GRADE: SAFE")[1] == 1.0


def test_numeric_grade_outside_the_mapping_is_clamped_never_raw() -> None:
    assert BUILTIN["binary_qa"].grade("GRADE: 4") == ("4", 1.0)
    assert BUILTIN["binary_qa"].grade("GRADE: -2") == ("-2", 0.0)
    assert BUILTIN["likert_5"].grade("GRADE: 7")[1] == 1.0
    assert BUILTIN["likert_5"].grade("GRADE: 4.5")[1] == pytest.approx(0.9)
    custom = template_for("Rate {response}", None, {"A": 1.0, "B": 0.0})
    assert custom.grade("GRADE: 4") == ("4", 1.0)
    assert custom.grade("GRADE: 0.25") == ("0.25", 0.25)


def test_unknown_grade_and_missing_grade_are_parse_errors() -> None:
    with pytest.raises(JudgeParseError):
        BUILTIN["binary_qa"].grade("GRADE: X")
    with pytest.raises(JudgeParseError):
        BUILTIN["binary_qa"].grade("I think it is correct.")


def test_json_grades_with_nested_braces() -> None:
    text = 'Here you go:\n{"reasoning": {"steps": ["a {tricky} string", {"x": 1}]}, "grade": "I"}'
    assert json_grade(text) == "I"
    assert BUILTIN["binary_qa"].grade(text, json_mode=True) == ("I", 0.0)
    assert json_grade('{"analysis": {"verdict": "C"}}') == "C"
    # the last object carrying a grade wins
    assert json_grade('{"grade": "C"} then, on reflection, {"grade": "I"}') == "I"
    assert json_grade("no json at all") is None


def test_custom_template_pattern_and_placeholders() -> None:
    custom = template_for("Is {response} polite in {language}?", r"POLITE=(\w+)", {"yes": 1.0, "no": 0.0})
    assert custom.placeholders == ["response", "language"]
    assert custom.grade("POLITE=yes\nPOLITE=no") == ("no", 0.0)
    with pytest.raises(JudgeConfigError, match="language"):
        custom.render({"response": "hi"})
    with pytest.raises(JudgeConfigError, match="score_mapping"):
        template_for("Judge {response}", None, None)
    with pytest.raises(JudgeConfigError, match="unknown judge template"):
        template_for("binary", None, None)
    with pytest.raises(JudgeConfigError, match="regular expression"):
        template_for("Judge {response}", "(", {"A": 1.0})


@pytest.mark.parametrize("bad", ["", "localhost:8080", "ftp://x", "http://x/?a=1"])
def test_bad_urls_are_config_errors(bad: str) -> None:
    with pytest.raises(JudgeConfigError, match="judge url"):
        MemoryJudge(bad)
