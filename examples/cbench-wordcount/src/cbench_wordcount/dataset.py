"""The wordcount data set: rows shipped inside the package, read from wherever pip installed it."""

import json
from importlib.resources import files


def load_wordcount():
    text = files("cbench_wordcount").joinpath("wordcount.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]
