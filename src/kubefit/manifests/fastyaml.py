"""A compiled YAML reader (yaml-rs) used only where it provably reads a text as PyYAML's SafeLoader does.

PyYAML's libyaml loader is the reference (`kubefit.manifests.parse`): YAML 1.1 scalars as sigs.k8s.io/yaml reads
them (`yes`/`on` booleans, `0777` octal, `12:30` sexagesimal, dates), duplicate keys refused by name. Its
C parser is fast, but every event and scalar then passes through Python (≈ 1 MB/s). yaml-rs parses and
builds the objects in Rust (≈ 20 MB/s) but reads YAML 1.2 scalars, so the two disagree on some texts.

`fast_yaml_bodies` returns the documents only when every line of the text is in a small grammar on which
the two readers give the same values: block mappings and sequences, one-line flow collections of
scalars, comments, `---`; keys that are letters-first words or quoted; plain values that are integers of
at most 18 digits, decimals, quantities (`64Gi`, `100m`), percentages, digits-first words with a `-`
(uids) that are neither dates nor exponents, `true`/`false`/`null` as both spell them, or letter- or
`/`-first words that are not YAML 1.1 booleans; quoted strings on one line with `\\\\ \\" \\n \\t` escapes
only; printable ASCII, no tabs. Anchors, aliases, merge keys, tags, block scalars, directives, multi-line
scalars fall outside: the caller then reads the text with PyYAML. So does any text yaml-rs refuses
(duplicate keys among them), so every error message stays PyYAML's. The grammar is checked per distinct
line (a regular expression in C), which costs ≈ 0.03 s on a 4 MB `kind: List`.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Callable
from typing import Any

_CHAR = r"[A-Za-z0-9._/@+=-]"  # what a plain word may hold (`:` only inside, before another of these)
_END = r"(?:[ ]+(?:\#.*)?)?$"  # spaces, then a comment after at least one space
_YAML11_ONLY = r"(?:[yY]es|YES|[nN]o|NO|[oO]n|ON|[oO]ff|OFF|[yYnN]|(?i:true|false|null))"  # as one scalar
_AGREED_WORDS = r"(?:true|True|TRUE|false|False|FALSE|null|Null|NULL|~)"
_NUMBER = r"-?(?:0|[1-9][0-9]{0,17})(?:\.[0-9]{1,17})?"
_QUANTITY = r"(?:0(?![xXoObB])|[1-9][0-9]{0,17})(?:\.[0-9]{1,17})?[A-DF-Za-df-z][A-Za-z]{0,8}"
_PERCENT = r"(?:0|[1-9][0-9]{0,17})%"  # maxSurge: 25%
# digits first with a `-` inside (a uid): a string to both, but for a date (PyYAML) or `1e-5` (yaml-rs)
_DASHED = rf"(?![0-9]{{4}}-)(?![0-9]+[eE]-[0-9]+{_END})[0-9][0-9A-Za-z]{{0,4000}}-[0-9A-Za-z-]{{0,4000}}"
_WORDS = rf"[A-Za-z/](?:{_CHAR}|:(?={_CHAR})|[ ](?={_CHAR})){{0,4000}}"
_FLOW_WORD = rf"[A-Za-z]{_CHAR}{{0,4000}}"
_SINGLE = r"'(?:[^'\n]|''){0,4000}'"
_DOUBLE = r'"(?:[^"\\\n]|\\["\\nt]){0,4000}"'
_FLOW_END = r"(?=[ ]*[,\]}])"
_FLOW_SCALAR = (rf"(?:{_AGREED_WORDS}{_FLOW_END}|{_NUMBER}{_FLOW_END}|{_QUANTITY}{_FLOW_END}"
                rf"|(?!{_YAML11_ONLY}{_FLOW_END}){_FLOW_WORD}|{_SINGLE}|{_DOUBLE})")
_FLOW_KEY = rf"(?:(?!{_YAML11_ONLY}:){_FLOW_WORD}|{_SINGLE}|{_DOUBLE})"
_FLOW_SEQUENCE = rf"\[[ ]*(?:{_FLOW_SCALAR}[ ]*(?:,[ ]*{_FLOW_SCALAR}[ ]*)*)?\]"
_FLOW_MAPPING = (rf"\{{[ ]*(?:{_FLOW_KEY}:[ ]+{_FLOW_SCALAR}[ ]*"
                 rf"(?:,[ ]*{_FLOW_KEY}:[ ]+{_FLOW_SCALAR}[ ]*)*)?\}}")
_VALUE = (rf"(?:{_AGREED_WORDS}|{_NUMBER}|{_QUANTITY}|{_PERCENT}|{_DASHED}|(?!{_YAML11_ONLY}{_END}){_WORDS}"
          rf"|{_SINGLE}|{_DOUBLE}|{_FLOW_SEQUENCE}|{_FLOW_MAPPING}){_END}")
_KEY = (rf"(?:(?!{_YAML11_ONLY}:)[A-Za-z](?:{_CHAR}|:(?={_CHAR})|[ ](?={_CHAR})){{0,500}}"  # libyaml: ≤ 1024
        r"""|'(?:[^'\n]|''){0,500}'|"(?:[^"\\\n]|\\["\\nt]){0,500}")""")
