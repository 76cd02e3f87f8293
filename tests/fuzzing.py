"""A seeded mutator over scenario files, and the contract every `kubefit` run must keep on its output.

Used by `tests/test_fuzz.py` (a short property run on every verb) and `benchmarks/fuzz_campaign.py`
(the 10,000-mutant campaign of the README's "Reliability" section).

The contract for one run of one verb on one mutated file: exit 0 or 1 (1 with one `error:` line only
for a scheduling cycle the framework itself fails); or exit 2 with exactly one `error:` line that names
the file (every other stderr line a `warning:`); never an internal error (exit 70), never longer than
the time bound, never more memory than the memory bound; no control character of the input reaching
the terminal; a duplicated mapping key never accepted (it would be
silently dropped), an unknown field in a typed object never accepted without a word.
"""

from __future__ import annotations

import copy
import io
import json
import os
import random
import resource
import select
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
GOLDEN = ROOT.parent / "shared" / "golden" / "kube-scheduler" / "cases.jsonl"

# The framework's own failures of a cycle (a PreScore error, a score out of [0, 100] after an int64 wrap):
# kube-scheduler's text on one `error:` line and exit 1, as the golden cases' `error` expects, not bad input.
# A scheduling cycle that fails with the framework's error (`SchedulingCycleError`, exit 1): kube-scheduler's
# own message for a plugin's error status. Seed 39 met DynamicResources' Filter (a CEL runtime error).
CYCLE_ERRORS = ("error: running PreScore plugin ", "error: applying score defaultWeights on Score plugins: ",
                'error: running "DynamicResources" filter plugin: ', 'error: running PreFilter plugin "DynamicResources": ')

# Every verb that reads scenario files, with the options a user would give it (`{f}` is the file).
VERBS: tuple[tuple[str, ...], ...] = (
    ("score", "-f", "{f}"),
    ("score", "-f", "{f}", "--explain"),
    ("score", "-f", "{f}", "--detail", "-o", "json"),
    ("simulate", "-f", "{f}"),
    ("simulate", "-f", "{f}", "-o", "yaml", "--compare", "MostAllocated"),
    ("capacity", "-f", "{f}", "--max", "50"),
    ("config", "validate", "-f", "{f}"),
    ("config", "view", "-f", "{f}"),
    ("config", "convert", "-f", "{f}"),
    ("summary", "-f", "{f}"),
    ("models", "validate", "-f", "{f}"),
    ("models", "classify", "-f", "{f}"),
    ("estimate", "-f", "{f}"),
    ("estimate", "-f", "{f}", "--request", "cpu=500m,memory=1Gi", "-o", "json"),
    ("schedule", "-f", "{f}"),
    ("consolidate", "-f", "{f}"),
    ("consolidate", "-f", "{f}", "--repack", "--compare", "MostAllocated", "-o", "json"),
    ("simulate", "-f", "{f}", "--timeline", "-o", "json"),
    ("simulate", "-f", "{f}", "--kube-version", "1.36", "--feature-gates", "GenericWorkload=true,GangScheduling=true",
     "-o", "json"),
    ("rightsize", "-f", "{f}", "--requests-from", "vpa", "-o", "json"),
    ("check", "-f", "{f}", "--max-pending", "0", "--min-capacity", "deployment/web=1", "-o", "json"),
)

# Keys whose mapping is free-form (any key is data, not a field): an added key there is not a typo.
FREE_FORM = frozenset({
    "labels", "annotations", "nodeSelector", "matchLabels", "requests", "limits", "allocatable", "capacity",
    "allocated", "allocating", "overhead", "allocatedResources", "resourceList", "replicaRequirements",
    "resourceRequest", "featureGates", "data", "stringData", "clusterSelector", "weights"})

