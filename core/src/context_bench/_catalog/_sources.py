"""Where the core's QA and multiple-choice data sets live on the hub, by catalog name.

Read by the catalog (which lists them) and by the loaders in ``context_bench.hub`` (which read
them); nothing here imports a loader, so listing the catalog imports none.
"""

from __future__ import annotations

from ..specs import PARQUET_REVISION, HubSource

#: cais/mmlu's configs besides ``all``: one per subject.
MMLU_SUBJECTS = (
    "abstract_algebra anatomy astronomy business_ethics clinical_knowledge college_biology "
    "college_chemistry college_computer_science college_mathematics college_medicine college_physics "
    "computer_security conceptual_physics econometrics electrical_engineering elementary_mathematics "
    "formal_logic global_facts high_school_biology high_school_chemistry high_school_computer_science "
    "high_school_european_history high_school_geography high_school_government_and_politics "
    "high_school_macroeconomics high_school_mathematics high_school_microeconomics high_school_physics "
    "high_school_psychology high_school_statistics high_school_us_history high_school_world_history "
    "human_aging human_sexuality international_law jurisprudence logical_fallacies machine_learning "
    "management marketing medical_genetics miscellaneous moral_disputes moral_scenarios nutrition "
    "philosophy prehistory professional_accounting professional_law professional_medicine "
    "professional_psychology public_relations security_studies sociology us_foreign_policy virology "
    "world_religions"
).split()

QA: dict[str, HubSource] = {
    "hotpotqa": HubSource(
        "hotpotqa/hotpot_qa", config="fullwiki", configs=("distractor", "fullwiki"), split="validation"
    ),
    "natural-questions": HubSource(
        "google-research-datasets/nq_open", config="nq_open", configs=("nq_open",), split="validation"
    ),
    "musique": HubSource(
        "bdsaglam/musique", config="answerable", configs=("answerable", "full"), split="validation"
    ),
    "narrativeqa": HubSource("deepmind/narrativeqa", split="test"),
    "triviaqa": HubSource(
        "mandarjoshi/trivia_qa",
        config="rc",
        configs=(
            "rc",
            "rc.nocontext",
            "rc.web",
            "rc.web.nocontext",
            "rc.wikipedia",
            "rc.wikipedia.nocontext",
        ),
        split="validation",
    ),
    "frames": HubSource("google/frames-benchmark", split="test"),
    "qasper": HubSource(
        "allenai/qasper",
        config="qasper",
        configs=("qasper",),
        split="validation",
        revision=PARQUET_REVISION,
    ),
    "quality": HubSource("tasksource/QuALITY", split="validation"),
    "squad": HubSource("rajpurkar/squad", config="plain_text", configs=("plain_text",), split="validation"),
}

CHOICE: dict[str, HubSource] = {
    "mmlu": HubSource("cais/mmlu", config="all", configs=("all", *MMLU_SUBJECTS), split="test"),
    "mmlu-pro": HubSource("TIGER-Lab/MMLU-Pro", split="test"),
    "arc-challenge": HubSource(
        "allenai/ai2_arc", config="ARC-Challenge", configs=("ARC-Challenge", "ARC-Easy"), split="test"
    ),
    "truthfulqa": HubSource(
        "truthfulqa/truthful_qa", config="generation", configs=("generation",), split="validation"
    ),
    "gpqa": HubSource(
        "Idavidrein/gpqa",
        config="gpqa_diamond",
        configs=("gpqa_diamond", "gpqa_main", "gpqa_extended"),
        split="train",
        gated=True,
    ),
    "hellaswag": HubSource("Rowan/hellaswag", split="validation"),
    "winogrande": HubSource(
        "allenai/winogrande",
        config="winogrande_xl",
        configs=tuple(f"winogrande_{size}" for size in ("xs", "s", "m", "l", "xl", "debiased")),
        split="validation",
    ),
}
