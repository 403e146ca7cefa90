"""Verdict for verdict against the reference checker on 9,695 real responses (see docs/ifeval.md)."""

from __future__ import annotations

import pytest

from cbench_ifeval.checker import build_checks, judge
from context_bench import Output, RunConfig, evaluate

pytestmark = pytest.mark.slow


def _score(pairs):
    return [
        judge(build_checks(row["instruction_id_list"], row["kwargs"]), row["response"]) for row, _ in pairs
    ]


@pytest.fixture(scope="module")
def gpt4_verdicts(corpus):
    return _score(corpus.gpt4)


def _compare(pairs, scored):
    """(disagreements, compared, skipped) over unflagged per-instruction verdicts, strict and loose."""
    disagreements, compared, skipped = [], 0, 0
    for (row, reference), verdicts in zip(pairs, scored, strict=True):
        for i, instruction in enumerate(row["instruction_id_list"]):
            if reference["randomized"][i] or reference["langdetect_unstable"][i]:
                skipped += 1
                continue
            for kind, ours, theirs in (
                ("strict", verdicts.strict[i], reference["inst_level_strict"][i]),
                ("loose", verdicts.loose[i], reference["inst_level_loose"][i]),
            ):
                compared += 1
                if ours != theirs:
                    disagreements.append((row["key"], row.get("model"), instruction, kind, ours))
    return disagreements, compared, skipped


def test_gpt4_responses_get_the_reference_verdicts(corpus, gpt4_verdicts):
    disagreements, compared, skipped = _compare(corpus.gpt4, gpt4_verdicts)
    assert compared == 2 * 832 and skipped == 2  # the two random letter checks are flagged
    assert not disagreements, disagreements[:20]


def test_seventeen_models_responses_get_the_reference_verdicts(corpus):
    disagreements, compared, skipped = _compare(corpus.models, _score(corpus.models))
    assert compared == 2 * (14109 - skipped) and skipped > 0
    assert not disagreements, f"{len(disagreements)} disagreements, first: {disagreements[:20]}"


def test_gpt4_accuracies_equal_the_reference_summary(corpus, gpt4_verdicts):
    """All four published figures, the two flagged random letter checks included."""
    strict_prompts = loose_prompts = strict_inst = loose_inst = instructions = 0
    for verdicts in gpt4_verdicts:
        strict_prompts += all(verdicts.strict)
        loose_prompts += all(verdicts.loose)
        strict_inst += sum(verdicts.strict)
        loose_inst += sum(verdicts.loose)
        instructions += len(verdicts.strict)
    summary, prompts = corpus.gpt4_summary, len(corpus.gpt4)
    assert strict_prompts / prompts == pytest.approx(summary["prompt_level_strict_acc"])
    assert loose_prompts / prompts == pytest.approx(summary["prompt_level_loose_acc"])
    assert strict_inst / instructions == pytest.approx(summary["inst_level_strict_acc"])
    assert loose_inst / instructions == pytest.approx(summary["inst_level_loose_acc"])


def test_a_run_summary_shows_the_four_reference_accuracies(corpus):
    """Through evaluate(): instruction-level fields are weighted by each row's instruction count."""
    rows = [
        {
            "id": f"gpt4-{n}",
            "dataset": "ifeval",
            "response": row["response"],
            "instruction_id_list": row["instruction_id_list"],
            "kwargs": row["kwargs"],
        }
        for n, (row, _) in enumerate(corpus.gpt4)
    ]
    scores = evaluate(None, rows, RunConfig(output=Output(progress=False))).summary.groups[0].scores
    summary = corpus.gpt4_summary
    assert scores["ifeval_strict"] == pytest.approx(summary["prompt_level_strict_acc"])
    assert scores["ifeval_loose"] == pytest.approx(summary["prompt_level_loose_acc"])
    assert scores["ifeval_inst_strict"] == pytest.approx(summary["inst_level_strict_acc"])
    assert scores["ifeval_inst_loose"] == pytest.approx(summary["inst_level_loose_acc"])
