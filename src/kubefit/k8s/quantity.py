"""Kubernetes quantities → exact integers (nano-units), and the roundings kube-scheduler applies.

A quantity is parsed exactly and rounded up to nano precision, as `resource.ParseQuantity` does, so
every quantity is an integer number of nano-units (a Python int, no overflow).  `milli_value` and
`value` are `Quantity.MilliValue()` / `Quantity.Value()`: ceilings away from zero.

The text is read by one lexer, `split_quantity` and `interpret_suffix` (apimachinery's
`parseQuantityString` and suffixer), which `kubefit.k8s.goquantity` shares; only the
arithmetic differs (exact values here, Go's int64 representation there). kubefit also refuses a
quantity without a digit before its suffix ("Gi", "."), as the format's regular expression says.

Bounds, checked before any power of ten is built: a binary-suffixed quantity above 2^63-1 is capped
there, as `ParseQuantity` caps BinarySI; an exponent outside int32 is refused ("unable to parse
quantity's suffix"); a value of more than `MAX_DIGITS` integer digits is refused (no resource kubefit
reads can hold it: kube-scheduler counts in int64); a positive value below one nano-unit is one
nano-unit, without computing it (ParseQuantity rounds up to nano).
"""

from __future__ import annotations

import functools
from typing import Any

from kubefit.errors import shorten

NANO = 10**9
MAX_INT64 = 2**63 - 1
MIN_INT64 = -(2**63)
MAX_DIGITS = 40  # integer digits of a value, far above int64's 19 (a sum, a wrap still computes exactly)

DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT = "DecimalSI", "BinarySI", "DecimalExponent"
DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}  # 10^e
BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}  # 2^e
FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
SUFFIX_ERROR = "unable to parse quantity's suffix"
_DIGITS = frozenset("0123456789")  # ASCII only, as Go reads them
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity; the message says why, as the API server would."""


def split_quantity(text: str) -> tuple[bool, str, str, str, str]:
    """apimachinery's `parseQuantityString`: (positive, value, num, denom, suffix) of a trimmed, non-empty text.

    `num` has its leading zeros stripped ("0" when none is left), `denom` is the digits after the point,
    `value` the text before the suffix.

    >>> split_quantity("-01.50Gi")
    (False, '-01.50', '1', '50', 'Gi')
    """
    positive, pos, end = True, 0, len(text)
    if pos < end and text[0] in "+-":
        positive = text[0] == "+"
        pos += 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    pos, num = _digits(text, pos)
    num = num or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos, denom = _digits(text, pos + 1)
    if pos >= end:
        return positive, text, num, denom, ""
    value, suffix_start = text[:pos], pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    pos, _ = _digits(text, pos)
    if pos < end:
        raise QuantityError(FORMAT_ERROR)
    return positive, value, num, denom, text[suffix_start:]


def _digits(text: str, pos: int) -> tuple[int, str]:
    """The run of ASCII digits from `pos`: (the position after it, the digits)."""
    end = pos
    while end < len(text) and text[end] in _DIGITS:
        end += 1
    return end, text[pos:end]


def interpret_suffix(suffix: str) -> tuple[int, int, str]:
    """The suffixer's `interpret`: (base 10 or 2, exponent, format).

    An exponent suffix (`e3`, `E-2`) must parse as an int64; Go then converts it to int32, which callers
    apply (Karmada's quantities) or refuse beyond (kubefit's).

    >>> interpret_suffix("Mi"), interpret_suffix("k"), interpret_suffix("e-3")
    ((2, 20, 'BinarySI'), (10, 3, 'DecimalSI'), (10, -3, 'DecimalExponent'))
    """
    if suffix in DECIMAL_SUFFIXES:
        return 10, DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    if suffix in BINARY_SUFFIXES:
        return 2, BINARY_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[:1] in "+-" else digits
        if body and set(body) <= _DIGITS and MIN_INT64 <= int(digits) <= MAX_INT64:
            return 10, int(digits), DECIMAL_EXPONENT
    raise QuantityError(SUFFIX_ERROR)


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
    try:
        if not s:
            raise QuantityError(FORMAT_ERROR)
        positive, _, whole, frac, suffix = split_quantity(s)
        if _DIGITS.isdisjoint(s[:len(s) - len(suffix)]):  # "Gi", ".", "+": no digit before the suffix
            raise QuantityError(FORMAT_ERROR)
        base, exp, _ = interpret_suffix(suffix)
        if not -(2**31) <= exp < 2**31:
            raise QuantityError(SUFFIX_ERROR)
    except QuantityError as exc:
        raise QuantityError(f"{exc}, got {_shown(text)}") from None
    nanos = _unsigned_nanos(whole, frac, base, exp, text)
    return nanos if positive else -nanos


def _unsigned_nanos(whole: str, frac: str, base: int, exp: int, text: str) -> int:
    """|whole.frac × base^exp| in nano-units, rounded up; magnitudes checked before 10**exp is computed."""
    digits = (whole + frac).lstrip("0")
    if not digits:
        return 0
    if base == 2:
        if len(whole.lstrip("0")) > MAX_DIGITS:
            raise _too_large(text)
        nanos = _ceil_div(int(digits) * 2**exp * NANO, 10 ** len(frac))
        return min(nanos, MAX_INT64 * NANO)  # ParseQuantity caps BinarySI at 2^63-1
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
        for suffix, power in reversed(list(BINARY_SUFFIXES.items())):
            if amount and amount % 2**power == 0:
                return f"{amount // 2**power}{suffix}"
    return str(amount)


def quantity_text(raw: Any) -> str:
    """The string Go would parse for a JSON/YAML quantity value (numbers are written back as text)."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, bool):
        raise QuantityError(f"quantities must be strings or numbers, got {raw!r}")
    if isinstance(raw, int):
        return str(raw)
    if isinstance(raw, float):
        return repr(raw) if not raw.is_integer() else str(int(raw))
    raise QuantityError(f"quantities must be strings or numbers, got {type(raw).__name__}")