_INTERESTING: tuple[Any, ...] = (
    "1E", "1Ei", "8E", "9E", "1e99999999", "1e-99999999", "1E18", "9223372036854775807",
    "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "0.000000001", "1n", "1.5u",
    "+1", "-1", ".5", "5.", "1e3Mi", "", " ", "0", "-0", "1..5", "1e", "e3", "Ki", "1KiB",
    2**63 - 1, 2**63, -(2**63), -(2**63) - 1, "__BIGINT__", -1, 0, 1, 7, 1.5, -0.5, 1e308, True, False, None,
    "a\nerror: forged second line", "\x1b[31mred\x1b[0m", "name\twith\ttabs", "\u202eevil", "ü-名前",
    "x" * 5000, [], {}, [1, 2], {"a": 1}, "true", "null", "~", "NaN", ".inf",
)


@dataclass
class Mutant:
    """One mutated file: its text, how it was made, and what the run must do about it."""

    text: str
    seed_name: str
    mutation: str
    expect_refusal: bool = False  # a duplicated key: accepting it would drop one value silently
    unknown_field: str | None = None  # an added field in a typed object: accepted only with a word
    suffix: str = ".yaml"


@dataclass
class Outcome:
    """What one run did: exit code (None on a hang), stderr, stdout, seconds and peak memory (beyond what the
    forked child inherited resident)."""

    code: int | None
    stdout: str
    stderr: str
    seconds: float
    max_rss_bytes: int


@dataclass
class Verdict:
    """The contract's judgement of one run: `problem` is empty when the run kept it."""

    problem: str = ""
    detail: str = ""
    tags: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- seed files

def seed_texts(golden_cases: int = 12, rng: random.Random | None = None) -> list[tuple[str, str]]:
    """(name, text) of every example scenario, plus a sample of golden kube-scheduler cases when present."""
    seeds = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8"))
             for p in sorted(EXAMPLES.rglob("*.yaml")) if p.is_file()]
    if golden_cases and GOLDEN.is_file():
        seeds += _golden_seeds(golden_cases, rng or random.Random(0))
    return seeds


def _golden_seeds(count: int, rng: random.Random) -> list[tuple[str, str]]:
    from golden_scenario import case_scenario_docs

    with GOLDEN.open(encoding="utf-8") as fh:
        lines = [line for i, line in enumerate(fh) if i < 400]
    out = []
    for line in rng.sample(lines, min(count, len(lines))):
        case = json.loads(line)
        try:
            docs = case_scenario_docs(case)
        except ValueError:  # a case outside the default profile: not a scenario
            continue
        out.append((f"golden:{case['id']}", yaml.safe_dump_all(docs, sort_keys=False)))
    return out


# --------------------------------------------------------------------------- mutations

def mutate(name: str, text: str, rng: random.Random) -> Mutant:
    """One seeded mutation of a seed file (structural, key-level or byte-level)."""
    kind = rng.choice(_MUTATIONS)
    return kind(name, text, rng)


def _bodies(text: str) -> list[Any]:
    return [b for b in yaml.safe_load_all(text) if b is not None]


def _dump(bodies: list[Any], rng: random.Random) -> tuple[str, str]:
    """YAML or JSON text; `__BIGINT__` becomes an integer of 5,000 digits (Python cannot str() one)."""
    if rng.random() < 0.25:
        body = bodies[0] if len(bodies) == 1 else {"apiVersion": "v1", "kind": "List", "items": bodies}
        text, suffix = json.dumps(body, indent=1, ensure_ascii=rng.random() < 0.5), ".json"
    else:
        text, suffix = yaml.safe_dump_all(bodies, sort_keys=False, allow_unicode=True, width=1 << 20), ".yaml"
    return text.replace('"__BIGINT__"', "7" * 5000).replace("__BIGINT__", "7" * 5000), suffix


