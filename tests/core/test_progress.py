"""The progress display (issue 12 #13): what a terminal shows after each redraw has no stale
characters, it gives an ETA, and each phase says its name."""

from __future__ import annotations

import io

import pytest

from context_bench import evaluate, progress
from context_bench.progress import Progress
from context_bench.testing import isolated_host


class TTY(io.StringIO):
    def isatty(self):
        return True


def screen(written: str) -> list[str]:
    """What a terminal shows for ``written``: ``\\r`` goes back to the start of the line and the
    characters after it overwrite the old ones, the rest of the old line staying on screen."""
    lines: list[str] = []
    line: list[str] = []
    column = 0
    for char in written:
        if char == "\r":
            column = 0
        elif char == "\n":
            lines.append("".join(line).rstrip())
            line, column = [], 0
        else:
            if column < len(line):
                line[column] = char
            else:
                line.append(char)
            column += 1
    if line:
        lines.append("".join(line).rstrip())
    return lines


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    ticking = Clock()
    monkeypatch.setattr(progress, "_clock", ticking)
    monkeypatch.setenv("COLUMNS", "100")  # room for the whole bar
    return ticking


def test_a_shorter_line_leaves_no_stale_characters(clock):
    tty = TTY()
    bar = Progress(3, stream=tty)
    clock.now = 0.01
    bar.update()  # 100.0 rows/s
    drawn = tty.getvalue()
    clock.now = 20.0
    bar.update()  # 0.1 rows/s: a shorter line
    last = tty.getvalue()[len(drawn) :].lstrip("\r").rstrip()
    assert screen(tty.getvalue()) == [last] and last.endswith("errors 0")


def test_the_line_says_how_long_is_left_then_how_long_it_took(clock):
    tty = TTY()
    bar = Progress(4, stream=tty, label="answering")
    clock.now = 1.0
    bar.update()
    assert screen(tty.getvalue())[-1].startswith("answering [#####---------------] 1/4 rows")
    assert "ETA 0:03" in screen(tty.getvalue())[-1]
    for second in (2.0, 3.0, 64.0):
        clock.now = second
        bar.update(errors=1)
    bar.close()
    (shown,) = screen(tty.getvalue())
    assert "4/4 rows" in shown and "took 1:04" in shown and "ETA" not in shown
    assert shown.endswith("errors 3")


@pytest.mark.parametrize(("systems", "label"), [(None, "scoring"), ("echo", "running")])
def test_a_run_labels_its_phase(monkeypatch, systems, label):
    class Echo:
        name = "echo"

        def process(self, example):
            return {"response": example["question"]}

    tty = TTY()
    monkeypatch.setenv("COLUMNS", "100")  # room for the whole bar
    monkeypatch.setattr("sys.stderr", tty)
    rows = [{"id": "1", "question": "q", "answer": "q", "response": "q"}]
    evaluate(Echo() if systems else None, rows, host=isolated_host())
    assert screen(tty.getvalue())[0].startswith(f"{label} [")


def test_the_line_fits_a_narrow_terminal(clock, monkeypatch):
    """A line longer than the terminal wraps, and a wrapped line cannot be redrawn in place."""
    tty = TTY()
    bar = Progress(12345, stream=tty, label="answering")
    for columns, second in (("75", 1.0), ("60", 2.0), ("40", 3.0)):
        monkeypatch.setenv("COLUMNS", columns)
        clock.now = second
        bar.update()
        assert len(tty.getvalue().rpartition("\r")[2]) <= int(columns) - 1  # padding included
    first, second, third = (line.rstrip() for line in tty.getvalue().split("\r")[1:])
    assert first.startswith("answering [-") and len(first) <= 74 and first.endswith("errors 0")
    assert second == "answering 2/12345 rows  1.0 rows/s  ETA 3:25:43  errors 0"  # no room for a bar
    assert len(third) <= 39 and third.startswith("answering 3/12345 rows")
