"""What the documentation's examples run against: a scripted endpoint and a scratch folder.

The examples name ``http://localhost:8080`` and the like; tests/docs/test_examples.py points them
at :func:`endpoint` instead, a FakeServer on 127.0.0.1 that answers every prompt the documented
examples send (systems' questions, the judges' prompts) the way a careful model would, so that a
stated result (a verdict, a score) is the one the example earns.
"""

from __future__ import annotations

import json
import sys

import pytest

#: The questions the example data sets ask, with the answer a model that knows gives.
ANSWERS = {
    "Where did Alice grow up?": "Alice grew up in Paris.",
    "What is the puppy's name?": "The puppy is called Biscuit.",
    "Which planet is largest?": "The answer is B.",
    "Tom has 3 apples and buys 15 more.": "3 + 15 = 18\n#### 18",
}

QA = [
    {
        "id": "qa-1",
        "question": "Where did Alice grow up?",
        "context": "Alice grew up in Paris.",
        "answer": "Paris",
    },
    {
        "id": "qa-2",
        "question": "What is the puppy's name?",
        "context": "Her puppy is Biscuit.",
        "answer": "Biscuit",
    },
]
MC = [
    {
        "id": "mc-1",
        "question": "Which planet is largest?",
        "choices": ["Mars", "Jupiter", "Venus"],
        "correct_letter": "B",
    }
]
GSM8K = [
    {
        "id": "g-1",
        "question": "Tom has 3 apples and buys 15 more. How many?",
        "answer": "3 + 15 = 18\n#### 18",
    }
]
LOCOMO = [
    {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "Alice",
            "speaker_b": "Bob",
            "session_1_date_time": "8 May 2023",
            "session_1": [
                {"speaker": "Alice", "dia_id": "D1:1", "text": "I grew up in Paris, you know."},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "Nice. What about your puppy?"},
                {"speaker": "Alice", "dia_id": "D1:3", "text": "I adopted my puppy Biscuit last week."},
            ],
        },
        "qa": [
            {"question": "Where did Alice grow up?", "answer": "Paris", "evidence": ["D1:1"], "category": 4},
            {
                "question": "What is the puppy's name?",
                "answer": "Biscuit",
                "evidence": ["D1:3"],
                "category": 4,
            },
        ],
    }
]


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


#: The input files the documented commands name, by file name, each with why it holds what it holds.
def _report(system: str, responses: list[str]) -> str:
    """A saved JSON report (``--output json``) of two scored QA rows, as ``compare`` reads it."""
    rows = [
        {"system": system, "dataset": "squad", "example_id": f"q{i}", "response": response,
         "scores": {"f1": float(response == gold), "exact_match": float(response == gold)},
         "input_tokens": 400.0 if system == "before" else 100.0, "output_tokens": 5.0}
        for i, (response, gold) in enumerate(zip(responses, ["Paris", "William Shakespeare"], strict=True))
    ]  # fmt: skip
    return json.dumps({"summary": {}, "metadata": {}, "rows": rows})