def _walk(node: Any, path: str = "") -> Iterator[tuple[Any, Any, str]]:
    """(container, key, path) of every value below `node`."""
    if isinstance(node, dict):
        for k in list(node):
            yield node, k, f"{path}.{k}"
            yield from _walk(node[k], f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield node, i, f"{path}[{i}]"
            yield from _walk(v, f"{path}[{i}]")


def _replace_value(name: str, text: str, rng: random.Random) -> Mutant:
    bodies = _bodies(text)
    places = list(_walk(bodies))
    for _ in range(rng.randint(1, 3)):
        container, key, _path = rng.choice(places)
        container[key] = copy.deepcopy(rng.choice(_INTERESTING))  # never the shared [] or {} itself
        places = list(_walk(bodies))
    out, suffix = _dump(bodies, rng)
    return Mutant(out, name, "replace-value", suffix=suffix)


def _delete_key(name: str, text: str, rng: random.Random) -> Mutant:
    bodies = _bodies(text)
    maps = [(c, k) for c, k, _ in _walk(bodies) if isinstance(c, dict)]
    container, key = rng.choice(maps)
    del container[key]
    out, suffix = _dump(bodies, rng)
    return Mutant(out, name, "delete-key", suffix=suffix)


def _label_map_selector(key: str, value: dict) -> bool:
    """A Service's (or ReplicationController's) `selector`: a map of labels, where any key is data (seed 37
    added one and expected a refusal); a Deployment's `selector` is a typed LabelSelector (matchLabels, ...)."""
    return key == "selector" and bool(value) and all(isinstance(v, str) for v in value.values())


def _unknown_field(name: str, text: str, rng: random.Random) -> Mutant:
    bodies = _bodies(text)
    maps = [(v, p) for c, k, p in _walk(bodies) if isinstance(v := c[k], dict) and str(k) not in FREE_FORM
            and not _label_map_selector(str(k), v)]
    maps += [(b, f"[{i}]") for i, b in enumerate(bodies) if isinstance(b, dict)]
    target, path = rng.choice(maps)
    target["kubefitFuzzField"] = rng.choice(("x", 1, {"a": 1}))
    out, suffix = _dump(bodies, rng)
    return Mutant(out, name, "unknown-field", unknown_field=f"{path}.kubefitFuzzField", suffix=suffix)


def _duplicate_key(name: str, text: str, rng: random.Random) -> Mutant:
    """A scalar `key: value` line repeated right below with another value (the earlier one would be lost)."""
    out, _ = _dump(_bodies(text), random.Random(rng.random() + 1))  # YAML, block style
    if out.lstrip().startswith("{"):
        out = yaml.safe_dump_all(_bodies(text), sort_keys=False, width=1 << 20)
    lines = out.splitlines()
    candidates = [i for i, line in enumerate(lines) if _scalar_key_line(line)]
    if not candidates:
        return _replace_value(name, text, rng)
    i = rng.choice(candidates)
    indent, key = _scalar_key_line(lines[i])
    lines.insert(i + 1, f"{indent}{key}: {json.dumps(rng.choice(('64', '0', 'x', '1Gi')))}")
    return Mutant("\n".join(lines) + "\n", name, "duplicate-key", expect_refusal=True)


def _scalar_key_line(line: str) -> tuple[str, str] | None:
    stripped = line.lstrip(" ")
    if stripped.startswith(("- ", "#")) or ": " not in stripped:
        return None
    key, _, rest = stripped.partition(": ")
    if not rest or rest.startswith(("&", "*", "|", ">")) or not key.replace("-", "").replace(".", "").replace(
            "/", "").replace("_", "").isalnum():
        return None
    return line[: len(line) - len(stripped)], key


def _alias_bomb(name: str, text: str, rng: random.Random) -> Mutant:
    levels = rng.randint(6, 12)
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels)]
    bomb = "\n".join(lines)
    return Mutant(f"{bomb}\n---\n{text}" if rng.random() < 0.5 else f"{text}\n---\n{bomb}\n", name, "alias-bomb")


def _deep_nesting(name: str, text: str, rng: random.Random) -> Mutant:
    depth = rng.choice((200, 2000, 20000, 200000))
    if rng.random() < 0.5:
        return Mutant("[" * depth + "]" * depth, name, "deep-nesting", suffix=".json")
    nested = "{a: " * depth + "1" + "}" * depth
    return Mutant(f"{text}\n---\n{nested}\n", name, "deep-nesting")


