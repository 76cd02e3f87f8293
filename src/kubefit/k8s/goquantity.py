"""Go `resource.Quantity` as Go holds and prints it: representation, Value/MilliValue with int64 wrapping,
canonical strings (Format rules), the cached-string struct equality, BinarySI clamp (what Karmada's
arithmetic depends on, SPEC-karmada §0, and the API server's messages print).

A parsed Go quantity is either an int64 fast-path amount `value × 10^scale` or a big decimal
`unscaled × 10^-dec_scale` (arbitrary precision, rounded up to nano); `kubefit.k8s.quantity` gives the
exact value, this module gives what Go's arithmetic makes of it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kubefit.k8s.gomath import go_div, go_rem, int64
from kubefit.k8s.quantity import (  # noqa: F401 - the formats are re-exported: Karmada's vocabulary
    BINARY_SI,
    BINARY_SUFFIXES,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    DECIMAL_SUFFIXES,
    FORMAT_ERROR,
    MAX_INT64,
    MIN_INT64,
    QuantityError,
    interpret_suffix,
    quantity_text,
    split_quantity,
)

MAX_QUANTITY_DIGITS = 400  # Go would build 10^exponent for "1e99999999"; kubefit refuses it up front

_DEC_BY_EXP = {v: k for k, v in DECIMAL_SUFFIXES.items()}
_BIN_BY_EXP = {v: k for k, v in BINARY_SUFFIXES.items()}


wrap64 = int64  # Karmada's int64 arithmetic wraps silently (kubefit.k8s.gomath)


@dataclass(frozen=True)
class GoQuantity:
    """A `resource.Quantity` as Go holds it: int64 amount or big decimal, Format, cached string."""

    format: str = DECIMAL_SI
    value: int = 0          # int64Amount.value (fast path)
    scale: int = 0          # int64Amount.scale: amount = value × 10^scale
    big: bool = False       # big-decimal backed (inf.Dec)
    unscaled: int = 0       # inf.Dec unscaled (big path): amount = unscaled × 10^-dec_scale
    dec_scale: int = 0
    s: str = ""             # cached original string ("" when not canonical)

    # ----------------------------------------------------------------- exact value
    def as_fraction(self) -> tuple[int, int]:
        """The exact value as (mantissa, base-10 exponent)."""
        return (self.unscaled, -self.dec_scale) if self.big else (self.value, self.scale)

    def nanos(self) -> int:
        """Exact value in nano-units (Go always holds at most nano precision after parsing)."""
        m, e = self.as_fraction()
        e += 9
        if e >= 0:
            return m * 10**e
        q = -(-abs(m) // 10**-e)  # ceil away from zero
        return q if m >= 0 else -q

    def is_zero(self) -> bool:
        return (self.unscaled if self.big else self.value) == 0

    def sign(self) -> int:
        v = self.unscaled if self.big else self.value
        return (v > 0) - (v < 0)

    # ----------------------------------------------------------------- Go methods
    def scaled_value(self, new_scale: int) -> int:
        """`q.ScaledValue(scale)`, int64 overflow included (wraps or 0, as Go does)."""
        if not self.big:
            return _as_scaled_int64(self.value, self.scale, new_scale)
        return _big_scaled_value(self.unscaled, self.dec_scale, -new_scale)

    def int_value(self) -> int:
        """`q.Value()`."""
        return self.scaled_value(0)

    def milli_value(self) -> int:
        """`q.MilliValue()`."""
        return self.scaled_value(-3)

    def string(self) -> str:
        """`q.String()`: the cached original string, else the canonical form."""
        return self.s or canonical(self)

    def set_int64(self, v: int) -> GoQuantity:
        """`q.Set(v)`: int64 amount, cached string cleared, Format kept."""
        return replace(self, value=v, scale=0, big=False, unscaled=0, dec_scale=0, s="")


def struct_equal(a: GoQuantity, b: GoQuantity) -> bool:
    """Go `a == b` on two Quantity structs: big decimals never compare equal (pointer identity)."""
    if a.big or b.big:
        return False
    return (a.value, a.scale, a.format, a.s) == (b.value, b.scale, b.format, b.s)


def compare(a: GoQuantity, b: GoQuantity) -> int:
    """`a.Cmp(b)` by exact value."""
    (ma, ea), (mb, eb) = a.as_fraction(), b.as_fraction()
    e = min(ea, eb)
    x, y = ma * 10 ** (ea - e), mb * 10 ** (eb - e)
    return (x > y) - (x < y)


# --------------------------------------------------------------------------- parsing

def wrap32(n: int) -> int:
    """Go's `int32(n)`: the low 32 bits, signed."""
    n &= 0xFFFFFFFF
    return n - (1 << 32) if n >= 1 << 31 else n


