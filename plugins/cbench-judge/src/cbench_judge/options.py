"""The plugin's command-line options, one per field of :class:`~cbench_judge.settings.JudgeSettings`
(``--judge-url`` is ``url``).  Building the CLI imports this, so it imports nothing heavy."""

from __future__ import annotations

import argparse
from typing import Any

from context_bench.bounds import flag_type

from .defaults import DEFAULT_CONCURRENCY, DEFAULT_MODEL
from .pairwise import TEMPLATES
from .templates import BUILTIN


class _ReachableURL(argparse.Action):
    """Stores the judge URL once something listens there: a dead judge is refused before any row runs
    (one line, exit 2), like ``--proxy``, rather than failing every row."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        from context_bench.cli import check_reachable

        check_reachable(values, option_string or "--judge-url")  # one line, without the URL's password
        setattr(namespace, self.dest, values)


def add_options(group: Any) -> None:
    add_endpoint_options(group)
    group.add_argument(
        "--judge-dataset",
        action="append",
        metavar="NAME",
        help="judge only these data sets (repeatable; default: every data set whose rows a judge can judge)",
    )
    group.add_argument(
        "--judge-template",
        choices=sorted(BUILTIN),
        help="grade with this template judge instead of the 1-5 LLMJudge rating",
    )
    group.add_argument(
        "--judge-strict",
        action="store_true",
        default=None,
        help="a failed judge call is a row error instead of a 0.0 score",
    )
    group.add_argument(
        "--judge-no-cache",
        action="store_true",
        default=None,
        help="do not cache judge responses in the run's cache directory",
    )
    group.add_argument(
        "--pairwise",
        dest="judge_pairwise",
        action="store_true",
        default=None,
        help="judge every system against --baseline with the --judge-url judge, answers in both "
        "orders: wins, ties, losses, win rate and length-controlled win rate (summary.pairwise)",
    )
    group.add_argument(
        "--pairwise-template",
        dest="judge_pairwise_template",
        metavar="NAME|FILE",
        help=f"--pairwise's prompt: {', '.join(TEMPLATES)} (default mt_bench), or a file holding one "
        "with {question}, {answer_a}, {answer_b} (and {reference})",
    )
    group.add_argument(
        "--judge-agreement",
        metavar="FILE",
        help="the judge's agreement with people that judge-check --out wrote: kappa and n shown beside "
        "every score the judge produced (summary.judge_agreement)",
    )


def add_endpoint_options(group: Any) -> None:
    """The judge's endpoint, model, key and concurrency: the run flags' and ``pairwise``'s."""
    group.add_argument(
        "--judge-url",
        metavar="URL",
        action=_ReachableURL,
        help="root of an OpenAI-compatible judge endpoint (e.g. http://localhost:8080); "
        "turns on the judge evaluators (refused at once when nothing listens there)",
    )
    group.add_argument(
        "--judge-model",
        metavar="MODEL",
        help=f"judge model (default: the relay's --model when the judge is the memory command's relay, "
        f"else {DEFAULT_MODEL})",
    )
    group.add_argument(
        "--judge-api-key-env",
        metavar="VAR",
        help="NAME of the environment variable holding the judge's API key, sent as a Bearer token "
        "(default: OPENAI_API_KEY when it is set, else no key); the judge's own, apart from the systems'",
    )
    group.add_argument(
        "--judge-concurrency",
        type=flag_type("--judge-concurrency"),
        metavar="N",
        help=f"judge requests in flight per endpoint (default: {DEFAULT_CONCURRENCY})",
    )


def add_failure_rate_option(parser: Any, counted: str) -> None:
    """``--max-failure-rate`` of the judge's own commands: any failure fails unless it allows some."""
    parser.add_argument(
        "--max-failure-rate",
        type=flag_type("--max-failure-rate"),
        default=0.0,
        metavar="R",
        help=f"exit 4 when more than this share of {counted} (default 0: any)",
    )