def _byte_noise(name: str, text: str, rng: random.Random) -> Mutant:
    data = bytearray(text.encode("utf-8"))
    for _ in range(rng.randint(1, 8)):
        pos = rng.randrange(len(data) or 1)
        op = rng.random()
        if op < 0.3 and data:
            data[pos] = rng.randrange(256)
        elif op < 0.6:
            data[pos:pos] = rng.choice((b"\x1b[2J", b"\r", b"\t", b"\x00", b"\xff", b": ", b"- ", b"{", b"&x ", b"*x"))
        elif op < 0.8:
            del data[pos: pos + rng.randint(1, 40)]
        else:
            data = data[:pos]
    return Mutant(data.decode("utf-8", "surrogateescape"), name, "byte-noise")


def _big_number(name: str, text: str, rng: random.Random) -> Mutant:
    """A quantity or integer field pushed to the edges of int64 and beyond."""
    bodies = _bodies(text)
    leaves = [(c, k) for c, k, _ in _walk(bodies) if isinstance(c[k], (int, str)) and not isinstance(c[k], bool)
              and str(c[k])[:1].isdigit()]
    if not leaves:
        return _replace_value(name, text, rng)
    container, key = rng.choice(leaves)
    container[key] = rng.choice((2**63 - 1, 2**63, 2**64, 10**19, 10**400, "__BIGINT__", "9223372036854775807",
                                 "9223372036854775808", "8Ei", "7Ei", "9223372036854775807m", "1e18", "1e19",
                                 "10E", "9.3E", "1e308", "12345678901234567890123456789k", "0." + "0" * 400 + "1"))
    out, suffix = _dump(bodies, rng)
    return Mutant(out, name, "big-number", suffix=suffix)


_MUTATIONS = (_replace_value, _replace_value, _big_number, _big_number, _delete_key, _unknown_field,
              _unknown_field, _duplicate_key, _duplicate_key, _alias_bomb, _deep_nesting, _byte_noise,
              _byte_noise)


# --------------------------------------------------------------------------- running

def preload() -> None:
    """Import every verb (and what they import) once, so that each forked run starts warm."""
    import matplotlib

    matplotlib.use("Agg")
    from kubefit.cli import main

    saved = sys.stdout, sys.stderr
    try:  # each verb once, in this process: its lazy imports are done before any fork
        sys.stdout = sys.stderr = io.StringIO()
        for seed in ("workload/cluster.yaml", "karmada/estimate-general-500m.yaml"):
            for verb in VERBS:
                main([a.replace("{f}", str(EXAMPLES / seed)) for a in verb])
    finally:
        sys.stdout, sys.stderr = saved


