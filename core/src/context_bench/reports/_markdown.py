"""The Markdown report: the verdict as a list, then one heading and one pipe table per section."""

from __future__ import annotations

from ..records import EvalResult
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
from ._sections import Section, printable
from ._verdict import verdicts


def render(result: EvalResult, view: View | None = None) -> str:
    """The report; ``view.detail`` (``--detail``) shows every score field (:func:`sections.build`)."""
    summary = summary_of(result)
    parts = ["## context-bench results"]
    said = verdicts(summary)
    if said:
        parts.append("\n".join(f"- {_inline(str(v))}" for v in said))
    said = sweep_sections.operating_lines(summary)
    if said:
        parts.append("\n".join(f"- {_inline(line)}" for line in said))
    parts.append(sections.overview(result, summary))
    wholes = [
        *figure_sections.key_figures(summary),
        *sweep_sections.curves(summary),
        *sweep_sections.repeats(summary),
        *added_sections.build(summary),
        *sections.build(summary, detail=view is not None and view.detail),
        *by_sections.build(summary),
        *turn_sections.build(summary),
        *figure_sections.build(summary, detail=view is not None and view.detail),
    ]
    parts += [_table(figure_sections.readable(whole)) for whole in wholes]
    notes = sections.warnings(summary)
    if notes:
        parts.append("\n".join(["### Warnings", "", *(f"- {_inline(note)}" for note in notes)]))
    run = sections.run_lines(result.metadata)
    if run:
        parts.append("\n".join(["### Run", "", *(f"- {_inline(k)}: {_inline(v)}" for k, v in run)]))
    return "\n\n".join(parts) + "\n"


def _inline(text: str) -> str:
    """Text kept on one line and inert: no HTML tags, no table breaks, no terminal escapes."""
    text = printable(" ".join(text.split()))
    for char in "\\`*[]<>|":  # "_" stays: field names are full of it, GFM leaves it inside words
        text = text.replace(char, "\\" + char)
    return text


def _table(section: Section) -> str:
    def line(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(cells) + " |"

    rule = tuple("---:" if right else "---" for right in section.numeric)
    return "\n".join(
        [
            f"### {_inline(section.title)}",
            "",
            line(tuple(_inline(h) for h in section.headers)),
            line(rule),
            *(line(tuple(_inline(c) for c in row)) for row in section.rows),
        ]
    )
