"""Text that can be written: lone surrogates become U+FFFD where rows and replies come in.

A JSON escape such as ``"\\ud800"`` decodes to a lone surrogate, a ``str`` that Python holds but
cannot encode as UTF-8: every file write of it raises.  Such text is repaired where it enters the
run (a data file, a system's reply, a cache record) and the row says so, rather than crashing a
report or a cache write long after.
"""

from __future__ import annotations

import re
from typing import Any

LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def repair_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (the same object when it has none)."""
    if text.isascii() or not LONE_SURROGATE.search(text):
        return text
    return LONE_SURROGATE.sub(REPLACEMENT, text)


def repair_counted(text: str) -> tuple[str, int]:
    """:func:`repair_text` and how many characters it replaced (0 for the usual text, checked in C)."""
    if text.isascii():
        return text, 0
    return LONE_SURROGATE.subn(REPLACEMENT, text)


def repair(value: Any) -> Any:
    """``value`` with lone surrogates replaced in every string, key and nested list or dict."""
    if isinstance(value, str):
        return repair_text(value)
    if isinstance(value, dict):
        return {repair(k): repair(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [repair(v) for v in value]
    return value
