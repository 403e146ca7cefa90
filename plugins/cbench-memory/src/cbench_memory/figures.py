"""The figures a memory run adds to each (system, data set) group of its summary."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from context_bench.metrics import percentile
from context_bench.records import EvalRow


@attrs.frozen
class MemoryFigures:
    """Per (system, data set): how many conversations, and the time their ingestion took."""

    name: str = "memory"

    def compute(self, rows: Sequence[EvalRow]) -> dict[str, float]:
        conversations: dict[Any, float | None] = {}
        for row in rows:
            cid = row.meta.get("conversation_id")
            latency = row.meta.get("ingest_latency")
            if cid is not None and conversations.get(cid) is None:
                conversations[cid] = latency if isinstance(latency, (int, float)) else None
        ingest = [v for v in conversations.values() if v is not None]
        figures = {"conversations": float(len(conversations))}
        if ingest:
            figures.update(
                ingest_latency_mean=sum(ingest) / len(ingest), ingest_latency_p95=percentile(ingest, 95)
            )
        return figures
