"""Errors kubefit reports to users: bad input (exit 2) located by file, object and field."""

from __future__ import annotations

import re

MAX_MESSAGE = 400  # characters of an InputError's message (its location comes on top)


class KubefitError(Exception):
    """Base of every error kubefit reports as a one-line message instead of a traceback."""

    exit_code = 2


class InputError(KubefitError):
    """Bad input: says which file, which object (kind/name) and which field was wrong, and how."""

    def __init__(self, message: str, *, file: str | None = None, obj: str | None = None,
                 field: str | None = None) -> None:
        if len(message) > MAX_MESSAGE:  # a value of 5,000 characters quoted in it: the line stays readable
            message = shorten(message, MAX_MESSAGE)
        self.message = message
        self.file = file
        self.obj = obj
        self.field = field
        super().__init__(str(self))

    def __str__(self) -> str:
        where = [p for p in (self.file, self.obj, self.field) if p]
        return ": ".join([*where, self.message])

    def located(self, *, file: str | None = None, obj: str | None = None,
                field_prefix: str | None = None) -> InputError:
        """The same error with the missing location parts filled in (used while unwinding)."""
        field = self.field
        if field_prefix:
            field = f"{field_prefix}.{field}" if field else field_prefix
        return InputError(self.message, file=self.file or file, obj=self.obj or obj, field=field)


class Forbidden(Exception):
    """An admission plugin refused a pod being created: `message` is the plugin's error, `field` where it points
    (if one). Not shown as it is: a Pod document's refusal becomes an `InputError` (`pods "web" is forbidden:
    ...`), a workload's a note (its controller creates none of those pods)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message, self.field = message, field


class Invalid(Forbidden):
    """The API server's validation refused a pod being created (`Pod "web" is invalid: ...`): `message` is the
    field errors' aggregate. Handled as `Forbidden` is (a Pod document's refusal is an `InputError`, a
    workload's a note)."""


class ConfigError(KubefitError):
    """A scheduler configuration kube-scheduler itself refuses; `errors` are its exact messages."""

    def __init__(self, errors: list[str], *, file: str | None = None) -> None:
        self.errors = list(errors)
        self.file = file
        super().__init__(str(self))

    def __str__(self) -> str:
        head = f"{self.file}: " if self.file else ""
        return head + "invalid scheduler configuration: " + "; ".join(self.errors)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def escape_control(text: str, *, keep: str = "") -> str:
    """Control characters (newlines, ESC, bidi overrides, …) as `\\n`, `\\x1b`, `\\u202e`: one safe line.

    `keep`: control characters left as they are (`"\\n"` for a multi-line table cell).
    """
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: m.group() if m.group() in keep else
                        m.group().encode("unicode_escape").decode("ascii"), text)


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def printable(text: str, *, keep: str = "", limit: int | None = None) -> str:
    r"""Text any report can carry: control characters escaped (`escape_control`, but those in `keep`), the lone
    surrogates a file name not in UTF-8 leaves (Python's surrogateescape) as the bytes they stand for (`\xff`),
    and at most `limit` characters (`…` and the length).

    >>> printable("a\x1bb" + chr(0xDCFF)), printable("x" * 30, limit=20)
    ('a\\x1bb\\xff', 'xxx… (30 characters)')
    """
    text = escape_control(text, keep=keep)
    if _SURROGATE.search(text):
        text = _SURROGATE.sub(lambda m: m.group().encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace"),
                              text)
    if limit is not None and len(text) > limit:
        said = f"… ({len(text)} characters)"
        text = text[: max(limit - len(said), 0)] + said
    return text


def shorten(text: str, limit: int = 80) -> str:
    """A value for a message: control characters escaped, at most `limit` characters (`…` and the length)."""
    text = escape_control(text)
    return text if len(text) <= limit else f"{text[: limit - 1]}… ({len(text)} characters)"
