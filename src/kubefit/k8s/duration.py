"""Go's `time.Duration` as `metav1.Duration` reads and prints it: `time.ParseDuration` (what
`Duration.UnmarshalJSON` calls on a configuration's `filterTimeout: 10s`) and `Duration.String` (how a
`field.Error` shows the value, through `Duration.MarshalJSON`).

Both follow Go's `src/time/format.go` (`ParseDuration`, `leadingInt`, `leadingFraction`, `quote`) and
`src/time/time.go` (`Duration.String`, `fmtFrac`, `fmtInt`) to the letter: the same units (`µs` and `μs` both),
the same overflow limits (int64 nanoseconds), the same float arithmetic for fractions, the same error words.
"""

from __future__ import annotations

NANOSECOND, MICROSECOND, MILLISECOND = 1, 1_000, 1_000_000
SECOND, MINUTE, HOUR = 1_000_000_000, 60_000_000_000, 3_600_000_000_000
_UNITS = {"ns": NANOSECOND, "us": MICROSECOND, "\u00b5s": MICROSECOND, "\u03bcs": MICROSECOND,
          "ms": MILLISECOND, "s": SECOND, "m": MINUTE, "h": HOUR}
_LIMIT = 1 << 63  # uint64 arithmetic bounded as ParseDuration bounds it


class DurationError(ValueError):
    """`time.ParseDuration`'s error, in Go's words (`time: invalid duration "abc"`)."""


def _quote(text: str) -> str:
    """`time.quote`: double quotes, `"` and `\\` escaped, every byte of a non-ASCII or control character as \\xNN."""
    out = ['"']
    for ch in text:
        if ord(ch) >= 0x80 or ch < " ":
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
        else:
            out.append("\\" + ch if ch in '"\\' else ch)
    out.append('"')
    return "".join(out)


def _invalid(original: str) -> DurationError:
    return DurationError(f"time: invalid duration {_quote(original)}")


def _leading_int(s: str) -> tuple[int, str] | None:
    """`leadingInt`: the digits at the start of `s` as an integer (None: past 1<<63) and what follows."""
    i, x = 0, 0
    while i < len(s) and "0" <= s[i] <= "9":
        if x > _LIMIT // 10:
            return None
        x = x * 10 + ord(s[i]) - 48
        if x > _LIMIT:
            return None
        i += 1
    return x, s[i:]


def _leading_fraction(s: str) -> tuple[int, float, str]:
    """`leadingFraction`: the digits after a dot, as many as fit (the rest skipped), and their scale."""
    i, x, scale, overflow = 0, 0, 1.0, False
    while i < len(s) and "0" <= s[i] <= "9":
        if not overflow:
            if x > (_LIMIT - 1) // 10:
                overflow = True
            else:
                y = x * 10 + ord(s[i]) - 48
                if y > _LIMIT:
                    overflow = True
                else:
                    x, scale = y, scale * 10
        i += 1
    return x, scale, s[i:]


def parse_duration(original: str) -> int:
    """`time.ParseDuration`: `[-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+` → nanoseconds (int64), or DurationError."""
    s, neg, total = original, False, 0
    if s and s[0] in "+-":
        neg, s = s[0] == "-", s[1:]
    if s == "0":
        return 0
    if not s:
        raise _invalid(original)
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            raise _invalid(original)
        before = len(s)
        lead = _leading_int(s)
        if lead is None:
            raise _invalid(original)
        whole, s = lead
        pre, post, frac, scale = before != len(s), False, 0, 1.0
        if s and s[0] == ".":
            s = s[1:]
            before = len(s)
            frac, scale, s = _leading_fraction(s)
            post = before != len(s)
        if not pre and not post:
            raise _invalid(original)
        i = 0
        while i < len(s) and not (s[i] == "." or "0" <= s[i] <= "9"):
            i += 1
        if i == 0:
            raise DurationError(f"time: missing unit in duration {_quote(original)}")
        name, s = s[:i], s[i:]
        unit = _UNITS.get(name)
        if unit is None:
            raise DurationError(f"time: unknown unit {_quote(name)} in duration {_quote(original)}")
        if whole > _LIMIT // unit:
            raise _invalid(original)
        whole *= unit
        if frac > 0:
            whole += int(float(frac) * (float(unit) / scale))  # float64 arithmetic, truncated as uint64()
            if whole > _LIMIT:
                raise _invalid(original)
        total += whole
        if total > _LIMIT:
            raise _invalid(original)
    if neg:
        return -total
    if total > _LIMIT - 1:
        raise _invalid(original)
    return total


def _frac(v: int, prec: int) -> tuple[str, int]:
    """`fmtFrac`: the fraction of v / 10**prec without trailing zeros (no dot when it is zero), and v / 10**prec."""
    digits, printed = [], False
    for _ in range(prec):
        digit = v % 10
        printed = printed or digit != 0
        if printed:
            digits.append(str(digit))
        v //= 10
    return ("." + "".join(reversed(digits)) if printed else ""), v


def format_duration(nanos: int) -> str:
    """`Duration.String`: `72h3m0.5s`, `1.5s`, `500ms`, `1.2µs`, `0s` (a leading `-` when negative)."""
    if nanos == 0:
        return "0s"
    u = abs(nanos)
    if u < SECOND:
        unit, prec = ("ns", 0) if u < MICROSECOND else ("\u00b5s", 3) if u < MILLISECOND else ("ms", 6)
        frac, u = _frac(u, prec)
        text = f"{u}{frac}{unit}"
    else:
        frac, u = _frac(u, 9)
        text = f"{u % 60}{frac}s"
        u //= 60
        if u > 0:
            text = f"{u % 60}m{text}"
            u //= 60
            if u > 0:
                text = f"{u}h{text}"
    return "-" + text if nanos < 0 else text
