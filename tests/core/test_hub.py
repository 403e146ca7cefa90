"""Hub data sets load only on request, from a mirror or the cache, and every way they cannot load
is one line and exit 2 before any row runs."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from context_bench import DatasetUnavailable, UsageError
from context_bench.cli import main
from context_bench.datasets import load
from context_bench.hub import MIRROR_VARIABLE, HubSource, load_rows, mirror
from context_bench.testing import isolated_host, offline_hub

MIRROR = Path(__file__).resolve().parents[1] / "fixtures" / "hub"
#: Where a row would go: nothing listens there, and no test gets that far.
DEAD = "http://127.0.0.1:9"


@pytest.fixture
def hub(monkeypatch, tmp_path):
    """The fixture mirror, the network off, a private Hugging Face home with no token."""
    offline_hub(monkeypatch, MIRROR, tmp_path / "hf")
    import huggingface_hub.constants

    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_TOKEN_PATH", str(tmp_path / "hf" / "token"))
    return tmp_path


@pytest.fixture
def no_mirror(hub, monkeypatch):
    monkeypatch.delenv(MIRROR_VARIABLE)
    return hub


def _one_line_exit_2(capsys, *argv: str) -> str:
    assert main(["run", "--proxy", DEAD, *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_a_mirror_loads_with_the_real_datasets_library(hub):
    rows = load("squad", host=isolated_host()).rows
    assert [row["id"] for row in rows] == ["56be4db0acb8001400a502ec", "56be4db0acb8001400a502ed"]


def test_missing_datasets_package_names_the_pip_command(hub, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(DatasetUnavailable, match=r"pip install 'context-bench\[hub\]'"):
        load("mmlu", host=isolated_host())
    assert "pip install 'context-bench[hub]'" in _one_line_exit_2(capsys, "--dataset", "arc-challenge")


def test_offline_and_not_cached_names_the_mirror_flag(no_mirror, capsys):
    with pytest.raises(DatasetUnavailable, match="not in the Hugging Face cache") as caught:
        load("squad", host=isolated_host())
    assert "--hub-mirror DIR" in str(caught.value)
    assert "context-bench datasets download squad --to DIR" in str(caught.value)
    assert "--hub-mirror" in _one_line_exit_2(capsys, "--dataset", "hotpotqa")


def test_an_unreachable_hub_is_said_at_once_not_after_the_clients_retries(no_mirror, monkeypatch, capsys):
    """Not in offline mode, but the hub's host takes no connection (no network, no DNS): the
    loader says so in its one line instead of waiting out the hub client's retries."""
    import datasets.config
    import huggingface_hub.constants

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", f"http://127.0.0.1:{port}")
    for module in (datasets.config, huggingface_hub.constants):
        monkeypatch.setattr(module, "HF_HUB_OFFLINE", False)
    calls = []
    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: calls.append(a))
    with pytest.raises(
        DatasetUnavailable, match="not in the Hugging Face cache .* the hub cannot be reached"
    ):
        load("squad", host=isolated_host())
    assert calls == []  # never handed to the hub client
    assert "--hub-mirror DIR" in _one_line_exit_2(capsys, "--dataset", "hotpotqa")


def test_gated_without_a_token_names_hf_token(no_mirror, capsys):
    err = _one_line_exit_2(capsys, "--dataset", "gpqa")
    assert "gated" in err and "HF_TOKEN" in err


def test_a_token_is_never_printed(no_mirror, monkeypatch, capsys):
    secret = "hf_TOKENVALUEabcdefghijklmnop"
    monkeypatch.setenv("HF_TOKEN", secret)
    err = _one_line_exit_2(capsys, "--dataset", "gpqa")
    assert secret not in err and "--hub-mirror" in err  # with a token, what is missing is the network


def test_a_gated_set_loads_from_a_mirror_without_a_token(hub):
    assert len(load("gpqa", host=isolated_host()).rows) == 2


def test_unknown_config_lists_the_valid_ones(hub, capsys):
    with pytest.raises(
        UsageError, match="unknown config 'nonsense' of cais/mmlu: the valid configs are all, "
    ):
        load("mmlu:nonsense", host=isolated_host())
    err = _one_line_exit_2(capsys, "--dataset", "arc-challenge:ARC-Hard")
    assert "ARC-Challenge, ARC-Easy" in err


def test_a_set_without_configs_refuses_one(hub):
    with pytest.raises(UsageError, match="has no configs to choose from"):
        load("hellaswag:default2", host=isolated_host())


