"""``load_tokenizer``: tiktoken encodings read from files already on the machine, .tiktoken files,
Hugging Face tokenizer.json with its chat template, and one line naming the fix for anything else.

Counts are worked by hand: the token ids of short texts are tiktoken's published ones
(``"hello world"`` is [15339, 1917] in cl100k_base and [24912, 2375] in o200k_base), and a chat is
framed by OpenAI's rule (3 a message, the role's tokens, 3 priming the reply) or by the template.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import socket
from pathlib import Path

import pytest

from context_bench import token_count
from context_bench.errors import UsageError
from context_bench.token_count import load_tokenizer, message_text

HELLO = [{"role": "user", "content": "hello world"}]


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Loading a tokenizer never connects anywhere (a download would have to)."""

    def refuse(*args, **kwargs):
        raise AssertionError("a tokenizer tried to connect to the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def _litellm_file(name: str) -> Path:
    """The encoding as LiteLLM's wheel ships it (tiktoken's cache layout: the SHA-1 of its URL)."""
    url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
    location = importlib.util.find_spec("litellm").submodule_search_locations[0]
    import hashlib

    return Path(location, "litellm_core_utils", "tokenizers", hashlib.sha1(url.encode()).hexdigest())


@pytest.mark.parametrize("name, ids", [("cl100k_base", [15339, 1917]), ("o200k_base", [24912, 2375])])
def test_an_encoding_loads_from_litellms_wheel_without_a_download(name, ids, monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # an empty cache: LiteLLM's copy is found
    tokenizer = load_tokenizer(name)
    assert (tokenizer.name, tokenizer.framing) == (name, "openai")
    assert tokenizer.count("hello world") == len(ids) == 2
    assert tokenizer.encode("hello world") == ids
    assert list(tmp_path.iterdir()) == []  # nothing written to the cache either


def test_openais_chat_framing_is_counted_as_published():
    tokenizer = load_tokenizer("cl100k_base")
    assert tokenizer.count_chat(HELLO) == 3 + 1 + 2 + 3
    named = [{"role": "user", "name": "ann", "content": "hello world"}]
    assert tokenizer.count_chat(named) == 3 + 1 + 2 + (1 + 1) + 3
    parts = [{"role": "user", "content": [{"type": "text", "text": "hello world"}, {"type": "image_url"}]}]
    assert tokenizer.count_chat(parts) == 9
    assert tokenizer.count_chat([]) == 3 and tokenizer.count("") == 0


def test_a_tiktoken_file_named_after_its_encoding_loads(tmp_path):
    path = tmp_path / "o200k_base.tiktoken"
    shutil.copy(_litellm_file("o200k_base"), path)
    assert load_tokenizer(str(path)).count("hello world") == 2


def test_a_tiktoken_file_that_is_not_the_published_encoding_is_refused(tmp_path):
    path = tmp_path / "cl100k_base.tiktoken"
    path.write_bytes(_litellm_file("cl100k_base").read_bytes().replace(b"IQ== 0", b"IQ== 9", 1))
    with pytest.raises(
        UsageError, match=r"is not the published cl100k_base encoding \(its SHA-256 differs\)$"
    ):
        load_tokenizer(str(path))


def test_a_tiktoken_file_that_names_no_encoding_says_how_to_name_it(tmp_path):
    path = tmp_path / "mine.tiktoken"
    shutil.copy(_litellm_file("cl100k_base"), path)
    with pytest.raises(UsageError) as caught:
        load_tokenizer(str(path))
    assert str(caught.value) == (
        f"cannot tell which encoding's pattern {path} goes with: "
        "name the file after its encoding (o200k_base.tiktoken, cl100k_base.tiktoken)"
    )


def test_a_missing_encoding_is_one_line_naming_the_fix(monkeypatch):
    monkeypatch.setattr(token_count, "_shipped", lambda name, url: [])
    with pytest.raises(UsageError) as caught:
        load_tokenizer("o200k_base")
    message = str(caught.value)
    assert "\n" not in message
    assert message == (
        "the tiktoken encoding o200k_base is not on this machine and nothing is downloaded at run time: "
        "pass its file (--tokenizer PATH/o200k_base.tiktoken), set $TIKTOKEN_CACHE_DIR to tiktoken's cache "
        "holding it, or pip install litellm (its wheel ships cl100k_base, o200k_base, p50k_base)"
    )


def test_an_encoding_tiktoken_would_assemble_from_two_files_is_refused_not_fetched():
    with pytest.raises(
        UsageError, match="^the tiktoken encoding gpt2 has no single .tiktoken file to read offline$"
    ):
        load_tokenizer("gpt2")


@pytest.mark.parametrize(
    "spec, message",
    [
        ("nope", r"^unknown tokenizer 'nope': give a tiktoken encoding \(cl100k_base, .*o200k_base.*\), "
                 r"a \.tiktoken file or a Hugging Face tokenizer\.json$"),
        ("", "^--tokenizer needs a tiktoken encoding's name, a .tiktoken file or a tokenizer.json$"),
        ("missing/tokenizer.json", "^tokenizer file missing/tokenizer.json does not exist$"),
    ],
)  # fmt: skip
def test_an_unknown_tokenizer_is_one_line(spec, message):
    with pytest.raises(UsageError, match=message):
        load_tokenizer(spec)


CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _word_tokenizer(directory: Path, template: str | None) -> Path:
    """A word-level tokenizer.json (one token a word) with ChatML's markers as special tokens."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = ["[UNK]", "hello", "world", "user", "assistant", "system", "be", "brief"]
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.add_special_tokens(["<|im_start|>", "<|im_end|>"])
    path = directory / "tokenizer.json"
    tokenizer.save(str(path))
    if template is not None:
        (directory / "tokenizer_config.json").write_text(json.dumps({"chat_template": template}))
    return path


def test_a_tokenizer_json_frames_a_chat_with_its_template(tmp_path):
    """<|im_start|> user hello world <|im_end|> <|im_start|> assistant: 7 tokens, markers one each."""
    tokenizer = load_tokenizer(str(_word_tokenizer(tmp_path, CHATML)))
    assert tokenizer.framing == "template"
    assert tokenizer.count("hello world") == 2
    assert tokenizer.count_chat(HELLO) == 7
    assert tokenizer.count_chat([{"role": "system", "content": "be brief"}, *HELLO]) == 12
    assert load_tokenizer(str(tmp_path)).count_chat(HELLO) == 7  # the directory names it too


def test_a_tokenizer_json_without_a_template_counts_the_text_alone(tmp_path):
    tokenizer = load_tokenizer(str(_word_tokenizer(tmp_path, None)))
    assert tokenizer.framing == "content"
    assert tokenizer.count_chat([{"role": "system", "content": "be brief"}, *HELLO]) == 4


def test_a_file_the_tokenizers_package_cannot_read_is_one_line(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text('{"not": "a tokenizer"}')
    with pytest.raises(UsageError, match=f"^{path} is not a tokenizer.json the tokenizers package reads: "):
        load_tokenizer(str(path))


def test_message_text_reads_strings_and_text_parts():
    assert message_text("plain") == "plain"
    assert message_text([{"type": "text", "text": "a"}, {"type": "image_url"}, {"text": "b"}]) == "ab"
    assert message_text(None) == message_text(42) == ""


def test_a_long_text_counted_again_is_not_encoded_again():
    """A metered run counts each prompt twice (the meter, then the harness): the second count is
    remembered, not encoded; a short text is always encoded, and the memory holds the last RECENT."""
    from context_bench.token_count import RECENT, REMEMBERED, Tokenizer

    encoded: list[str] = []

    def encode(text):
        encoded.append(text)
        return text.split()

    tokenizer = Tokenizer("words", encode, "content")
    long = "word " * REMEMBERED
    assert tokenizer.count(long) == tokenizer.count(long) == REMEMBERED
    assert encoded == [long]
    assert tokenizer.count("two words") == tokenizer.count("two words") == 2
    assert encoded.count("two words") == 2
    for n in range(RECENT):
        tokenizer.count(f"{n} {long}")
    tokenizer.count(long)  # forgotten by now: encoded again
    assert encoded.count(long) == 2


def test_remembered_counts_do_not_hold_their_texts():
    """Counts are remembered by digest: counting a hundred texts of 100,000 characters, each dropped
    after, holds a few kilobytes, not the 10 MB of the texts (a long-context run's last prompts)."""
    import tracemalloc

    from context_bench.token_count import Tokenizer

    tokenizer = Tokenizer("words", str.split, "content")
    tracemalloc.start()
    try:
        for n in range(100):
            assert tokenizer.count(f"{n} " + "word " * 20_000) == 20_001
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 100_000


def test_cl100k_base_counts_as_tiktokens_own_pattern_does(monkeypatch):
    """The faster cl100k_base pattern (token_count.FASTER_PATTERNS) gives tiktoken's own tokens:
    on the docs in 2,000-character slices, on seeded random strings of the characters where the two
    patterns' pieces differ (whitespace and newlines at the end, contractions, symbols), and on every
    string of up to 4 such characters."""
    import itertools
    import random

    faster = load_tokenizer("cl100k_base")
    monkeypatch.setattr(token_count, "FASTER_PATTERNS", {})
    own = load_tokenizer("cl100k_base")  # tiktoken's own pattern
    docs = "\n".join(
        p.read_text(encoding="utf-8") for p in sorted((Path(__file__).parents[2] / "docs").glob("*.md"))
    )
    parts = [
        " ",
        "  ",
        "\n",
        "\r\n",
        "\t",
        "\u00a0",
        "a",
        "Ab",
        "é",
        "中文",
        "123",
        "4567",
        "'s",
        "'LL",
        "!",
        "?!",
        "😀",
        "'",
    ]
    rng = random.Random(33)
    texts = [docs[i : i + 2000] for i in range(0, len(docs), 1000)]
    texts += ["".join(rng.choice(parts) for _ in range(rng.randint(1, 12))) for _ in range(20_000)]
    texts += ["".join(t) for k in range(1, 5) for t in itertools.product(" \n\r\ta1!'s\u00a0", repeat=k)]
    assert [faster.encode(text) for text in texts] == [own.encode(text) for text in texts]
