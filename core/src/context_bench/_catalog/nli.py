"""NLI data sets (specs only; loaders in context_bench.hub._nli)."""

from __future__ import annotations

from ..specs import DatasetSpec, HubSource

#: The keys of an NLI row: NLILabelMatch scores the label in ``answer`` (by name).
NLI_FIELDS = ("id", "context", "question", "answer")

#: tau/scrolls and allenai/scifact run loading scripts: their parquet conversions hold a
#: directory per config.
CONTRACT_NLI = HubSource(
    "tau/scrolls", split="validation", revision="refs/convert/parquet", data_dir="contract_nli"
)
SCIFACT_CLAIMS = HubSource(
    "allenai/scifact", split="validation", revision="refs/convert/parquet", data_dir="claims"
)
SCIFACT_CORPUS = HubSource(
    "allenai/scifact", split="train", revision="refs/convert/parquet", data_dir="corpus"
)

SPECS: list[DatasetSpec] = [
    DatasetSpec(
        "contract-nli",
        "context_bench.hub._nli:contract_nli",
        "ContractNLI: does an NDA entail, contradict or not mention a hypothesis (tau/scrolls contract_nli, "
        "parquet, validation); NLILabelMatch",
        source=CONTRACT_NLI,
        fields=NLI_FIELDS,
    ),
    DatasetSpec(
        "scifact",
        "context_bench.hub._nli:scifact",
        "SciFact: do the cited abstracts support or refute a scientific claim (allenai/scifact claims with "
        "the corpus, parquet, validation); NLILabelMatch",
        source=SCIFACT_CLAIMS,
        fields=NLI_FIELDS,
    ),
]
