"""NLILabelMatch: did the response give the gold entailment label?"""

from __future__ import annotations

import re
from typing import Any

from ..text import as_text

ENTAILMENT, NEUTRAL, CONTRADICTION = "entailment", "neutral", "contradiction"

#: Words that name a label outright, including the SciFact/FEVER and ContractNLI vocabularies.
_STRONG = {
    ENTAILMENT: ("entailment", "entailed", "entails", "entail", "supports", "supported", "support"),
    CONTRADICTION: (
        "contradiction",
        "contradictory",
        "contradicted",
        "contradicts",
        "contradict",
        "refutes",
        "refuted",
        "refute",
    ),
    NEUTRAL: (
        "neutral",
        "not enough info",
        "not enough information",
        "not enough evidence",
        "nei",
        "not mentioned",
        "notmentioned",
        "undetermined",
        "cannot be determined",
        "can not be determined",
        "can't be determined",
        "insufficient information",
    ),
}
#: Everyday answers that mean a label but also occur in ordinary prose.
_WEAK = {
    ENTAILMENT: ("yes", "true"),
    CONTRADICTION: ("no", "false"),
    NEUTRAL: ("maybe", "unknown", "unclear", "possibly"),
}

_ALIASES = {alias: label for table in (_STRONG, _WEAK) for label, words in table.items() for alias in words}


def _alternation(words: Any) -> str:
    ordered = sorted(words, key=len, reverse=True)  # "not enough information" before "not enough info"
    return "|".join(re.escape(word).replace(r"\ ", r"\s+") for word in ordered)


_ANY = _alternation(_ALIASES)
_STRONG_WORDS = re.compile(rf"\b(?:{_alternation(w for ws in _STRONG.values() for w in ws)})\b")
_WEAK_WORDS = re.compile(rf"\b(?:{_alternation(w for ws in _WEAK.values() for w in ws)})\b")
# "the answer is: entailment", "Label: neutral", "relationship = contradiction"
_EXPLICIT = re.compile(
    rf"\b(?:answer|label|verdict|relation|relationship|classification|prediction)\s*(?:is|:|=)\s*"
    rf"[\"'(\[]*({_ANY})\b"
)
_LEADING = re.compile(rf"^[\W_]*({_ANY})\b")
# a negation just before a label word ("does not entail", "doesn't necessarily contradict")
_NEGATED = re.compile(r"(?:\bnot|n't|\bnever)\s+(?:\w+\s+)?$")


def _label_of(phrase: str) -> str:
    return _ALIASES[" ".join(phrase.split())]


def extract_label(response: str) -> str | None:
    """The NLI label a response gives (``entailment``, ``neutral`` or ``contradiction``), or None.

    In order: an explicit "answer/label is X" (the last one), a label the response opens with
    ("Yes, ..."), the first label word that is not negated, the first everyday answer word.
    """
    text = response.replace("*", "").lower()
    explicit = _EXPLICIT.findall(text)
    if explicit:
        return _label_of(explicit[-1])
    leading = _LEADING.match(text)
    if leading:
        return _label_of(leading.group(1))
    for pattern in (_STRONG_WORDS, _WEAK_WORDS):
        for match in pattern.finditer(text):
            if not _NEGATED.search(text, max(0, match.start() - 40), match.start()):
                return _label_of(match.group())
    return None


def gold_label(value: Any) -> str:
    """The label a gold answer names (any alias, any case, ``_``/``-`` for spaces)."""
    if isinstance(value, str):
        phrase = " ".join(value.replace("_", " ").replace("-", " ").lower().split())
        if phrase in _ALIASES:
            return _ALIASES[phrase]
    raise ValueError(
        f"NLILabelMatch: original['answer'] is {value!r}, not an NLI label "
        f"(entailment, neutral, contradiction or an alias such as supports/refutes/not enough info)"
    )


class NLILabelMatch:
    """``nli_accuracy``: 1.0 when the label the response gives equals the gold ``original["answer"]``.

    Labels are entailment, neutral and contradiction, each with aliases: yes/true/supports →
    entailment, no/false/refutes → contradiction, maybe/unknown/not enough info/not mentioned →
    neutral.  See :func:`extract_label` for how the response is read; a response giving no label
    scores 0.0, a row without ``"answer"`` is not applicable (``{}``), and a gold answer that is no
    label is an error naming it.

    >>> NLILabelMatch().score({"answer": "Entailment"}, {"response": "Yes, this is true."})
    {'nli_accuracy': 1.0}
    """

    name = "nli_label_match"

    def score(self, original: dict, processed: dict) -> dict[str, float]:
        answer = original.get("answer")
        if answer is None:
            return {}
        expected = gold_label(answer)
        response = processed.get("response")
        found = extract_label(as_text(response))
        return {"nli_accuracy": 1.0 if found == expected else 0.0}

    def __repr__(self) -> str:
        return "NLILabelMatch()"
