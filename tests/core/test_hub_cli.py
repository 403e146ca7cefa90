"""``context-bench datasets`` (the listing and ``download``), ``run --dataset NAME --hub-mirror DIR``
end to end against a loopback endpoint, and a fetched set loading again from the cache, offline."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from context_bench.cli import main
from context_bench.testing import FakeServer, last_user_message, offline_hub

MIRROR = Path(__file__).resolve().parents[1] / "fixtures" / "hub"
QA_NAMES = {
    "hotpotqa",
    "natural-questions",
    "musique",
    "narrativeqa",
    "triviaqa",
    "frames",
    "qasper",
    "quality",
    "squad",
}
MC_NAMES = {"mmlu", "mmlu-pro", "arc-challenge", "truthfulqa", "gpqa", "hellaswag", "winogrande"}


@pytest.fixture
def hub(monkeypatch, tmp_path):
    offline_hub(monkeypatch, MIRROR, tmp_path / "hf")
    return tmp_path


def _listing(capsys, *argv: str) -> dict[str, dict]:
    assert main(["datasets", "--json", *argv]) == 0
    return {entry["name"]: entry for entry in json.loads(capsys.readouterr().out)}


def test_the_listing_says_source_configs_split_evaluators_and_where_it_is(hub, monkeypatch, capsys):
    listed = _listing(capsys)
    assert QA_NAMES | MC_NAMES <= set(listed)
    hotpot = listed["hotpotqa"]
    assert hotpot["source"] == {
        "repo": "hotpotqa/hotpot_qa",
        "config": "fullwiki",
        "configs": ["distractor", "fullwiki"],
        "split": "validation",
        "revision": None,
        "gated": False,
    }
    assert {"name": "AnswerQuality", "requires": []} in hotpot["evaluators"]
    assert {"name": "MultipleChoiceAccuracy", "requires": []} in listed["winogrande"]["evaluators"]
    assert (
        listed["gpqa"]["source"]["gated"] and listed["qasper"]["source"]["revision"] == "refs/convert/parquet"
    )
    assert {listed[name]["available"] for name in QA_NAMES | MC_NAMES} == {"mirror"}

    monkeypatch.delenv("CBENCH_HUB_MIRROR")
    assert _listing(capsys)["squad"]["available"] is None
    (hub / "hf" / "datasets" / "rajpurkar___squad").mkdir(parents=True)
    assert _listing(capsys)["squad"]["available"] == "cache"
    assert _listing(capsys, "--hub-mirror", str(hub))["squad"]["available"] is None  # an empty mirror


def test_the_text_listing_shows_the_same(hub, capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "rajpurkar/squad, config plain_text, split validation; evaluators AnswerQuality" in out
    assert "cais/mmlu, config all (of 58: --json lists them), split test" in out
    assert "gated: needs HF_TOKEN" in out and "local: mirror" in out


def test_listing_imports_neither_datasets_nor_any_loader():
    code = (
        "import sys\n"
        "from context_bench.cli import main\n"
        "from context_bench.plugins import PluginHost\n"
        "assert main(['datasets', '--json']) == 0\n"
        "host = PluginHost(); host.ensure_loaded()\n"
        "specs = [spec for _, spec in host.datasets().values()]\n"
        "loaders = {s.loader.partition(':')[0] for s in specs if isinstance(s.loader, str)}\n"
        "assert 'context_bench.hub._qa' in loaders and 'context_bench.hub._choice' in loaders\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('datasets', 'huggingface_hub', 'pyarrow')\n"
        "         or m in loaders]\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def _answers(body: dict) -> str:
    text = last_user_message(body)
    if "Scott Derrickson" in text:
        return "yes"
    if "Chief of Protocol" in text:
        return "Chief of Protocol"
    if "Which planet is the largest?" in text:
        return "The answer is B."
    return "I do not know."


@pytest.mark.parametrize(
    ("name", "field", "means"),
    [("hotpotqa", "exact_match", "1.000"), ("mmlu:astronomy", "mc_accuracy", "0.500")],
)
def test_run_a_named_set_from_a_mirror_end_to_end(name, field, means, hub, monkeypatch, capsys):
    monkeypatch.delenv("CBENCH_HUB_MIRROR")  # the flag alone says where
    with FakeServer(_answers) as server:
        code = main(
            ["run", "--proxy", server.url, "--dataset", name, "--hub-mirror", str(MIRROR), "--output", "json"]
        )
    out, err = capsys.readouterr()
    assert code == 0, err
    (group,) = json.loads(out)["summary"]["groups"]
    assert group["dataset"] == name.partition(":")[0] and f"{group['scores'][field]:.3f}" == means
    assert len(server.requests) == 2


def _fake_snapshot(calls):
    def snapshot_download(*, repo_id, repo_type, revision, local_dir, allow_patterns):
        calls.append((repo_id, repo_type, revision, allow_patterns))
        shutil.copytree(MIRROR / repo_id, local_dir, dirs_exist_ok=True)
        return str(local_dir)

    return snapshot_download


def test_download_fills_a_mirror_that_runs_load(hub, monkeypatch, capsys):
    import huggingface_hub

    calls: list = []
    monkeypatch.setattr(huggingface_hub, "snapshot_download", _fake_snapshot(calls))
    target = hub / "mirror"
    assert main(["datasets", "download", "squad", "qasper", "--to", str(target)]) == 0
    assert calls == [
        ("rajpurkar/squad", "dataset", None, None),
        ("allenai/qasper", "dataset", "refs/convert/parquet", ["qasper/**"]),
    ]
    assert f"squad: rajpurkar/squad -> {target / 'rajpurkar' / 'squad'}" in capsys.readouterr().out
    monkeypatch.setenv("CBENCH_HUB_MIRROR", str(target))
    assert _listing(capsys)["squad"]["available"] == "mirror"
    with FakeServer(lambda body: "Denver Broncos") as server:
        assert main(["run", "--proxy", server.url, "--dataset", "squad", "--output", "json"]) == 0


def test_download_mistakes_are_one_line(hub, capsys):
    assert main(["datasets", "download", "nonesuch", "--to", str(hub)]) == 2
    assert "unknown data set 'nonesuch'" in capsys.readouterr().err
    assert main(["datasets", "download", "mmlu:nonsense", "--to", str(hub)]) == 2
    assert "unknown config 'nonsense' of cais/mmlu" in capsys.readouterr().err
    assert main(["datasets", "download", "squad", "--to", str(hub)]) == 2  # offline: the hub is out of reach
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot reach the Hugging Face hub" in err


def test_a_fetched_set_loads_again_offline_from_the_cache(hub, monkeypatch):
    """What a connected load leaves in ``datasets``' cache (built here from the fixture) serves the
    same name offline, with no mirror."""
    import datasets.config
    from datasets.packaged_modules.json.json import Json

    from context_bench.datasets import load
    from context_bench.testing import isolated_host

    files = MIRROR / "rajpurkar" / "squad" / "plain_text"
    builder = Json(
        dataset_name="squad",
        config_name="plain_text",
        config_id="plain_text",
        hash="0123abcd",
        data_files={split: str(files / f"{split}.jsonl") for split in ("train", "validation")},
    )
    builder.download_and_prepare()
    cache = Path(datasets.config.HF_DATASETS_CACHE)
    shutil.move(str(cache / "squad"), str(cache / "rajpurkar___squad"))  # the hub's name for it
    monkeypatch.delenv("CBENCH_HUB_MIRROR")
    rows = load("squad", host=isolated_host()).rows
    assert [row["id"] for row in rows] == ["56be4db0acb8001400a502ec", "56be4db0acb8001400a502ed"]


def test_a_mirror_row_past_the_row_cap_is_a_row_error_never_sent(hub, monkeypatch, capsys):
    """Issue 24: a 12 MB row of a hub mirror was loaded and sent whole with --max-row-bytes 1000."""
    mirror = hub / "mirror"
    shutil.copytree(MIRROR / "rajpurkar" / "squad", mirror / "rajpurkar" / "squad")
    rows = mirror / "rajpurkar" / "squad" / "plain_text" / "validation.jsonl"
    huge = {
        "id": "huge", "title": "t", "context": "x" * 12_000_000, "question": "Which team won?",
        "answers": {"text": ["Broncos"], "answer_start": [0]},
    }  # fmt: skip
    with rows.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(huge) + "\n")
    monkeypatch.delenv("CBENCH_HUB_MIRROR")
    with FakeServer(lambda body: "Denver Broncos") as server:
        code = main(
            ["run", "--proxy", server.url, "--dataset", "squad", "--hub-mirror", str(mirror),
             "--output", "json", "--max-row-bytes", "1000", "--max-failure-rate", "1", "--no-progress"]
        )  # fmt: skip
        sizes = [len(json.dumps(body)) for body in server.requests]
    out, err = capsys.readouterr()
    assert code == 0, err
    assert len(sizes) == 2 and max(sizes) < 1000  # the two small rows only
    third = json.loads(out)["rows"][2]
    assert third["example_id"] == "#2" and third["errors"] == [
        {
            "stage": "input",
            "source": "data set 'squad' row 3",
            "type": "MalformedRow",
            "message": "the row is longer than 1,000 bytes (the row size limit)",
        }
    ]
