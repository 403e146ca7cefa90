"""What cbench-wordcount registers; each class is named lazily, so listing imports nothing else."""

from context_bench import AutowireRule, DatasetSpec, EvaluatorSpec, hookimpl

CBENCH_PLUGIN_API = 1


@hookimpl
def cbench_register_evaluators(register):
    register(
        EvaluatorSpec(
            "WordCountDiff",
            "cbench_wordcount.evaluator:WordCountDiff",
            fields=["word_count_ratio", "extra_words"],
            description="Response words over the reference's, and the share of words not in it.",
            ranges={"word_count_ratio": (0, float("inf")), "extra_words": (0, 1)},
            lower_is_better=["extra_words"],
        )
    )


@hookimpl
def cbench_register_autowire(register):
    register(AutowireRule("WordCountDiff", datasets=["wordcount"], fields=["wordcount_reference"]))


@hookimpl
def cbench_register_datasets(register):
    register(
        DatasetSpec(
            "wordcount",
            "cbench_wordcount.dataset:load_wordcount",
            "Three short questions over a sentence each (shipped in the package)",
            fields=["id", "question", "context", "answer"],
        )
    )
