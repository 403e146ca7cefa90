"""A persistent cache of judge responses, so re-running a benchmark costs no judge calls.

Keyed by a hash of the full request (URL, model, messages, every parameter) and never of the API key,
which is not part of the request body.  Only successful responses whose verdict could be read are
stored; each entry is one small JSON file, written atomically, so concurrent runs and a killed
process never leave a torn entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs


@attrs.frozen
class Answer:
    """A judge's answer: its text, the tokens it cost (``None`` when served from the cache) and, for a
    fresh answer that may be cached, its request key."""

    content: str
    usage: dict[str, float] | None = None
    cached: bool = False
    key: str = ""


def request_key(url: str, body: Mapping[str, Any]) -> str:
    blob = json.dumps({"url": url, "body": body}, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


class ResponseCache:
    """Judge responses under ``directory``, one file per request hash."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Answer | None:
        path = self._path(key)
        if not path.is_file():  # absent, or a FIFO that would hold the judge until someone wrote to it
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # absent or unreadable: a miss, the request is simply made again
        content = data.get("content") if isinstance(data, dict) else None
        if not isinstance(content, str):
            return None
        return Answer(content=content, cached=True)

    def put(self, key: str, completion: Answer, url: str, model: str) -> None:
        path = self._path(key)
        if path.exists() and not path.is_file():  # a device or FIFO put there is never replaced
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"url": url, "model": model, "content": completion.content, "usage": completion.usage}
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(entry, handle, ensure_ascii=False)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
