"""``context-bench pairwise``: every system of a file of several systems against a baseline, by a judge
that is asked which answer is better in both orders.

The rows are what ``score`` reads (a ``system``, a data set and an ``id`` per row, the system's
``response``) or a run's ``--output jsonl`` report; a row a system did not answer (an error, no
response) is counted as unanswered, never judged.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from context_bench.errors import UsageError
from context_bench.gates import BoundGate
from context_bench.plugins import PluginHost
from context_bench.reports.numbers import interval, p_value

from .options import add_endpoint_options, add_failure_rate_option
from .pairwise import TEMPLATES, PairwiseJudge
from .pairwise_figures import PairwiseFigures, no_verdict

if TYPE_CHECKING:
    from .pairs import Pairs

#: The figures a ``--fail-under`` may bound.
GATED = ("win_rate", "lc_win_rate")


def configure(parser: argparse.ArgumentParser, host: PluginHost) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="rows of several systems (JSONL, JSON, CSV)")
    parser.add_argument("--baseline", required=True, metavar="SYSTEM", help="the system the others face")
    add_endpoint_options(parser)
    add_template_option(parser)
    parser.add_argument("--cache-dir", metavar="DIR", help="cache the judge's answers here (a rerun resumes)")
    parser.add_argument("--output", choices=("table", "markdown", "json"), default="table")
    parser.add_argument("--out", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument(
        "--fail-under",
        action="append",
        default=[],
        metavar="[[SYSTEM/]DATASET:]FIELD=VALUE",
        help=f"exit 3 when a figure ({', '.join(GATED)}) is below VALUE (repeatable)",
    )
    add_failure_rate_option(parser, "the pairs got no verdict")


def add_template_option(parser: argparse.ArgumentParser) -> None:
    """``--pairwise-template``: the pairwise judge's prompt, read by :func:`read_template`."""
    parser.add_argument(
        "--pairwise-template",
        default="mt_bench",
        metavar="NAME|FILE",
        help=f"the pairwise judge's prompt: {', '.join(TEMPLATES)} (default mt_bench), or a file holding "
        "one with {question}, {answer_a}, {answer_b} (and {reference})",
    )


def read_template(given: str) -> str:
    """``--pairwise-template``'s value: a built-in template's name, or the text of the file it names."""
    if given in TEMPLATES:
        return given
    path = Path(given)
    if not path.is_file():
        raise UsageError(f"--pairwise-template {given}: neither {', '.join(TEMPLATES)} nor a file")
    return path.read_text(encoding="utf-8")


def pairs_of(files: list[str], baseline: str) -> dict[tuple[str, str], Pairs]:
    """Per (system, data set): the pairs both answered, with the rows either left unanswered."""
    from context_bench.datasets import MalformedRow, read_file

    from .pairs import Answers

    answers = Answers()
    for file in files:
        for number, row in enumerate(read_file(file), 1):
            if isinstance(row, MalformedRow):
                raise UsageError(f"{row.location}: {row.message}")
            key = row.get("id", row.get("example_id"))
            if key is None or "system" not in row:
                raise UsageError(f"{file}:{number}: a pairwise row needs 'system' and 'id'")
            dataset = str(row.get("dataset") or Path(file).stem)
            if not answers.add(row, dataset, str(key)):
                raise UsageError(f"{file}:{number}: {row['system']} answers {dataset} id {key} twice")
    if baseline not in answers.systems:
        raise UsageError(f"--baseline {baseline}: no row of {', '.join(files)} names that system")
    if len(answers.systems) < 2:
        raise UsageError(f"only {baseline} answered in {', '.join(files)}: nothing to compare")
    return answers.paired(baseline)


def pairwise_judge(args: argparse.Namespace, template: str, command: str) -> tuple[PairwiseJudge, str]:
    """The judge the ``--judge-*`` flags name, asking with ``template``, and its model."""
    endpoint = {key: getattr(args, f"judge_{key}") for key in ("url", "model", "api_key_env", "concurrency")}
    return endpoint_judge({**endpoint, "cache_dir": getattr(args, "cache_dir", None)}, template, command)


def endpoint_judge(given: Mapping[str, Any], template: str, command: str) -> tuple[PairwiseJudge, str]:
    """The judge at ``given`` (``url``, ``model``, ``api_key_env``, ``concurrency``, ``cache_dir``),
    asking with ``template``, and its model."""
    from .config import JudgeConfig, client_for
    from .defaults import DEFAULT_MODEL

    if given.get("url") is None:
        raise UsageError(f"{command} needs a judge: --judge-url URL")
    config = JudgeConfig.from_mapping({**given, "model": given.get("model") or DEFAULT_MODEL}, "--judge-url")
    return PairwiseJudge(client_for(config, "--judge-url"), template), config.model


