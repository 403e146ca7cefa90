"""The core's own evaluators, auto-wire rules, data sets, commands, executor and report formats,
registered through the same hooks as any plugin."""

from __future__ import annotations

from collections.abc import Callable

from .hookspecs import hookimpl
from .specs import AutowireRule, CommandSpec, DatasetSpec, EvaluatorSpec, ExecutorSpec, FormatSpec

CBENCH_PLUGIN_API = 1

_EVALUATORS = [
    EvaluatorSpec(
        "AnswerQuality",
        "context_bench.evaluators._answer:AnswerQuality",
        fields=("f1", "exact_match", "recall", "contains"),
        description="SQuAD-style token F1, exact match, recall and containment against original['answer'].",
        ranges=(0, 1),
    ),
    EvaluatorSpec(
        "MultipleChoiceAccuracy",
        "context_bench.evaluators._choice:MultipleChoiceAccuracy",
        fields=("mc_accuracy",),
        description="Extracts the chosen letter A-J and compares it with original['correct_letter'].",
        ranges=(0, 1),
    ),
    EvaluatorSpec(
        "NLILabelMatch",
        "context_bench.evaluators._nli:NLILabelMatch",
        fields=("nli_accuracy",),
        description="Extracts an entailment/neutral/contradiction label (with aliases) and compares it.",
        ranges=(0, 1),
    ),
    EvaluatorSpec(
        "SummarizationQuality",
        "context_bench.evaluators._summarization:SummarizationQuality",
        fields=("rouge_l_precision", "rouge_l_recall", "rouge_l_f1"),
        description="ROUGE-L precision, recall and F1 (rouge-score) of the response against the reference.",
        ranges=(0, 1),
    ),
]

_RULES = [
    AutowireRule("AnswerQuality", fields=("answer",)),
    AutowireRule(
        "MultipleChoiceAccuracy",
        datasets=("mmlu", "mmlu-pro", "arc-challenge", "gpqa", "hellaswag", "winogrande"),
        fields=("correct_letter",),
    ),
    AutowireRule("NLILabelMatch", datasets=("contract-nli", "scifact")),
    AutowireRule(
        "SummarizationQuality",
        datasets=("multi-news", "dialogsum", "qmsum", "summscreenfd", "meetingbank", "govreport"),
    ),
]

_CLI = "context_bench.cli."
#: The core's commands, registered first: a plugin command of any of these names is refused.
_COMMANDS = [
    CommandSpec(
        "run",
        "run systems (OpenAI-compatible endpoints) over data sets and score them",
        _CLI + "_commands:configure_run",
        _CLI + "_commands:cmd_run",
    ),
    CommandSpec(
        "score",
        "score responses already in a file (default: the bundled sample)",
        _CLI + "_commands:configure_score",
        _CLI + "_commands:cmd_score",
    ),
    CommandSpec(
        "compare",
        "compare saved JSON results (of run, score or memory) on the rows they share",
        _CLI + "_commands:configure_compare",
        _CLI + "_commands:cmd_compare",
    ),
    CommandSpec(
        "show",
        "show a saved JSON report again, in any format",
        _CLI + "_commands:configure_show",
        _CLI + "_commands:cmd_show",
    ),
    CommandSpec(
        "runs",
        "list the runs in the store (.context-bench/runs.sqlite, --store URL)",
        _CLI + "_history:configure_runs",
        _CLI + "_history:cmd_runs",
    ),
    CommandSpec(
        "export",
        "write a stored run as its JSON or JSONL report",
        _CLI + "_history:configure_export",
        _CLI + "_history:cmd_export",
    ),
    CommandSpec(
        "import",
        "record existing JSON or JSONL reports in the store",
        _CLI + "_history:configure_import",
        _CLI + "_history:cmd_import",
    ),
    CommandSpec(
        "plugins",
        "list discovered plugins",
        _CLI + "_listings:configure_listing",
        _CLI + "_listings:cmd_plugins",
    ),
    CommandSpec(
        "evaluators",
        "list available evaluators",
        _CLI + "_listings:configure_listing",
        _CLI + "_listings:cmd_evaluators",
    ),
    CommandSpec(
        "datasets",
        "list registered data sets",
        _CLI + "_listings:configure_datasets",
        _CLI + "_listings:cmd_datasets",
    ),
    CommandSpec(
        "plugin",
        "for plugin authors: `plugin new NAME` writes a plugin's skeleton",
        _CLI + "_new_plugin:configure",
        _CLI + "_new_plugin:cmd_new",
    ),
]

_REPORTS = "context_bench.reports."
#: The core's report formats, registered first (``--output`` offers them in this order): a plugin
#: format of any of these names is refused.
_FORMATS = [
    FormatSpec(
        "table",
        _REPORTS + "_table:render",
        "for a terminal: the verdict, the key figures and the warnings on one screen (--detail: every table)",
        extension=".txt",
        summary_only=True,
        shows_warnings=True,
        note=_REPORTS + "_table:note",
    ),
    FormatSpec(
        "markdown",
        _REPORTS + "_markdown:render",
        "for a pull request or a notebook: the verdict as a list, a table per section",
        extension=".md",
        summary_only=True,
        shows_warnings=True,
    ),
    FormatSpec(
        "json",
        _REPORTS + "_json:render",
        "the whole result: the verdict, the summary, the run's metadata and every row",
        extension=".json",
        stream=_CLI + "_streams:JsonStream",
    ),
    FormatSpec(
        "jsonl",
        _REPORTS + "_jsonl:render",
        "one row per line, written as the run goes (`score` scores it again)",
        extension=".jsonl",
        stream=_CLI + "_streams:JsonlStream",
    ),
    FormatSpec(
        "html",
        _REPORTS + "_html:render",
        "a self-contained page: charts, the tables and every row (a big run's rows in a file beside it)",
        extension=".html",
        stream=_CLI + "_streams:HtmlStream",
        shows_warnings=True,
        side_file=_REPORTS + "_html:rows_file",
    ),
    FormatSpec(
        "csv",
        _REPORTS + "_csv:render",
        "one line per row, for a spreadsheet or a data frame",
        extension=".csv",
    ),
]


@hookimpl
def cbench_register_evaluators(register: Callable[[EvaluatorSpec], None]) -> None:
    for spec in _EVALUATORS:
        register(spec)


@hookimpl
def cbench_register_autowire(register: Callable[[AutowireRule], None]) -> None:
    for rule in _RULES:
        register(rule)


@hookimpl
def cbench_register_datasets(register: Callable[[DatasetSpec], None]) -> None:
    from ._catalog import SPECS  # specs only: registering imports no loader and not ``datasets``

    for spec in SPECS:
        register(spec)


@hookimpl
def cbench_register_commands(register: Callable[[CommandSpec], None]) -> None:
    for spec in _COMMANDS:
        register(spec)


@hookimpl
def cbench_register_executors(register: Callable[[ExecutorSpec], None]) -> None:
    register(
        ExecutorSpec(
            "local",
            "context_bench._executor:LocalExecutor",
            "rows in this process: worker threads, or an event loop for async systems and evaluators",
        )
    )


@hookimpl
def cbench_register_formats(register: Callable[[FormatSpec], None]) -> None:
    for spec in _FORMATS:
        register(spec)
