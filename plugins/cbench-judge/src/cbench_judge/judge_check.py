"""``context-bench judge-check``: how far a judge agrees with people on rows they labelled.

The labels are rows with an ``id`` (and, where ids repeat, a ``system`` and a ``dataset``) and a
``label``: pass/fail (true/false, pass/fail, correct/incorrect: what the HTML report's "export
labels" writes), a score on the judge's scale, or A/B/tie, a person's pairwise verdict of the row's
``system`` (A) against ``--baseline`` (B).  The judge's verdicts come from a saved report
(``--report``: its rows' ``--field``), from running the judge on rows (``--judge-url`` and the files
of rows, as ``score`` reads them), or, for A/B/tie, from the pairwise judge asked in both orders on
the files' rows (:mod:`cbench_judge.pairwise`).  It reports Cohen's kappa (quadratic-weighted for
scores, unweighted for the nominal pass/fail and A/B/tie), accuracy and, for pass/fail, the
true-positive and true-negative rates, for A/B/tie the rate the judge agreed on each label, each
with its interval; ``--min-agreement K`` exits 3 below K; ``--out FILE`` writes the agreement for
``--judge-agreement`` (:mod:`cbench_judge.agreement_section`).  With ``--probes`` it runs the bias probes
(:mod:`cbench_judge.probes`) instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import attrs

from context_bench.bounds import flag_type
from context_bench.errors import UsageError
from context_bench.metrics.intervals import wilson
from context_bench.plugins import PluginHost

from .kappa import cohen_kappa
from .options import add_endpoint_options, add_failure_rate_option
from .pairwise import LOSS, TIE, WIN
from .pairwise_command import add_template_option
from .templates import BUILTIN

_PASS = {"true": True, "pass": True, "correct": True, "yes": True}
_FAIL = {"false": False, "fail": False, "incorrect": False, "no": False}
#: A person's pairwise verdict as written (any case) and as compared: the row's system (A), the
#: baseline (B), or neither.
_PREFERENCE = {"a": "A", "b": "B", "tie": "tie"}
#: The pairwise judge's outcome for the system, as a person's verdict reads it.
_AS_LABEL = {WIN: "A", LOSS: "B", TIE: "tie"}


def configure(parser: argparse.ArgumentParser, host: PluginHost) -> None:
    parser.add_argument(
        "files", nargs="*", metavar="FILE", help="rows to run the judge on (with --judge-url)"
    )
    parser.add_argument("--labels", metavar="FILE", help="people's verdicts: id and label per row")
    parser.add_argument(
        "--probes",
        action="store_true",
        help="run the built-in bias probes (position, length, verbosity) against the --judge-url judge",
    )
    parser.add_argument("--report", metavar="FILE", help="read the judge's scores from this saved report")
    parser.add_argument(
        "--field", default="judge_score", help="the judge's score field (default judge_score)"
    )
    add_endpoint_options(parser)
    parser.add_argument(
        "--judge-template", choices=sorted(BUILTIN), default="binary_qa", help="the template judge to run"
    )
    parser.add_argument(
        "--baseline", metavar="SYSTEM", help="A/B/tie labels: the system B is (A is each label's system)"
    )
    add_template_option(parser)  # A/B/tie labels
    parser.add_argument(
        "--min-agreement", type=flag_type("--min-agreement"), metavar="K", help="exit 3 when kappa is below K"
    )
    parser.add_argument("--output", choices=("table", "json"), default="table")
    parser.add_argument(
        "--out",
        metavar="FILE",
        help="also write the agreement as JSON (what --output json prints) to FILE, for run and score's "
        "--judge-agreement",
    )
    add_failure_rate_option(parser, "the labelled rows (or probe verdicts) got no judge answer")


@attrs.frozen
class ClassRate:
    """Of the ``n`` rows people gave ``label``, the ``agreed`` the judge gave it too (Wilson's interval)."""

    label: str
    n: int
    agreed: int
    rate: float | None
    ci: tuple[float, float] | None


@attrs.frozen
class Agreement:
    """The judge against the labels: ``kind`` is ``pass/fail``, ``score`` or ``A/B/tie``."""

    kind: str
    field: str
    template: str
    judge_model: str | None
    n: int
    kappa: float | None
    kappa_ci: tuple[float, float] | None
    accuracy: float | None
    accuracy_ci: tuple[float, float] | None
    tpr: float | None = None
    tpr_ci: tuple[float, float] | None = None
    tnr: float | None = None
    tnr_ci: tuple[float, float] | None = None
    #: A/B/tie: the judge's agreement on each label people gave, in the order A, B, tie.
    per_class: tuple[ClassRate, ...] = ()
    #: A/B/tie: the system each label's B is (A is the label's own system).
    baseline: str | None = None
    failed: int = 0


def label_kind(value: Any) -> str:
    if isinstance(value, bool) or str(value).strip().lower() in {*_PASS, *_FAIL}:
        return "pass/fail"
    if isinstance(value, (int, float)):
        return "score"
    if str(value).strip().lower() in _PREFERENCE:
        return "A/B/tie"
    return "unknown"


def read_labels(path: str) -> tuple[str, list[dict[str, Any]]]:
    """The labels and their one kind; a mixed or unreadable file is one line, exit 2."""
    from context_bench.datasets import MalformedRow, read_file

    labels = []
    for number, row in enumerate(read_file(path), 1):
        if isinstance(row, MalformedRow):
            raise UsageError(f"{row.location}: {row.message}")
        if row.get("id") is None or "label" not in row:
            raise UsageError(f"{path}:{number}: a label row needs 'id' and 'label'")
        labels.append(row)
    if not labels:
        raise UsageError(f"{path}: no labels")
    kinds = {label_kind(row["label"]) for row in labels}
    if len(kinds) > 1:
        raise UsageError(
            f"{path}: labels of mixed kinds ({', '.join(sorted(kinds))}); give one kind per file"
        )
    (kind,) = kinds
    if kind == "unknown":
        raise UsageError(f"{path}: a label is pass/fail, a score, or A/B/tie, not {labels[0]['label']!r}")
    return kind, labels


def _matched(
    labels: list[dict[str, Any]], rows: Sequence[dict[str, Any]], where: str
) -> list[dict[str, Any]]:
    """The judged row of each label, by id (and system and data set where the label names them)."""
    by_id: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_id[str(row.get("id", row.get("example_id")))].append(row)
    found, unknown = [], []
    for label in labels:
        candidates = [
            row
            for row in by_id.get(str(label["id"]), [])
            if all(label.get(k) in (None, row.get(k)) for k in ("system", "dataset"))
        ]
        if not candidates:
            unknown.append(str(label["id"]))
        elif len(candidates) > 1:
            raise UsageError(
                f"label {label['id']}: {len(candidates)} rows of {where} have that id; name its system"
            )
        else:
            found.append(candidates[0])
    if unknown:
        shown = ", ".join(unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        raise UsageError(f"{len(unknown)} labelled ids are not in {where}: {shown}")
    return found


def _report_rows(path: str) -> list[dict[str, Any]]:
    from context_bench.datasets import read_file

    if path.endswith(".json"):
        with open(path, encoding="utf-8") as handle:
            return list(json.load(handle).get("rows") or [])
    return [row for row in read_file(path) if isinstance(row, dict)]


def _judged(
    args: argparse.Namespace, labels: list[dict[str, Any]]
) -> tuple[list[float | None], str, str | None]:
    """The judge's score of each labelled row (None: the call failed), its template and model."""
    if args.report is not None:
        rows = _matched(labels, _report_rows(args.report), args.report)
        # a row that carries any failure is a failed call, never a score that may look good
        scores = [None if row.get("failures") else (row.get("scores") or {}).get(args.field) for row in rows]
        if all(score is None for score in scores):
            raise UsageError(f"no labelled row of {args.report} has a {args.field} score")
        return scores, "report", None
    if args.judge_url is None or not args.files:
        raise UsageError("judge-check needs --report REPORT, or --judge-url URL and the files of rows")
    from context_bench.datasets import read_file

    from . import loop
    from .defaults import DEFAULT_MODEL
    from .template_judge import JudgeEvaluator

    rows = _matched(labels, [r for f in args.files for r in read_file(f) if isinstance(r, dict)], "the rows")
    model = args.judge_model or DEFAULT_MODEL
    judge = JudgeEvaluator(
        url=args.judge_url,
        model=model,
        api_key_env=args.judge_api_key_env,
        concurrency=args.judge_concurrency,
        template=args.judge_template,
    )

    async def every() -> list[Any]:
        import asyncio

        return await asyncio.gather(*(judge.ascore(row, {"response": row.get("response")}) for row in rows))

    results = loop.run_sync(every())
    return [None if r.failure else r[judge.name] for r in results], args.judge_template, model


def _preferred(args: argparse.Namespace, labels: list[dict[str, Any]]) -> tuple[list[str | None], str, str]:
    """The pairwise judge's verdict on each labelled pair, as a label (None: a call failed), asked
    in both orders as ``pairwise`` asks; its template and model."""
    if args.report is not None or args.judge_url is None or args.baseline is None or not args.files:
        raise UsageError(
            "A/B/tie labels are checked against the pairwise judge: give --judge-url, --baseline and the "
            "files of rows (a report holds no pairwise verdict per row)"
        )
    from .pairwise_command import pairs_of, pairwise_judge, read_template

    template = read_template(args.pairwise_template)
    pairs = [
        {"id": pair["id"], "system": system, "dataset": dataset, "pair": pair}
        for (system, dataset), found in pairs_of(args.files, args.baseline).items()
        for pair in found.pairs
    ]
    where = f"the rows both {args.baseline} and another system answered"
    matched = [found["pair"] for found in _matched(labels, pairs, where)]
    judge, model = pairwise_judge(args, template, "judge-check")
    if judge.needs_reference() and any(pair["reference"] is None for pair in matched):
        raise UsageError(
            f"--pairwise-template {args.pairwise_template} needs a reference answer in every row"
        )
    verdicts = judge.judge_all(matched)
    return [None if v.outcome is None else _AS_LABEL[v.outcome] for v in verdicts], judge.template, model


def _rate(hits: int, n: int) -> tuple[float | None, tuple[float, float] | None]:
    return (hits / n, wilson(hits, n)) if n else (None, None)


def agreement(
    kind: str,
    people: Sequence[Any],
    judge: Sequence[Any],
    field: str,
    template: str,
    model: str | None,
    baseline: str | None = None,
) -> Agreement:
    """The figures over the rows the judge scored (a score, or for A/B/tie a label); its failures
    (None) are counted apart."""
    pairs = [(p, j) for p, j in zip(people, judge, strict=True) if j is not None]
    if kind == "pass/fail":
        pairs = [
            ((_PASS | _FAIL)[str(p).lower()] if not isinstance(p, bool) else p, j >= 0.5) for p, j in pairs
        ]
    elif kind == "A/B/tie":
        pairs = [(_PREFERENCE[str(p).strip().lower()], j) for p, j in pairs]
    else:
        pairs = [(float(p), float(j)) for p, j in pairs]
    ours, theirs = [p for p, _ in pairs], [j for _, j in pairs]
    kappa = cohen_kappa(ours, theirs, ordinal=kind == "score")
    accuracy, accuracy_ci = _rate(sum(p == j for p, j in pairs), len(pairs))
    extra: dict[str, Any] = {}
    if kind == "pass/fail":
        positives = [j for p, j in pairs if p]
        negatives = [j for p, j in pairs if not p]
        extra["tpr"], extra["tpr_ci"] = _rate(sum(positives), len(positives))
        extra["tnr"], extra["tnr_ci"] = _rate(len(negatives) - sum(negatives), len(negatives))
    if kind == "A/B/tie":
        extra["per_class"] = tuple(_class_rate(label, pairs) for label in ("A", "B", "tie"))
    return Agreement(
        kind=kind,
        field=field,
        template=template,
        judge_model=model,
        n=len(pairs),
        kappa=kappa.kappa,
        kappa_ci=kappa.ci,
        accuracy=accuracy,
        accuracy_ci=accuracy_ci,
        failed=len(judge) - len(pairs),
        baseline=baseline,
        **extra,
    )


def _class_rate(label: str, pairs: Sequence[tuple[Any, Any]]) -> ClassRate:
    given = [j for p, j in pairs if p == label]
    agreed = given.count(label)
    rate, ci = _rate(agreed, len(given))
    return ClassRate(label, len(given), agreed, rate, ci)


def line(found: Agreement) -> str:
    from .pairwise_command import rate_text as shown

    rates = ""
    if found.kind == "pass/fail":
        rates = f"; true-positive rate {shown(found.tpr, found.tpr_ci)}, "
        rates += f"true-negative rate {shown(found.tnr, found.tnr_ci)}"
    if found.per_class:
        rates = "; agreed on " + ", ".join(
            f"{c.label} {c.agreed} of {c.n} ({shown(c.rate, c.ci)})" for c in found.per_class
        )
    weighted = "quadratic-weighted " if found.kind == "score" else ""
    sides = f" (A: the labelled system, B: {found.baseline})" if found.baseline is not None else ""
    return (
        f"judge-check: {found.field} ({found.template}, judge {found.judge_model or '-'}) against {found.n} "
        f"{found.kind} labels{sides}: {weighted}kappa {shown(found.kappa, found.kappa_ci)}, accuracy "
        f"{shown(found.accuracy, found.accuracy_ci)}{rates}; {found.failed} failed judge calls"
    )


def _failed_too_often(failed: int, total: int, limit: float, what: str) -> bool:
    if total and failed / total > limit:
        print(f"context-bench: error: {failed} of {total} {what}", file=sys.stderr)
        return True
    return False


def _probe(args: argparse.Namespace) -> int:
    """The bias probes, each a rate with its interval; exit 4 when too many calls failed."""
    from .pairwise_command import pairwise_judge, rate_text
    from .probes import run_probes

    judge, model = pairwise_judge(args, "mt_bench", "judge-check --probes")
    results = run_probes(judge)
    if args.output == "json":
        data = [attrs.asdict(r, value_serializer=_listed) for r in results]
        sys.stdout.write(json.dumps({"summary": {"probes": data}}, indent=2) + "\n")
    else:
        for r in results:
            sys.stdout.write(
                f"probe {r.probe} (judge {model}, mt_bench): {r.biased} of {r.n} verdicts show the bias, "
                f"rate {rate_text(r.rate, r.ci)}; {r.failed} verdicts lost to failed judge calls\n"
            )
    failed = sum(r.failed for r in results)
    total = failed + sum(r.n for r in results)
    return 4 if _failed_too_often(failed, total, args.max_failure_rate, "probe verdicts got no answer") else 0


def _listed(_: Any, __: Any, value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def run(args: argparse.Namespace, host: PluginHost) -> int:
    if args.probes:
        return _probe(args)
    if args.labels is None:
        raise UsageError("judge-check needs --labels FILE, or --probes")
    kind, labels = read_labels(args.labels)
    judged: Sequence[Any]
    if kind == "A/B/tie":
        judged, template, model = _preferred(args, labels)
        field, baseline = "pairwise", args.baseline
    else:
        judged, template, model = _judged(args, labels)
        field, baseline = args.field, None
    people = [label["label"] for label in labels]
    found = agreement(kind, people, judged, field, template, model, baseline=baseline)
    data = attrs.asdict(found, value_serializer=_listed)
    written = json.dumps({"summary": {"judge_check": data}}, indent=2) + "\n"
    if args.out is not None:
        with open(args.out, "w", encoding="utf-8") as handle:
            handle.write(written)
    sys.stdout.write(written if args.output == "json" else line(found) + "\n")
    total = found.n + found.failed
    lost = "labelled pairs got no judge verdict" if kind == "A/B/tie" else "labelled rows got no judge score"
    if _failed_too_often(found.failed, total, args.max_failure_rate, lost):
        return 4
    if args.min_agreement is not None and (found.kappa is None or found.kappa < args.min_agreement):
        kappa = "none" if found.kappa is None else f"{found.kappa:.3f}"
        print(
            f"context-bench: error: kappa {kappa} is under --min-agreement {args.min_agreement:g}",
            file=sys.stderr,
        )
        return 3
    return 0