_LINE = (rf"[ ]*(?:(?:-[ ]+)+{_VALUE}|(?:-[ ]+)*{_KEY}:(?:[ ]+{_VALUE}|{_END})|(?:-[ ]+)*-?{_END}|\#.*)"
         rf"|---{_END}")
MIN_BYTES = 32 << 10  # below this PyYAML takes < 20 ms, about what compiling the grammar costs once
_NOT_PRINTABLE_ASCII = re.compile(r"[^\n\x20-\x7e]")
_CONTENT_LINE = re.compile(r"^[ ]*[^ #\n]", re.M)


def in_agreed_grammar(text: str) -> bool:
    """Whether every line of `text` is in the grammar on which yaml-rs and PyYAML read the same values."""
    if _NOT_PRINTABLE_ASCII.search(text):
        return False
    return _lines().fullmatch("\n".join(dict.fromkeys(text.split("\n")))) is not None


@functools.cache
def _lines() -> re.Pattern[str]:
    """The grammar as one expression over lines (compiled on first use: 10 ms that JSON input never pays)."""
    return re.compile(rf"(?:(?:{_LINE})\n)*+(?:{_LINE})?", re.M)


@functools.cache
def _line() -> re.Pattern[str]:
    """The grammar of one line."""
    return re.compile(rf"(?:{_LINE})")


def document_count(text: str) -> int:
    """How many documents PyYAML finds in a text of the grammar: its `---` lines, plus one if anything but
    comments comes before the first (in the grammar a line starting with `---` is a document start)."""
    markers = text.count("\n---") + text.startswith("---")
    first = 0 if text.startswith("---") else text.find("\n---") + 1 if markers else len(text)
    return markers + (_CONTENT_LINE.search(text, 0, first) is not None)


def fast_yaml_bodies(text: str, pyyaml: Callable[[str], tuple[list[Any], bool] | None]
                     ) -> tuple[list[Any], bool] | None:
    """The documents of `text` as PyYAML's SafeLoader reads them, and whether `pyyaml` refused a value; or
    None where that is not proven (shorter than `MIN_BYTES`, no document in the grammar, yaml-rs missing or
    refusing a part, `pyyaml` failing on one): the caller then reads the whole text with PyYAML.

    A stream whose documents are not all in the grammar is cut at its `---` lines: runs of documents in
    the grammar go to yaml-rs, the others to `pyyaml` (text → documents and refusal, or None on an error).
    """
    if len(text) < MIN_BYTES:
        return None
    if in_agreed_grammar(text):
        bodies = _yaml_rs_documents(text)
        return None if bodies is None else (bodies, False)
    parts = _runs(text)
    if parts is None:
        return None
    bodies, refused = [], False
    for part, agreed in parts:
        if agreed:
            read = _yaml_rs_documents(part)
            if read is None:
                return None
            bodies += read
        else:
            outcome = pyyaml(part)
            if outcome is None:
                return None
            bodies += outcome[0]
            refused |= outcome[1]
    return bodies, refused


def _yaml_rs_documents(text: str) -> list[Any] | None:
    """yaml-rs's documents of a text in the grammar, or None if it refuses the text (or is missing)."""
    try:
        import yaml_rs
    except ImportError:  # a declared dependency; PyYAML alone still gives every answer
        return None
    try:
        loaded = yaml_rs.loads(text, parse_datetime=False, duplicate_key_policy=yaml_rs.DuplicateKeyPolicy.Error)
    except (yaml_rs.YAMLDecodeError, ValueError, RecursionError):
        return None
    count = document_count(text)
    if count == 1:
        return [loaded]
    if count == 0:
        return [] if loaded is None else None
    return loaded if isinstance(loaded, list) and len(loaded) == count else None


def _runs(text: str) -> list[tuple[str, bool]] | None:
    """`text` cut before its `---` lines into runs of documents all in the grammar or not (True/False), or
    None when no document is in it or when a directive (`%`) or document end (`...`) could tie documents."""
    lines = text.split("\n")
    outside = {line for line in dict.fromkeys(lines)
               if _NOT_PRINTABLE_ASCII.search(line) or not _line().fullmatch(line)}
    if any(line.startswith(("%", "...")) for line in outside):
        return None
    offsets = [0, *itertools.accumulate(len(line) + 1 for line in lines)]
    starts = [0, *(i for i, line in enumerate(lines) if line[:3] == "---" and line not in outside and i)]
    bad = {bisect.bisect_right(starts, i) - 1 for i, line in enumerate(lines) if line in outside}
    runs: list[tuple[int, bool]] = []  # (first line, in the grammar)
    for k, first in enumerate(starts):
        if not runs or runs[-1][1] != (k not in bad):
            runs.append((first, k not in bad))
    if not any(agreed for _, agreed in runs):
        return None
    ends = [first for first, _ in runs[1:]] + [len(lines)]
    return [(text[offsets[first]:min(offsets[end], len(text))], agreed)
            for (first, agreed), end in zip(runs, ends, strict=True)]
