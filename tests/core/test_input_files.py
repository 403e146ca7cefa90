"""Input files as they arrive from other tools: byte-order marks, stray bytes, ragged CSV rows."""

from __future__ import annotations

import json

import pytest

from context_bench import Output, RunConfig
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
    assert code == 4 and len(rows) == 3  # two of three rows unreadable: too many failures
    assert rows[0]["scores"]["exact_match"] == 1.0 and not rows[0]["errors"]
    assert [r["errors"][0]["source"] for r in rows[1:]] == [f"{path}:3", f"{path}:4"]
    assert all(r["errors"][0]["type"] == "MalformedRow" and not r["scores"] for r in rows[1:])


def test_a_lone_surrogate_in_a_row_is_replaced_and_noted(tmp_path):
    path = _write(
        tmp_path, "d.jsonl", b'{"id": "a", "answer": "Paris\\ud800", "response": "Paris"}\n{"id": "b"}\n'
    )
    repaired, plain = read_file(path)
    assert repaired == {"id": "a", "answer": "Paris\ufffd", "response": "Paris"}
    assert repaired.repaired and not hasattr(plain, "repaired")
    as_json = _write(tmp_path, "d.json", b'[{"id": "a", "answer": "\\udfff"}, {"id": "\\ud83d\\ude00"}]')
    first, emoji = read_file(as_json)
    assert first == {"id": "a", "answer": "\ufffd"} and emoji == {"id": "\U0001f600"}
    assert type(emoji) is dict  # a valid surrogate pair is not a repair


@pytest.mark.parametrize("cache", [False, True])
def test_score_with_a_lone_surrogate_neither_crashes_nor_loses_the_row(tmp_path, capsys, cache):
    path = _write(tmp_path, "d.jsonl", b'{"id": "a", "answer": "x", "response": "x \\ud800"}\n')
    extra = ["--cache-dir", str(tmp_path / "cache")] if cache else []
    for _ in range(2 if cache else 1):  # the re-run reads what the first one cached
        code = main(["score", str(path), "--output", "jsonl", "--no-progress", *extra])
        out, err = capsys.readouterr()
        assert code == 0 and "Traceback" not in err
        [row] = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        assert row["response"] == "x \ufffd" and row["scores"]["f1"] > 0
        assert "lone surrogates" in row["meta"]["repaired"]


def test_json_nested_too_deeply_is_one_line_not_a_traceback(tmp_path, capsys):
    deep = b"[" * 100_000 + b"]" * 100_000
    jsonl = _write(
        tmp_path, "d.jsonl", b'{"id": "a", "x": ' + deep + b'}\n{"id": "b", "answer": "x", "response": "x"}\n'
    )
    bad, good = read_file(jsonl)
    assert bad == MalformedRow(f"{jsonl}:1", "JSON nested too deeply to read") and good["id"] == "b"
    code = main(["score", str(jsonl), "--output", "json", "--no-progress"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "nested too deeply" in out and code == 4
    whole = _write(tmp_path, "d.json", deep)
    code = main(["score", str(whole), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.strip().splitlines()[-1].endswith("d.json: JSON nested too deeply to read")


def test_a_row_bigger_than_the_limit_is_a_row_error_and_the_rest_is_read(tmp_path):
    big = b'{"id": "big", "x": "' + b"y" * 5000 + b'"}\n'
    path = _write(tmp_path, "d.jsonl", b'{"id": "a"}\n' + big + b'{"id": "c"}\n' + b'{"id": "d"}')
    first, bad, third, last = read_file(path, max_row_bytes=1000)
    assert bad == MalformedRow(f"{path}:2", "the line is longer than 1,000 bytes (the row size limit)")
    assert (first, third, last) == ({"id": "a"}, {"id": "c"}, {"id": "d"})
    assert len(list(read_file(path))) == 4  # the default limit (10 MB) is generous
    exact = _write(tmp_path, "e.jsonl", b'{"id": "abc"}\n{"id": "abcd"}')
    assert [r for r in read_file(exact, max_row_bytes=13)] == [
        {"id": "abc"},
        MalformedRow(f"{exact}:2", "the line is longer than 13 bytes (the row size limit)"),
    ]


@pytest.mark.parametrize("response", [[18], {"a": "18"}, True])
def test_a_response_that_is_not_text_is_an_input_error_not_stringified(response):
    from context_bench import evaluate
    from context_bench.testing import isolated_host

    rows = [{"id": "a", "answer": "18", "response": response}, {"id": "b", "answer": "18", "response": 18}]
    result = evaluate(None, rows, RunConfig(output=Output(progress=False)), host=isolated_host())
    bad, number = result.rows
    assert bad.scores == {} and [(e.stage, e.type) for e in bad.errors] == [("input", "TypeError")]
    assert f"'response' is a {type(response).__name__}, not text" in bad.errors[0].message
    assert number.scores["exact_match"] == 1.0  # a number is text enough


def test_a_csv_field_over_the_csv_module_s_cap_is_read_and_one_over_the_row_limit_is_a_row_error(tmp_path):
    long_context = "y" * 200_000  # over the csv module's 128 KB default, under the row limit
    path = _write(tmp_path, "d.csv", f"id,context\na,x\nb,{long_context}\nc,z\n".encode())
    assert [r["id"] for r in read_file(path)] == ["a", "b", "c"]
    huge = _write(tmp_path, "e.csv", f"id,context\na,x\nb,{'y' * 400_000}\nc,z\n".encode())
    first, bad, last = read_file(huge, max_row_bytes=300_000)
    assert (first["id"], last["id"]) == ("a", "c")
    assert bad.location == f"{huge}:3" and "field larger than field limit" in bad.message
