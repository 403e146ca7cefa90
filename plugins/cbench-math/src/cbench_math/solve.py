"""Relations: equations and inequalities equal up to a constant factor, an inequality's solution
set.  It knows values only; :mod:`cbench_math.compare` builds on it (chains of relations compare
there, side by side)."""

from __future__ import annotations

import random
from typing import Any

import sympy as sp

from .numeric import POINTS, close, number
from .values import FLIPPED, Interval, Node, Rel, Scalar, SetV, name_like

_INEQ = set(FLIPPED)


def _proportional(a: Any, b: Any, *, positive: bool) -> bool:
    """``a == c * b`` for a constant ``c`` (nonzero; positive when asked)."""
    free = sorted(a.free_symbols | b.free_symbols, key=str)
    if not free:
        return False
    rng = random.Random(7)
    ratios = []
    for _ in range(POINTS):
        point = {s: sp.Rational(rng.randint(300, 2700), 1000) for s in free}
        try:
            num, den = number(a.subs(point)), number(b.subs(point))
        except (TypeError, ValueError, ArithmeticError, RecursionError):
            return False
        if num is None or den is None or den == 0:
            return False
        ratios.append(num / den)
    first = ratios[0]
    if abs(first) == 0 or not all(close(first, r) for r in ratios[1:]):
        return False
    return not positive or bool(sp.re(first) > 0)


def relations_equivalent(g: Rel, r: Rel) -> bool:
    """Two single relations of values that state the same: equations up to a nonzero factor,
    inequalities of the same strictness up to a positive one."""
    if len(g.ops) != 1 or len(r.ops) != 1 or not all(isinstance(s, Scalar) for s in g.sides + r.sides):
        return False
    (go,), (ro,) = g.ops, r.ops
    gl, gr = (s.expr for s in g.sides)
    rl, rr = (s.expr for s in r.sides)
    if go == ro and go in ("=", "!="):
        return _proportional(gl - gr, rl - rr, positive=False)
    if go in _INEQ and ro in _INEQ:
        if (go in ("<", ">")) != (ro in ("<", ">")):
            return False
        gd = gl - gr if go in (">", ">=") else gr - gl
        rd = rl - rr if ro in (">", ">=") else rr - rl
        return _proportional(gd, rd, positive=True)
    return False


def _label(node: Node) -> bool:
    """A variable whose bounds are its interval: ``x``, ``f(x)``, ``|AB|``; not ``|z|``, which
    is solved for ``z``."""
    return name_like(node) and (node.expr.is_Symbol or len(node.expr.free_symbols) > 1)


def _bounds_interval(rel: Rel) -> list[Node] | None:
    """``lo < x <= hi`` / ``x >= 5`` with a name in the middle: the interval of its bounds."""
    rel = rel.oriented()
    sides = rel.sides
    if not all(op in ("<", "<=") for op in rel.ops):
        return None
    inf = Scalar(sp.oo)
    if len(sides) == 3 and _label(sides[1]):
        lo, hi = sides[0], sides[2]
        return [Interval(lo, hi, rel.ops[0] == "<", rel.ops[1] == "<")]
    if len(sides) == 2:
        if _label(sides[0]) and not sides[1].expr.free_symbols:
            return [Interval(Scalar(-sp.oo), sides[1], True, rel.ops[0] == "<")]
        if _label(sides[1]) and not sides[0].expr.free_symbols:
            return [Interval(sides[0], inf, rel.ops[0] == "<", True)]
    return None


def _from_sympy(result: Any) -> list[Node] | None:
    if isinstance(result, sp.Union):
        parts = [_from_sympy(a) for a in result.args]
        if any(p is None for p in parts):
            return None
        return [n for p in parts for n in p]  # type: ignore[union-attr]
    if isinstance(result, sp.Interval):
        ends = Scalar(result.start), Scalar(result.end)
        return [Interval(*ends, bool(result.left_open), bool(result.right_open))]
    if isinstance(result, sp.FiniteSet):
        return [SetV(tuple(Scalar(a) for a in result.args))]
    return None


def inequality_set(rel: Rel) -> list[Node] | None:
    """The solution set over the reals of a gold inequality (chain), or None."""
    if not all(isinstance(s, Scalar) for s in rel.sides) or not set(rel.ops) <= _INEQ:
        return None
    direct = _bounds_interval(rel)
    if direct is not None:
        return direct
    free = set().union(*(s.expr.free_symbols for s in rel.sides))
    if len(free) != 1:
        return None
    (sym,) = free
    x = sp.Symbol("x_real", real=True)
    exprs = [s.expr.subs(sym, x) for s in rel.sides]
    ops = {"<": sp.Lt, "<=": sp.Le, ">": sp.Gt, ">=": sp.Ge}
    conds = [ops[op](exprs[i], exprs[i + 1]) for i, op in enumerate(rel.ops)]
    try:
        result = sp.Intersection(*(sp.solveset(c, x, sp.S.Reals) for c in conds))
    except (NotImplementedError, TypeError, ValueError, ArithmeticError, AttributeError):
        return None
    return _from_sympy(result)
