"""Kubernetes quantities → exact integers (nano-units), and the roundings kube-scheduler applies.

A quantity is parsed exactly and rounded up to nano precision, as `resource.ParseQuantity` does, so
every quantity is an integer number of nano-units (a Python int, no overflow).  `milli_value` and
`value` are `Quantity.MilliValue()` / `Quantity.Value()`: ceilings away from zero.

Bounds, checked before any power of ten is built: a binary-suffixed quantity above 2^63-1 is capped
there, as `ParseQuantity` caps BinarySI; an exponent outside int32 is refused ("unable to parse
quantity's suffix"); a value of more than `MAX_DIGITS` integer digits is refused (no resource kubefit
reads can hold it: kube-scheduler counts in int64); a positive value below one nano-unit is one
nano-unit, without computing it (ParseQuantity rounds up to nano).
"""

from __future__ import annotations

import functools
import re

NANO = 10**9
MAX_INT64 = 2**63 - 1
MAX_DIGITS = 40  # integer digits of a value, far above int64's 19 (a sum, a wrap still computes exactly)

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
        if abs(text) >= 10**MAX_DIGITS:
            raise _too_large(str(text))
        return text * NANO
    if isinstance(text, float):
        if text != text or text in (float("inf"), float("-inf")):
            raise QuantityError(f"quantities must be finite numbers, got {text!r}")
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
            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {_shown(text)}")
    nanos = _unsigned_nanos(m.group("int") or "", m.group("frac") or "", m.group("suffix") or "", text)
    return -nanos if m.group("sign") == "-" else nanos


def _unsigned_nanos(whole: str, frac: str, suffix: str, text: str) -> int:
    """|quantity| in nano-units, rounded up; magnitudes checked before 10**exp is computed."""
    digits = (whole + frac).lstrip("0")
    if not digits:
        return 0
    if suffix in _BINARY:
        if len(whole.lstrip("0")) > MAX_DIGITS:
            raise _too_large(text)
        nanos = _ceil_div(int(digits) * _BINARY[suffix] * NANO, 10 ** len(frac))
        return min(nanos, MAX_INT64 * NANO)  # ParseQuantity caps BinarySI at 2^63-1
    exp = _DECIMAL_EXP.get(suffix)
    if exp is None:
        exp = int(suffix[1:])
        if not -(2**31) <= exp < 2**31:
            raise QuantityError(f"unable to parse quantity's suffix, got {_shown(text)}")
    exp += 9 - len(frac)  # number = int(digits) × 10**exp nano-units
    if len(digits) + exp > MAX_DIGITS + 9:
        raise _too_large(text)
    if len(digits) + exp <= 0:  # below one nano-unit: rounds up to one
        return 1
    return int(digits) * 10**exp if exp >= 0 else _ceil_div(int(digits), 10**-exp)


def _too_large(text: str) -> QuantityError:
    return QuantityError(f"quantity {_shown(text)} is too large (more than {MAX_DIGITS} digits; "
                         f"kube-scheduler counts in int64, at most {MAX_INT64})")


def _shown(text: str) -> str:
    from kubefit.parse import shorten

    return repr(shorten(text, 40))


def milli_value(nanos: int) -> int:
    """`Quantity.MilliValue()`: thousandths, rounded up away from zero (cpu: `1.0001` → 1001)."""
    return _ceil_div(nanos, 10**6)


def value(nanos: int) -> int:
    """`Quantity.Value()`: whole units, rounded up away from zero (memory `500m` → 1 byte)."""
    return _ceil_div(nanos, NANO)


def scheduler_units(name: str, nanos: int) -> int:
    """The integer kube-scheduler keeps for a resource: millicores for cpu, whole units otherwise.

    Saturated at int64's bounds (Go's MilliValue/Value would wrap a value beyond them; a request that
    large can never fit, and saturating keeps it so instead of turning it negative).
    """
    units = milli_value(nanos) if name == "cpu" else value(nanos)
    return min(max(units, -MAX_INT64 - 1), MAX_INT64)


def format_quantity(name: str, amount: int) -> str:
    """Render a scheduler integer (millicores for cpu) back as a short, exact quantity string."""
    if name == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if amount and name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
        for suffix, factor in reversed(list(_BINARY.items())):
            if amount and amount % factor == 0:
                return f"{amount // factor}{suffix}"
    return str(amount)
