"""From a data set row and a response to the two pieces the sandbox runs: program and tests.

HumanEval form (``test`` + ``entry_point``): the prompt is code (a signature and docstring); a
response either completes it (a function body) or repeats the whole function.  MBPP form
(``test_list``, optional ``test_setup_code`` / ``test_imports``): the response is the whole code.
The tests are trusted (the sandbox server hardens them, :mod:`cbench_code.integrity`); the
program is not.  The trusted code in front of it (the prompt, MBPP's imports and setup) is framed
in front of every program, for the child to run alone first.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
from collections.abc import Mapping
from typing import Any

import attrs

from .extract import code_candidates, defines, fenced_blocks, parses
from .integrity import frame
from .syntax import parse


@attrs.frozen
class Problem:
    """What every sample of one row shares."""

    prefix: str  # code every program starts with: the HumanEval prompt, MBPP's test imports and setup
    tests: str  # test source; the server compiles it hardened
    entry_point: str | None
    completes_prefix: bool  # whether a response may be a body that completes the prefix
    reference: str | None = None  # the reference solution's program, when the row has one
    header: str = ""  # the trusted prefix, framed to run alone (:func:`cbench_code.integrity.frame`)


def _text(row: Mapping[str, Any], key: str, *, required: bool = True) -> str:
    value = row.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"CodeExecution: original[{key!r}] must be a string, got {type(value).__name__}")
    return value


def _lines(row: Mapping[str, Any], key: str) -> list[str]:
    value = row.get(key) or []
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"CodeExecution: original[{key!r}] must be a list of strings, got {value!r:.80}")
    return list(value)


def _prompt_code(row: Mapping[str, Any], entry_point: str) -> str:
    """The prompt as code: ``prompt`` when it is code, else the code in ``context``."""
    for key in ("prompt", "context"):
        text = row.get(key)
        if not isinstance(text, str) or not text.strip():
            continue
        for code in (text, *fenced_blocks(text)):
            code = code if code.endswith("\n") else code + "\n"
            if parses(code) or parses(code + "    pass\n"):  # a stub may stop at the signature
                return code
    return ""


def _is_stub(node: ast.stmt) -> bool:
    """A function the prompt only declares (docstring, ``pass``, ``...``), or a class with one."""
    if isinstance(node, ast.ClassDef):
        return any(_is_stub(child) for child in node.body)
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    return all(
        isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        for s in node.body
    )


@functools.lru_cache(maxsize=1024)
def _header(prefix: str, entry: str | None) -> str:
    """The prefix framed as trusted code: the names it only declares, and the entry point, are the
    candidate's; a prompt that stops at a signature gets a ``pass`` body to run alone."""
    trusted = next((code for code in (prefix, prefix + "    pass\n") if parses(code)), "") if prefix else ""
    body = parse(trusted).body if trusted else []
    own = {node.name for node in body if _is_stub(node)}
    leading = re.match(r"[A-Za-z_]\w*", entry or "")  # ``Solution().solve`` is the candidate's ``Solution``
    own |= {leading[0]} if leading else set()
    # Run alone, the candidate's own stubs and bare docstrings give the tests nothing: leave them out
    # (compiling a prompt's long docstrings cost each sample more than anything else it runs alone).
    lines = trusted.splitlines(keepends=True)
    kept = [_source_lines(lines, node) for node in body if _protects(node, own)]
    return frame("".join(kept), sorted(own), "")


def _protects(node: ast.stmt, own: set[str]) -> bool:
    """Whether a statement of the trusted prefix defines something the tests must get from it."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return False
    return not (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in own)


def _source_lines(lines: list[str], node: ast.stmt) -> str:
    """A top-level statement's own lines, decorators included."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
    text = "".join(lines[first - 1 : node.end_lineno])
    return text if text.endswith("\n") else text + "\n"


def problem_of(row: Mapping[str, Any]) -> Problem | None:
    """The row's problem, or None when the row is neither HumanEval- nor MBPP-shaped."""
    humaneval = "test" in row and "entry_point" in row
    if humaneval:
        entry = _text(row, "entry_point")
        prefix = _prompt_code(row, entry)
        tests = f"{_text(row, 'test')}\n\ncheck({entry})\n"
        reference = row.get("canonical_solution")
    elif "test_list" in row:
        entry = _called_name(row)
        setup = _text(row, "test_setup_code", required=False)
        prefix = "".join(line + "\n" for line in [*_lines(row, "test_imports"), setup] if line)
        tests = "\n".join(_lines(row, "test_list")) + "\n"
        reference = row.get("code")
    else:
        return None
    header = _header(prefix, entry)
    reference_program = header + prefix + reference if isinstance(reference, str) else None
    return Problem(prefix, tests, entry, humaneval, reference_program, header)


def _called_name(row: Mapping[str, Any]) -> str | None:
    """The function MBPP's tests call: the first call of a name that is not a built-in, else the
    first call of any name (the function shadows a built-in: MBPP's ``sum(a, b)``)."""
    called = []
    for test in _lines(row, "test_list"):
        try:
            tree = parse(test)
        except SyntaxError:
            continue
        called += [
            n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        ]
    return next((name for name in called if not hasattr(builtins, name)), called[0] if called else None)


def _indent_first(code: str) -> str:
    """A body whose first line lost its indentation (``response.strip()``): give it back."""
    lines = code.lstrip("\n").splitlines()
    if not lines:
        return code
    rest = [line for line in lines[1:] if line.strip()]
    indent = next((line[: len(line) - len(line.lstrip())] for line in rest if line[:1] in " \t"), "    ")
    return "\n".join([indent + lines[0].lstrip(), *lines[1:]]) + "\n"


def _indent_all(code: str) -> str:
    return "".join(("    " + line if line.strip() else line) for line in code.splitlines(keepends=True))


def program_for(problem: Problem, response: str) -> str | None:
    """The program to run for ``response``, or None when no reading of it is valid Python."""
    for code in code_candidates(response, problem.entry_point):
        if not problem.completes_prefix:
            readings = [problem.prefix + code]
        elif defines(code, problem.entry_point):  # a full function replaces the prompt's stub
            readings = [problem.prefix + "\n" + code, problem.prefix + "    pass\n\n" + code, code]
        else:
            readings = [
                problem.prefix + code,
                problem.prefix + _indent_first(code),
                problem.prefix + _indent_all(code),
            ]
        for program in readings:
            if parses(program):
                return problem.header + program
    return None
