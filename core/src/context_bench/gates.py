"""Quality gates: what makes a finished run fail in CI, and the exit status that says so.

Four checks read a run's rows after its report is written: the share of rows the systems could
not answer and of rows each evaluator failed on (``--max-failure-rate``), the bounds on headline
means (``--fail-under`` a floor, ``--fail-over`` a ceiling), the paired comparison with a
baseline system (``--fail-if-worse``; in a sweep, every setting or the one ``--gate-setting``
picks), and a sweep's safe operating point (``--require-operating-point``).  Each reads its field
in its direction (:mod:`context_bench.direction`): a floor on a lower-is-better field, or a
ceiling on a higher-is-better one, would pass the worse system, so it is refused with the other
flag as the hint.  Their syntax is checked when the flags are read, before any row runs (and a bound's
direction against the installed evaluators); the names they give (systems, data sets, score
fields) are checked against the run's rows, since an evaluator wired per row only shows its
fields once it scored.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs

from .direction import HIGHER, LOWER, Direction, named
from .errors import UsageError

if TYPE_CHECKING:  # the run's records load with the run, not with the command line's parser
    from ._summary import Summarizer
    from .records import Comparison, EvalResult, EvalRow, GroupSummary, Summary

#: The exit statuses of a run command (README.md's table); when several apply, the first of
#: ALL_ERRORED, USAGE, TOO_MANY_FAILURES, GATE_FAILED wins.
OK = 0
ALL_ERRORED = 1
USAGE = 2
GATE_FAILED = 3
TOO_MANY_FAILURES = 4
INTERRUPTED = 130

#: ``--max-failure-rate``'s default: more than this share of failed rows fails the run.
DEFAULT_MAX_FAILURE_RATE = 0.1


def _number(text: str, flag: str, given: str) -> float:
    """A gate's number, within the flag's range (:data:`~context_bench.bounds.BOUNDS`)."""
    from .bounds import BOUNDS

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise UsageError(f"{flag} {given}: {text!r} is not a number")
    if not BOUNDS[flag].holds(value):
        raise UsageError(f"{flag} {given}: {text!r} is not {BOUNDS[flag].describe()}")
    return value


def _scoped(given: str, flag: str, shape: str) -> tuple[str | None, str, str, str]:
    """``[[SYSTEM/]DATASET:]FIELD[=VALUE]`` split into its scope (None: every group), field, ``=``
    (empty when no value was given) and value; a UsageError naming ``shape`` when it is not one."""
    left, equals, value = given.rpartition("=") if "=" in given else (given, "", "")
    scope, colon, field = left.rpartition(":")
    if not field or (colon and not scope) or (equals and not value and flag != "--fail-if-worse"):
        raise UsageError(f"{flag} {given}: expected {shape}")
    return scope or None, field, equals, value


def _groups(scope: str | None, names: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The (system, data set) groups of ``names`` a gate's ``scope`` covers: every one (None), a
    data set's, else one ``SYSTEM/DATASET`` (either may hold a ``/``)."""
    if scope is None:
        return list(names)
    by_dataset = [key for key in names if key[1] == scope]
    return by_dataset or [key for key in names if f"{key[0]}/{key[1]}" == scope]


@attrs.frozen
class BoundGate:
    """``--fail-under [[SYSTEM/]DATASET:]FIELD=VALUE`` (a floor) or ``--fail-over ...`` (a
    ``ceiling``): the headline mean of ``field`` must pass ``bound`` (at least it, or at most it)
    in every (system, data set) group ``scope`` names (all of them when None)."""

    field: str
    bound: float
    #: ``DATASET`` or ``SYSTEM/DATASET`` as given; resolved against the run's names (either may hold
    #: a ``/``).
    scope: str | None = None
    given: str = ""
    ceiling: bool = False

    @classmethod
    def parse(cls, given: str, ceiling: bool = False) -> BoundGate:
        flag, shape = _FLAGS[ceiling], "[[SYSTEM/]DATASET:]FIELD=VALUE"
        scope, field, equals, value = _scoped(given, flag, shape)
        if not equals:
            raise UsageError(f"{flag} {given}: expected {shape}")
        return cls(field, _number(value, flag, given), scope, given, ceiling)

    @property
    def flag(self) -> str:
        return _FLAGS[self.ceiling]

    @property
    def direction(self) -> Direction:
        """The direction of the fields this gate bounds: a ceiling suits a lower-is-better one."""
        return LOWER if self.ceiling else HIGHER

    def check(self, direction: Direction) -> None:
        """A UsageError when the gate's field points the other ``direction`` (a floor would pass
        the worse system), naming the flag that bounds it."""
        if direction == self.direction:
            return
        other = _FLAGS[not self.ceiling]
        raise UsageError(
            f"{self.flag} {self.given}: {direction.name} {self.field} is better, so a "
            f"{'ceiling' if self.ceiling else 'floor'} fails the better system and passes the worse; "
            f"bound it with {other} {self.given}"
        )


