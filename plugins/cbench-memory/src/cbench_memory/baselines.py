"""Baseline memory systems, real clients of an OpenAI-compatible endpoint.

``full-context`` shows the model the whole conversation with every question: the ceiling a memory
layer is compared against (and the cost it saves).  ``bm25`` keeps only the turns that share the
most words with the question: the floor any retrieval layer should beat.  Both send their prompt
through :class:`~context_bench.systems.OpenAIProxy`, so retries, pooling and API-key handling are
the runner's own; share one proxy between instances to share its connection pool.  The
conversation layout and the BM25 ranking are cbench-judge's (:mod:`cbench_judge.context`): the
model sees the conversation as the judge does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cbench_judge.context import BM25, conversation_text
from context_bench.systems import OpenAIProxy

INSTRUCTIONS = (
    "You answer questions about a conversation, using only what the conversation says. Answer in a few "
    "words or one short sentence. If the conversation does not contain the answer, say that it is not "
    "mentioned in the conversation."
)


class FullContextMemory:
    """Remembers every turn and sends them all, with the question, to the endpoint."""

    def __init__(self, client: OpenAIProxy, *, name: str = "full-context") -> None:
        self.client = client
        self.name = name
        self._turns: list[dict[str, Any]] = []

    @property
    def model(self) -> str:
        """The model the endpoint is asked (what a report names)."""
        return self.client.model

    @property
    def base_url(self) -> str:
        """The endpoint's URL (a report names it without its password)."""
        return self.client.base_url

    def config(self) -> dict[str, Any]:
        return {"endpoint": self.client.config(), "instructions": INSTRUCTIONS}

    def reset(self) -> None:
        self._turns = []

    def ingest(self, turns: Iterable[Mapping[str, Any]]) -> None:
        self._turns.extend(dict(turn) for turn in turns)

    def query(self, question: str) -> dict[str, Any]:
        return self._ask(self._turns, question)

    def _ask(self, turns: list[dict[str, Any]], question: str) -> dict[str, Any]:
        conversation = conversation_text(turns) or "(nothing relevant was found in the conversation)"
        messages = [
            {"role": "system", "content": INSTRUCTIONS},
            {"role": "user", "content": f"Conversation:\n{conversation}\n\nQuestion: {question}"},
        ]
        return self.client.process({"messages": messages})


class BM25Memory(FullContextMemory):
    """Ranks the turns by BM25 against the question and sends the ``top_k`` best, in conversation order."""

    def __init__(
        self, client: OpenAIProxy, *, top_k: int = 10, k1: float = 1.5, b: float = 0.75, name: str = "bm25"
    ) -> None:
        if top_k < 1:
            raise ValueError("top_k must be at least 1")
        super().__init__(client, name=name)
        self.top_k = top_k
        self.k1 = k1
        self.b = b
        self._index = BM25(k1, b)

    def config(self) -> dict[str, Any]:
        return {**super().config(), "top_k": self.top_k, "k1": self.k1, "b": self.b}

    def reset(self) -> None:
        super().reset()
        self._index = BM25(self.k1, self.b)

    def ingest(self, turns: Iterable[Mapping[str, Any]]) -> None:
        start = len(self._turns)
        super().ingest(turns)
        self._index.add(f"{turn['speaker']} {turn['text']}" for turn in self._turns[start:])

    def scores(self, question: str) -> list[float]:
        """BM25 score of every turn for the question's words."""
        return self._index.scores(question)

    def query(self, question: str) -> dict[str, Any]:
        scores = self.scores(question)
        ranked = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: -scores[i])[: self.top_k]
        return self._ask([self._turns[i] for i in sorted(ranked)], question)


BASELINES = {"full-context": FullContextMemory, "bm25": BM25Memory}