def _int64_multiply(a: int, b: int) -> tuple[int, bool]:
    if a in (0, 1) or b in (0, 1):
        return wrap64(a * b), True
    if MIN_INT64 in (a, b):
        return 0, False
    c = wrap64(a * b)
    return c, c == a * b


def parse(text: str) -> GoQuantity:
    """`resource.ParseQuantity(text)` (strings of JSON/YAML values; leading/trailing space trimmed)."""
    text = text.strip()
    if not text:
        raise QuantityError(FORMAT_ERROR)
    if text == "0":
        return GoQuantity(DECIMAL_SI, s="0")
    positive, value, num, denom, suf = split_quantity(text)
    base, exponent, fmt = interpret_suffix(suf)
    if fmt == DECIMAL_EXPONENT:
        exponent = wrap32(exponent)  # Go: int32(parsed)
    precision, scale, mantissa = 0, 0, 1
    if fmt in (DECIMAL_EXPONENT, DECIMAL_SI):
        scale = exponent
        precision = 18 - (len(num) + len(denom))
    elif exponent >= 0 and not denom:
        mantissa = 1 << exponent
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
    else:
        precision = -1
    if precision >= 0:
        scale -= len(denom)
        if scale >= -9:
            shifted = num + denom
            v = int(shifted)
            result, ok = _int64_multiply(v, mantissa)
            if ok:
                result = result if positive else -result
                cached = (exponent % 10 == 0 and v & 7 != 0) if fmt == BINARY_SI else (
                    scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0")
                return GoQuantity(fmt, value=result, scale=scale, s=text if cached else "")
    return _parse_big(value, base, exponent, fmt)


def _parse_big(value: str, base: int, exponent: int, fmt: str) -> GoQuantity:
    sign = -1 if value.startswith("-") else 1
    digits = value.lstrip("+-")
    whole, _, frac = digits.partition(".")
    if not (whole + frac).isdigit():
        raise QuantityError("unable to parse numeric part of quantity")
    unscaled, dec_scale = int(whole + frac), len(frac)
    if base == 10:
        dec_scale -= exponent
    else:
        unscaled <<= exponent
    if unscaled != 0 and len(str(unscaled)) - dec_scale > MAX_QUANTITY_DIGITS:
        raise QuantityError(f"quantity too large (more than {MAX_QUANTITY_DIGITS} integer digits)")
    if unscaled != 0 and dec_scale - 9 > len(str(unscaled)):  # below one nano: rounds up to 1n
        unscaled, dec_scale = 1, 9
    if unscaled != 0:  # round up (away from zero) to nano
        if dec_scale > 9:
            d = 10 ** (dec_scale - 9)
            unscaled = -(-unscaled // d)
        else:
            unscaled *= 10 ** (9 - dec_scale)
        dec_scale = 9
    if fmt == BINARY_SI and unscaled > MAX_INT64 * 10**dec_scale:  # the BinarySI cap
        unscaled, dec_scale = MAX_INT64, 0
    if fmt == BINARY_SI and 0 < unscaled < 10**dec_scale:
        fmt = DECIMAL_SI
    return GoQuantity(fmt, big=True, unscaled=sign * unscaled, dec_scale=dec_scale)


def parse_value(raw: object) -> GoQuantity:
    """A JSON/YAML quantity value (string or number, as `UnmarshalJSON` reads its text) → GoQuantity."""
    return parse(quantity_text(raw))


def from_int64(v: int, scale: int = 0, fmt: str = DECIMAL_SI) -> GoQuantity:
    """`resource.NewScaledQuantity` / `NewMilliQuantity` / `NewQuantity`: no cached string."""
    return GoQuantity(fmt, value=v, scale=scale)


# --------------------------------------------------------------------------- Value / MilliValue

def _positive_scale(base: int, k: int) -> tuple[int, bool]:
    if k == 0:
        return base, True
    if k in (1, 2, 3, 6, 9):
        return _int64_multiply(base, 10**k)
    v = base
    for _ in range(k):
        v, ok = _int64_multiply(v, 10)
        if not ok:
            return 0, False
    return v, True


def _negative_scale(base: int, k: int) -> int:
    if k == 0:
        return base
    v, fraction = base, False
    for _ in range(k):
        if not fraction and go_rem(v, 10) != 0:
            fraction = True
        v = go_div(v, 10)
        if v == 0:
            return (1 if base > 0 else -1) if fraction else 0
    if fraction:
        v += 1 if base > 0 else -1
    return v


def _as_scaled_int64(value: int, scale: int, new_scale: int) -> int:
    if scale < new_scale:
        return _negative_scale(value, new_scale - scale)
    return _positive_scale(value, scale - new_scale)[0]


def _big_int64(n: int) -> int:
    """big.Int.Int64(): low 64 bits of |n|, sign applied."""
    v = wrap64(abs(n) & ((1 << 64) - 1))
    return wrap64(-v) if n < 0 else v


def _big_scaled_value(unscaled: int, scale: int, new_scale: int) -> int:
    """apimachinery `scaledValue(unscaled, scale, newScale)` (inf scales: value = unscaled·10^-scale)."""
    dif = scale - new_scale
    if dif == 0:
        return _big_int64(unscaled)
    if dif < 0:
        return wrap64(_big_int64(unscaled) * 10**-dif)
    if unscaled < MAX_INT64 and dif < 19:
        u = _big_int64(unscaled)
        divide = 10**dif
        result, mod = go_div(u, divide), go_rem(u, divide)
        return result + 1 if mod != 0 else result
    q, r = divmod(unscaled, 10**dif)  # big.Int DivMod: Euclidean (r ≥ 0)
    return wrap64(_big_int64(q) + 1) if r != 0 else _big_int64(q)


# --------------------------------------------------------------------------- canonical strings

def _strip_tens(m: int, e: int) -> tuple[int, int]:
    while m and m % 10 == 0:
        m //= 10
        e += 1
    return m, e


def canonical(q: GoQuantity) -> str:
    """`CanonicalizeBytes`: the string Go prints for a quantity without a cached string."""
    if q.is_zero():
        return "0"
    fmt = q.format
    m, e = q.as_fraction()
    if fmt == BINARY_SI:
        exact = e >= 0 or m % 10**-e == 0
        if compare(q, from_int64(-1024)) > 0 and compare(q, from_int64(1024)) < 0 or not exact:
            fmt = DECIMAL_SI
        else:
            whole = m * 10**e if e >= 0 else m // 10**-e
            return _base1024(whole)
    if fmt not in (DECIMAL_SI, DECIMAL_EXPONENT):
        fmt = DECIMAL_EXPONENT
    m, e = _strip_tens(m, e)
    while e % 3:
        m *= 10
        e -= 1
    if fmt == DECIMAL_EXPONENT:
        return f"{m}" if e == 0 else f"{m}e{e}"
    return f"{m}{_DEC_BY_EXP.get(e, '')}"


def _base1024(whole: int) -> str:
    value = _big_int64(whole) if not MIN_INT64 <= whole <= MAX_INT64 else whole
    amount, times = value, 0
    neg = amount < 0
    amount = abs(amount)
    while amount >= 1024 and amount % 1024 == 0:
        amount //= 1024
        times += 1
    amount = -amount if neg else amount
    return f"{amount}{_BIN_BY_EXP.get(times * 10, '')}"


def canonical_text(text: str) -> str:
    """Parse `text` as Go does and print it back (`MustParse(text).String()`)."""
    return parse(text).string()