def test_unknown_split_is_one_line(hub, capsys):
    err = _one_line_exit_2(capsys, "--dataset", "squad", "--split", "dev")
    assert "unknown split 'dev' of rajpurkar/squad" in err and "validation" in err


def test_a_mirror_missing_the_set_says_how_to_fill_it(hub, tmp_path, capsys):
    empty = tmp_path / "mirror"
    empty.mkdir()
    err = _one_line_exit_2(capsys, "--dataset", "hotpotqa", "--hub-mirror", str(empty))
    assert f"the hub mirror {empty} has no hotpotqa/hot_pot_qa".replace("hot_pot", "hotpot") in err
    assert "context-bench datasets download hotpotqa --to DIR" in err


def test_hub_mirror_flag_beats_the_variable_for_the_run_only(monkeypatch, tmp_path):
    monkeypatch.setenv(MIRROR_VARIABLE, str(tmp_path / "elsewhere"))
    from context_bench.hub import mirrored

    with mirrored(MIRROR):
        assert mirror() == MIRROR
    assert mirror() == tmp_path / "elsewhere"


def test_split_and_config_reach_the_loader(hub):
    host = isolated_host()
    assert [r["id"] for r in load("mmlu:astronomy", host=host).rows] == [
        "mmlu-astronomy-0",
        "mmlu-astronomy-1",
    ]
    assert [r["id"] for r in load("mmlu", split="dev", host=host).rows] == ["mmlu-abstract_algebra-0"]
    # the same question has the same id whichever config loads it
    assert load("mmlu", host=host).rows[1]["id"] == "mmlu-astronomy-0"


def test_a_loader_without_configs_refuses_them(monkeypatch):
    from context_bench.specs import DatasetSpec

    class Plugin:
        from context_bench.hookspecs import hookimpl

        CBENCH_PLUGIN_API = 1

        @staticmethod
        @hookimpl
        def cbench_register_datasets(register):
            register(DatasetSpec("plain", lambda: iter([{"id": "1", "question": "q"}])))

    host = isolated_host(Plugin)
    with pytest.raises(UsageError, match="plain has no splits to choose"):
        load("plain", split="test", host=host)
    with pytest.raises(UsageError, match="plain has no configs to choose"):
        load("plain:x", host=host)


def test_a_loader_taking_kwargs_is_given_no_config_or_split_it_does_not_name(capsys):
    """`toxic-chat:foo --split test` loaded the whole set when its loader took only **kwargs."""
    from context_bench.hookspecs import hookimpl
    from context_bench.specs import DatasetSpec

    def everything(**kwargs):
        return [{"id": "1", "question": "q", "answer": "a"}]

    def by_split(split=None, **kwargs):
        return [{"id": split or "test", "question": "q", "answer": "a"}]

    class Plugin:
        CBENCH_PLUGIN_API = 1

        @staticmethod
        @hookimpl
        def cbench_register_datasets(register):
            register(DatasetSpec("toxic-chat", everything))
            register(DatasetSpec("splits", by_split))

    host = isolated_host(Plugin)
    run = ["run", "--proxy", "http://127.0.0.1:9", "--dataset"]
    assert main([*run, "toxic-chat:foo"], host=host) == 2
    assert main([*run, "toxic-chat", "--split", "test"], host=host) == 2
    assert main([*run, "splits:foo"], host=host) == 2
    assert capsys.readouterr().err.splitlines() == [
        "context-bench: error: toxic-chat has no configs to choose (toxic-chat:CONFIG given)",
        "context-bench: error: toxic-chat has no splits to choose (--split given)",
        "context-bench: error: splits has no configs to choose (splits:CONFIG given)",
    ]
    assert [r["id"] for r in load("splits", split="dev", host=host).rows] == ["dev"]


def test_load_rows_reads_any_source_from_the_mirror(hub):
    rows = list(load_rows(HubSource("allenai/winogrande", config="winogrande_xl", split="validation")))
    assert rows[0]["option1"] == "Sarah"
    parquet = HubSource(
        "allenai/qasper", config="qasper", split="validation", revision="refs/convert/parquet"
    )
    assert [paper["id"] for paper in load_rows(parquet)] == ["1909.00694"]


def test_a_broken_record_is_one_line_not_a_traceback(hub, monkeypatch, capsys):
    from context_bench._catalog import _sources

    monkeypatch.setitem(
        _sources.QA, "squad", HubSource("allenai/winogrande", config="winogrande_xl", split="validation")
    )
    err = _one_line_exit_2(capsys, "--dataset", "squad")
    assert "could not be loaded: KeyError" in err
