"""Summarization data sets (specs only; loaders in context_bench.hub._summarization)."""

from __future__ import annotations

from ..specs import DatasetSpec, HubSource

#: The keys of a summarization row: SummarizationQuality scores ``reference`` (by name).
SUMMARY_FIELDS = ("id", "context", "question", "reference")

DIALOGSUM = HubSource("knkarthick/dialogsum", split="test")
#: alexfabbri/multi_news and tau/scrolls run loading scripts: their parquet conversions hold a
#: directory per config (``default`` when a script has one).
MULTI_NEWS = HubSource(
    "alexfabbri/multi_news", split="test", revision="refs/convert/parquet", data_dir="default"
)
QMSUM = HubSource("tau/scrolls", split="validation", revision="refs/convert/parquet", data_dir="qmsum")
SUMMSCREENFD = HubSource(
    "tau/scrolls", split="validation", revision="refs/convert/parquet", data_dir="summ_screen_fd"
)
MEETINGBANK = HubSource("huuuyeah/meetingbank", split="test")
GOVREPORT = HubSource("ccdv/govreport-summarization", config="document", split="test")

SPECS: list[DatasetSpec] = [
    DatasetSpec(
        "multi-news",
        "context_bench.hub._summarization:multi_news",
        "Multi-News multi-document news summarization (alexfabbri/multi_news, parquet, test); "
        "SummarizationQuality",
        source=MULTI_NEWS,
        fields=SUMMARY_FIELDS,
    ),
    DatasetSpec(
        "dialogsum",
        "context_bench.hub._summarization:dialogsum",
        "DialogSum dialogue summarization (knkarthick/dialogsum, test); SummarizationQuality",
        source=DIALOGSUM,
        fields=SUMMARY_FIELDS,
    ),
    DatasetSpec(
        "qmsum",
        "context_bench.hub._summarization:qmsum",
        "QMSum query-based meeting summarization (tau/scrolls qmsum, parquet, validation); "
        "SummarizationQuality",
        source=QMSUM,
        fields=SUMMARY_FIELDS,
    ),
    DatasetSpec(
        "summscreenfd",
        "context_bench.hub._summarization:summscreenfd",
        "SummScreenFD TV transcript summarization (tau/scrolls summ_screen_fd, parquet, validation); "
        "SummarizationQuality",
        source=SUMMSCREENFD,
        fields=SUMMARY_FIELDS,
    ),
    DatasetSpec(
        "meetingbank",
        "context_bench.hub._summarization:meetingbank",
        "MeetingBank city council meeting summarization (huuuyeah/meetingbank, test); SummarizationQuality",
        source=MEETINGBANK,
        fields=SUMMARY_FIELDS,
    ),
    DatasetSpec(
        "govreport",
        "context_bench.hub._summarization:govreport",
        "GovReport long report summarization (ccdv/govreport-summarization, test); SummarizationQuality",
        source=GOVREPORT,
        fields=SUMMARY_FIELDS,
    ),
]
