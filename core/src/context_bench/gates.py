"""Quality gates: what makes a finished run fail in CI, and the exit status that says so.

Three checks read a run's rows after its report is written: the share of rows the systems could
not answer and of rows each evaluator failed on (``--max-failure-rate``), the floors on headline
means (``--fail-under``), and the paired comparison with a baseline system (``--fail-if-worse``).
Their syntax is checked when the flags are read, before any row runs; the names they give
(systems, data sets, score fields) are checked against the run's rows, since an evaluator wired
per row only shows its fields once it scored.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from .errors import UsageError

if TYPE_CHECKING:  # the run's records load with the run, not with the command line's parser
    from .metrics.interval import Interval
    from .records import EvalResult, EvalRow

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


@attrs.frozen
class FloorGate:
    """``--fail-under [[SYSTEM/]DATASET:]FIELD=VALUE``: the headline mean of ``field`` must reach
    ``bound`` in every (system, data set) group ``scope`` names (all of them when None)."""

    field: str
    bound: float
    #: ``DATASET`` or ``SYSTEM/DATASET`` as given; resolved against the run's names (either may hold
    #: a ``/``).
    scope: str | None = None
    given: str = ""

    @classmethod
    def parse(cls, given: str) -> FloorGate:
        left, equals, value = given.rpartition("=")
        if not equals or not left:
            raise UsageError(f"--fail-under {given}: expected [[SYSTEM/]DATASET:]FIELD=VALUE")
        scope, _, field = left.rpartition(":")
        if not field or (_ and not scope):
            raise UsageError(f"--fail-under {given}: expected [[SYSTEM/]DATASET:]FIELD=VALUE")
        return cls(field, _number(value, "--fail-under", given), scope or None, given)

    def groups(self, names: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        """The (system, data set) groups of ``names`` this gate's scope covers."""
        if self.scope is None:
            return list(names)
        by_dataset = [key for key in names if key[1] == self.scope]
        return by_dataset or [key for key in names if f"{key[0]}/{key[1]}" == self.scope]


@attrs.frozen
class WorseGate:
    """``--fail-if-worse FIELD[=MARGIN]``: no system's paired difference to the baseline in
    ``field`` may be significantly below ``-margin``."""

    field: str
    margin: float = 0.0
    given: str = ""

    @classmethod
    def parse(cls, given: str) -> WorseGate:
        field, equals, margin = given.partition("=")
        if not field:
            raise UsageError(f"--fail-if-worse {given}: expected FIELD[=MARGIN]")
        return cls(field, _number(margin, "--fail-if-worse", given) if equals else 0.0, given)


@attrs.frozen
class Verdict:
    """What the gates found: the exit status and one line per finding (empty when all passed)."""

    status: int = OK
    lines: list[str] = attrs.Factory(list)


