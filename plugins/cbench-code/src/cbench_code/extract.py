"""Which part of a model's response is the code (the rule is documented in docs/code.md).

1. Fenced blocks first.  Blocks opened with three or more backticks or tildes and tagged
   ``python``/``py``/``python3``/``py3`` or untagged are candidates (other languages and ``output``
   blocks are not); an unclosed fence runs to the end of the response.  The first candidate that
   defines the entry point (``def name(`` at the start of a line) wins, else the first candidate.
2. Without a fence, the response as it is; when that does not make a valid program, the response
   without its prose: from the first line that starts a top-level definition or import, to the
   last line that still parses.
3. :mod:`cbench_code.programs` then decides whether the code is a full function (it defines the
   entry point) or a completion of the prompt (a function body).
"""

from __future__ import annotations

import re
import warnings

from .syntax import parse

_FENCE_OPEN = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<tag>[^\s`]*)[^\n]*$", re.M)
_PYTHON_TAGS = frozenset({"", "python", "py", "python3", "py3", "ipython", "pycon"})
_CODE_START = re.compile(r"^(?:def |async def |class |import |from \S+ import |@)")
_MAX_CUTS = 8  # parses spent looking for the code in the prose: legitimate answers need two or three


def fenced_blocks(text: str) -> list[str]:
    """The contents of the Python (or untagged) fenced blocks, in order."""
    blocks: list[str] = []
    pos = 0
    while True:
        opening = _FENCE_OPEN.search(text, pos)
        if opening is None:
            return blocks
        fence = opening["fence"]
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.M)
        body_start = opening.end() + 1
        end = closing.search(text, body_start)
        body = text[body_start : end.start() if end else len(text)]
        if opening["tag"].lower() in _PYTHON_TAGS:
            blocks.append(body)
        if end is None:
            return blocks
        pos = end.end()


_FILENAME = "<cbench-candidate>"
# Parsing generated code in the harness must not print its SyntaxWarnings ("invalid escape
# sequence"): they belong to the code, which the sandbox reports on.  Only "<cbench-...>" sources
# (this one and integrity's "<cbench-tests>") are muted.
warnings.filterwarnings("ignore", module="<cbench-")


def _syntax_error(source: str) -> SyntaxError | None:
    """Why ``source`` is not valid Python (None: it is; a non-syntax failure counts as line 1)."""
    try:
        parse(source, _FILENAME)
    except SyntaxError as exc:
        return exc
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return SyntaxError(str(exc), (_FILENAME, 1, 0, ""))
    return None


def parses(source: str) -> bool:
    return _syntax_error(source) is None


def defines(source: str, name: str | None) -> bool:
    """Whether ``source`` defines function ``name`` at the start of a line."""
    return bool(name) and re.search(rf"^(?:async\s+)?def\s+{re.escape(name)}\s*\(", source, re.M) is not None


def _strip_prose(text: str) -> str:
    """From the first line that starts code to the last line that still parses.

    A piece that fails to parse at line ``n`` fails for every shorter piece that still holds line
    ``n`` (the same tokens lead up to it), so each failed attempt cuts to just before its error line
    rather than by one line: a few parses, not one per line, however long the prose after the code.
    """
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _CODE_START.match(line)), None)
    if start is None:
        return text
    end = len(lines)
    for _ in range(_MAX_CUTS):
        if end <= start:
            break
        candidate = "\n".join(lines[start:end]) + "\n"
        error = _syntax_error(candidate)
        if error is None:
            return candidate
        failed_at = error.lineno or end - start  # 1-based, within the candidate
        end = start + min(failed_at, end - start) - 1
    return text


def code_candidates(response: str, entry_point: str | None = None) -> list[str]:
    """The readings of ``response`` to try, in order (see the module docstring)."""
    blocks = fenced_blocks(response)
    if blocks:
        return [next((b for b in blocks if defines(b, entry_point)), blocks[0])]
    stripped = _strip_prose(response)
    return [response] if stripped == response else [response, stripped]


def extract_code(response: str, entry_point: str | None = None) -> str:
    """The code in ``response``: the first reading that parses on its own, else the first reading."""
    candidates = code_candidates(response, entry_point)
    return next((c for c in candidates if parses(c)), candidates[0])
