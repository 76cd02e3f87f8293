"""Kubernetes quantities → exact integers (nano-units), and the roundings kube-scheduler applies.

A quantity is parsed exactly and rounded up to nano precision, as `resource.ParseQuantity` does, so
every quantity is an integer number of nano-units (a Python int, no overflow).  `milli_value` and
`value` are `Quantity.MilliValue()` / `Quantity.Value()`: ceilings away from zero.
"""

from __future__ import annotations

import functools
import re

NANO = 10**9

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL_EXP = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}

_QUANTITY = re.compile(
    r"^(?P<sign>[+-])?(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
)


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity; the message says why, as the API server would."""


def _ceil_div(a: int, b: int) -> int:
    """Division rounding away from zero (b > 0), like inf.Dec's RoundUp."""
    q, r = divmod(abs(a), b)
    q += 1 if r else 0
    return q if a >= 0 else -q


def parse_quantity(text: str | int | float) -> int:
    """Parse a quantity ("500m", "1.5Gi", "1e3", 4) into nano-units, rounded up to nano precision."""
    if isinstance(text, bool):
        raise QuantityError(f"quantities must match the regular expression, got {text!r}")
    if isinstance(text, int):
        return text * NANO
    if isinstance(text, float):
        text = repr(text)
    if not isinstance(text, str):
        raise QuantityError(f"quantities must be strings or numbers, got {type(text).__name__}")
    return _parse_text(text)


@functools.lru_cache(maxsize=4096)
def _parse_text(text: str) -> int:
    """`parse_quantity` of a string; cached, as a cluster repeats a few quantities thousands of times."""
    s = text.strip()
    m = _QUANTITY.match(s)
    if not s or m is None or (not m.group("int") and not m.group("frac")):
        raise QuantityError(
            f"quantities must match the regular expression "
            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {text!r}")
    digits = (m.group("int") or "") + (m.group("frac") or "")
    scale = len(m.group("frac") or "")  # number = int(digits) / 10**scale
    mantissa = int(digits) if digits else 0
    suffix = m.group("suffix") or ""
    if suffix in _BINARY:
        num, den = mantissa * _BINARY[suffix] * NANO, 10**scale
    else:
        exp = int(suffix[1:]) if len(suffix) > 1 else _DECIMAL_EXP[suffix]  # "E" alone is exa, "E3" 10^3
        exp += 9 - scale  # to nano-units
        num, den = (mantissa * 10**exp, 1) if exp >= 0 else (mantissa, 10**-exp)
    nanos = _ceil_div(num, den)
    return -nanos if m.group("sign") == "-" else nanos


def milli_value(nanos: int) -> int:
    """`Quantity.MilliValue()`: thousandths, rounded up away from zero (cpu: `1.0001` → 1001)."""
    return _ceil_div(nanos, 10**6)


def value(nanos: int) -> int:
    """`Quantity.Value()`: whole units, rounded up away from zero (memory `500m` → 1 byte)."""
    return _ceil_div(nanos, NANO)


def scheduler_units(name: str, nanos: int) -> int:
    """The integer kube-scheduler keeps for a resource: millicores for cpu, whole units otherwise."""
    return milli_value(nanos) if name == "cpu" else value(nanos)


def format_quantity(name: str, amount: int) -> str:
    """Render a scheduler integer (millicores for cpu) back as a short, exact quantity string."""
    if name == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if amount and name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
        for suffix, factor in reversed(list(_BINARY.items())):
            if amount and amount % factor == 0:
                return f"{amount // factor}{suffix}"
    return str(amount)