#: A mean gate's flag: a floor (``False``) or a ceiling (``True``).
_FLAGS = {False: "--fail-under", True: "--fail-over"}


@attrs.frozen
class WorseGate:
    """``--fail-if-worse [[SYSTEM/]DATASET:]FIELD[=MARGIN]``: in every (system, data set) the scope
    names, the system's paired difference to the baseline in ``field`` may not be significantly
    below ``-margin`` (:meth:`fails`)."""

    field: str
    margin: float = 0.0
    scope: str | None = None
    given: str = ""

    @classmethod
    def parse(cls, given: str) -> WorseGate:
        scope, field, equals, margin = _scoped(given, "--fail-if-worse", "[[SYSTEM/]DATASET:]FIELD[=MARGIN]")
        return cls(field, _number(margin, "--fail-if-worse", given) if equals else 0.0, scope, given)

    def fails(self, comparison: Comparison) -> bool:
        """The rule (docs/ci.md): the paired test is significant at the run's alpha *and* the
        interval lies beyond ``margin`` on the worse side (its upper bound below ``-margin``, or
        its lower bound above ``margin`` where lower is better), so a failure never prints a
        p-value above alpha."""
        ci = comparison.ci
        if not comparison.significant or ci is None:
            return False
        return named(comparison.direction).gains(ci)[1] < -self.margin


@attrs.frozen
class OperatingFloor:
    """``--require-operating-point NAME>=VALUE`` (or ``NAME<=VALUE``): every system swept in
    ``parameter`` has a setting safe on every data set, and its value is on the bound's side
    (a compressor that used to be safe at 0.3 and now is only at 0.5 fails ``rate<=0.3``)."""

    parameter: str
    bound: float
    at_least: bool
    given: str = ""

    @classmethod
    def parse(cls, given: str) -> OperatingFloor:
        for sign, at_least in ((">=", True), ("<=", False)):
            name, found, value = given.partition(sign)
            if found and name.strip():
                return cls(name.strip(), _number(value, "--require-operating-point", given), at_least, given)
        raise UsageError(f"--require-operating-point {given}: expected NAME>=VALUE or NAME<=VALUE")

    def lines(self, summary: Summary) -> list[str]:
        """One line per swept system whose safe operating point over all data sets is missing or
        on the wrong side of the bound."""
        flag = f"gate failed: --require-operating-point {self.given}"
        points = {p.system: p for p in summary.operating_points if p.dataset is None}
        failed = []
        for system in dict.fromkeys(p.system for p in summary.sweeps if p.parameter == self.parameter):
            point = points.get(system)
            if point is None:
                failed.append(f"{flag}: {system} has no setting safe on every data set")
            elif (point.value < self.bound) if self.at_least else (point.value > self.bound):
                failed.append(f"{flag}: {system} is safe at {self.parameter}={point.value} at best")
        return failed


@attrs.frozen
class Verdict:
    """What the gates found: the exit status and one line per finding (empty when all passed)."""

    status: int = OK
    lines: list[str] = attrs.Factory(list)


