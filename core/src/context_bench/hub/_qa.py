"""Question answering from the hub: rows of ``context``, ``question`` and ``answer`` (a list of
accepted answers), which AnswerQuality scores; QuALITY's options make it multiple choice.

Each loader takes ``config`` and ``split`` (None: the catalog's defaults, see
``context_bench._catalog._sources``) and reads its records through :func:`context_bench.hub.load_rows`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from .._catalog._sources import QA
from . import load_rows
from ._choice import lettered

#: What a QA prompt asks for: a short answer, which token F1 and exact match can score.
SHORT = "Answer with a short phrase taken from the text, nothing else."
CLOSED = "Answer with a short phrase, nothing else."


def aliases(*answers: Any) -> list[str]:
    """The accepted answers, flattened, blank ones dropped, each once in the order given."""
    found: list[str] = []
    for answer in answers:
        for text in [answer] if isinstance(answer, str) else (answer or []):
            if isinstance(text, str) and text.strip() and text not in found:
                found.append(text)
    return found


def _row(row_id: str, question: str, answer: list[str], context: str = "", **extra: Any) -> dict[str, Any]:
    ask = SHORT if context else CLOSED
    return {"id": row_id, "context": context, "question": f"{question}\n\n{ask}", "answer": answer, **extra}


def _records(name: str, config: str | None, split: str | None) -> Iterable[dict[str, Any]]:
    return load_rows(QA[name], config=config, split=split)


def hotpotqa(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """HotpotQA: its paragraphs as the context, its supporting facts (the sentences the answer
    needs) as the row's ``evidence``."""
    for row in _records("hotpotqa", config, split):
        paragraphs = dict(zip(row["context"]["title"], row["context"]["sentences"], strict=False))
        context = "\n\n".join(f"{title}: {''.join(sentences)}" for title, sentences in paragraphs.items())
        facts = row.get("supporting_facts") or {"title": [], "sent_id": []}
        evidence = [
            paragraphs[title][sent].strip()
            for title, sent in zip(facts["title"], facts["sent_id"], strict=False)
            if title in paragraphs and 0 <= sent < len(paragraphs[title])
        ]
        yield _row(
            row["id"],
            row["question"],
            aliases(row["answer"]),
            context,
            type=row["type"],
            level=row["level"],
            evidence=evidence,
        )


def natural_questions(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    for number, row in enumerate(_records("natural-questions", config, split)):
        yield _row(f"nq-{number}", row["question"], aliases(row["answer"]))


def musique(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    for row in _records("musique", config, split):
        context = "\n\n".join(f"{p['title']}: {p['paragraph_text']}" for p in row["paragraphs"])
        answers = aliases(row["answer"], row.get("answer_aliases"))
        yield _row(row["id"], row["question"], answers, context, answerable=row.get("answerable", True))


def narrativeqa(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """NarrativeQA over the story's summary (the full books run to hundreds of thousands of tokens)."""
    for number, row in enumerate(_records("narrativeqa", config, split)):
        document = row["document"]
        yield _row(
            f"{document['id']}-{number}",
            row["question"]["text"],
            aliases([answer["text"] for answer in row["answers"]]),
            document["summary"]["text"],
        )


def triviaqa(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """TriviaQA over its web search contexts (the question alone when it has none)."""
    for row in _records("triviaqa", config, split):
        contexts = [text for text in row["search_results"]["search_context"] if text]
        answer = row["answer"]
        yield _row(
            row["question_id"],
            row["question"],
            aliases(answer["value"], answer["aliases"]),
            "\n\n".join(contexts),
        )


def frames(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """FRAMES asks questions whose facts live in the Wikipedia articles it links: closed book here."""
    for number, row in enumerate(_records("frames", config, split)):
        yield _row(
            f"frames-{number}",
            row["Prompt"],
            aliases(row["Answer"]),
            reasoning_types=row.get("reasoning_types"),
        )


def qasper(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """One row per question of each paper, over the paper's full text; every annotator's answer counts."""
    for paper in _records("qasper", config, split):
        sections = zip(paper["full_text"]["section_name"], paper["full_text"]["paragraphs"], strict=False)
        body = "\n\n".join(
            "\n\n".join([name or "", *(p for p in paragraphs if p)]).strip() for name, paragraphs in sections
        )
        context = "\n\n".join(part for part in (paper["title"], paper["abstract"], body) if part)
        questions = paper["qas"]
        for question, question_id, answers in zip(
            questions["question"], questions["question_id"], questions["answers"], strict=False
        ):
            golds = aliases(*(_qasper_answer(a) for a in answers["answer"]))
            yield _row(f"{paper['id']}-{question_id}", question, golds, context)


def _qasper_answer(answer: dict[str, Any]) -> list[str]:
    if answer.get("unanswerable"):
        return ["unanswerable"]
    if answer.get("yes_no") is not None:
        return ["yes" if answer["yes_no"] else "no"]
    return aliases(answer.get("free_form_answer"), " ".join(answer.get("extractive_spans") or []))


def quality(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """QuALITY: a long article and four options, the letter asked for (``gold_label`` counts from 1)."""
    for row in _records("quality", config, split):
        yield {
            "id": row["question_unique_id"],
            "context": row["article"],
            "question": lettered(row["question"], row["options"]),
            "correct_letter": "ABCDEFGHIJ"[row["gold_label"] - 1],
        }


def squad(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    for row in _records("squad", config, split):
        yield _row(row["id"], row["question"], aliases(row["answers"]["text"]), row["context"])
