"""The HTML report's row data: every row as a compact JSON array for the page's script, which pages,
sorts and filters them and shows one row's detail on click.

Each text a row carries (response, prompt, reference, a judge's explanation, errors) is cut at
:data:`TEXT_LIMIT` characters, so a row costs a bounded number of bytes and the file grows
linearly with the run.  The JSON sits in a ``<script type="application/json">`` element with
``<``, ``>``, ``&`` and the line separators U+2028/U+2029 written as ``\\u`` escapes: no row text can
close the element or start markup, and the script reads it with ``JSON.parse`` and shows it through
``textContent`` only.  Names, ids and error messages have their control characters written as
escapes (``sections.printable``), as in every report; a response or prompt shows as it is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from .._rowtask import SCORED_BY
from ..assertions import REFERENCE_FIELDS
from ..records import EvalRow, compact_encoder, json_safe, jsonable
from ._sections import printable

#: Characters of one text of a row (response, prompt, reference, explanation) the page keeps.
TEXT_LIMIT = 2000
#: Rows the table shows per page (the page's script reads it from the data).
PAGE = 50

#: Where the prompt a system sent is found in its output's extra fields, first found wins.
PROMPT_KEYS = ("prompt", "compressed_prompt", "messages", "context")
#: ``meta`` keys holding a judge's explanation of its verdict.
EXPLANATION_KEYS = ("explanation", "judge_explanation", "rationale", "reasoning", "judge")

_encode = compact_encoder((",", ":"))
_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)

#: The optional figures of a row, shown as columns when some row has one: (header, getter).
EXTRAS: tuple[tuple[str, Callable[[EvalRow], Any]], ...] = (
    ("latency (s)", lambda r: r.latency),
    ("input tokens", lambda r: r.input_tokens),
    ("output tokens", lambda r: r.output_tokens),
    ("cost", lambda r: r.cost),
    ("evidence kept", lambda r: r.evidence_kept),
    ("loss cause", lambda r: r.loss_cause),
)
#: Where a row's ``evidence_kept`` and ``loss_cause`` are in its figures.
_EVIDENCE, _CAUSE = len(EXTRAS) - 2, len(EXTRAS) - 1


def _safe(data: Any) -> str:
    """``data`` as compact JSON; NaN and infinities, which JSON lacks, as null."""
    try:
        return _encode(data)
    except ValueError:  # the rare row with a non-finite number
        return _encode(json_safe(data))


def _escape(text: str) -> str:
    """JSON text made safe inside a ``<script>`` element (these characters occur only in strings)."""
    for char, escaped in _ESCAPES:
        if char in text:
            text = text.replace(char, escaped)
    return text


#: The score fields and the optional figures (header, getter) a table of rows shows.
Columns = tuple[list[str], list[tuple[str, Callable[[EvalRow], Any]]]]


class RowEncoder:
    """Each row as the page's script reads it, one JSON array, encoded as it comes, so a run's rows
    can stream to a file (``--output html --out``) instead of being held:
    ``[index, system, dataset, id, scores, figures, errors, failures, response, *detail]``.

    Positions never change once given, so a row encoded early reads the same as one encoded late:
    a system, data set or score field is numbered on first appearance (``scores`` lists the fields
    known when the row came; a later field is simply absent from earlier rows), and ``figures``
    holds every figure of :data:`EXTRAS`, of which :meth:`head` names those some row had.  Texts
    are cut at :data:`TEXT_LIMIT` and the JSON is safe inside a ``<script>`` element.  The first
    :data:`PAGE` rows are kept for the page's plain table."""

    def __init__(self) -> None:
        self.systems: dict[str, int] = {}
        self.datasets: dict[str, int] = {}
        self.fields: dict[str, int] = {}
        self.figured = [False] * len(EXTRAS)
        self.first: list[EvalRow] = []
        self.count = 0

    def __call__(self, row: EvalRow) -> str:
        self.count += 1
        if len(self.first) < PAGE:
            self.first.append(row)
        fields = self.fields
        for field in row.scores:
            fields.setdefault(field, len(fields))
        scores = row.scores
        figures = [get(row) for _, get in EXTRAS]
        for at, value in enumerate(figures):
            if value is not None:
                self.figured[at] = True
        errors, failures = row.errors, row.failures
        return _escape(
            _safe(
                [
                    row.index,
                    self.systems.setdefault(row.system, len(self.systems)),
                    self.datasets.setdefault(row.dataset, len(self.datasets)),
                    printable(str(row.example_id)),
                    [scores.get(f) for f in fields],
                    figures,
                    [_cut(printable(str(e))) for e in errors] if errors else [],
                    [_cut(printable(f"{name}: {why}")) for name, why in failures.items()] if failures else [],
                    _text(row.response),
                    *detail(row),
                ]
            )
        )

    def with_causes(
        self,
        lines: Iterable[str],
        lost: Mapping[tuple[str, str], set[str]],
        cause: Callable[[float | None], str | None],
    ) -> Iterable[str]:
        """Row lines this encoder gave, each ``lost`` row's ``loss_cause`` given, ``cause`` of its
        ``evidence_kept`` (:func:`~context_bench.evidence.lost_rows`,
        :func:`~context_bench.evidence.loss_cause`): it is known once the summary is, after the
        rows were encoded.  Call it before :meth:`head`, which then shows the column."""
        wanted = {
            (self.systems[system], self.datasets[dataset]): {printable(str(example)) for example in ids}
            for (system, dataset), ids in lost.items()
            if ids and system in self.systems and dataset in self.datasets
        }
        if not wanted:
            return lines
        self.figured[_CAUSE] = True
        return self._caused(lines, wanted, cause)

    @staticmethod
    def _caused(
        lines: Iterable[str],
        wanted: Mapping[tuple[int, int], set[str]],
        cause: Callable[[float | None], str | None],
    ) -> Iterator[str]:
        for text in lines:
            _, system, dataset, _ = text[1:].split(",", 3)  # index, system, dataset: numbers
            if (int(system), int(dataset)) not in wanted:
                yield text
                continue
            row = json.loads(text)
            if row[3] in wanted[(row[1], row[2])]:
                row[5][_CAUSE] = cause(row[5][_EVIDENCE])
                text = _escape(_safe(row))
            yield text

    @property
    def columns(self) -> Columns:
        """The score fields, in order of first appearance, and the optional figures some row had."""
        return list(self.fields), [extra for extra, seen in zip(EXTRAS, self.figured, strict=True) if seen]

    def head(self, **extra: Any) -> str:
        """The rows' names and columns as a JSON object without its closing brace, for the rows (or
        the name of the file that holds them) to follow: ``figures`` pairs each figure shown with
        its position in a row's ``figures``; ``extra`` (the loss audit) is added as given."""
        found = {
            "fields": list(self.fields),
            "figures": [
                [h, at] for at, ((h, _), seen) in enumerate(zip(EXTRAS, self.figured, strict=True)) if seen
            ],
            "systems": [printable(s) for s in self.systems],
            "datasets": [printable(d) for d in self.datasets],
            "page": PAGE,
            "limit": TEXT_LIMIT,
            "count": self.count,
            **extra,
        }
        return _escape(_safe(found))[:-1]


