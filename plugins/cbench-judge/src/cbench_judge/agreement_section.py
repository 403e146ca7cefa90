"""``--judge-agreement FILE`` on ``run`` and ``score``: what ``judge-check --out FILE`` measured of
the run's judge against people, carried beside every score that judge produced, as the summary's
``judge_agreement`` section (``summary.judge_agreement`` in the JSON report, a table in every
other): one record per (system, data set) that has a score of the checked field.

An agreement measured for another judge model or template than the run's is not applied, a
warning naming both; one read from a saved report (``judge-check --report``, which records neither)
is applied with a warning saying so.  A file that is no ``judge-check --out`` record is one line,
exit 2, before any row.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from context_bench.errors import UsageError
from context_bench.summary_sections import SummarySection

from .defaults import DEFAULT_MODEL
from .settings import JudgeSettings

if TYPE_CHECKING:
    from context_bench.config import RunConfig
    from context_bench.records import EvalRow

#: What every agreement record of the file must hold (``judge-check --out`` writes them).
_NEEDED = ("field", "kind", "template", "judge_model", "n", "kappa", "kappa_ci", "accuracy")
#: The records' keys, in the order the reports' tables show them.
COLUMNS = ("system", "dataset", "field", "judge_model", "template", "kappa", "ci", "accuracy", "n", "labels")
#: The template judge-check names a judge it read from a saved report rather than ran.
_FROM_REPORT = "report"
_TITLE = "Judge agreement with people (--judge-agreement; kappa weighted for score labels)"


def read_agreements(path: str) -> list[dict[str, Any]]:
    """The agreement records of a ``judge-check --out`` file; anything else is a UsageError."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        found = data["summary"]["judge_check"]
    except (OSError, ValueError) as exc:
        raise UsageError(f"--judge-agreement {path}: cannot read it: {exc}") from None
    except (KeyError, TypeError):
        said = "no summary.judge_check (write it with judge-check --out)"
        raise UsageError(f"--judge-agreement {path}: {said}") from None
    records = [found] if isinstance(found, Mapping) else found
    if not isinstance(records, list) or not records:
        raise UsageError(f"--judge-agreement {path}: summary.judge_check holds no agreement record")
    for record in records:
        missing = [k for k in _NEEDED if not isinstance(record, Mapping) or k not in record]
        if missing:
            raise UsageError(f"--judge-agreement {path}: an agreement record lacks {', '.join(missing)}")
        wrong = _malformed(record)
        if wrong:
            raise UsageError(f"--judge-agreement {path}: an agreement record's {wrong}")
    return records


def _malformed(record: Mapping[str, Any]) -> str | None:
    """What of a record read from a file is not what ``judge-check --out`` writes (None: all is):
    the file is the user's, so a kappa of 7 or a text where a figure goes is refused, not shown."""
    for key in ("field", "kind", "template", "judge_model"):
        # a judge read from a saved report (--report) has no model
        if not isinstance(record[key], str) and not (key == "judge_model" and record[key] is None):
            return f"{key} is not a text"
    n = record["n"]
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        return "n is not a whole number of rows"
    for key, low, high in (("kappa", -1.0, 1.0), ("accuracy", 0.0, 1.0)):
        value = record[key]
        if value is not None and not (_number(value) and low <= value <= high):
            return f"{key} is not a number from {low:g} to {high:g}"
    ci = record["kappa_ci"]
    if ci is not None and not (
        isinstance(ci, list) and len(ci) == 2 and all(map(_number, ci)) and ci[0] <= ci[1]
    ):
        return "kappa_ci is not an interval [low, high]"
    return None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def section(config: RunConfig, options: Mapping[str, Any]) -> AgreementSection | None:
    """The run's agreement section, None without ``--judge-agreement``; the file is read (a
    UsageError when malformed) before any row runs."""
    settings = JudgeSettings.read(options)
    if settings.agreement is None:
        return None
    model = settings.model or DEFAULT_MODEL
    template = settings.template or "rating"  # no --judge-template: LLMJudge's 1-5 rating
    return AgreementSection(settings.agreement, read_agreements(settings.agreement), model, template)


class AgreementSection:
    """Notes which (system, data set) has a score of each checked field, then gives each its
    field's agreement: a :class:`~context_bench.summary_sections.SectionBuilder`."""

    def __init__(self, path: str, records: list[dict[str, Any]], model: str, template: str) -> None:
        self.applied: list[dict[str, Any]] = []
        self.notes: list[str] = []
        for record in records:
            ours = (record["judge_model"], record["template"])
            if record["template"] == _FROM_REPORT:
                self.applied.append(record)
                self.notes.append(
                    f"--judge-agreement {path}: {record['field']}'s agreement was read from a saved report "
                    f"that names no judge model or template: check they are this run's ({model}, {template})"
                )
            elif ours != (model, template):
                self.notes.append(
                    f"--judge-agreement {path}: not applied: it checked judge {ours[0]} with template "
                    f"{ours[1]}, this run's judge is {model} with template {template}"
                )
            else:
                self.applied.append(record)
        self.scored: dict[tuple[str, str, str], None] = {}  # (system, dataset, field), in order seen
        self.fields = {record["field"] for record in self.applied}

    def add(self, row: EvalRow) -> None:
        for field in self.fields & set(row.scores):
            self.scored.setdefault((row.system, row.dataset, field), None)

    def finish(self) -> SummarySection:
        records = [
            {"system": system, "dataset": dataset, **_shown(record)}
            for system, dataset, field in self.scored
            for record in self.applied
            if record["field"] == field
        ]
        notes = list(self.notes)
        unscored = sorted(self.fields - {field for _, _, field in self.scored})
        if unscored:
            notes.append(f"--judge-agreement: no row of this run has a score of {', '.join(unscored)}")
        return SummarySection(_TITLE, records, columns=COLUMNS, notes=tuple(notes))


def _shown(record: Mapping[str, Any]) -> dict[str, Any]:
    """An agreement record by the summary's names (``ci`` is kappa's interval, ``labels`` their kind)."""
    return {
        "field": record["field"],
        "judge_model": record["judge_model"],
        "template": record["template"],
        "kappa": record["kappa"],
        "ci": record["kappa_ci"],
        "accuracy": record["accuracy"],
        "n": record["n"],
        "labels": record["kind"],
    }
