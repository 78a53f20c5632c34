"""Curve fitting tools."""

from __future__ import annotations

import math


def power_law_fit(x: list[float], y: list[float]) -> dict:
    """Fit y = C * x^a by ordinary least squares in log-log space.

    Returns {"exponent", "coefficient", "r_squared", "n"}. Raises ValueError
    if the inputs differ in length or contain non-positive values, both of
    which make the log transform undefined rather than merely imprecise.
    """
    if len(x) != len(y):
        raise ValueError(f"x and y differ in length ({len(x)} vs {len(y)})")
    if len(x) < 2:
        raise ValueError("at least two points are needed")
    if any(v <= 0 for v in [*x, *y]):
        raise ValueError("x and y must be strictly positive for a log-log fit")
    lx = [math.log(v) for v in x]
    ly = [math.log(v) for v in y]
    mx, my = _mean(lx), _mean(ly)
    sxy = sum((a - mx) * (b - my) for a, b in zip(lx, ly))
    sxx = sum((a - mx) ** 2 for a in lx)
    syy = sum((b - my) ** 2 for b in ly)
    if sxx == 0:
        raise ValueError("x has no spread; the exponent is undefined")
    exponent = sxy / sxx
    return {
        "exponent": exponent,
        "coefficient": math.exp(my - exponent * mx),
        "r_squared": 1.0 if syy == 0 else sxy * sxy / (sxx * syy),
        "n": len(x),
    }


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)
