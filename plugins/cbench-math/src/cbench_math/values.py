"""The structured answers the parser builds and the comparer judges."""

from __future__ import annotations

from typing import Any

import attrs
import sympy as sp

#: Each inequality read from the other side.
FLIPPED = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}


@attrs.frozen
class Scalar:
    """One mathematical value.  ``decimals`` is set when it was written as a bare decimal
    (``0.3333`` has 4), ``percent`` when it carried a percent sign (``expr`` is then 28 for 28%)."""

    expr: Any
    decimals: int | None = None
    percent: bool = False


@attrs.frozen
class Text:
    """A words answer (``odd``, ``Evelyn``), compared case- and space-insensitively."""

    text: str


@attrs.frozen
class Tup:
    """An ordered group: ``(1, 2)`` (kind ``paren``; may also be an open interval) or a ratio
    ``7:32`` (kind ``ratio``)."""

    items: tuple[Node, ...]
    kind: str = "paren"


@attrs.frozen
class Interval:
    lo: Scalar
    hi: Scalar
    left_open: bool
    right_open: bool


@attrs.frozen
class Union_:
    """A union of intervals and sets, ``[-1, 0) \\cup (0, 1]``."""

    parts: tuple[Node, ...]


@attrs.frozen
class SetV:
    """A braced set; ``items`` keep the written order (a tuple gold compares against it in order)."""

    items: tuple[Node, ...]


@attrs.frozen
class Lst:
    """Several answers (``2, 3``; ``2 or 3``; adjacent boxes): order does not matter."""

    items: tuple[Node, ...]


@attrs.frozen
class Rel:
    """An equation, inequality or chain: ``sides[i] ops[i] sides[i+1]``."""

    sides: tuple[Node, ...]
    ops: tuple[str, ...]

    def oriented(self) -> Rel:
        """The same chain written with ``<``/``<=`` only."""
        if all(op in (">", ">=") for op in self.ops):
            return Rel(tuple(reversed(self.sides)), tuple(FLIPPED[op] for op in reversed(self.ops)))
        return self


Node = Scalar | Text | Tup | Interval | Union_ | SetV | Lst | Rel


def name_like(node: Node) -> bool:
    """A label rather than a value: ``x``, ``f(x)``, ``|AB|``, ``a_3``, ``(x, y)``, ``V_1:V_2``."""
    if isinstance(node, Tup):
        return all(name_like(n) for n in node.items)
    if not isinstance(node, Scalar) or node.percent or getattr(node.expr, "is_Matrix", False):
        return False
    expr = node.expr
    return bool(expr.free_symbols) and not expr.has(sp.Add)