@attrs.frozen
class Gates:
    """The gates of one command line; :meth:`judge` applies them to a finished run."""

    fail_under: tuple[BoundGate, ...] = ()
    fail_if_worse: tuple[WorseGate, ...] = ()
    baseline: str | None = None
    max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE
    fail_over: tuple[BoundGate, ...] = ()
    #: A sweep's floors on its safe operating point, and the swept settings ``--fail-if-worse``
    #: leaves alone (those ``--gate-setting`` does not pick; cli/_sweeps.py sets both).
    operating_floors: tuple[OperatingFloor, ...] = ()
    ungated: frozenset[str] = frozenset()

    @classmethod
    def parse(
        cls,
        fail_under: Sequence[str] = (),
        fail_if_worse: Sequence[str] = (),
        baseline: str | None = None,
        max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE,
        fail_over: Sequence[str] = (),
    ) -> Gates:
        """The flags' values, checked (a UsageError names the first bad one)."""
        if not 0 <= max_failure_rate <= 1:  # NaN too
            raise UsageError("--max-failure-rate must be between 0 and 1")
        if fail_if_worse and not baseline:
            raise UsageError(
                "--fail-if-worse needs --baseline NAME (the system the others are compared with)"
            )
        return cls(
            tuple(BoundGate.parse(text) for text in fail_under),
            tuple(WorseGate.parse(text) for text in fail_if_worse),
            baseline,
            max_failure_rate,
            tuple(BoundGate.parse(text, ceiling=True) for text in fail_over),
        )

    @property
    def bounds(self) -> tuple[BoundGate, ...]:
        """The floors and ceilings on means."""
        return (*self.fail_under, *self.fail_over)

    def check_directions(self, direction_of: Callable[[str], Direction]) -> None:
        """A UsageError for a floor on a lower-is-better field or a ceiling on a higher-is-better
        one (``direction_of(field)``): before the run as the installed evaluators declare them,
        after it as the run's summary records them."""
        for gate in self.bounds:
            gate.check(direction_of(gate.field))

    def check_names(self, systems: Sequence[str] | None, datasets: Sequence[str]) -> None:
        """Before the run: a UsageError for ``--baseline`` naming no system and a gate's scope
        naming no data set or SYSTEM/DATASET of the ones the run will have (``systems`` None:
        not known until the rows are read, so only the data set of a scope is checked)."""
        if systems is not None and self.baseline is not None and self.baseline not in systems:
            raise UsageError(
                f"--baseline {self.baseline}: no such system in this run (it has {', '.join(systems)})"
            )
        for flag, gate in [
            *((g.flag, g) for g in self.bounds),
            *(("--fail-if-worse", g) for g in self.fail_if_worse),
        ]:
            scope = gate.scope
            if scope is None:
                continue
            if systems is None:
                known = any(scope == d or scope.endswith(f"/{d}") for d in datasets)
            else:
                known = bool(_groups(scope, list(itertools.product(systems, datasets))))
            if not known:
                raise UsageError(f"{flag} {gate.given}: no data set or SYSTEM/DATASET {scope!r} in this run")

    def judge(self, result: EvalResult) -> Verdict:
        """The run's exit status and its reasons, read from the run's summary (the report's own
        figures).  Every row errored: 1, alone (no gate can read a run without scores).  Otherwise
        a gate naming nothing in the run is a UsageError (2); then too many failures (4) and failed
        gates (3) are all said, and the status is 4 if any failure rate is over the limit, else 3
        if any gate failed, else 0."""
        summarize, summary = self._summarized(result)
        groups = {(g.system, g.dataset): g for g in summary.groups}
        total, errored = sum(g.rows for g in summary.groups), sum(g.errors for g in summary.groups)
        if total and errored == total:
            return Verdict(ALL_ERRORED, [f"none of the {total} rows could be scored"])
        self.check_directions(summary.direction)
        # a field no group scores but a summary section gives (summary.sections) is gated there
        scored = {field for g in groups.values() for field in g.scores}
        added = [
            g
            for g in (*self.bounds, *self.fail_if_worse)
            if g.field not in scored and any(s.figure(g.field) for s in summary.sections.values())
        ]
        bounded = [(gate, self._resolve(gate, groups)) for gate in self.bounds if gate not in added]
        worse = [
            (gate, [c for c in self._compared(gate, groups, summary) if c.system not in self.ungated])
            for gate in self.fail_if_worse
            if gate not in added
        ]
        rates = summarize.failure_counts.lines(self.max_failure_rate)
        rates += _section_failures(summary, self.max_failure_rate)
        lines = list(rates)
        for gate, keys in bounded:
            lines.extend(self._bound(gate, keys, groups, summarize))
        for gate, compared in worse:
            lines.extend(_worse(gate, compared, summarize.analysis.alpha))
        for gated in added:
            lines.extend(_section_gate(gated, summary))
        for floor in self.operating_floors:
            lines.extend(floor.lines(summary))
        status = TOO_MANY_FAILURES if rates else GATE_FAILED if lines else OK
        return Verdict(status, lines)

    def _summarized(self, result: EvalResult) -> tuple[Summarizer, Summary]:
        """The run's summarizer and summary (made from its rows when it has none), compared with
        the gates' baseline."""
        from ._summary import Summarizer
        from .analysis import Analysis

        summarize, summary = result.summarize, result.summary
        if not isinstance(summarize, Summarizer) or summary is None:
            summarize = Summarizer(analysis=Analysis(baseline=self.baseline))
            summary = summarize(result.rows)
        if self.baseline is not None and self.baseline not in summary.systems:
            known = ", ".join(summary.systems) or "none"
            raise UsageError(f"--baseline {self.baseline}: no such system in this run (it has {known})")
        if self.fail_if_worse and summary.baseline != self.baseline:  # a result made with other settings
            again = result.analyzed(attrs.evolve(summarize.analysis, baseline=self.baseline))
            summarize, summary = again.summarize, again.summary  # type: ignore[assignment]
        return summarize, summary  # type: ignore[return-value]

    @staticmethod
    def _resolve(gate: BoundGate, groups: dict[tuple[str, str], GroupSummary]) -> list[tuple[str, str]]:
        keys = _groups(gate.scope, list(groups))
        if not keys:
            raise UsageError(
                f"{gate.flag} {gate.given}: no data set or SYSTEM/DATASET {gate.scope!r} in this run"
            )
        having = [key for key in keys if gate.field in groups[key].scores]
        if not having:
            where = f" of {gate.scope}" if gate.scope else ""
            raise UsageError(
                f"{gate.flag} {gate.given}: no group{where} in this run has a score {gate.field!r}"
            )
        return having

    @staticmethod
    def _bound(
        gate: BoundGate,
        keys: list[tuple[str, str]],
        groups: dict[tuple[str, str], GroupSummary],
        summarize: Summarizer,
    ) -> list[str]:
        """Each group whose headline mean does not pass the bound (below a floor, above a
        ceiling), with the report's interval of it."""
        from .metrics.interval import Interval

        failed = []
        for key in keys:
            group = groups[key]
            mean = group.scores[gate.field]
            if mean is None or gate.direction.passes(mean, gate.bound):
                continue
            low, high = group.ci.get(gate.field) or (-math.inf, math.inf)
            n = sum(1 for value in summarize.groups[key].columns.scores[gate.field] if value == value)
            failed.append(
                f"gate failed: {gate.flag} {gate.given}: {gate.field} of {key[0]} on {key[1]} is "
                f"{Interval(mean, low, high, n).describe()}, {'above' if gate.ceiling else 'below'} "
                f"{gate.bound:g}"
            )
        return failed

    def _compared(
        self, gate: WorseGate, groups: dict[tuple[str, str], GroupSummary], summary: Summary
    ) -> list[Comparison]:
        """The report's comparisons the gate reads: in its scope, in its field, each (system, data
        set) against the baseline on its own; a scope or field naming nothing is a UsageError."""
        keys = _groups(gate.scope, list(groups))
        if not keys:
            raise UsageError(
                f"--fail-if-worse {gate.given}: no data set or SYSTEM/DATASET {gate.scope!r} in this run"
            )
        if not any(gate.field in groups[key].scores for key in keys):
            raise UsageError(f"--fail-if-worse {gate.given}: no group of this run has a score {gate.field!r}")
        compared = [c for c in summary.comparisons if c.field == gate.field and (c.system, c.dataset) in keys]
        for c in compared:
            if not c.n:
                raise UsageError(
                    f"--fail-if-worse {gate.given}: {c.system} and the baseline {self.baseline} share no "
                    f"scored row of {c.dataset} with a score {gate.field!r}"
                )
        return compared


