"""Summary sections: figures a plugin adds to a run's summary from the run's finished rows.

A plugin registers a :class:`~context_bench.specs.SectionSpec` (``cbench_register_sections``).
Before any row runs, :func:`~context_bench.runner.evaluate` calls its factory with the run's
:class:`~context_bench.config.RunConfig` and the plugin's options (as its auto-wire rules get
them, with the run's ``cache_dir``): None, the run did not ask for it; a
:class:`~context_bench.errors.UsageError`, a user mistake, said in one line, exit 2, before any
row.  The run hands the :class:`~context_bench.specs.SectionBuilder` every finished row in task
order, and what its ``finish`` returns is ``summary.sections[name]``, written ``summary.<name>`` in
the JSON report.
The reports show any section as a table of its records (and the HTML report its chart), and the
gates read its figures, so a section needs no code in any report or gate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

__all__ = ["Figure", "SummarySection"]


@attrs.frozen
class Figure:
    """A figure of a section's records that ``--fail-under``, ``--fail-over`` and
    ``--fail-if-worse`` may name: ``name`` is its key in each record, ``interval`` the key of its
    interval (``[low, high]``; ``--fail-if-worse`` fails a record whose interval lies wholly on the
    wrong side of the given value), ``bounds`` its range (the HTML chart's axis) and ``reference``
    the value the chart marks (a win rate's 0.5: as good as the baseline)."""

    name: str
    interval: str | None = None
    bounds: tuple[float, float] = (0.0, 1.0)
    reference: float | None = None


@attrs.frozen
class SummarySection:
    """What a section adds to a summary: ``records``, one per (``system``, ``dataset``), each a
    plain JSON object with those two keys; ``columns`` the keys the reports' tables show (all of the
    first record's when empty); ``figures`` those the gates may read, the first drawn in the HTML
    report as a bar per record.  ``failed`` of ``total`` units of work (judge calls, say) got no
    result: over ``--max-failure-rate`` they fail the run (exit 4), ``failure`` saying the first."""

    title: str
    records: list[dict[str, Any]] = attrs.Factory(list)
    columns: tuple[str, ...] = ()
    figures: tuple[Figure, ...] = ()
    failed: int = 0
    total: int = 0
    failure: str | None = None
    #: What ``total`` counts, in the failure line ("pairs", "calls").
    unit: str = "calls"
    #: What the reader should know that no record shows: each becomes one of the summary's warnings.
    notes: tuple[str, ...] = ()

    def shown(self) -> tuple[str, ...]:
        """The keys the tables show."""
        if self.columns or not self.records:
            return self.columns
        return tuple(self.records[0])

    def figure(self, name: str) -> Figure | None:
        return next((f for f in self.figures if f.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        """Everything but the records (written beside it as ``summary.<name>``)."""
        found = attrs.asdict(self, recurse=True)
        del found["records"]
        return found

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], records: Any) -> SummarySection:
        """A section as :meth:`to_dict` wrote it, with its records (a saved report read back)."""
        given = {f.name: data[f.name] for f in attrs.fields(cls) if f.name in data and f.name != "records"}
        given["columns"] = tuple(given.get("columns", ()))
        given["notes"] = tuple(given.get("notes", ()))
        given["figures"] = tuple(
            Figure(f["name"], f.get("interval"), tuple(f.get("bounds", (0.0, 1.0))), f.get("reference"))
            for f in given.get("figures", ())
        )
        return cls(records=[dict(r) for r in records or () if isinstance(r, Mapping)], **given)
