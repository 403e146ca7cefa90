"""Agent-trace data sets: function calling (BFCL, APIGen) and SWE-bench issues.

A function-calling row lists the functions and asks for the calls as JSON,
``[{"name": ..., "arguments": {...}}]``; its ``answer`` is the gold calls in that form, which
AnswerQuality compares token by token.  A SWE-bench row holds the issue; its ``answer`` is the
gold patch.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .._catalog.agents import APIGEN, BFCL, SWEBENCH, SWEBENCH_LITE, SWEBENCH_VERIFIED
from . import HubSource, load_rows
from ._layouts import json_lines, pick, repo_file

_CALLS = 'Reply with only the function calls as JSON: [{"name": "<function>", "arguments": {...}}].'


def _calls_row(
    identifier: str, request: str, functions: list[Any], calls: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "id": identifier,
        "context": f"Functions you can call:\n{json.dumps(functions, indent=1)}",
        "question": f"{request}\n\n{_CALLS}",
        "tools": functions,
        "answer": json.dumps(calls),
    }


def bfcl(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """A BFCL category: each request with its functions; the gold calls take the first value the
    possible answer accepts for each argument (an optional argument whose first is "" is left out)."""
    category = pick(BFCL, config, split)
    answers = {
        row["id"]: row["ground_truth"]
        for row in json_lines(repo_file(BFCL.repo, f"possible_answer/BFCL_v3_{category}.json"))
    }
    for row in json_lines(repo_file(BFCL.repo, f"BFCL_v3_{category}.json")):
        turns = row["question"]
        messages = turns[0] if turns and isinstance(turns[0], list) else turns
        request = "\n".join(m["content"] for m in messages if m.get("role") == "user")
        calls = [
            {
                "name": name,
                "arguments": {key: values[0] for key, values in arguments.items() if values[0] != ""},
            }
            for call in answers.get(row["id"], [])
            for name, arguments in call.items()
        ]
        yield _calls_row(row["id"], request, row["function"], calls)


def apigen(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """APIGen (xLAM): ``tools`` and ``answers`` are JSON text on the hub."""
    for row in load_rows(APIGEN, config=config, split=split):
        yield _calls_row(
            f"apigen-{row['id']}", row["query"], json.loads(row["tools"]), json.loads(row["answers"])
        )


def _swebench(source: HubSource, config: str | None, split: str | None) -> Iterator[dict[str, Any]]:
    for row in load_rows(source, config=config, split=split):
        yield {
            "id": row["instance_id"],
            "context": f"Repository: {row['repo']}\n\nIssue:\n{row['problem_statement']}",
            "question": "Write a patch that resolves the issue. Reply with only the patch, a unified diff.",
            "answer": row["patch"],
            "repo": row["repo"],
            "base_commit": row["base_commit"],
            "FAIL_TO_PASS": row["FAIL_TO_PASS"],
            "PASS_TO_PASS": row["PASS_TO_PASS"],
        }


def swebench(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    return _swebench(SWEBENCH, config, split)


def swebench_verified(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    return _swebench(SWEBENCH_VERIFIED, config, split)


def swebench_lite(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    return _swebench(SWEBENCH_LITE, config, split)