def _worse(gate: WorseGate, compared: list[Comparison], alpha: float) -> list[str]:
    """One line per comparison the gate fails: the difference, its interval, the test and its
    p-value (printed below alpha: a failure never shows a p it would pass on) and the coverage."""
    from .metrics.interval import Interval
    from .metrics.paired import TEST_NAMES, p_text

    failed = []
    for c in compared:
        if not gate.fails(c):  # so it has a difference, an interval, a test and its p-value
            continue
        interval = Interval(c.delta, *c.ci, c.n, 1 - alpha)  # type: ignore[arg-type, misc]
        shared = f"; {c.shared()}" if c.shared() else ""
        beyond = (
            f"significantly above {gate.margin:g}: worse by {c.delta:.3f}, lower {c.field} being better"
            if named(c.direction).lower
            else f"significantly below {-gate.margin or 0.0:g}"
        )
        failed.append(
            f"gate failed: --fail-if-worse {gate.given}: {c.field} of {c.system} minus the baseline "
            f"{c.baseline} on {c.dataset} is {interval.describe()} ({TEST_NAMES[str(c.test)]}, "
            f"p={p_text(c.p_value, alpha)} < alpha {alpha:g}{shared}), {beyond}"
        )
    return failed


def _section_failures(summary: Summary, limit: float) -> list[str]:
    """One line per summary section whose share of failed work (judge calls) is above ``limit``."""
    return [
        f"too many failures: {name}: {s.failed} of {s.total} {s.unit} got no result "
        f"({s.failed / s.total:.1%}, more than --max-failure-rate {limit:g}); the first: {s.failure}"
        for name, s in summary.sections.items()
        if s.total and s.failed / s.total > limit
    ]


