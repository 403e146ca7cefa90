"""Input files as they arrive from other tools: byte-order marks, stray bytes, ragged CSV rows."""

from __future__ import annotations

import json

import pytest

from context_bench.cli import main
from context_bench.datasets import MalformedRow, read_file
from context_bench.errors import UsageError

BOM = b"\xef\xbb\xbf"


def _write(tmp_path, name, content: bytes):
    path = tmp_path / name
    path.write_bytes(content)
    return path


def test_a_byte_order_mark_is_ignored(tmp_path):
    rows = b'{"id": "a", "answer": "x"}\n{"id": "b", "answer": "y"}\n'
    assert [r["id"] for r in read_file(_write(tmp_path, "d.jsonl", BOM + rows))] == ["a", "b"]
    as_json = BOM + b'[{"id": "a", "answer": "x"}]'
    assert list(read_file(_write(tmp_path, "d.json", as_json))) == [{"id": "a", "answer": "x"}]
    as_csv = BOM + b"id,answer\r\na,x\r\n"
    assert list(read_file(_write(tmp_path, "d.csv", as_csv))) == [{"id": "a", "answer": "x"}]


def test_a_jsonl_line_that_is_not_utf8_costs_that_line_only(tmp_path):
    path = _write(tmp_path, "d.jsonl", b'{"id": "a"}\n{"id": "b", "answer": "caf\xe9"}\n{"id": "c"}\n')
    first, bad, last = read_file(path)
    assert first == {"id": "a"} and last == {"id": "c"}
    assert bad == MalformedRow(f"{path}:2", "not UTF-8 text (byte 0xe9)")


def test_a_csv_row_that_is_not_utf8_costs_that_row_only(tmp_path):
    path = _write(tmp_path, "d.csv", b"id,answer\na,caf\xe9\nb,ok\n")
    bad, good = read_file(path)
    assert bad == MalformedRow(f"{path}:2", "not UTF-8 text")
    assert good == {"id": "b", "answer": "ok"}


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("d.json", b'[{"id": "a"},\n {"id": "caf\xe9"}]', "d.json: line 2 is not UTF-8 text"),
        ("d.csv", b"id,r\xe9ponse\na,x\n", "d.csv: the header line is not UTF-8 text"),
    ],
)
def test_a_whole_document_that_is_not_utf8_is_a_usage_error(tmp_path, name, content, message):
    with pytest.raises(UsageError, match=message):
        list(read_file(_write(tmp_path, name, content)))


def test_the_cli_says_so_in_one_line(tmp_path, capsys):
    path = _write(tmp_path, "conversations.json", b'[{"id": "caf\xe9"}]')
    code = main(["score", str(path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == f"context-bench: error: {path}: line 1 is not UTF-8 text"


def test_csv_rows_with_the_wrong_number_of_fields_are_malformed(tmp_path):
    content = (
        b'id,answer,response\na,Paris,Paris\nb,"Paris, France",It is Paris, France\nc,x\n\nd,"two\nlines",y\n'
    )
    path = _write(tmp_path, "d.csv", content)
    assert list(read_file(path)) == [
        {"id": "a", "answer": "Paris", "response": "Paris"},
        MalformedRow(f"{path}:3", "4 fields where the header has 3"),
        MalformedRow(f"{path}:4", "2 fields where the header has 3"),
        {"id": "d", "answer": "two\nlines", "response": "y"},
    ]


def test_malformed_csv_rows_are_reported_not_scored(tmp_path, capsys):
    path = _write(tmp_path, "d.csv", b"id,answer,response\na,x,x\nb,x,x,extra\nc,x\n")
    code = main(["score", str(path), "--output", "json", "--no-progress"])
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert code == 0 and len(rows) == 3
    assert rows[0]["scores"]["exact_match"] == 1.0 and not rows[0]["errors"]
    assert [r["errors"][0]["source"] for r in rows[1:]] == [f"{path}:3", f"{path}:4"]
    assert all(r["errors"][0]["type"] == "MalformedRow" and not r["scores"] for r in rows[1:])