def run(args: argparse.Namespace, host: PluginHost) -> int:
    from .pairwise_figures import judged

    gates = [BoundGate.parse(given) for given in args.fail_under]
    for gate in gates:
        if gate.field not in GATED:
            raise UsageError(f"--fail-under {gate.given}: a pairwise gate bounds {' or '.join(GATED)}")
    template = read_template(args.pairwise_template)
    found = pairs_of(args.files, args.baseline)
    judge, model = pairwise_judge(args, template, "pairwise")
    if judge.needs_reference() and any(p["reference"] is None for f in found.values() for p in f.pairs):
        raise UsageError(
            f"--pairwise-template {args.pairwise_template} needs a reference answer in every row"
        )
    figures, used = judged(judge, found, args.baseline, model)
    _write(render(figures, args.output, {k: sum(u[k] for u in used) for k in used[0]}), args.out)
    return _status(figures, gates, args.max_failure_rate)


def render(figures: list[PairwiseFigures], output: str, used: dict[str, float]) -> str:
    """The figures, and what the judge's calls did and cost in tokens (:class:`JudgeStats`' fields)."""
    if output == "json":
        summary = {"pairwise": [f.to_dict() for f in figures], "judge": used}
        return json.dumps({"summary": summary}, indent=2) + "\n"
    lines = [line(f) for f in figures]
    lines.append(
        f"judge calls: {used['calls']} asked ({used['attempts']} HTTP attempts), {used['cached']} cached, "
        f"{used['call_errors']} failed, {used['parse_errors']} without a verdict; "
        f"{used['input_tokens']:.0f} input and {used['output_tokens']:.0f} output tokens"
    )
    if output == "markdown":
        return "## Pairwise\n\n" + "".join(f"- {text}\n" for text in lines)
    return "".join(f"{text}\n" for text in lines)


def rate_text(value: float | None, ci: Any) -> str:
    """A rate and its interval, "0.62 [0.48, 0.75]"; "-" when there is none."""
    return "-" if value is None else f"{value:.2f} {interval(ci)}"


def line(f: PairwiseFigures) -> str:
    """One (system, data set)'s figures as every text report says them."""
    return (
        f"pairwise: {f.system} vs {f.baseline} on {f.dataset}: {f.wins} wins, {f.ties} ties, "
        f"{f.losses} losses of {f.n} judged; win rate {rate_text(f.win_rate, f.ci)} "
        f"(sign test p {p_value(f.p_value, 0.05)}); length-controlled {rate_text(f.lc_win_rate, f.lc_ci)}; "
        f"position consistency {'-' if f.position_consistency is None else f'{f.position_consistency:.2f}'}; "
        f"{f.failed} failed judge calls, {f.unanswered} unanswered (judge {f.judge_model}, {f.template})"
    )


def _write(report: str, out: str | None) -> None:
    if out is None:
        sys.stdout.write(report)
        return
    from context_bench.files import atomic_write_text

    atomic_write_text(out, report)
    print(f"context-bench: wrote the pairwise report to {out}", file=sys.stderr)


def _status(figures: list[PairwiseFigures], gates: list[BoundGate], max_failure_rate: float) -> int:
    """4 when too many pairs got no verdict, 3 when a gate fails, else 0; each said in one line."""
    failed, total, why = no_verdict(figures)
    if total and failed / total > max_failure_rate:
        print(
            f"context-bench: error: {failed} of {total} pairs got no verdict (a failed judge call or an "
            f"unanswered row; over --max-failure-rate {max_failure_rate:g}); the first: {why}",
            file=sys.stderr,
        )
        return 4
    status = 0
    for gate in gates:
        for f in figures:
            if gate.scope not in (None, f.dataset, f"{f.system}/{f.dataset}"):
                continue
            value = getattr(f, gate.field)
            if value is None or value < gate.bound:
                shown = "none" if value is None else f"{value:.3f}"
                print(
                    f"context-bench: error: {f.system} on {f.dataset}: {gate.field} {shown} "
                    f"is under {gate.bound:g} (--fail-under {gate.given})",
                    file=sys.stderr,
                )
                status = 3
    return status