@attrs.frozen
class Gates:
    """The gates of one command line; :meth:`judge` applies them to a finished run."""

    fail_under: tuple[FloorGate, ...] = ()
    fail_if_worse: tuple[WorseGate, ...] = ()
    baseline: str | None = None
    max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE

    @classmethod
    def parse(
        cls,
        fail_under: Sequence[str] = (),
        fail_if_worse: Sequence[str] = (),
        baseline: str | None = None,
        max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE,
    ) -> Gates:
        """The flags' values, checked (a UsageError names the first bad one)."""
        if not 0 <= max_failure_rate <= 1:  # NaN too
            raise UsageError("--max-failure-rate must be between 0 and 1")
        if fail_if_worse and not baseline:
            raise UsageError(
                "--fail-if-worse needs --baseline NAME (the system the others are compared with)"
            )
        return cls(
            tuple(FloorGate.parse(text) for text in fail_under),
            tuple(WorseGate.parse(text) for text in fail_if_worse),
            baseline,
            max_failure_rate,
        )

    def judge(self, result: EvalResult) -> Verdict:
        """The run's exit status and its reasons.  Every row errored: 1, alone (no gate can read
        a run without scores).  Otherwise a gate naming nothing in the run is a UsageError (2);
        then too many failures (4) and failed gates (3) are all said, and the status is 4 if any
        failure rate is over the limit, else 3 if any gate failed, else 0."""
        from .summary import FailureCounts, Summarizer, headline_values

        rows = result.rows
        summarize = result.summarize
        wanted = bool(self.fail_under or self.fail_if_worse)  # the values are a run's size: only if read
        if not rows and isinstance(summarize, Summarizer) and summarize.rows:
            # a streamed run keeps no rows: its summarizer counted what the gates read
            total, errored = summarize.rows, result.summary.errors.rows if result.summary else 0
            values = summarize.headline_values() if wanted else {}
            systems = list(dict.fromkeys(system for system, _ in summarize.groups))
            counts = summarize.failure_counts
        else:
            total, errored = len(rows), sum(1 for row in rows if row.errors)
            exclude = bool(result.summary and result.summary.exclude_errors)
            failed = getattr(summarize, "failure_values", None)
            values = headline_values(rows, exclude_errors=exclude, failure_values=failed) if wanted else {}
            systems = list(dict.fromkeys(row.system for row in rows))
            counts = FailureCounts()
            for row in rows:
                counts.add(row)
        if total and errored == total:
            return Verdict(ALL_ERRORED, [f"none of the {total} rows could be scored"])
        floors = [(gate, self._resolve(gate, values)) for gate in self.fail_under]
        if self.baseline is not None and self.baseline not in systems:
            known = ", ".join(systems) or "none"
            raise UsageError(f"--baseline {self.baseline}: no such system in this run (it has {known})")
        for gate in self.fail_if_worse:
            if not any(gate.field in fields for fields in values.values()):
                raise UsageError(
                    f"--fail-if-worse {gate.given}: no group of this run has a score {gate.field!r}"
                )
        rates = counts.lines(self.max_failure_rate)
        lines = list(rates)
        for gate, groups in floors:
            lines.extend(self._floor(gate, groups, values))
        for gate in self.fail_if_worse:
            lines.extend(self._worse(gate, systems, values))
        status = TOO_MANY_FAILURES if rates else GATE_FAILED if lines else OK
        return Verdict(status, lines)

    @staticmethod
    def _resolve(gate: FloorGate, values: dict[tuple[str, str], dict[str, list]]) -> list[tuple[str, str]]:
        groups = gate.groups(list(values))
        if not groups:
            raise UsageError(
                f"--fail-under {gate.given}: no data set or SYSTEM/DATASET {gate.scope!r} in this run"
            )
        having = [key for key in groups if gate.field in values[key]]
        if not having:
            where = f" of {gate.scope}" if gate.scope else ""
            raise UsageError(
                f"--fail-under {gate.given}: no group{where} in this run has a score {gate.field!r}"
            )
        return having

    @staticmethod
    def _floor(gate: FloorGate, groups: list[tuple[str, str]], values: dict) -> list[str]:
        failed = []
        for system, dataset in groups:
            interval = _interval(values[(system, dataset)][gate.field])
            if interval is not None and interval.mean < gate.bound:
                failed.append(
                    f"gate failed: --fail-under {gate.given}: {gate.field} of {system} on {dataset} is "
                    f"{interval.describe()}, below {gate.bound:g}"
                )
        return failed

    def _worse(self, gate: WorseGate, systems: list[str], values: dict) -> list[str]:
        """Each system's paired comparison with the baseline (:func:`~context_bench.metrics.paired.paired`,
        the report's test): its interval's upper bound below ``-margin`` fails."""
        from .analysis import Analysis
        from .metrics.paired import paired

        failed = []
        baseline = _by_example(self.baseline, gate.field, values)
        for system in systems:
            if system == self.baseline:
                continue
            own = _by_example(system, gate.field, values)
            keys = [key for key in own if key in baseline]
            if not keys:
                raise UsageError(
                    f"--fail-if-worse {gate.given}: {system} and the baseline {self.baseline} share no "
                    f"scored example (by data set and id) with a score {gate.field!r}"
                )
            weights = [(own[key][1] + baseline[key][1]) / 2 for key in keys]
            test = paired(
                [baseline[key][0] for key in keys],
                [own[key][0] for key in keys],
                weights if any(w != 1 for w in weights) else None,
                seed=Analysis().seed_for(system, str(self.baseline), gate.field),
            )
            if test is not None and test.high < -gate.margin:
                failed.append(
                    f"gate failed: --fail-if-worse {gate.given}: {gate.field} of {system} minus the baseline "
                    f"{self.baseline} is {test.interval().describe()} ({_test_name(test.test)}, "
                    f"p={test.p_value:.3g}), significantly below {-gate.margin or 0.0:g}"
                )
        return failed


def _test_name(test: str) -> str:
    return {"mcnemar": "McNemar's exact test", "bootstrap": "paired bootstrap", "t": "paired t-test"}[test]


def _by_example(system: str | None, field: str, values: dict) -> dict[tuple[str, str], tuple[float, float]]:
    """A system's headline values of ``field`` by (data set, example id), with their weights."""
    found = {}
    for (name, dataset), fields in values.items():
        if name == system:
            for example, value, weight in fields.get(field, ()):
                found[(dataset, example)] = (value, weight)
    return found


def _interval(entries: Sequence[tuple]) -> Interval | None:
    """The interval of (…, value, weight) entries; None when their weights add up to 0 (no mean)."""
    from .metrics.interval import mean_interval

    values = [entry[-2] for entry in entries]
    weights = [entry[-1] for entry in entries]
    return mean_interval(values, weights) if sum(weights) > 0 else None


def failure_rates(rows: Sequence[EvalRow], limit: float) -> list[str]:
    """One line per system whose rows it could not answer (a system or an input error), and per
    evaluator that failed (a soft failure or an error) on the rows it was given, above ``limit``."""
    from .summary import FailureCounts

    counts = FailureCounts()
    for row in rows:
        counts.add(row)
    return counts.lines(limit)
