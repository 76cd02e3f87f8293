"""Go's integer division and remainder (truncation toward zero), for Python ints and int64 arrays.

Python's `//` and `%` floor; Go's `/` and `%` truncate toward zero. Every formula ported from
kube-scheduler or Karmada divides through these, so a negative operand rounds as in Go.
"""

from __future__ import annotations

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
