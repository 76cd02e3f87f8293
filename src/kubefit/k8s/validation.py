"""apimachinery field errors and name rules, printed exactly as Go prints them.

`FieldError` is `field.Error` (`<path>: <Type>: <value>: <detail>`), `aggregate` is
`utilerrors.Aggregate.Error()` (one error bare, several `[e1, e2]`, duplicates removed), and the
`*_errors` functions return the messages of `validation.IsQualifiedName`, `IsDNS1123Subdomain`
and `IsValidLabelValue`. `node_selector_errors` / `preferred_terms_errors` reproduce the parse
errors of `component-helpers/scheduling/corev1/nodeaffinity` (used for NodeAffinity args).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

INVALID = "Invalid value"
REQUIRED = "Required value"
DUPLICATE = "Duplicate value"
UNSUPPORTED = "Unsupported value"
FORBIDDEN = "Forbidden"
TOO_LONG = "Too long"

_NO_VALUE_TYPES = (REQUIRED, FORBIDDEN, TOO_LONG)  # field.Error.ErrorBody omits their value


_GO_ESCAPES = {'"': '\\"', "\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
               "\t": "\\t", "\v": "\\v"}


def go_quote(s: str) -> str:
    r"""Go `%q` / `strconv.Quote` of a string.

    >>> print(go_quote('a"b\\c\n\x01\x7f\u200b\U0001d11e'))
    "a\"b\\c\n\x01\x7f\u200b𝄞"
    """
    out = ['"']
    for ch in s:
        code = ord(ch)
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif not ch.isprintable():
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_json(value: Any) -> str:
    """Go `json.Marshal` of a plain value (compact, HTML characters escaped)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def go_value(value: Any, *, quote_str: bool = True) -> str:
    """How `field.Error.ErrorBody` prints a bad value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return go_quote(value) if quote_str else go_json(value)
    return go_json(value)


@dataclass(frozen=True)
class FieldError:
    """One `field.Error`: where, what kind, the bad value, why."""

    path: str
    type: str
    value: Any = None
    detail: str = ""

    def body(self) -> str:
        if self.type in _NO_VALUE_TYPES:
            s = self.type
        else:
            s = f"{self.type}: {go_value(self.value)}"
        return f"{s}: {self.detail}" if self.detail else s

    def __str__(self) -> str:
        return f"{self.path}: {self.body()}" if self.path else self.body()

    def under(self, prefix: str) -> FieldError:
        """The same error with `prefix` prepended to its path (a child path of `prefix`)."""
        if not prefix:
            return self
        path = self.path
        joined = prefix if not path else (prefix + path if path.startswith("[") else f"{prefix}.{path}")
        return FieldError(joined, self.type, self.value, self.detail)


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def not_supported(path: str, value: Any, supported: Sequence[str]) -> FieldError:
    detail = "supported values: " + ", ".join(go_quote(s) for s in supported)
    return FieldError(path, UNSUPPORTED, value, detail)


def dedup(messages: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for m in messages:
        if m not in seen:
            seen.add(m)
            out.append(m)
    return out


def aggregate(errors: Iterable[Any]) -> str:
    """`utilerrors.NewAggregate(errs).Error()`: one bare, several `[a, b]`, duplicates dropped."""
    msgs = dedup(str(e) for e in errors)
    if len(msgs) == 1:
        return msgs[0]
    return "[" + ", ".join(msgs) + "]"


# --------------------------------------------------------------------------- name rules

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_RE = re.compile(f"^{_QNAME_FMT}$")
_QNAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
              "alphanumeric character")
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_RE = re.compile(f"^{_DNS1123_LABEL_FMT}$")
_DNS1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
                      "must start and end with an alphanumeric character")
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_RE = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}$")
_DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                          "'-' or '.', and must start and end with an alphanumeric character")
_LABEL_VALUE_FMT = f"({_QNAME_FMT})?"
_LABEL_VALUE_RE = re.compile(f"^{_LABEL_VALUE_FMT}$")
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                    "'.', and must start and end with an alphanumeric character")


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """`validation.RegexError` (with its double spaces before 'or')."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    msg += " (e.g. "
    for i, ex in enumerate(examples):
        if i > 0:
            msg += " or "
        msg += f"'{ex}', "
    return msg + f"regex used for validation is '{fmt}')"


def _fullmatch(pattern: re.Pattern[str], value: str) -> bool:
    return pattern.match(value) is not None and "\n" not in value


def dns1123_label_errors(value: str) -> list[str]:
    """`validation.IsDNS1123Label` messages (empty list = valid)."""
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _fullmatch(_DNS1123_LABEL_RE, value):
        errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def dns1123_subdomain_errors(value: str, in_bytes: bool = False) -> list[str]:
    """`validation.IsDNS1123Subdomain` messages; `in_bytes`: apimachinery v0.35+'s `content.IsDNS1123Subdomain`,
    whose `MaxLenError` says bytes."""
    errs = []
    if len(value) > 253:
        errs.append(f"must be no more than 253 {'bytes' if in_bytes else 'characters'}")
    if not _fullmatch(_DNS1123_SUBDOMAIN_RE, value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


_HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"
_HTTP_PATH_RE = re.compile(f"^{_HTTP_PATH_FMT}$")


def domain_prefixed_path_errors(path: str, value: str) -> list[FieldError]:
    """`validation.IsDomainPrefixedPath` (apimachinery util/validation): `acme.io/foo`, the host a DNS-1123
    subdomain, the rest RFC 3986 path characters."""
    if not value:
        return [FieldError(path, REQUIRED)]
    host, slash, rest = value.partition("/")
    if not slash or not host or not rest:
        return [FieldError(path, INVALID, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    errs = [FieldError(path, INVALID, host, m) for m in dns1123_subdomain_errors(host)]
    if not _fullmatch(_HTTP_PATH_RE, rest):
        errs.append(FieldError(path, INVALID, rest, regex_error("Invalid path", _HTTP_PATH_FMT)))
    return errs


def qualified_name_errors(value: str, label_key: bool = False) -> list[str]:
    """`validation.IsQualifiedName` messages (empty list = valid). `label_key`: the words of apimachinery v0.35+
    (kube v1.35+), where it is `content.IsLabelKey`: "a valid label key" for a name of several slashes, and
    lengths in bytes (`content.MaxLenError`), the prefix checked by `content.IsDNS1123Subdomain`."""
    errs: list[str] = []
    unit = "bytes" if label_key else "characters"
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain_errors(prefix, in_bytes=label_key))
    else:
        return [("a valid label key " if label_key else "a qualified name ")
                + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append(f"name part must be no more than 63 {unit}")
    if not _fullmatch(_QNAME_RE, name):
        errs.append("name part " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value_errors(value: str, label_key: bool = False) -> list[str]:
    """`validation.IsValidLabelValue` messages (`label_key`: v0.35+'s `content.IsLabelValue`, lengths in bytes)."""
    errs = []
    if len(value) > 63:
        errs.append(f"must be no more than 63 {'bytes' if label_key else 'characters'}")
    if not _fullmatch(_LABEL_VALUE_RE, value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def label_name_errors(value: str, path: str, label_key: bool = False) -> list[FieldError]:
    """`metav1validation.ValidateLabelName`: one Invalid error per failed rule (`label_key`: v1.35+'s words)."""
    return [FieldError(path, INVALID, value, m) for m in qualified_name_errors(value, label_key)]


# --------------------------------------------------------------------------- node selectors

NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
FIELD_SELECTOR_OPERATORS = ("In", "NotIn")
_INT64 = re.compile(r"^[+-]?[0-9]+$")


def parses_int64(s: str) -> bool:
    """`strconv.ParseInt(s, 10, 64)` succeeds."""
    if not _INT64.match(s) or "\n" in s:
        return False
    return -(2**63) <= int(s) < 2**63


def _requirement_errors(req: dict[str, Any], path: str, label_key: bool = False) -> list[FieldError]:
    """`labels.NewRequirement` errors for one matchExpressions entry (operator already known; `label_key`:
    v1.35+'s words, `validateLabelKey` being `content.IsLabelKey`)."""
    key = str(req.get("key") or "")
    op = req.get("operator") or ""
    values = req.get("values")
    vals = list(values or [])
    errs: list[FieldError] = []
    key_msgs = qualified_name_errors(key, label_key)
    if key_msgs:
        errs.append(FieldError(child(path, "key"), INVALID, key, "; ".join(key_msgs)))
    vpath = child(path, "values")
    if op in ("In", "NotIn"):
        if not vals:
            errs.append(FieldError(vpath, INVALID, values if values is not None else None,
                                   "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist"):
        if vals:
            errs.append(FieldError(vpath, INVALID, vals, "values set must be empty for exists and does not exist"))
    elif op in ("Gt", "Lt"):
        if len(vals) != 1:
            errs.append(FieldError(vpath, INVALID, values if values is not None else None,
                                   "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(vals):
            if not parses_int64(str(v)):
                errs.append(FieldError(index(vpath, i), INVALID, str(v),
                                       "for 'Gt', 'Lt' operators, the value must be an integer"))
    for i, v in enumerate(vals):
        msgs = label_value_errors(str(v), label_key)
        if msgs:
            errs.append(FieldError(f"{index(vpath, i)}[{key}]", INVALID, str(v), "; ".join(msgs)))
    return dedup_errors(errs)


def dedup_errors(errs: list[FieldError]) -> list[FieldError]:
    """`field.ErrorList.ToAggregate` drops errors printing the same."""
    seen: set[str] = set()
    out = []
    for e in errs:
        if str(e) not in seen:
            seen.add(str(e))
            out.append(e)
    return out


def term_errors(term: dict[str, Any], path: str, label_key: bool = False) -> list[FieldError]:
    """Parse errors of one NodeSelectorTerm (`newNodeSelectorTerm`; `label_key`: v1.35+'s words)."""
    errs: list[FieldError] = []
    exprs = term.get("matchExpressions") or []
    for i, req in enumerate(exprs):
        p = index(child(path, "matchExpressions"), i)
        op = req.get("operator") or ""
        if op not in NODE_SELECTOR_OPERATORS:
            errs.append(not_supported(child(p, "operator"), op, NODE_SELECTOR_OPERATORS))
            continue
        errs.extend(_requirement_errors(req, p, label_key))
    fields = term.get("matchFields") or []
    for i, req in enumerate(fields):
        p = index(child(path, "matchFields"), i)
        op = req.get("operator") or ""
        values = req.get("values")
        if op in FIELD_SELECTOR_OPERATORS:
            if len(values or []) != 1:
                errs.append(FieldError(child(p, "values"), INVALID, values, "must have one element"))
        else:
            errs.append(not_supported(child(p, "operator"), op, FIELD_SELECTOR_OPERATORS))
    return errs


def is_empty_term(term: dict[str, Any] | None) -> bool:
    return not term or (not term.get("matchExpressions") and not term.get("matchFields"))


def node_selector_errors(selector: dict[str, Any], path: str, label_key: bool = False) -> list[FieldError]:
    """`nodeaffinity.NewNodeSelector` errors (empty terms are skipped; `label_key`: v1.35+'s words)."""
    errs: list[FieldError] = []
    for i, term in enumerate(selector.get("nodeSelectorTerms") or []):
        if is_empty_term(term):
            continue
        errs.extend(term_errors(term, index(child(path, "nodeSelectorTerms"), i), label_key))
    return errs


def preferred_terms_errors(terms: list[dict[str, Any]], path: str, label_key: bool = False) -> list[FieldError]:
    """`nodeaffinity.NewPreferredSchedulingTerms` errors (weight-0 and empty terms skipped; no `.preference`)."""
    errs: list[FieldError] = []
    for i, term in enumerate(terms):
        pref = term.get("preference") or {}
        if not term.get("weight") or is_empty_term(pref):
            continue
        errs.extend(term_errors(pref, index(path, i), label_key))
    return errs