def _section_gate(gate: BoundGate | WorseGate, summary: Summary) -> list[str]:
    """One line per record of a summary section that fails ``gate``: a bound on the figure
    itself, or (``--fail-if-worse FIELD=VALUE``) its interval wholly on the worse side of VALUE.
    A record without the figure (nothing was judged) fails: no figure is no evidence."""
    flag = gate.flag if isinstance(gate, BoundGate) else "--fail-if-worse"
    having = [
        (record, figure)
        for section in summary.sections.values()
        if (figure := section.figure(gate.field)) is not None
        for record in section.records
    ]
    keys = _groups(gate.scope, [(str(r["system"]), str(r["dataset"])) for r, _ in having])
    if not keys:
        raise UsageError(f"{flag} {gate.given}: no data set or SYSTEM/DATASET {gate.scope!r} in this run")
    direction = summary.direction(gate.field)
    failed = []
    for record, figure in having:
        if (str(record["system"]), str(record["dataset"])) not in keys:
            continue
        value = record.get(gate.field)
        said = (
            f"gate failed: {flag} {gate.given}: {gate.field} of {record['system']} on {record['dataset']} is "
        )
        said += "none" if value is None else f"{value:.3f}"
        if isinstance(gate, WorseGate):
            low, high = (record.get(figure.interval) if figure.interval else None) or (None, None)
            best = low if direction.lower else high
            if best is None or not direction.passes(best, gate.margin):
                side = "above" if direction.lower else "below"
                failed.append(
                    f"{said} (95% CI {_bound(low)} to {_bound(high)}), wholly {side} {gate.margin:g}"
                )
        elif value is None or not gate.direction.passes(value, gate.bound):
            failed.append(f"{said}, {'above' if gate.ceiling else 'below'} {gate.bound:g}")
    return failed


def _bound(value: float | None) -> str:
    return "none" if value is None else f"{value:.3f}"


def failure_rates(rows: Sequence[EvalRow], limit: float) -> list[str]:
    """One line per system whose rows it could not answer (a system or an input error), and per
    evaluator that failed (a soft failure or an error) on the rows it was given, above ``limit``."""
    from ._summary import FailureCounts

    counts = FailureCounts()
    for row in rows:
        counts.add(row)
    return counts.lines(limit)