INPUT_FILES = {
    "qa.jsonl": (_jsonl(QA), "README and endpoints.md's QA data set: questions with context and gold"),
    "mmlu.jsonl": (_jsonl(MC), "README's multiple-choice data set (a file named mmlu gets mc_accuracy)"),
    "mmlu-dev.jsonl": (_jsonl(MC), "endpoints.md's vLLM example: a split-suffixed mmlu file"),
    "gsm8k_test.jsonl": (_jsonl(GSM8K), "endpoints.md's LiteLLM example: a split-suffixed gsm8k file"),
    "responses.jsonl": (
        _jsonl([{**row, "dataset": "squad", "response": ANSWERS[row["question"]]} for row in QA]),
        "README's `score` example: rows that already hold a response",
    ),
    "systems.jsonl": (
        _jsonl(
            [
                {**row, "dataset": "squad", "system": system, "response": answer(row["question"])}
                for system, answer in (("baseline", ANSWERS.get), ("compressed", lambda q: ANSWERS[q] + "."))
                for row in QA
            ]
        ),
        "judge.md's pairwise example: rows of two systems that `score` reads",
    ),
    "labels.jsonl": (
        _jsonl([{"id": "qa-1", "label": "correct"}, {"id": "qa-2", "label": "incorrect"}]),
        "judge.md's judge-check: a person's verdicts on responses.jsonl's two rows",
    ),
    "run.json": (
        json.dumps(
            {
                "summary": {},
                "metadata": {},
                "rows": [
                    {
                        "system": "responses",
                        "dataset": "squad",
                        "example_id": row["id"],
                        "response": ANSWERS[row["question"]],
                        "scores": {"judge_score": 1.0},
                        "failures": {},
                    }
                    for row in QA
                ],
            }
        ),
        "judge.md's labels from the HTML report: the JSON report of responses.jsonl scored by the judge",
    ),
    "agreement.json": (
        json.dumps(
            {
                "summary": {
                    "judge_check": {
                        "kind": "pass/fail",
                        "field": "judge_score",
                        "template": "binary_qa",
                        "judge_model": "gpt-4o-mini",
                        "n": 2,
                        "kappa": 0.0,
                        "kappa_ci": [0.0, 0.0],
                        "accuracy": 0.5,
                        "accuracy_ci": [0.09453120573423074, 0.9054687942657693],
                    }
                }
            }
        ),
        "judge.md's --judge-agreement: what judge.md's judge-check --out writes of responses.jsonl",
    ),
    "preferences.jsonl": (
        _jsonl([{"id": "qa-1", "system": "compressed", "label": "tie"}, {"id": "qa-2", "label": "A"}]),
        "judge.md's A/B/tie judge-check: a person's pairwise verdicts on systems.jsonl's two pairs",
    ),
    "before.json": (_report("before", ["Paris", "William Shakespeare"]), "reports.md's compare: a saved run"),
    "after.json": (_report("after", ["Paris", "Christopher Marlowe"]), "reports.md's compare: another"),
    "locomo10.json": (
        json.dumps(LOCOMO),
        "the LoCoMo file of README's and memory.md's memory runs, cut to one conversation",
    ),
}


def docs_reply(body: dict) -> str:
    """One answer to any prompt the documented examples send."""
    from cbench_judge.testing import memory_verdict
    from context_bench.testing import last_user_message

    text = last_user_message(body)
    if "Gold answer:\n" in text or "Assistant's answer:\n" in text:  # MemoryJudge, FalseMemoryRate
        return memory_verdict(body)
    if "TONE=formal|casual" in text:  # judge.md's custom template
        return "The reply keeps a formal register.\nTONE=formal"
    if "[[C]] for a tie" in text:  # the pairwise templates: the same verdict in either order
        return "Both answers give the same facts.\n[[C]]"
    if "GRADE: <grade>" in text:  # the built-in templates
        return "The response gives the reference answer.\nGRADE: C"
    if "RATING: <1-5>" in text:  # LLMJudge
        return "Accurate and complete.\nRATING: 5"
    for question, answer in ANSWERS.items():
        if question in text:
            return answer
    return "I do not know."


@pytest.fixture
def endpoint():
    """The OpenAI-compatible endpoint every documented URL is pointed at."""
    from context_bench.testing import FakeServer

    with FakeServer(docs_reply) as server:
        yield server


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A scratch working folder (also $HOME, for `~/data/...`) with the store of runs a user has there
    (`.context-bench/runs.sqlite`), an environment with no key or plugin setting of the machine's, and
    imports (sys.path, sys.modules) put back as they were afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in (
        "OPENAI_API_KEY",
        "CBENCH_PLUGINS",
        "CBENCH_STRICT_PLUGINS",
        "CBENCH_DISABLE_PLUGIN_AUTOLOAD",
        "CBENCH_STORE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))
    modules = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - modules:
        if name.split(".")[0] in ("my_memory", "cbench_wordcount"):
            del sys.modules[name]


@pytest.fixture
def input_files():
    """INPUT_FILES, for the tests (conftest is not importable under --import-mode=importlib)."""
    return INPUT_FILES
