"""Pod times: `kubefit.io/arrival` (offset from the start) and `kubefit.io/duration` (how long it runs once bound).

Values are Go durations (`90s`, `1h30m`, `250ms`) or plain numbers of seconds (`90`, `2.5`), turned into
exact integer nanoseconds once, like quantities.  A negative or malformed value is bad input.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

ARRIVAL_ANNOTATION = "kubefit.io/arrival"
DURATION_ANNOTATION = "kubefit.io/duration"
NANOS = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9,
         "h": 3600 * 10**9}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


class DurationError(ValueError):
    """A value that is neither a Go duration nor a number of seconds, or a negative one."""


def parse_duration(text: str) -> int:
    """`time.ParseDuration` (or a number of seconds) → non-negative integer nanoseconds."""
    value = text.strip()
    try:
        seconds = Decimal(value)
    except InvalidOperation:
        seconds = None
    if seconds is not None:
        if not seconds.is_finite():
            raise DurationError(f"must be a duration such as 90s, 1h30m or a number of seconds, got {text!r}")
        nanos = int(seconds * 10**9)
    else:
        sign = -1 if value.startswith("-") else 1
        body = value.lstrip("+-")
        parts = _PART.findall(body)
        if not body or "".join(n + u for n, u in parts) != body:
            raise DurationError(f"must be a duration such as 90s, 1h30m or a number of seconds, got {text!r}")
        nanos = sign * sum(int(Decimal(n) * NANOS[u]) for n, u in parts)
    if nanos < 0:
        raise DurationError(f"must not be negative, got {text!r}")
    return nanos


def seconds(nanos: int) -> int | float:
    """Nanoseconds as seconds for tables and series: an integer when whole."""
    whole, rest = divmod(nanos, 10**9)
    return whole if rest == 0 else nanos / 10**9