def run_isolated(argv: list[str], *, stdin: str = "", timeout: float = 20.0,
                 memory_bytes: int = 3 << 30) -> Outcome:
    """`kubefit.cli.main(argv)` in a forked child: output captured, time bounded, and the address space it maps
    beyond what it inherits bounded by `memory_bytes`."""
    reader, writer = os.pipe()
    inherited = _status_bytes("VmRSS:")
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(reader)
        _child(argv, stdin, writer, memory_bytes)
    os.close(writer)
    chunks, deadline = [], started + timeout
    while True:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([reader], [], [], max(left, 0))
        if not ready:
            os.kill(pid, signal.SIGKILL)
            break
        chunk = os.read(reader, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(reader)
    _, status, usage = os.wait4(pid, 0)
    seconds = time.monotonic() - started
    rss = max(0, usage.ru_maxrss * 1024 - inherited)  # the child starts with this process's pages resident
    if not chunks or seconds >= timeout:
        return Outcome(None, "", "", seconds, rss)
    try:
        result = json.loads(b"".join(chunks))
    except ValueError:  # the child died mid-write (killed by the memory bound)
        return Outcome(None if os.WIFSIGNALED(status) else 70, "", "", seconds, rss)
    return Outcome(result["code"], result["stdout"], result["stderr"], seconds, rss)


def _status_bytes(key: str) -> int:
    """This process's `VmSize:` (address space mapped) or `VmRSS:` (resident) from /proc (0 elsewhere). A
    forked child inherits both: a pytest worker that has run other tests (thread arenas of a Dask cluster,
    large arrays) may hold gigabytes, which are not the run's. The bounds apply to what the run adds."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            return next(int(line.split()[1]) * 1024 for line in fh if line.startswith(key))
    except (OSError, StopIteration, ValueError):
        return 0


def _child(argv: list[str], stdin: str, writer: int, memory_bytes: int) -> None:  # pragma: no cover
    limit = _status_bytes("VmSize:") + memory_bytes  # the run's own allocations are bounded, not what it inherited
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    out, err = io.StringIO(), io.StringIO()
    sys.stdout, sys.stderr, sys.stdin = out, err, io.StringIO(stdin)
    code = 70
    try:
        from kubefit.cli import main

        code = main(argv)
    except BaseException as exc:  # noqa: BLE001 - whatever escaped main is a contract breach
        err.write(f"escaped main: {type(exc).__name__}: {str(exc)[:200]}\n")
        code = 70
    payload = json.dumps({"code": code, "stdout": out.getvalue()[:200_000], "stderr": err.getvalue()[:20_000]})
    with os.fdopen(writer, "wb") as fh:
        fh.write(payload.encode("utf-8", "surrogatepass"))
    os._exit(0)


# --------------------------------------------------------------------------- the contract

_CONTROL = {chr(c) for c in range(32) if chr(c) not in "\n"} | {"\x7f"}


def judge(mutant: Mutant, path: str, outcome: Outcome, *, time_bound: float = 20.0,
          memory_bound: int = 2 << 30) -> Verdict:
    """Did this run keep the contract (module docstring)? The first breach found is returned."""
    if outcome.code is None:
        return Verdict("hang", f"over {time_bound:g} s or killed")
    if outcome.max_rss_bytes > memory_bound:
        return Verdict("memory", f"{outcome.max_rss_bytes >> 20} MiB")
    if outcome.code == 70:
        return Verdict("internal-error", _first_error(outcome.stderr))
    if outcome.code not in (0, 1, 2):
        return Verdict("exit-code", str(outcome.code))
    lines = outcome.stderr.splitlines()
    stray = [ln for ln in lines if not ln.startswith(("error: ", "warning: ", "note: "))]
    if stray:
        return Verdict("multi-line", repr(stray[0][:120]))
    if any(ch in _CONTROL for ch in outcome.stdout + outcome.stderr if ch != "\t"):
        return Verdict("control-char", repr(next(ln for ln in (outcome.stdout + outcome.stderr).splitlines()
                                                  if any(ch in _CONTROL for ch in ln if ch != "\t"))[:120]))
    errors = [ln for ln in lines if ln.startswith("error: ")]
    if outcome.code == 2 and not errors and outcome.stdout.startswith(f"{path}: invalid scheduler configuration:"):
        return Verdict()  # `config validate`'s answer: kube-scheduler's messages on stdout
    if outcome.code == 2:
        if len(errors) != 1:
            return Verdict("multi-line", f"{len(errors)} error lines")
        if path not in errors[0]:
            return Verdict("file-less", errors[0][:160])
        return Verdict()
    if outcome.code == 1 and len(errors) == 1 and errors[0].startswith(CYCLE_ERRORS):
        return Verdict()  # the scheduling cycle failed, as kube-scheduler's framework fails it: an answer
    if errors:
        return Verdict("error-with-success", errors[0][:160])
    if mutant.expect_refusal:
        return Verdict("dropped-key", "a duplicated key was accepted")
    said = "kubefitFuzzField" in outcome.stderr + outcome.stdout or "; ignored" in outcome.stderr  # not read
    if mutant.unknown_field and not said:
        return Verdict("ignored-field", mutant.unknown_field, tags=[mutant.seed_name])
    return Verdict()


def _first_error(stderr: str) -> str:
    return next((ln for ln in stderr.splitlines() if ln.startswith(("error:", "escaped"))), stderr[:160])[:200]
