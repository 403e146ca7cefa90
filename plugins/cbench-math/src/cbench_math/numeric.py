"""High-precision numbers for the comparer and the solver: a constant expression's value and
whether two values agree within :data:`REL_TOL` (so ``2^{-99}`` never equals ``2^{-98}``)."""

from __future__ import annotations

from typing import Any

import sympy as sp

#: Relative tolerance of a numeric comparison, after exact comparison failed to decide.
REL_TOL = sp.Float("1e-20", 40)
DIGITS = 40
#: Random points at which two symbolic expressions are evaluated.
POINTS = 4


def number(expr: Any) -> Any | None:
    """A high-precision complex number for a constant expression, or None."""
    if getattr(expr, "free_symbols", None) or getattr(expr, "is_Matrix", False):
        return None
    if expr.has(sp.Sum, sp.Product, sp.Integral, sp.Limit):
        return None
    try:
        value = sp.N(expr, DIGITS)
    except (TypeError, ValueError, ArithmeticError, RecursionError):
        return None
    if not value.is_number or value.has(sp.oo, -sp.oo, sp.zoo, sp.nan):
        return None
    return value


def close(a: Any, b: Any) -> bool:
    """``a`` and ``b`` (numbers from :func:`number`) agree within the relative tolerance."""
    diff = abs(sp.N(a - b, DIGITS))
    scale = max(abs(a), abs(b))
    if scale == 0:
        return diff == 0
    return bool(diff <= REL_TOL * scale)
