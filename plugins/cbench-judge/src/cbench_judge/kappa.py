"""Cohen's kappa between a judge and people, weighted for ordinal scores, with its interval.

Kappa is the agreement beyond chance, ``(p_o - p_e) / (1 - p_e)``, with agreement weights ``w``
(1 on the diagonal; for ordinal categories quadratic, ``1 - ((i - j) / (k - 1))^2``).  Its standard
error is Fleiss, Cohen and Everitt's (1969) large-sample one, which SAS and statsmodels report:

    var = [sum p_ij (w_ij - (wr_i + wc_j)(1 - k))^2 - (k - p_e (1 - k))^2] / (n (1 - p_e)^2)

with ``wr_i = sum_j p_.j w_ij`` and ``wc_j = sum_i p_i. w_ij``; the interval is kappa -/+ z se.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs

from context_bench.metrics.intervals import z_value


@attrs.frozen
class Kappa:
    """Kappa and its interval; None where every rating fell in one category (chance explains all)."""

    kappa: float | None
    ci: tuple[float, float] | None
    n: int


def cohen_kappa(people: Sequence[Any], judge: Sequence[Any], *, ordinal: bool = False) -> Kappa:
    """Kappa of the paired ratings; ``ordinal`` weighs disagreements by the squared distance of the
    categories' ranks (the sorted values both raters used)."""
    n = len(people)
    if n == 0:
        return Kappa(None, None, 0)
    categories = sorted(set(people) | set(judge))
    index = {value: i for i, value in enumerate(categories)}
    k = len(categories)
    table = [[0.0] * k for _ in range(k)]
    for a, b in zip(people, judge, strict=True):
        table[index[a]][index[b]] += 1 / n
    rows = [sum(row) for row in table]
    cols = [sum(table[i][j] for i in range(k)) for j in range(k)]

    def weight(i: int, j: int) -> float:
        if not ordinal or k == 1:
            return float(i == j)
        return 1 - ((i - j) / (k - 1)) ** 2

    observed = math.fsum(table[i][j] * weight(i, j) for i in range(k) for j in range(k))
    expected = math.fsum(rows[i] * cols[j] * weight(i, j) for i in range(k) for j in range(k))
    if expected >= 1:
        return Kappa(None, None, n)
    kappa = (observed - expected) / (1 - expected)
    w_row = [math.fsum(cols[j] * weight(i, j) for j in range(k)) for i in range(k)]
    w_col = [math.fsum(rows[i] * weight(i, j) for i in range(k)) for j in range(k)]
    spread = math.fsum(
        table[i][j] * (weight(i, j) - (w_row[i] + w_col[j]) * (1 - kappa)) ** 2
        for i in range(k)
        for j in range(k)
    )
    variance = (spread - (kappa - expected * (1 - kappa)) ** 2) / (n * (1 - expected) ** 2)
    half = z_value() * math.sqrt(max(0.0, variance))
    return Kappa(kappa, (kappa - half, kappa + half), n)
