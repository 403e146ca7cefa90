"""How the reports write dollars, intervals, ratios and p-values: one spelling for every format."""

from __future__ import annotations

import math
from typing import Any

from ..metrics.paired import p_text
from ._sections import HUGE

#: The smallest p-value written as a number; below it every test's p reads "<0.001".
P_RESOLUTION = 0.001


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def money(value: Any) -> str:
    """Dollars: four decimals under a dollar, cents above, the sign before the "$" ("-$0.0123"),
    and a plain "$0.00" for what is zero at the precision shown (never "$-0.0000")."""
    if not _finite(value):
        return "-"
    size = abs(value)
    if size >= HUGE:
        text = f"{size:.4g}"
    else:
        text = f"{size:.4f}" if size < 1 else f"{size:,.2f}"
        if float(text.replace(",", "")) == 0:
            return "$0.00"
    return ("-" if value < 0 else "") + "$" + text


def bound(value: float, digits: int = 2) -> str:
    return f"{value:.4g}" if not math.isfinite(value) or abs(value) >= HUGE else f"{value:.{digits}f}"


def interval(ci: Any, digits: int = 2) -> str:
    """An interval as "[-0.62, -0.44]"; "-" when there is none."""
    if not ci:
        return "-"
    return f"[{bound(ci[0], digits)}, {bound(ci[1], digits)}]"


def ratio(value: Any) -> str:
    """A ratio of token counts, "0.54x" in every format."""
    return "-" if not _finite(value) else f"{bound(value)}x"


def p_value(value: Any, alpha: float) -> str:
    """A p-value as :func:`~context_bench.metrics.paired.p_text` writes it (on the side of alpha it
    is on), or "<0.001" below that for every test."""
    if value is None:
        return "-"
    return f"<{P_RESOLUTION:g}" if value < P_RESOLUTION < alpha else p_text(value, alpha)