#: What a row's detail shows besides its table cells, in the order :func:`detail` gives them.
DETAIL = ("prompt", "reference", "judge", "meta")


def detail(row: EvalRow) -> list[str | None]:
    """What a row's detail shows besides its table cells (:data:`DETAIL`): the prompt sent, the
    reference, a judge's explanation and the rest of the row's metadata, each cut at
    :data:`TEXT_LIMIT` (None where the row has none)."""
    meta, example = row.meta, row.example
    output = meta.get("output") if meta else None
    prompt = _prompt(output if isinstance(output, Mapping) else None, example)
    reference = None
    if example:
        for key in REFERENCE_FIELDS:
            if key in example:
                reference = example[key]
                break
    explanation = rest = None
    if meta:
        if reference is None:
            reference = meta.get("reference")
        explained = [meta[k] for k in EXPLANATION_KEYS if meta.get(k)]
        if explained:
            explanation = "\n\n".join(map(_as_text, explained))
        others = {
            k: v for k, v in meta.items() if k not in EXPLANATION_KEYS and k not in (SCORED_BY, "reference")
        }
        if others:
            rest = json.dumps(others, ensure_ascii=False, default=jsonable, indent=1)
    return [_text(prompt), _text(reference), _text(explanation), _text(rest)]


def _prompt(output: Mapping[str, Any] | None, example: Mapping[str, Any] | None) -> Any:
    """The prompt the system reported sending, else the example's own (messages, or context and question)."""
    if output:
        for key in PROMPT_KEYS:
            if output.get(key):
                return output[key]
    if not example:
        return None
    if example.get("messages"):
        return example["messages"]
    parts = [str(example[k]) for k in ("context", "question", "prompt", "input") if example.get(k)]
    return "\n\n".join(parts) if parts else None


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(m, Mapping) and "content" in m for m in value):
        return "\n\n".join(f"[{m.get('role', '?')}] {m['content']}" for m in value)
    return json.dumps(value, ensure_ascii=False, default=jsonable, indent=1)


def _text(value: Any) -> str | None:
    """A row's text as the page shows it: as it is (the script shows it as text, in a ``<pre>``),
    cut at :data:`TEXT_LIMIT`."""
    if value is None:
        return None
    text = value if type(value) is str else _as_text(value)
    return text if len(text) <= TEXT_LIMIT else _cut(text)


def _cut(text: str) -> str:
    return (
        text
        if len(text) <= TEXT_LIMIT
        else text[:TEXT_LIMIT] + f"… ({len(text) - TEXT_LIMIT} more characters)"
    )
