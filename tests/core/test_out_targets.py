"""`--out` writes where it points (issue 24): a file is replaced atomically, a character device, FIFO
or socket is written through and left as it was, a directory or block device is one line before any
row runs; the same for the HTML rows file, `datasets download --to` and the cache.  The devices
are private nodes made with mknod in a temporary directory: no test touches the real /dev/null."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading

import pytest

from context_bench.cli import main
from context_bench.reports import formats
from context_bench.testing import isolated_host

#: The core's report formats (a host of the built-ins alone).
FORMATS = formats(isolated_host())

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")


@pytest.fixture
def qa(workdir, write_rows):
    write_rows([{"id": str(n), "question": f"capital {n}", "answer": "Paris"} for n in range(3)])
    return workdir


def null_device(path):
    """A private character device with /dev/null's numbers: writes to it are dropped."""
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return path


def _device(path):
    info = os.stat(path)
    return stat.S_ISCHR(info.st_mode), info.st_rdev


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_character_device_is_written_through_never_replaced(cbench, qa, paris, fmt):
    device = null_device(qa / "null")
    before = _device(device)
    code, out, err = cbench(
        "run", "--proxy", paris.url, "--dataset", "qa.jsonl", "--output", fmt, "--out", str(device),
        "--html-inline-rows", "0",
    )  # fmt: skip
    assert code == 0, err
    assert _device(device) == before == (True, os.makedev(1, 3))
    assert sorted(os.listdir(qa)) == ["null", "qa.jsonl"]  # no rows file, no spool left beside it
    assert out == "" and f"wrote {fmt} report to {device}" in err


def _reader(path, got):
    def read():
        with open(path, "rb") as pipe:
            got.append(pipe.read())

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fmt", ["json", "jsonl", "table"])
def test_a_fifo_with_a_reader_gets_the_report_and_stays_a_fifo(cbench, qa, paris, fmt):
    fifo = qa / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = _reader(fifo, got)
    code, _, err = cbench(
        "run", "--proxy", paris.url, "--dataset", "qa.jsonl", "--output", fmt, "--out", str(fifo)
    )
    reader.join(30)
    assert code == 0, err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    text = got[0].decode("utf-8")
    if fmt == "json":
        assert [row["response"] for row in json.loads(text)["rows"]] == ["Paris"] * 3
    elif fmt == "jsonl":
        assert [json.loads(line)["id"] for line in text.splitlines()] == ["0", "1", "2"]
    else:
        assert "Key figures" in text


@pytest.mark.timeout(60)
def test_a_socket_gets_the_report(cbench, qa, paris):
    path = qa / "report.sock"
    got: list[bytes] = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listening:
        listening.bind(str(path))
        listening.listen(1)

        def accept():
            connection, _ = listening.accept()
            with connection:
                chunks = []
                while chunk := connection.recv(65536):
                    chunks.append(chunk)
                got.append(b"".join(chunks))

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        code, _, err = cbench(
            "run", "--proxy", paris.url, "--dataset", "qa.jsonl", "--output", "json", "--out", str(path)
        )
        thread.join(30)
    assert code == 0, err
    assert stat.S_ISSOCK(os.stat(path).st_mode) and len(json.loads(got[0])["rows"]) == 3


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda path: path.mkdir(), "is a directory"),
        (
            lambda path: os.mknod(path, stat.S_IFBLK | 0o600, os.makedev(7, 0)),
            "is a block device (a disk), not a file to write a report to",
        ),
        (lambda path: None, "no directory {target}"),
    ],
)
@pytest.mark.parametrize("command", ["run", "score", "compare"])
def test_what_cannot_be_written_is_one_line_before_any_row_runs(capsys, qa, paris, make, said, command):
    target = qa / "target"
    make(target)
    out = str(target / "report.json") if said.startswith("no directory") else str(target)
    argv = {
        "run": ["run", "--proxy", paris.url, "--dataset", "qa.jsonl"],
        "score": ["score", "qa.jsonl"],
        "compare": ["compare", "qa.jsonl"],
    }[command]
    code = main([*argv, "--out", out])
    stdout, err = capsys.readouterr()
    assert (
        code == 2
        and stdout == ""
        and err.strip().splitlines() == [f"context-bench: error: --out {out}: {said.format(target=target)}"]
    )
    assert paris.requests == []


def test_a_paged_html_reports_rows_file_that_is_a_directory_is_refused_first(cbench, qa, paris):
    (qa / "report.rows.jsonl").mkdir()
    code, _, err = cbench(
        "run", "--proxy", paris.url, "--dataset", "qa.jsonl", "--output", "html",
        "--out", "report.html", "--html-inline-rows", "0",
    )  # fmt: skip
    assert code == 2 and "report.rows.jsonl: is a directory" in err and paris.requests == []


def test_a_paged_html_reports_rows_file_that_is_a_device_is_written_through(cbench, qa, paris):
    device = null_device(qa / "report.rows.jsonl")
    code, _, err = cbench(
        "run", "--proxy", paris.url, "--dataset", "qa.jsonl", "--output", "html",
        "--out", "report.html", "--html-inline-rows", "0",
    )  # fmt: skip
    assert code == 0, err
    assert _device(device) == (True, os.makedev(1, 3)) and (qa / "report.html").is_file()


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda path: path.write_text("x"), "--to {p}: is not a directory"),
        (lambda path: null_device(path), "--to {p}: is not a directory"),
        (
            lambda path: (path.parent / "file").write_text("x"),
            "--to {p}: is under {f}, which is not a directory",
        ),
    ],
)
def test_datasets_download_to_what_is_not_a_directory_is_one_line(capsys, qa, make, said):
    target = qa / "mirror"
    make(target)
    where = target if said.endswith(": is not a directory") else qa / "file" / "mirror"
    code = main(["datasets", "download", "squad", "--to", str(where)])
    err = capsys.readouterr().err
    assert code == 2 and err.strip() == f"context-bench: error: {said.format(p=where, f=qa / 'file')}"


@pytest.mark.timeout(60)
def test_a_cache_file_that_is_a_fifo_is_neither_read_nor_written(cbench, qa, paris):
    argv = ["run", "--proxy", paris.url, "--dataset", "qa.jsonl", "--cache-dir", "cache", "--output", "json"]
    assert cbench(*argv)[0] == 0
    (cached,) = (qa / "cache").rglob("*.jsonl")
    cached = cached.relative_to(qa)  # as the run names it, under --cache-dir cache
    cached.unlink()
    os.mkfifo(cached)  # opened for reading or appending, it would hold the run until a writer came
    code, out, err = cbench(*argv)
    assert code == 0, err
    warnings = json.loads(out)["summary"]["warnings"]
    assert f"cache {cached} is not a regular file: not read; those rows are computed again" in warnings
    assert any(w.startswith(f"caching stopped: cannot write {cached}: not a regular file") for w in warnings)
    assert stat.S_ISFIFO(os.stat(cached).st_mode) and len(paris.requests) == 6
