"""Hub repositories whose layout :func:`load_rows` alone does not read.

- A repository whose loading script current ``datasets`` refuses is read from its parquet
  conversion (``refs/convert/parquet``), where each config is a directory of its own
  (``<config>/<split>/0000.parquet``): :func:`load_converted` picks the config's directory.
- Some benchmarks ship files that ``datasets`` cannot read as one table (BFCL's JSON lines with a
  different function schema on every row, NoLiMa's needle templates and haystack books): their
  loaders read the file itself, :func:`repo_file`, from the mirror (``CBENCH_HUB_MIRROR``) when one
  is set, else through ``huggingface_hub``'s cache, which serves it again with no network.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs

from ..errors import DatasetUnavailable, UsageError
from . import HubSource, load_rows, mirror


def pick(source: HubSource, config: str | None, split: str | None = None) -> str:
    """The config to load, ``config`` or the source's default; one not in ``configs`` is refused,
    and so is a ``split`` for a source read file by file (``split`` given here), which has none."""
    if split:
        raise UsageError(f"{source.repo} is read file by file and has no splits to choose (got {split!r})")
    config = config or source.config
    if not config or source.configs and config not in source.configs:
        raise UsageError(
            f"unknown config {config!r} of {source.repo}: the valid configs are {', '.join(source.configs)}"
        )
    return config


def load_converted(
    source: HubSource, config: str | None = None, split: str | None = None
) -> Iterable[dict[str, Any]]:
    """The records of one config of ``source``'s parquet conversion (its directory ``<config>/``)."""
    directory = pick(source, config)
    return load_rows(attrs.evolve(source, config=None, configs=(), data_dir=directory), split=split)


def repo_file(repo: str, filename: str) -> Path:
    """The local path of ``filename`` in the data set repository ``repo``."""
    root = mirror()
    if root is not None:
        path = root / repo / filename
        if not path.is_file():
            raise DatasetUnavailable(f"the hub mirror {root} has no {repo}/{filename}")
        return path
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise DatasetUnavailable(
            f"data set {repo!r} comes from the Hugging Face hub and needs the optional "
            "'huggingface_hub' package: pip install 'context-bench[hub]'"
        ) from None
    try:
        return Path(hf_hub_download(repo, filename, repo_type="dataset"))
    except Exception as exc:  # noqa: BLE001 - offline, gated, renamed: one clear line either way
        raise DatasetUnavailable(
            f"could not fetch {repo}/{filename} from the hub: {type(exc).__name__}: {exc} "
            "(offline? fetch it once, or pass --hub-mirror DIR)"
        ) from None


def scrolls_examples(rows: Iterable[dict[str, Any]]) -> Iterator[tuple[str, str, list[str]]]:
    """SCROLLS repeats an input once per reference: each id once, with its input and references."""
    inputs: dict[str, str] = {}
    outputs: dict[str, list[str]] = {}
    for row in rows:
        inputs.setdefault(row["id"], row["input"])
        outputs.setdefault(row["id"], []).append(row["output"])
    for identifier, text in inputs.items():
        yield identifier, text, [output for output in outputs[identifier] if output]


def json_lines(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a JSON-lines file, one at a time (task files run to hundreds of megabytes)."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)
