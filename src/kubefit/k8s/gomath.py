"""Go's integer division and remainder (truncation toward zero), for Python ints and int64 arrays.

Python's `//` and `%` floor; Go's `/` and `%` truncate toward zero. Every formula ported from
kube-scheduler or Karmada divides through these, so a negative operand rounds as in Go.
"""

from __future__ import annotations

import math

import numpy as np


def go_div(a: int, b: int) -> int:
    """Go's `a / b` on integers (b ≠ 0).

    >>> go_div(7, 2), go_div(-7, 2), go_div(7, -2)
    (3, -3, -3)
    """
    if a >= 0 and b > 0:  # the usual case, where truncation and floor agree
        return a // b
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def go_rem(a: int, b: int) -> int:
    """Go's `a % b` on integers (b ≠ 0): the sign of `a`.

    >>> go_rem(-7, 2), go_rem(7, -2)
    (-1, 1)
    """
    return a - go_div(a, b) * b


def go_div_array(a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
    """Go's int64 `a / b` elementwise (where b is 0 the result is ±|a|: callers mask those out).

    >>> go_div_array(np.array([7, -7]), 2).tolist()
    [3, -3]
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    q = np.abs(a) // np.where(b == 0, 1, np.abs(b))
    return np.where((a < 0) != (b < 0), -q, q)


def int32(x: int) -> int:
    """Go's `int32(x)`: two's-complement truncation of a Python int.

    >>> int32(2**31), int32(-1)
    (-2147483648, -1)
    """
    return ((x + 2**31) % 2**32) - 2**31


def int64(x: int) -> int:
    """Go's int64 wrap-around (what an int64 sum, product or conversion leaves).

    >>> int64(2**63), int64(2**64 + 5)
    (-9223372036854775808, 5)
    """
    return ((x + 2**63) % 2**64) - 2**63


def go_pow(x: float, y: float) -> float:
    """Go's `math.Pow(x, y)` as amd64 computes it (`math/pow.go` `pow`: no assembly, no fused multiply-add):
    integral powers by repeated squaring of the mantissa, which rounds differently from C's `pow` in the last
    bits. The VPA recommender's bucket starts (`ratio^n`) and confidence multipliers go through it. Only the
    cases it meets are ported: x > 0 (+Inf included) and a finite y.

    >>> go_pow(1.05, 10), go_pow(2.0, -2.0), go_pow(math.inf, -2.0)
    (1.6288946267774416, 0.25, 0.0)
    """
    if y == 0 or x == 1:
        return 1.0
    if y == 1:
        return x
    if x == math.inf and math.isfinite(y):  # `case IsInf(x, 0)`: +Inf to a negative power is 0, to a positive +Inf
        return 0.0 if y < 0 else math.inf
    if not (math.isfinite(x) and math.isfinite(y)) or x <= 0:
        raise ValueError(f"go_pow ports finite x > 0 and finite y only, got {x!r}, {y!r}")
    if y == 0.5:
        return math.sqrt(x)
    if y == -0.5:
        return 1 / math.sqrt(x)
    yf, yi = math.modf(abs(y))
    a1, ae = 1.0, 0
    if yf != 0:
        if yf > 0.5:
            yf -= 1
            yi += 1
        a1 = math.exp(yf * math.log(x))
    x1, xe = math.frexp(x)
    i = int(yi)
    while i != 0:
        if xe < -(1 << 12) or (1 << 12) < xe:
            ae += xe
            break
        if i & 1:
            a1 *= x1
            ae += xe
        x1 *= x1
        xe <<= 1
        if x1 < 0.5:
            x1 += x1
            xe -= 1
        i >>= 1
    if y < 0:
        a1 = 1 / a1
        ae = -ae
    return math.ldexp(a1, ae)
