"""The response-extraction rule (docs/code.md), as a pure function."""

from __future__ import annotations

import pytest

from cbench_code.extract import code_candidates, extract_code, fenced_blocks


def test_fenced_blocks_keep_python_and_untagged_only():
    text = "a\n```python\nx = 1\n```\n```bash\nls\n```\n~~~\ny = 2\n~~~\n```output\n3\n```\n"
    assert fenced_blocks(text) == ["x = 1\n", "y = 2\n"]


def test_longer_fence_contains_shorter_ones():
    text = "````python\ns = '''\n```\n'''\n````\n"
    assert fenced_blocks(text) == ["s = '''\n```\n'''\n"]


def test_unclosed_fence_runs_to_the_end():
    assert fenced_blocks("Here:\n```python\ndef f():\n    return 1\n") == ["def f():\n    return 1\n"]


def test_block_defining_entry_point_wins():
    text = "```python\nimport math\n```\n```python\ndef solve(x):\n    return x\n```\n"
    assert extract_code(text, "solve") == "def solve(x):\n    return x\n"
    assert extract_code(text, "other") == "import math\n"


def test_plain_code_is_kept_as_is():
    assert extract_code("def f():\n    return 1") == "def f():\n    return 1"


def test_prose_around_unfenced_code_is_dropped():
    text = "Sure, here you go:\nimport os\ndef f():\n    return 1\nThis returns one."
    assert extract_code(text, "f") == "import os\ndef f():\n    return 1\n"


def test_bare_completion_is_offered_before_its_stripped_reading():
    body = "    return helper(x)\n\ndef helper(x):\n    return x\n"
    assert code_candidates(body, "f")[0] == body


@pytest.mark.parametrize(
    ("text", "code"),
    [("", ""), ("no code here", "no code here"), ("```\n```", ""), ("```python\n```", "")],
)
def test_degenerate_responses_do_not_raise(text, code):
    assert extract_code(text, "f") == code  # nothing to cut: the program fails later, in the sandbox


def test_prose_stripping_is_not_quadratic(monkeypatch):
    """A long response whose code breaks early costs a few parses, not one per line (the harness's
    parse lock is held meanwhile)."""
    import cbench_code.extract as extract

    parsed = []
    parse = extract.parse
    monkeypatch.setattr(extract, "parse", lambda source, name: (parsed.append(1), parse(source, name))[1])
    response = "Here is my answer.\ndef f(x):\n)\n" + "x = 1\n" * 40000
    assert code_candidates(response, "f") == [response]
    assert len(parsed) == 2  # the whole piece, then up to the line that broke (one per line: 40,000)


def test_prose_after_code_is_cut_at_the_first_line_that_breaks_it():
    text = (
        "Sure:\nimport os\ndef f():\n    return (1 +\n            2)\nThat is, one plus two.\n"
        + "More prose.\n" * 500
    )
    assert extract_code(text, "f") == "import os\ndef f():\n    return (1 +\n            2)\n"
