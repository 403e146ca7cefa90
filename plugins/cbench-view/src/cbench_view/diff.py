"""Two runs side by side (``/diff?a=ID&b=ID``): one (system, data set) of each, row by row on the
ids both have, which rows regressed and which improved in a score field, with the paired
statistics of ``context_bench.metrics.paired`` (McNemar's exact test for 0/1 scores, else the
sign-flip permutation test, or the t-test past 1,000 pairs) over every pair.

A row with an error counts 0 for the field, as the report counts it (a failure never raises a
score), and the page says how many did; rows only one run has are counted, not paired.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import attrs

from context_bench.metrics.paired import ALPHA, TEST_NAMES, PairedTest, p_text, paired
from context_bench.store import RunInfo, Store

from .html import h, href, link, number, page, pager, preview, select, table

#: Pairs a page of the diff shows.
PAGE = 50
#: What a row with an error counts in the field (the report's rule for a higher-is-better score).
FAILED = 0.0


@attrs.frozen
class Pair:
    example_id: str
    before: float
    after: float
    before_error: bool
    after_error: bool
    before_response: str | None
    after_response: str | None

    @property
    def change(self) -> float:
        return self.after - self.before


@attrs.frozen
class Diff:
    """The pairs of one (system, data set, field) in two runs, worst regression first."""

    pairs: tuple[Pair, ...]
    test: PairedTest | None
    only_before: int
    only_after: int
    errored_before: int
    errored_after: int

    def kind(self, shown: str) -> list[Pair]:
        if shown == "regressed":
            return [p for p in self.pairs if p.change < 0]
        if shown == "improved":
            return sorted((p for p in self.pairs if p.change > 0), key=lambda p: -p.change)
        return list(self.pairs)


def compute(store: Store, before: tuple[int, str], after: tuple[int, str], dataset: str, field: str) -> Diff:
    """Pair run ``before[0]``'s system ``before[1]`` with ``after``'s on ``dataset`` in ``field``."""
    counts = tuple(store.count(run, system=system, dataset=dataset) for run, system in (before, after))
    return _computed(store, before, after, dataset, field, counts)


@functools.lru_cache(maxsize=4)  # paging through one diff reads the runs once
def _computed(
    store: Store, before: tuple[int, str], after: tuple[int, str], dataset: str, field: str, counts: tuple
) -> Diff:
    first = _values(store, *before, dataset, field)
    second = _values(store, *after, dataset, field)
    shared = [key for key in first if key in second]
    pairs = sorted(
        (
            Pair(
                key,
                first[key][0],
                second[key][0],
                first[key][1],
                second[key][1],
                first[key][2],
                second[key][2],
            )
            for key in shared
        ),
        key=lambda p: (p.change, p.example_id),
    )
    test = paired([p.before for p in pairs], [p.after for p in pairs]) if pairs else None
    return Diff(
        tuple(pairs),
        test,
        only_before=len(first) - len(shared),
        only_after=len(second) - len(shared),
        errored_before=sum(p.before_error for p in pairs),
        errored_after=sum(p.after_error for p in pairs),
    )


def _values(store: Store, run_id: int, system: str, dataset: str, field: str) -> dict[str, tuple]:
    """Each row's value of ``field`` (an errored row's: :data:`FAILED`), whether it errored, and its
    response; rows that neither have the field nor errored (not scored by it) are left out."""
    found = {}
    for row in store.iter_rows(run_id, system=system, dataset=dataset):
        if row.errors and field not in row.scores:
            found[row.example_id] = (FAILED, True, row.response)
        elif isinstance(row.scores.get(field), (int, float)):
            found[row.example_id] = (float(row.scores[field]), bool(row.errors), row.response)
    return found


def diff_page(store: Store, query: Mapping[str, str]) -> str:
    runs = store.runs(limit=500)
    if not runs:
        return page("Compare two runs", "<p>No runs in the store.</p>")
    ids = [str(info.id) for info in runs]
    a = int(query.get("a") or (ids[1] if len(ids) > 1 else ids[0]))
    b = int(query.get("b") or ids[0])
    before, after = store.run(a), store.run(b)
    datasets = [d for d in before.datasets if d in after.datasets]
    dataset = query.get("dataset") or (datasets[0] if datasets else None)
    system_a = query.get("system_a") or _system(before, after)
    system_b = query.get("system_b") or (system_a if system_a in after.systems else _first(after.systems))
    fields = _fields(store, before, dataset)
    field = query.get("field") or _primary(before, fields)
    shown = query.get("show") or "regressed"
    form = (
        '<form class="filters" method="get" action="/diff">'
        f"<label>run {select('a', ids, str(a))}</label>"
        f"<label>system {select('system_a', before.systems, system_a)}</label>"
        f"<label>against run {select('b', ids, str(b))}</label>"
        f"<label>system {select('system_b', after.systems, system_b)}</label>"
        f"<label>data set {select('dataset', datasets, dataset)}</label>"
        f"<label>field {select('field', fields, field)}</label>"
        f"<label>show {select('show', ('regressed', 'improved', 'all'), shown)}</label>"
        "<button>compare</button></form>"
    )
    title = f"Run {a} against run {b}"
    if not (dataset and system_a and system_b and field):
        return page(title, form + "<p>The two runs share no data set with a score to compare.</p>")
    result = compute(store, (a, system_a), (b, system_b), dataset, field)
    body = [form, _statistics(result, field, (a, system_a), (b, system_b))]
    chosen = int(query.get("page") or 0)
    listed = result.kind(shown)
    params = {
        "a": a,
        "b": b,
        "system_a": system_a,
        "system_b": system_b,
        "dataset": dataset,
        "field": field,
        "show": shown,
    }
    navigation = pager("/diff", params, chosen, PAGE, len(listed))
    lines = [_pair(p, b, dataset) for p in listed[chosen * PAGE : (chosen + 1) * PAGE]]
    headers = ("example", f"run {a}", f"run {b}", "change", f"response in run {a}", f"response in run {b}")
    listing = table(headers, lines, numeric=(1, 2, 3)) if lines else ""
    body.append(f'<section id="pairs"><h2>{h(shown.capitalize())} rows</h2>{navigation}{listing}</section>')
    return page(title, "\n".join(body))


def _pair(pair: Pair, run_id: int, dataset: str) -> list[str]:
    """One pair's line: its example (a link to run ``run_id``'s rows of it), both values, the change."""
    change = "regressed" if pair.change < 0 else "improved" if pair.change > 0 else ""
    error = ' <span class="error">(error)</span>'
    return [
        link(href(f"/runs/{run_id}/example", dataset=dataset, id=pair.example_id), pair.example_id),
        h(number(pair.before)) + (error if pair.before_error else ""),
        h(number(pair.after)) + (error if pair.after_error else ""),
        f'<span class="{change}">{h(number(pair.change, sign=True))}</span>',
        h(preview(pair.before_response)),
        h(preview(pair.after_response)),
    ]


def _statistics(result: Diff, field: str, before: tuple[int, str], after: tuple[int, str]) -> str:
    test = result.test
    regressed = sum(1 for p in result.pairs if p.change < 0)
    improved = sum(1 for p in result.pairs if p.change > 0)
    lines = [
        f"{len(result.pairs):,} rows in both: {regressed:,} regressed, {improved:,} improved, "
        f"{len(result.pairs) - regressed - improved:,} unchanged in {field}.",
    ]
    if test is not None and test.p_value is None:
        lines.append(
            f"Run {after[0]} ({after[1]}) minus run {before[0]} ({before[1]}): mean change "
            f"{number(test.delta, sign=True)}; too few rows to tell (n = {test.n:,})."
        )
    elif test is not None:
        lines.append(
            f"Run {after[0]} ({after[1]}) minus run {before[0]} ({before[1]}): mean change "
            f"{number(test.delta, sign=True)}, {1 - ALPHA:.0%} interval "
            f"[{number(test.low, sign=True)}, {number(test.high, sign=True)}], "
            f"p = {p_text(test.p_value)} ({TEST_NAMES[test.test]}, n = {test.n:,})."
        )
    if result.errored_before or result.errored_after:
        lines.append(
            f"Rows with an error count {FAILED:g}: {result.errored_before:,} in run {before[0]}, "
            f"{result.errored_after:,} in run {after[0]}."
        )
    if result.only_before or result.only_after:
        lines.append(
            f"Not paired: {result.only_before:,} rows only run {before[0]} has, "
            f"{result.only_after:,} only run {after[0]} has."
        )
    return '<section id="statistics">' + "".join(f"<p>{h(line)}</p>" for line in lines) + "</section>"


def _system(before: RunInfo, after: RunInfo) -> str | None:
    """The system to compare: the last both runs have (a baseline comes first, the system under
    test after it), else the first of run A."""
    shared = [s for s in before.systems if s in after.systems]
    return shared[-1] if shared else _first(before.systems)


def _first(names: tuple[str, ...]) -> str | None:
    return names[0] if names else None


def _fields(store: Store, info: RunInfo, dataset: str | None) -> list[str]:
    """The run's score fields on ``dataset``: its summary's, or for an unfinished run those of its
    first rows."""
    groups = (info.summary or {}).get("groups") or ()
    found = [
        field for group in groups if group.get("dataset") == dataset for field in group.get("scores") or {}
    ]
    if not found:
        found = [field for row in store.rows(info.id, limit=PAGE, dataset=dataset) for field in row.scores]
    return list(dict.fromkeys(found))


def _primary(info: RunInfo, fields: list[str]) -> str | None:
    chosen = ((info.summary or {}).get("primary") or {}).get("field")
    return chosen if chosen in fields else _first(tuple(fields))
