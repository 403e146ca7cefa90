"""Whether a response's parsed answer is equivalent to the gold's.

The comparison is asymmetric where grading is: the gold decides the precision of a decimal and
a gold inequality accepts an interval but not the other way round.  Values are compared exactly
first (rational arithmetic, structural equality); only then numerically, with 40 significant
digits and a relative tolerance (:mod:`cbench_math.numeric`).  Relations that are not plain values
are left to :mod:`cbench_math.solve`.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

import sympy as sp

from .numeric import POINTS, close, number
from .solve import inequality_set, relations_equivalent
from .values import Interval, Lst, Node, Rel, Scalar, SetV, Text, Tup, Union_, name_like

#: Least decimal places of a response decimal that may round a rational gold (``0.33`` ~ 1/3).
MIN_ROUNDING_PLACES = 2
#: Relative error of a printed double (``0.33333333333333331`` for 1/3).
FLOAT_NOISE = sp.Rational(4, 10**16)


# -- scalars --------------------------------------------------------------------------------------


def same_value(x: Any, y: Any) -> bool:
    """Exact (or provably equal) mathematical equality of two sympy values."""
    if getattr(x, "is_Matrix", False) or getattr(y, "is_Matrix", False):
        if not (getattr(x, "is_Matrix", False) and getattr(y, "is_Matrix", False)):
            return False
        return x.shape == y.shape and all(
            _values_equiv(Scalar(a), Scalar(b, _places(b))) for a, b in zip(x, y, strict=True)
        )
    if x == y:
        return True
    if x.is_Rational and y.is_Rational:
        return False
    if x in (sp.oo, -sp.oo) or y in (sp.oo, -sp.oo):
        return False
    free = sorted(x.free_symbols | y.free_symbols, key=str)
    if x.has(sp.Sum, sp.Product) or y.has(sp.Sum, sp.Product):
        return False
    if not free:
        if x == 0 or y == 0:
            other = y if x == 0 else x
            return other.is_zero is True
        a, b = number(x), number(y)
        return a is not None and b is not None and close(a, b)
    return _same_function(x, y, free)


def _same_function(x: Any, y: Any, free: Sequence[Any]) -> bool:
    """Equal as functions: equal at random points, or ``simplify(x - y) == 0`` when points fail."""
    rng = random.Random(20240601)
    for _ in range(POINTS):
        point = {s: sp.Rational(rng.randint(300, 2700), 1000) for s in free}
        try:
            a, b = x.subs(point), y.subs(point)
            if a.is_Rational and b.is_Rational:
                if a != b:
                    return False
                continue
            a, b = number(a), number(b)
        except (TypeError, ValueError, ArithmeticError, RecursionError):
            a = b = None
        if a is None or b is None:
            break
        if not close(a, b):
            return False
    else:
        return True
    try:
        return sp.simplify(x - y) == 0
    except (TypeError, ValueError, ArithmeticError, RecursionError, NotImplementedError):
        return False


def _places(value: Any) -> int | None:
    """Decimal places of a terminating decimal (``33/100`` has 2): matrix entries keep no
    record of how they were written, so this is their precision."""
    if not value.is_Rational or value.q == 1:
        return None
    q, places = int(value.q), 0
    while q % 10 == 0 or q % 2 == 0 or q % 5 == 0:
        q //= 10 if q % 10 == 0 else 2 if q % 2 == 0 else 5
        places += 1
    return places if q == 1 else None


def _rounds_to(value: Any, decimal: Any, places: int) -> bool:
    """``decimal`` is ``value`` rounded to ``places`` (within half a unit of the last place)."""
    return bool(abs(value - decimal) * 2 * 10**places <= 1)


def scalar_equiv(gold: Scalar, resp: Scalar) -> bool:
    """Values, with the percent rule: ``X%`` stands for ``X`` and for ``X/100``."""
    if gold.percent == resp.percent:
        return _values_equiv(gold, resp)
    if gold.percent:
        return any(_values_equiv(Scalar(v, gold.decimals), resp) for v in (gold.expr, gold.expr / 100))
    return any(_values_equiv(gold, Scalar(v, resp.decimals)) for v in (resp.expr, resp.expr / 100))


def _values_equiv(gold: Scalar, resp: Scalar) -> bool:
    """Exact equality; then the rounding policy: a gold decimal fixes the precision an exact
    response is rounded to; a response decimal may round a *rational* gold."""
    if same_value(gold.expr, resp.expr):
        return True
    g, r = gold.expr, resp.expr
    if resp.decimals is not None and resp.decimals >= MIN_ROUNDING_PLACES and g.is_Rational and r.is_Rational:
        return _rounds_to(g, r, resp.decimals) or bool(abs(g - r) <= FLOAT_NOISE * abs(g))
    if gold.decimals is not None and resp.decimals is None:
        value = number(r)
        if value is not None and value.is_real:
            return _rounds_to(value, g, gold.decimals)
    return False


# -- structures -----------------------------------------------------------------------------------


def _constant(node: Node) -> bool:
    return isinstance(node, Scalar) and not getattr(node.expr, "free_symbols", True)


def value_side(rel: Rel) -> Node | None:
    """The value an equation states, if it states one: ``x = 5`` -> 5; ``x = 1+1 = 2`` -> 2;
    ``x \\approx 11`` -> 11; ``1/3 \\approx 0.33`` -> 1/3; ``x \\in [0, 1]`` -> [0, 1]."""
    if "≈" in rel.ops:
        k = rel.ops.index("≈")
        before = rel.sides[: k + 1]
        if len(before) == 1 and name_like(before[0]):
            return rel.sides[k + 1]
        if len(before) == 1:
            return before[0]
        rel = Rel(before, rel.ops[:k])
    if not set(rel.ops) <= {"=", "∈"}:
        return None
    if len(rel.sides) >= 3:
        return rel.sides[-1]
    lhs, rhs = rel.sides
    if name_like(lhs) or (_constant(lhs) and _constant(rhs)):
        return rhs
    if name_like(rhs) and not name_like(lhs):
        return lhs
    return None


def _same_set(golds: Iterable[Node], resps: Iterable[Node]) -> bool:
    """Equal as sets: every gold answer is given and every given answer is a gold one
    (order and repetition do not matter)."""
    golds, resps = list(golds), list(resps)
    if not golds or not resps:
        return not golds and not resps
    matched = [False] * len(resps)
    for g in golds:
        hits = [j for j, r in enumerate(resps) if equiv(g, r)]
        if not hits:
            return False
        for j in hits:
            matched[j] = True
    return all(matched)


def _ordered(golds: Sequence[Node], resps: Sequence[Node]) -> bool:
    return len(golds) == len(resps) and all(equiv(g, r) for g, r in zip(golds, resps, strict=True))


def _set_parts(node: Node) -> list[Node] | None:
    if isinstance(node, Union_):
        return list(node.parts)
    if isinstance(node, Interval):
        return [node]
    if isinstance(node, Tup) and node.kind == "paren" and len(node.items) == 2:
        if all(isinstance(n, Scalar) for n in node.items):
            return [Interval(node.items[0], node.items[1], True, True)]
    return None


def _interval_equiv(g: Node, r: Node) -> bool:
    if isinstance(g, Interval) and isinstance(r, Interval):
        return (
            g.left_open == r.left_open
            and g.right_open == r.right_open
            and scalar_equiv(g.lo, r.lo)
            and scalar_equiv(g.hi, r.hi)
        )
    if isinstance(g, SetV) and isinstance(r, SetV):
        return _same_set(g.items, r.items)
    return False


def _sets_equiv(g: list[Node], r: list[Node]) -> bool:
    """Unions part by part, in any order."""
    if len(g) != len(r):
        return False
    remaining = list(r)
    for part in g:
        match = next((x for x in remaining if _interval_equiv(part, x)), None)
        if match is None:
            return False
        remaining.remove(match)
    return True


def _same_chain(g: Rel, r: Rel) -> bool:
    """Two chains of values (``a < x <= b``) equal side by side once both read with ``<``/``<=``."""
    if len(g.ops) == 1 == len(r.ops) or not all(isinstance(s, Scalar) for s in g.sides + r.sides):
        return False
    go, ro = g.oriented(), r.oriented()
    return (
        go.ops == ro.ops
        and len(go.sides) == len(ro.sides)
        and all(equiv(a, b) for a, b in zip(go.sides, ro.sides, strict=True))
    )


def _rel_equiv(g: Rel, r: Rel) -> bool:
    gv, rv = value_side(g), value_side(r)
    if gv is not None and rv is not None and equiv(gv, rv):
        return True
    if g.ops == r.ops and _ordered(g.sides, r.sides):
        return True
    if relations_equivalent(g, r) or _same_chain(g, r):
        return True
    return gv is None and rv is not None and equiv(g, rv)


def equiv(gold: Node, resp: Node) -> bool:
    """The gold and the response state the same answer."""
    if isinstance(gold, Rel) and isinstance(resp, Rel):
        return _rel_equiv(gold, resp)
    if isinstance(gold, Rel):
        side = value_side(gold)
        if side is not None:
            return equiv(side, resp)
        parts = _set_parts(resp)
        if parts is not None:
            sol = inequality_set(gold)
            return sol is not None and _sets_equiv(sol, parts)
        return False
    if isinstance(resp, Rel):
        side = value_side(resp)
        return side is not None and equiv(gold, side)
    if isinstance(gold, Text) or isinstance(resp, Text):
        return isinstance(gold, Text) and isinstance(resp, Text) and gold.text == resp.text
    if isinstance(gold, Lst):
        if isinstance(resp, (Lst, SetV)):
            return _same_set(gold.items, resp.items)
        if isinstance(resp, Tup) and resp.kind == "paren":
            return _ordered(gold.items, resp.items)
        return len(gold.items) == 1 and equiv(gold.items[0], resp)
    if isinstance(resp, Lst):
        if isinstance(gold, SetV):
            return _same_set(gold.items, resp.items)
        if isinstance(gold, Tup) and gold.kind == "paren":
            return _ordered(gold.items, resp.items)
        return len(resp.items) == 1 and equiv(gold, resp.items[0])
    if isinstance(gold, SetV) and isinstance(resp, SetV):
        return _same_set(gold.items, resp.items)
    if isinstance(gold, (SetV, Tup)) and isinstance(resp, (SetV, Tup)):
        if isinstance(gold, Tup) and isinstance(resp, Tup) and gold.kind != resp.kind:
            return False
        return _ordered(gold.items, resp.items)
    if isinstance(gold, (Interval, Union_)) or isinstance(resp, (Interval, Union_)):
        g, r = _set_parts(gold), _set_parts(resp)
        return g is not None and r is not None and _sets_equiv(g, r)
    if isinstance(gold, Scalar) and isinstance(resp, Scalar):
        return scalar_equiv(gold, resp)
    return False
