"""NLI data sets: a premise, a hypothesis and a prompt naming the label set, with the gold label
as ``answer`` for NLILabelMatch."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .._catalog.nli import CONTRACT_NLI, SCIFACT_CLAIMS, SCIFACT_CORPUS
from . import load_rows
from ._layouts import scrolls_examples

#: SciFact's evidence labels, in the vocabulary its prompt offers (no evidence: not enough info).
_SCIFACT_LABELS = {"SUPPORT": "Supports", "CONTRADICT": "Refutes", "": "Not enough info"}


def contract_nli(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """ContractNLI: SCROLLS puts the hypothesis first, then two newlines, then the contract."""
    for identifier, text, labels in scrolls_examples(load_rows(CONTRACT_NLI, config=config, split=split)):
        hypothesis, _, contract = text.partition("\n\n")
        yield {
            "id": identifier,
            "context": contract,
            "question": f"Hypothesis: {hypothesis}\n\nDoes the contract above entail the hypothesis, "
            "contradict it, or not mention it? Answer with one of: Entailment, Contradiction, Not mentioned.",
            "answer": labels[0] if labels else None,
        }


def scifact(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """SciFact claims, each with the abstracts it cites; one row per claim (the hub has one per
    claim and evidence document, all with the claim's label)."""
    claims: dict[int, dict[str, Any]] = {}
    for row in load_rows(SCIFACT_CLAIMS, config=config, split=split):
        claim = claims.setdefault(
            row["id"], {"claim": row["claim"], "cited": row["cited_doc_ids"], "label": ""}
        )
        claim["label"] = claim["label"] or (row["evidence_label"] or "")
    cited = {doc for claim in claims.values() for doc in claim["cited"]}
    abstracts = {
        doc["doc_id"]: f"{doc['title']}\n{' '.join(doc['abstract'])}"
        for doc in load_rows(SCIFACT_CORPUS)
        if doc["doc_id"] in cited
    }
    for identifier, claim in claims.items():
        yield {
            "id": f"scifact-{identifier}",
            "context": "\n\n".join(abstracts[doc] for doc in claim["cited"] if doc in abstracts),
            "question": f"Claim: {claim['claim']}\n\nDo the abstracts above support the claim, refute it, "
            "or give not enough information? Answer with one of: Supports, Refutes, Not enough info.",
            "answer": _SCIFACT_LABELS[claim["label"]],
        }
