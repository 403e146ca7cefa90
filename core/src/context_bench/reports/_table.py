"""The terminal report: the verdict first, then aligned plain-text tables as wide as the terminal.

By default one screen: the verdict, a compact key-figures table, then each error message and
warning on a line; with ``detail`` every table there is, and the warnings whole.  A table wider
than the terminal turns on its side, and one too wide either way is shown row by row, a figure a
line.  Every piece of text passes :func:`~context_bench.reports._sections.printable`, so a name or
an error message carrying an escape sequence shows as text instead of driving the terminal.
"""

from __future__ import annotations

import shutil
import textwrap

from ..records import ErrorMessage, EvalResult
from . import (
    View,
    summary_of,
)
from . import (
    _added_sections as added_sections,
)
from . import (
    _by_sections as by_sections,
)
from . import (
    _figure_sections as figure_sections,
)
from . import (
    _sections as sections,
)
from . import (
    _sweep_sections as sweep_sections,
)
from . import (
    _turn_sections as turn_sections,
)
from ._sections import MAX_WIDTH, Section, printable, width_of
from ._verdict import verdicts

#: The narrowest terminal a report is laid out for.
MIN_WIDTH = 40
#: Key-figure columns only ``--detail`` shows.
DETAIL_ONLY = ("$/pass", "front")


def terminal_width() -> int:
    """The terminal's width (``COLUMNS`` first), :data:`~.sections.MAX_WIDTH` when there is none."""
    return max(MIN_WIDTH, shutil.get_terminal_size((MAX_WIDTH, 24)).columns)


def fitted(text: str) -> str:
    """A notice for standard error on one line at the terminal's width (cut with "…")."""
    return _cell(text, terminal_width())


def note(result: EvalResult) -> str:
    """What the one-screen table leaves out, said on stderr before it: the run's counts."""
    return sections.overview(result, summary_of(result))


def render(result: EvalResult, view: View) -> str:
    summary = summary_of(result)
    if not summary.groups:  # nothing to say but that
        return f"{printable(sections.overview(result, summary))}\n"
    width = max(MIN_WIDTH, view.width)
    parts = ["\n".join(line for v in verdicts(summary) for line in v.wrapped(width))]
    parts.append("\n".join(_wrapped(line, width) for line in sweep_sections.operating_lines(summary)))
    if view.detail:
        wholes = [
            *figure_sections.key_figures(summary),
            *sections.build(summary, detail=True),
            *by_sections.build(summary),
            *figure_sections.build(summary, detail=True),
        ]
    else:  # --by's tables were asked for by name: on the one screen too
        wholes = [compact(section) for section in figure_sections.key_figures(summary)]
        wholes += by_sections.build(summary)
    wholes += turn_sections.build(summary)  # a multi-turn replay's: short, on the one screen too
    wholes += [*sweep_sections.curves(summary), *sweep_sections.repeats(summary)]
    wholes += added_sections.build(summary)
    parts += [_table(figure_sections.readable(whole, width), width) for whole in wholes]
    notes = [f"warning: {_line(note)}" for note in sections.warnings(summary)]
    # one screen: each warning on one line (--detail: whole), each error message whole (the
    # error messages' table is --detail's)
    said = [] if view.detail else [_wrapped(_error(m), width) for m in summary.errors.messages]
    said += [_wrapped(note, width) if view.detail else _cell(note, width) for note in notes]
    if said:
        parts.append("\n".join(said))
    run = sections.run_lines(result.metadata) if view.detail else []
    if run:
        said = [_wrapped(f"  {_line(label)}: {_line(text)}", width, "    ") for label, text in run]
        parts.append("\n".join(["Run", *said]))
    return "\n\n".join(part for part in parts if part) + "\n"


def compact(section: Section) -> Section:
    """The key figures with the columns that say something here: none that is "-" (or 0) on every
    line, and not :data:`DETAIL_ONLY`'s."""
    keep = [
        i
        for i, header in enumerate(section.headers)
        if i < section.keys
        or header not in DETAIL_ONLY
        and any(row[i] not in ("-", "0") for row in section.rows)
    ]
    title = (
        ";".join(section.title.split(";")[:2]).replace(" mean tokens per row", " tokens/row")
        + "; -v: every table)"
    )
    return Section(
        title,
        tuple(section.headers[i] for i in keep),
        tuple(tuple(row[i] for i in keep) for row in section.rows),
        tuple(section.numeric[i] for i in keep),
        section.keys,
        section.max_cell,
    )


def _error(m: ErrorMessage) -> str:
    rows = ", ".join(map(str, m.examples)) + (", …" if m.count > len(m.examples) else "")
    return _line(
        f"error: {m.message} ({m.type}; {m.stage} {m.source}; {m.count} row{'s' * (m.count != 1)}: {rows})"
    )


def _line(text: str) -> str:
    return printable(" ".join(text.split()))


def _wrapped(text: str, width: int, indent: str = "  ") -> str:
    return "\n".join(textwrap.wrap(text, width, subsequent_indent=indent, break_on_hyphens=False))


def _cell(text: str, limit: int) -> str:
    text = _line(text)  # a newline or tab in a name would break the alignment
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _table(section: Section, width: int) -> str:
    title = _wrapped(_line(section.title), width)
    if width_of(section) > width:
        return "\n".join([title, *_records(section, width)])
    limit = section.max_cell
    headers = [_cell(h, limit) for h in section.headers]
    rows = [[_cell(c, limit) for c in row] for row in section.rows]
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if right else c.ljust(w)
            for c, w, right in zip(cells, widths, section.numeric, strict=True)
        ).rstrip()

    return "\n".join([title, line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def _records(section: Section, width: int) -> list[str]:
    """A table too wide either way, row by row: the row's keys, then a figure and its value a
    line; a table of keys alone (the error messages), a row's cells on wrapped lines."""
    if section.keys >= len(section.headers):
        return [
            _wrapped(
                "; ".join(
                    f"{h} {_cell(c, section.max_cell)}" for h, c in zip(section.headers, row, strict=True)
                ),
                width,
            )
            for row in section.rows
        ]
    labels = [_cell(h, section.max_cell) for h in section.headers[section.keys :]]
    room = max(8, width - 4 - max(map(len, labels), default=0))
    lines = []
    for row in section.rows:
        lines.append(_cell(" / ".join(row[: section.keys]), width))
        for label, value in zip(labels, row[section.keys :], strict=True):
            lines.append(f"  {label.ljust(len(max(labels, key=len)))}  {_cell(value, room)}")
    return lines
