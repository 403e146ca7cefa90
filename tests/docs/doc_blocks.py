"""The docs' fenced blocks and the command lines in them, for the tests that run them
(test_examples.py, test_plugin_doc.py).

A block that is a file of its own says where it goes: a Python or TOML block by its first line
(``# src/pkg/plugin.py``), any other by the title of its fence (```` ```jsonl title="src/pkg/x.jsonl" ````).
Tests load this module by its path (tests/ is not a package).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]
#: Endpoint URLs in examples: a local relay or proxy, or OpenAI itself.
URL = re.compile(r"https?://(?:localhost|127\.0\.0\.1|api\.openai\.com)(?::\d+)?")
#: A block that is a file of its own: its first line names it.
FILE_NAME = re.compile(r"^# ((?:[\w.-]+/)*[\w.-]+\.(?:py|toml))\n")
#: The key every environment variable an example names holds in the tests.
TEST_KEY = "sk-test-docs-0123456789abcdef"
FENCE = re.compile(r'(`{3,}|~{3,})([\w-]*)(?:\s+title="([^"]+)")?')


@dataclass(frozen=True)
class Block:
    doc: str
    lang: str
    number: int  # 1-based, among the blocks of its language in its document
    line: int  # the line of its opening fence
    text: str
    title: str | None = None

    @property
    def file(self) -> str | None:
        match = FILE_NAME.match(self.text)
        return match.group(1) if match else self.title

    @property
    def body(self) -> str:
        """What the file holds beside the line that names it."""
        return FILE_NAME.sub("", self.text, count=1)


def blocks(doc: str) -> list[Block]:
    found: list[Block] = []
    lines = (ROOT / doc).read_text(encoding="utf-8").splitlines(keepends=True)
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        fence, lang, title = opening.groups()
        end = index + 1
        while end < len(lines) and not lines[end].startswith(fence):
            end += 1
        number = 1 + sum(block.lang == lang for block in found)
        found.append(Block(doc, lang, number, index + 1, "".join(lines[index + 1 : end]), title))
        index = end + 1
    return found


def with_endpoint(text: str, url: str) -> str:
    return URL.sub(url, text)


def write_files(doc: str, where: Path, url: str) -> None:
    """The blocks of ``doc`` that are files, saved where the prose asks the reader to save them."""
    for block in blocks(doc):
        if block.file:
            path = where / block.file
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(with_endpoint(block.text, url), encoding="utf-8")


@dataclass(frozen=True)
class Command:
    block: Block
    line: int
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]  # what `export` lines of its block set before it


def commands() -> list[Command]:
    found = []
    for doc in DOCS:
        for block in blocks(doc):
            if block.lang not in ("sh", "console"):
                continue
            env: list[tuple[str, str]] = []
            offset = 0
            for line in block.text.replace("\\\n", " \x00").splitlines():
                number = block.line + 1 + offset
                offset += 1 + line.count("\x00")
                line = line.replace("\x00", "").removeprefix("$ ")
                words = shlex.split(line, comments=True)
                if words[:1] == ["export"]:
                    env += [(w.split("=", 1)[0], TEST_KEY) for w in words[1:]]
                for part in " ".join(shlex.quote(w) for w in words).split(" '&&' "):
                    argv = shlex.split(part)
                    if argv[:1] != ["context-bench"]:
                        continue
                    for reading in _readings(argv[1:]):
                        found.append(Command(block, number, tuple(reading), tuple(env)))
    return found


def _readings(argv: list[str]) -> list[list[str]]:
    """``[--json]`` is optional: the command without it and with it."""
    for index, word in enumerate(argv):
        if word.startswith("[") and word.endswith("]"):
            return [
                reading
                for rest in _readings(argv[index + 1 :])
                for reading in (argv[:index] + rest, argv[:index] + [word[1:-1]] + rest)
            ]
    return [argv]
