"""Summarization data sets: a document, an instruction and the reference summary that
SummarizationQuality reads (``reference``; a list when a document has several)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .._catalog import summarization as sources
from . import load_rows
from ._layouts import scrolls_examples


def _row(identifier: str, document: str, instruction: str, reference: Any) -> dict[str, Any]:
    return {"id": identifier, "context": document, "question": instruction, "reference": reference}


def multi_news(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    split = split or sources.MULTI_NEWS.split
    for number, row in enumerate(load_rows(sources.MULTI_NEWS, config=config, split=split)):
        articles = [article.strip() for article in row["document"].split("|||||") if article.strip()]
        yield _row(
            f"multi-news-{split}-{number}",
            "\n\n".join(articles),
            "Summarize the news articles above in one paragraph.",
            row["summary"].lstrip("– ").strip(),
        )


def dialogsum(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    for row in load_rows(sources.DIALOGSUM, config=config, split=split):
        yield _row(
            row["id"], row["dialogue"], "Summarize the dialogue above in a few sentences.", row["summary"]
        )


def qmsum(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """QMSum: SCROLLS puts the query first, then two newlines, then the transcript."""
    for identifier, text, references in scrolls_examples(
        load_rows(sources.QMSUM, config=config, split=split)
    ):
        query, _, transcript = text.partition("\n\n")
        yield _row(
            identifier,
            transcript,
            f"{query}\n\nAnswer from the meeting transcript above.",
            references or None,
        )


def summscreenfd(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    for identifier, text, references in scrolls_examples(
        load_rows(sources.SUMMSCREENFD, config=config, split=split)
    ):
        yield _row(
            identifier,
            text,
            "Summarize the TV episode transcript above in a few sentences.",
            references or None,
        )


def meetingbank(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    for row in load_rows(sources.MEETINGBANK, config=config, split=split):
        yield _row(
            row["uid"],
            row["transcript"],
            "Summarize the meeting transcript above in a few sentences.",
            row["summary"],
        )


def govreport(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    split = split or sources.GOVREPORT.split
    for number, row in enumerate(load_rows(sources.GOVREPORT, config=config, split=split)):
        yield _row(
            f"govreport-{split}-{number}", row["report"], "Summarize the report above.", row["summary"]
        )
