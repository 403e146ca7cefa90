"""Answer text as the scores compare it: a value's text form and SQuAD-style normalization.

This is the hot path of answer scoring (tens of thousands of rows a second), so normalization
yields a token list: one ``lower`` + ``translate`` + ``split`` per text, articles dropped by set
lookup.  :mod:`context_bench.metrics.quality` scores the overlap of these token lists.
"""

from __future__ import annotations

import numbers
import string
import unicodedata
from typing import Any

__all__ = ["ARTICLES", "as_text", "normalize_answer", "normalize_tokens"]

ARTICLES = frozenset(("a", "an", "the"))


class _PunctuationTable(dict):
    """A ``str.translate`` table deleting ASCII punctuation (as SQuAD does) and any Unicode
    punctuation (curly quotes, dashes, CJK marks), which LLM output often carries.

    Non-ASCII code points are classified on first sight and remembered, so the table costs nothing
    at import and stays as small as the text seen.
    """

    def __missing__(self, code: int) -> int | None:
        value = None if unicodedata.category(chr(code)).startswith("P") else code
        self[code] = value
        return value


_PUNCTUATION = _PunctuationTable(dict.fromkeys(map(ord, string.punctuation)))


def as_text(value: Any) -> str:
    """The text form of a gold answer or a response: ``None`` is empty, a number its shortest
    decimal form (``3.0`` reads ``"3"``, since normalization would turn ``"3.0"`` into ``"30"``)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        return str(int(number)) if number.is_integer() else str(number)
    return str(value)


_ASCII_PUNCTUATION = string.punctuation.encode("ascii")


def normalize_tokens(text: str) -> list[str]:
    """Lowercase, strip punctuation, split on whitespace and drop the articles a/an/the.

    Equal to splitting SQuAD's ``normalize_answer`` output, except that Unicode punctuation is
    stripped too and an article glued to a non-word symbol (``"the€"``) is kept as one token.
    """
    text = text.lower()
    if text.isascii():  # bytes.translate deletes in C, three times faster than str.translate
        text = text.encode("ascii").translate(None, _ASCII_PUNCTUATION).decode("ascii")
    else:
        text = text.translate(_PUNCTUATION)
    return [token for token in text.split() if token not in ARTICLES]


def normalize_answer(text: str) -> str:
    """SQuAD-style normalization: lowercase, no punctuation, no articles, single spaces."""
    return " ".join(normalize_tokens(text))
