"""The LoCoMo and LongMemEval loaders, memory data sets from files, and ``--dataset NAME|PATH``.

Each loader turns a public JSON layout into the conversation layout of :mod:`cbench_memory.layout`,
from a local copy when one is given, else from the Hugging Face hub (a mirror, or the hub's cache
after the first fetch: :func:`cbench_memory.hubfiles.hub_file`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from context_bench.datasets import MAX_ROW_BYTES, Dataset, load, read_file
from context_bench.errors import UsageError
from context_bench.evidence import dialog_passages
from context_bench.hub import HubSource
from context_bench.plugins import PluginHost, get_host

from .hubfiles import hub_file
from .sources import LOCOMO, LOCOMO_FILE, LONGMEMEVAL

#: LoCoMo's ``category`` numbers, as its own evaluation reports them (single-hop first).
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

#: The gold answer of an adversarial LoCoMo question that carries none: the question asks about
#: something the conversation never says, so the right answer is to say so.
ADVERSARIAL_GOLD = "Not mentioned in the conversation"

#: LongMemEval's question types; an id ending in ``_abs`` is an abstention question instead.
LONGMEMEVAL_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "temporal-reasoning",
    "knowledge-update",
)
LONGMEMEVAL_FILES = {
    "s": "longmemeval_s_cleaned.json",
    "m": "longmemeval_m_cleaned.json",
    "oracle": "longmemeval_oracle.json",
}
LONGMEMEVAL_REPO = LONGMEMEVAL.repo

# -- LoCoMo ------------------------------------------------------------------------------------


def locomo_conversations(data: Any, source: str = "LoCoMo data") -> list[dict[str, Any]]:
    """Convert ``locomo10.json``'s layout: ``conversation`` holds ``session_N`` turn lists and
    ``session_N_date_time``; ``qa`` holds ``question``, ``answer``, ``evidence`` (dialog ids such as
    ``D1:3``: a row's ``evidence`` becomes those turns' text, its ``evidence_ids`` the ids), ``category``."""
    if not isinstance(data, list):
        raise UsageError(f"{source}: expected a JSON list of LoCoMo samples")
    converted = []
    for number, sample in enumerate(data):
        where = f"{source} sample {number}"
        if not isinstance(sample, Mapping) or not isinstance(sample.get("conversation"), Mapping):
            raise UsageError(f"{where}: no 'conversation' object (is this LoCoMo's locomo10.json?)")
        conv = sample["conversation"]
        sessions = sorted(
            (int(key.split("_")[1]), key)
            for key in conv
            if key.startswith("session_") and key.split("_")[1].isdigit() and key.count("_") == 1
        )
        turns = []
        for session, key in sessions:
            date = conv.get(f"{key}_date_time")
            for turn in _objects(conv[key], f"{where} {key}"):
                text = str(turn.get("text", ""))
                if turn.get("blip_caption"):
                    text += f" [shares {turn['blip_caption']}]"
                turns.append(
                    {
                        "speaker": turn.get("speaker"),
                        "text": text,
                        "session": session,
                        **({"date": str(date)} if date else {}),
                    }
                )
        qa_pairs = []
        for qa in _objects(sample.get("qa"), f"{where} qa"):
            category = qa.get("category")
            pair = {k: v for k, v in qa.items() if k not in ("category",)}
            if isinstance(qa.get("evidence"), list):
                # the turns the dialog ids name, as the evidence check reads passages; none when an
                # id names no turn (the ids stay in evidence_ids)
                pair["evidence_ids"] = pair.pop("evidence")
                texts = dialog_passages([e for e in qa["evidence"] if isinstance(e, str)], conv)
                if texts:
                    pair["evidence"] = texts
            pair["qa_type"] = LOCOMO_CATEGORIES.get(category, str(category))
            if pair.get("answer") in (None, "") and category == 5:
                pair["answer"] = ADVERSARIAL_GOLD
            qa_pairs.append(pair)
        converted.append(
            {"id": str(sample.get("sample_id", f"locomo-{number}")), "turns": turns, "qa_pairs": qa_pairs}
        )
    return converted


def load_locomo(
    path: str | Path | None = None,
    *,
    download: bool = False,
    repo_id: str | None = None,
    filename: str = LOCOMO_FILE,
    config: str | None = None,
    split: str | None = None,
) -> list[dict[str, Any]]:
    """LoCoMo from a local ``locomo10.json``, else from the hub (``repo_id``, by default a copy of
    the authors' file).  ``download`` is kept for scripts: without a path the hub is where it comes
    from.  The hub copy has no configs or splits to choose."""
    if path is None:
        source = HubSource(repo_id) if repo_id else LOCOMO
        if config is not None and config != source.config:
            raise UsageError(f"locomo has no configs to choose from (got {config!r})")
        path = hub_file(source, filename)
    return locomo_conversations(_read_json(path), str(path))


# -- LongMemEval -------------------------------------------------------------------------------


def longmemeval_conversations(data: Any, source: str = "LongMemEval data") -> list[dict[str, Any]]:
    """Convert LongMemEval's layout: one conversation per question, its ``haystack_sessions`` (lists of
    ``role``/``content`` turns) dated by ``haystack_dates``.  The per-turn ``has_answer`` marks are
    dropped: they would tell a memory system where the answer is."""
    if not isinstance(data, list):
        raise UsageError(f"{source}: expected a JSON list of LongMemEval questions")
    converted = []
    for number, item in enumerate(data):
        where = f"{source} item {number}"
        if not isinstance(item, Mapping) or "haystack_sessions" not in item or "question_id" not in item:
            raise UsageError(f"{where}: no 'question_id'/'haystack_sessions' (is this a LongMemEval file?)")
        qid = str(item["question_id"])
        dates = list(item.get("haystack_dates") or ())
        turns = []
        for session, turns_raw in enumerate(item["haystack_sessions"] or (), start=1):
            date = dates[session - 1] if session - 1 < len(dates) else None
            for turn in _objects(turns_raw, f"{where} session {session}"):
                turns.append(
                    {
                        "speaker": turn.get("role"),
                        "text": turn.get("content"),
                        "session": session,
                        **({"date": str(date)} if date else {}),
                    }
                )
        question = str(item.get("question", ""))
        if item.get("question_date"):
            question = f"(Today is {item['question_date']}.) {question}"
        pair = {
            "id": qid,
            "question": question,
            "answer": item.get("answer"),
            "qa_type": "abstention" if qid.endswith("_abs") else item.get("question_type"),
            "question_type": item.get("question_type"),
        }
        if item.get("question_date"):
            pair["question_date"] = item["question_date"]
        converted.append({"id": qid, "turns": turns, "qa_pairs": [pair]})
    return converted


def load_longmemeval(
    path: str | Path | None = None,
    *,
    variant: str | None = None,
    download: bool = False,
    repo_id: str = LONGMEMEVAL_REPO,
    config: str | None = None,
    split: str | None = None,
) -> list[dict[str, Any]]:
    """LongMemEval from a local JSON file (``longmemeval_s``, ``_m``, ``_oracle``), else the hub's
    file of the variant (``config``: ``longmemeval:m``; ``s`` by default).  ``download`` is kept for
    scripts: without a path the hub is where it comes from."""
    if path is None:
        chosen = config or variant or LONGMEMEVAL.config
        if chosen not in LONGMEMEVAL_FILES:
            raise UsageError(f"LongMemEval variant {chosen!r}: choose one of {', '.join(LONGMEMEVAL_FILES)}")
        path = hub_file(HubSource(repo_id), LONGMEMEVAL_FILES[chosen])
    return longmemeval_conversations(_read_json(path), str(path))


# -- files -----------------------------------------------------------------------------------


def _objects(items: Any, where: str) -> list[Mapping[str, Any]]:
    """A list of JSON objects, or a clear error naming where the public layout was not kept."""
    items = items or []
    if not isinstance(items, list) or not all(isinstance(item, Mapping) for item in items):
        raise UsageError(f"{where}: expected a list of objects")
    return items


def _read_json(path: str | Path) -> Any:
    path = Path(path).expanduser()
    try:
        with path.open(encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None
    except RecursionError:
        raise UsageError(f"{path}: JSON nested too deeply to read") from None


def _layout(items: Sequence[Any]) -> str:
    first = next((item for item in items if isinstance(item, Mapping)), {})
    if "conversation" in first and "qa" in first:
        return "locomo"
    if "haystack_sessions" in first:
        return "longmemeval"
    return "conversations"


def read_memory_file(path: str | Path, *, max_row_bytes: int = MAX_ROW_BYTES) -> Dataset:
    """A memory data set from a file: LoCoMo's or LongMemEval's JSON, or the layout above (JSON or
    JSONL; ``max_row_bytes`` caps one JSONL line, as in ``context_bench.datasets.read_file``)."""
    path = Path(path).expanduser()
    items = list(read_file(path, max_row_bytes=max_row_bytes))
    layout = _layout(items)
    if layout == "locomo":
        return Dataset(name="locomo", rows=locomo_conversations(items, str(path)), kind="memory")
    if layout == "longmemeval":
        return Dataset(name="longmemeval", rows=longmemeval_conversations(items, str(path)), kind="memory")
    return Dataset(name=path.stem, rows=items, kind="memory")


def load_memory(
    spec: str,
    *,
    path: str | Path | None = None,
    download: bool = False,
    host: PluginHost | None = None,
    max_row_bytes: int = MAX_ROW_BYTES,
) -> Dataset:
    """Resolve ``--dataset locomo|longmemeval|PATH`` (``path``/``download`` go to a named set's loader).

    A named data set is any that a plugin registers with ``kind="memory"``; a rows data set is
    refused before its loader runs.
    """
    if Path(spec).is_file():
        if path is not None or download:
            raise UsageError(
                f"--dataset {spec} is a file: --data-file and --download apply to named data sets"
            )
        return read_memory_file(spec, max_row_bytes=max_row_bytes)
    host = host or get_host()
    found = host.datasets().get(spec.lower())
    if found is not None and found[1].kind != "memory":
        raise UsageError(
            f"data set {spec!r} is not a memory data set (it holds rows, not conversations): "
            "use `context-bench run` for it"
        )
    kwargs: dict[str, Any] = {}
    if path is not None:
        kwargs["path"] = path
    if download:
        kwargs["download"] = True
    return load(spec, host=host, kind="memory", **kwargs)
