"""Whether the evidence an answer needs reached the model: the share of a row's evidence passages
found whole in the prompt the model received.

Passages and prompt are compared as the answer evaluators compare text
(:func:`context_bench.text.normalize_tokens`: case, punctuation, articles and spacing do not
matter), so a compressor that reflows whitespace or drops a comma still keeps a passage, and one
that drops or rewrites any word of it does not.  A passage is kept or dropped whole: the retention
is the share of passages kept.
"""

from __future__ import annotations

from collections.abc import Iterable

from .text import normalize_tokens

__all__ = ["evidence_kept"]


def evidence_kept(passages: Iterable[str], prompt: str) -> float | None:
    """The share of ``passages`` found whole in ``prompt`` (None when there is no passage with a
    word in it: a row without evidence has no retention, not a perfect one)."""
    wanted = [" ".join(tokens) for tokens in map(normalize_tokens, passages) if tokens]
    if not wanted:
        return None
    text = f" {' '.join(normalize_tokens(prompt))} "
    return sum(f" {passage} " in text for passage in wanted) / len(wanted)
