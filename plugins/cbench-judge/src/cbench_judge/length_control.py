"""The length-controlled win rate: AlpacaEval 2.0's idea for one system against one baseline.

Dubois et al. (2024, "Length-Controlled AlpacaEval") fit a logistic model of the judge's preference
with a term for the length difference of the two answers and report the preference it predicts
at no length difference.  Here the model has the two terms that remain with a single baseline (no
instruction-difficulty term, which needs many systems on the same instructions):

    P(system preferred) = sigmoid(a + b * tanh(d / sd(d))),   d = len(system) - len(baseline)

in characters, the preference of a row 1 (win), 0.5 (tie) or 0 (loss), fitted by maximum
likelihood (the binomial likelihood of fractional outcomes, Newton's method).  The length-
controlled win rate is ``sigmoid(a)``, its interval ``sigmoid(a -/+ z * se(a))`` from the inverse
of the Fisher information.  When lengths never differ the rate is the plain one; when the length
difference decides every verdict (no finite fit), there is none.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs

from context_bench.metrics.intervals import z_value

_ITERATIONS = 100
_TOLERANCE = 1e-10
#: A slope this steep means the fit runs off to infinity: the lengths separate the verdicts.
_SEPARATED = 30.0


@attrs.frozen
class LengthControlled:
    """``rate`` and its interval ``ci``; ``slope`` is b, the weight of the length difference."""

    rate: float
    ci: tuple[float, float]
    slope: float


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


def _standardized(differences: Sequence[float]) -> list[float] | None:
    """tanh(d / sd(d)) with the population standard deviation; None when every d is the same."""
    n = len(differences)
    mean = math.fsum(differences) / n
    sd = math.sqrt(math.fsum((d - mean) ** 2 for d in differences) / n)
    if sd == 0:
        return None
    return [math.tanh(d / sd) for d in differences]


def length_controlled(
    preferences: Sequence[float], differences: Sequence[float], confidence: float = 0.95
) -> LengthControlled | None:
    """The fit of ``preferences`` (1, 0.5, 0 per row) on the length ``differences``; None for no rows,
    or when the length difference separates the verdicts."""
    n = len(preferences)
    if n == 0:
        return None
    xs = _standardized(differences)
    if xs is None:  # no length to control for: the model is the intercept alone
        return _intercept_only(preferences, confidence)
    a = b = 0.0
    for _ in range(_ITERATIONS):
        ps = [_sigmoid(a + b * x) for x in xs]
        ga = math.fsum(y - p for y, p in zip(preferences, ps, strict=True))
        gb = math.fsum((y - p) * x for y, p, x in zip(preferences, ps, xs, strict=True))
        haa = math.fsum(p * (1 - p) for p in ps)
        hab = math.fsum(p * (1 - p) * x for p, x in zip(ps, xs, strict=True))
        hbb = math.fsum(p * (1 - p) * x * x for p, x in zip(ps, xs, strict=True))
        det = haa * hbb - hab * hab
        if det <= 1e-300 or abs(b) > _SEPARATED:
            return None
        step_a = (hbb * ga - hab * gb) / det
        step_b = (haa * gb - hab * ga) / det
        a, b = a + step_a, b + step_b
        if abs(step_a) < _TOLERANCE and abs(step_b) < _TOLERANCE:
            break
    else:
        return None
    if abs(b) > _SEPARATED:
        return None
    ps = [_sigmoid(a + b * x) for x in xs]
    haa = math.fsum(p * (1 - p) for p in ps)
    hab = math.fsum(p * (1 - p) * x for p, x in zip(ps, xs, strict=True))
    hbb = math.fsum(p * (1 - p) * x * x for p, x in zip(ps, xs, strict=True))
    se = math.sqrt(hbb / (haa * hbb - hab * hab))
    return _result(a, se, b, confidence)


def _intercept_only(preferences: Sequence[float], confidence: float) -> LengthControlled | None:
    rate = math.fsum(preferences) / len(preferences)
    if rate in (0.0, 1.0):  # the interval of a logit at infinity is not a number
        return LengthControlled(rate, (rate, rate), 0.0)
    a = math.log(rate / (1 - rate))
    se = 1 / math.sqrt(len(preferences) * rate * (1 - rate))
    return _result(a, se, 0.0, confidence)


def _result(a: float, se: float, b: float, confidence: float) -> LengthControlled:
    z = z_value(confidence)
    return LengthControlled(_sigmoid(a), (_sigmoid(a - z * se), _sigmoid(a + z * se)), b)
