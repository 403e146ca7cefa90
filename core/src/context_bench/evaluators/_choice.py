"""MultipleChoiceAccuracy: did the response pick the correct letter?"""

from __future__ import annotations

import re
from typing import Any

from ..text import as_text

# A choice letter stands alone: no letter, digit, apostrophe or hyphen touches it ("I'm", "D-Day").
_ALONE_BEFORE = r"(?<![A-Za-z0-9'’\-])"
_ALONE_AFTER = r"(?![A-Za-z0-9'’\-])"

#: Forms that state the choice, most explicit first.  Each yields candidates; the first form
#: with one wins.  ``last`` says which candidate of a form counts when it matches several times:
#: reasoning ends with its conclusion, while a response that opens with "B. ..." opens with it.
_FORMS: tuple[tuple[re.Pattern[str], bool], ...] = (
    # "the answer is B", "Answer: (C)", "correct option would be D", "I choose E", "\boxed{F}"
    (
        re.compile(
            r"""
            (?:
                (?i: \b(?:answer|option|choice|letter)\b
                     (?:\s+(?:is|would\s+be|should\s+be|must\s+be|will\s+be))?
                   | \b(?:choose|chose|pick|picked|select|selected|go\s+with|going\s+with)\b )
                \s*[:=]?\s* (?i:(?:option|choice|letter)\s*)? [(\[]?
              | \\boxed\{
            )
            """
            + _ALONE_BEFORE
            # a lowercase letter only where no word follows: "the answer is b."
            + r"([A-J]|[a-j](?=\s*(?:[.)\]:,;!?]|$)))"
            + _ALONE_AFTER,
            re.VERBOSE,
        ),
        True,
    ),
    # a line holding nothing but the choice: "B", "(b)", "C."
    (re.compile(r"(?m)^[ \t>#]*[(\[]?([A-Ja-j])[)\].:]?[ \t]*$"), True),
    # "(B)" or "[B]" within a sentence
    (re.compile(r"[(\[]([A-J])[)\]]"), True),
    # a line opening with the choice: "B. Paris", "C) 42", "D: none"
    (re.compile(r"(?m)^[ \t>#-]*[(\[]?([A-J])[)\].:](?=\s|$)"), False),
    # a stray capital letter: "definitely C", "I think B"
    (re.compile(_ALONE_BEFORE + r"([A-J])" + _ALONE_AFTER), True),
)

# "I" and "A" followed by a lowercase word are the pronoun and the article ("I think",
# "A good answer"), except before a word that makes them a choice ("A is correct", "I because").
_PRONOUN_OR_ARTICLE = re.compile(
    r"[ \t]+(?!(?:is|was|seems|appears|looks|because|since|as|and|or|but|nor|so|then|which|for|in)\b)[a-z]"
)


def extract_choice(response: str) -> str | None:
    """The letter A-J the response chooses, or None when it names none."""
    text = response.replace("*", "")  # markdown emphasis: "**B**"
    for pattern, last in _FORMS:
        found = [
            match.group(1).upper()
            for match in pattern.finditer(text)
            if not (match.group(1) in "IA" and _PRONOUN_OR_ARTICLE.match(text, match.end(1)))
        ]
        if found:
            return found[-1] if last else found[0]
    return None


class MultipleChoiceAccuracy:
    """``mc_accuracy``: 1.0 when the letter the response chooses equals ``original["correct_letter"]``.

    Explicit statements ("answer is B", "\\boxed{B}") beat a line holding only the letter, which
    beats "(B)" in a sentence, then a line opening with "B." and last a stray capital letter; within
    one form the last mention counts (the conclusion), except for lines opening with a letter (the
    first).  The pronoun "I", the article "A" and letters inside words are never read as choices;
    a lowercase letter counts only alone on its line or ending an explicit statement ("answer is b.").
    A response naming no letter scores 0.0; no ``correct_letter`` means not applicable (``{}``).
    ``correct_letter`` may be written ``"b"``, ``"(B)"`` or ``"B."``; anything else is an error.
    """

    name = "multiple_choice_accuracy"

    def score(self, original: dict, processed: dict) -> dict[str, float]:
        correct = original.get("correct_letter")
        if correct is None:
            return {}
        expected = _correct_letter(correct)
        response = processed.get("response")
        chosen = extract_choice(as_text(response))
        return {"mc_accuracy": 1.0 if chosen == expected else 0.0}

    def __repr__(self) -> str:
        return "MultipleChoiceAccuracy()"


def _correct_letter(value: Any) -> str:
    letter = str(value).strip().strip("()[]. ").upper()
    if len(letter) != 1 or letter not in "ABCDEFGHIJ":
        raise ValueError(f"MultipleChoiceAccuracy: original['correct_letter'] is {value!r}, not a letter A-J")
    return letter
