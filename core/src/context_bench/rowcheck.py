"""What a row's numbers may be where they come from outside the run: ``score``'s files (tokens,
cost, latency beside a response) and ``compare``'s saved reports (those and the scores).

A figure that cannot be right (not a number, NaN or infinite, negative, or beyond
:data:`MAX_FIGURE`) is an input error on its row, counted, shown and gated like any error, never
a number that moves a mean or a saving.
"""

from __future__ import annotations

import math
from typing import Any

#: The largest token count, cost (dollars), latency (seconds) or absolute score a row may give:
#: a trillion, far past any real row and far below where sums of a million rows lose precision.
MAX_FIGURE = 1e12

#: A row's figures and what each counts.
FIGURES = {
    "input_tokens": "a token count",
    "output_tokens": "a token count",
    "cost": "dollars",
    "latency": "seconds",
}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def figure_problem(field: str, value: Any) -> str | None:
    """Why ``value`` cannot be a row's ``field`` (a key of :data:`FIGURES`), or None when it can
    (None, or a number from 0 to :data:`MAX_FIGURE`)."""
    if value is None:
        return None
    number = _number(value)
    if number is None:
        return f"{field!r} is {value!r}, not a number ({FIGURES[field]})"
    if not 0 <= number <= MAX_FIGURE:  # NaN too
        return f"{field!r} is {number:.12g}, not {FIGURES[field]} from 0 to {MAX_FIGURE:g}"
    return None


def score_problem(field: str, value: Any) -> str | None:
    """Why ``value`` cannot be a score, or None when it is a number within +-:data:`MAX_FIGURE`."""
    number = _number(value)
    if number is None:
        return f"score {field!r} is {value!r}, not a number"
    if not abs(number) <= MAX_FIGURE:
        return f"score {field!r} is {number:.12g}, not a finite number within +-{MAX_FIGURE:g}"
    return None


def is_figure(value: Any) -> bool:
    """A finite number: what a usage or weight entry must be to be summed."""
    number = _number(value)
    return number is not None and math.isfinite(number)
