"""``nq-multidoc:<k>``: Lost in the Middle's multi-document NaturalQuestions (Liu et al., 2023).

Each question comes with k Wikipedia passages (k = 10, 20 or 30), one of which, the gold document,
answers it; the paper moves the gold document through fixed positions, one file per position.
Rows carry the paper's prompt (``qa.prompt``, documents numbered from 1 with their titles), the
paper's 100 new tokens, ``answers`` for ``subspan_em`` and ``gold_position`` (0-based, as the
files name it) for a breakdown by position.

The files live in the paper's GitHub repository (git LFS), not on the Hugging Face hub: they are
read from the hub mirror (``--hub-mirror DIR``: ``DIR/nelson-liu/lost-in-the-middle/qa_data/...``)
or from ``$CBENCH_NQ_MULTIDOC_DATA``, the ``qa_data`` folder of a clone.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from context_bench import DatasetUnavailable, UsageError
from context_bench.hub import mirror

from .sources import NQ_MULTIDOC_POSITIONS, NQ_MULTIDOC_REPO, NQ_MULTIDOC_REVISION

ENV_VAR = "CBENCH_NQ_MULTIDOC_DATA"
#: The paper's ``prompts/qa.prompt`` (read with its last newline stripped, as prompting.py does).
TEMPLATE = (
    "Write a high-quality answer for the given question using only the provided search results "
    "(some of which might be irrelevant).\n\n{search_results}\n\nQuestion: {question}\nAnswer:"
)
#: The paper's ``--max-new-tokens`` for every QA model.
MAX_TOKENS = 100


def prompt(question: str, documents: list[dict[str, Any]]) -> str:
    """prompting.py's ``get_qa_prompt``: each document as ``Document [i](Title: t) text``."""
    listed = "\n".join(
        f"Document [{number}](Title: {document['title']}) {document['text']}"
        for number, document in enumerate(documents, start=1)
    )
    return TEMPLATE.format(question=question, search_results=listed)


def _folder() -> Path:
    root = mirror()
    if root is not None:
        return root / NQ_MULTIDOC_REPO / "qa_data"
    where = os.environ.get(ENV_VAR)
    if where:
        return Path(where).expanduser()
    raise DatasetUnavailable(
        f"nq-multidoc: Lost in the Middle's files are in the GitHub repository {NQ_MULTIDOC_REPO} "
        f"(git LFS, commit {NQ_MULTIDOC_REVISION[:12]}), not on the Hugging Face hub: clone it with "
        f"git-lfs and set {ENV_VAR} to its qa_data folder, or copy that folder into a hub mirror as "
        f"DIR/{NQ_MULTIDOC_REPO}/qa_data and pass --hub-mirror DIR"
    )


def _records(path: Path) -> Iterator[dict[str, Any]]:
    if not path.is_file():
        raise DatasetUnavailable(f"nq-multidoc: no file {path}")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def nq_multidoc(config: str | None = None) -> Iterator[dict[str, Any]]:
    """Every question at every published gold position for ``config`` documents (default 20)."""
    total = config or "20"
    if total not in NQ_MULTIDOC_POSITIONS:
        raise UsageError(
            f"unknown nq-multidoc setting {total!r}: the numbers of documents are "
            f"{', '.join(NQ_MULTIDOC_POSITIONS)}"
        )
    folder = _folder() / f"{total}_total_documents"
    for position in NQ_MULTIDOC_POSITIONS[total]:
        name = f"nq-open-{total}_total_documents_gold_at_{position}.jsonl.gz"
        for number, record in enumerate(_records(folder / name)):
            yield {
                "id": f"nq-multidoc-{total}-gold{position}-{number}",
                "dataset": f"nq-multidoc:{total}",
                "prompt": prompt(record["question"], record["ctxs"]),
                "answers": list(record["answers"]),
                "gold_position": position,
                "max_tokens": MAX_TOKENS,
            }
