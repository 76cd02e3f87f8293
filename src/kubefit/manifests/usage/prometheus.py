"""Prometheus HTTP API answers (`/api/v1/query_range` matrix, `/api/v1/query` vector) → per-container usage.

The response (`{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {...},
"values": [[t, "v"], ...]}]}}`, prometheus/web/api/v1 `api.go` `queryData`) is decoded with msgspec, each
series' sample list kept as raw JSON and read by numpy in one pass (`np.fromstring`), never a Python float per
sample: 17 million samples decode in seconds.

Which resource a series measures: its `__name__` (a raw selector keeps it; so does a recording rule, whose name
says what it recorded, e.g. kubernetes-mixin's `node_namespace_pod_container:container_cpu_usage_seconds_total:
sum_irate`), else what the file was given as (`--usage cpu=FILE`, `--usage memory=FILE`):

- `container_cpu_usage_seconds_total` itself is a counter (cAdvisor, seconds of cpu): read as the rate between
  consecutive samples (`increase / Δt`), a decrease being a counter reset (the counter restarted from 0: the
  increase is the new value, as Prometheus' `rate` counts it); a rule over it (`rate`, `irate`) or a file given
  as `cpu=` is already in cores.
- `container_memory_working_set_bytes` (and rules over it, or `memory=`) is a gauge in bytes.

Labels: `namespace`, `pod` and `container` (cAdvisor before Kubernetes 1.16: `pod_name`, `container_name`); the
pod's sandbox (`container="POD"`) and the pod-level cgroup (`container=""`) are not containers and are left out,
counted in a note. A series may name its workload instead of its pod: kube-state-metrics joins
(`owner_kind`/`owner_name`, `created_by_kind`/`created_by_name`) or kubernetes-mixin's `workload_type`/`workload`.

Bad input is refused with the series named (an error answer, a histogram series, a sample that is not a
number, ±Inf, a negative value); NaN samples (Prometheus' staleness markers, a division by zero) are dropped
and counted in a note, never read as zero.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from typing import Any

import msgspec
import numpy as np

from kubefit.errors import InputError
from kubefit.manifests.usage.model import CPU, MEMORY, ContainerUsage, Samples, UsageData

CPU_COUNTER = "container_cpu_usage_seconds_total"
MEMORY_GAUGE = "container_memory_working_set_bytes"
SANDBOX, POD_CGROUP = "POD", ""
OWNER_LABELS = (("owner_kind", "owner_name"), ("created_by_kind", "created_by_name"), ("workload_type", "workload"))
# kubernetes-mixin's `workload_type` values → the kind they name
_WORKLOAD_TYPES = {"deployment": "Deployment", "statefulset": "StatefulSet", "daemonset": "DaemonSet",
                   "job": "Job", "replicaset": "ReplicaSet", "cronjob": "CronJob",
                   "replicationcontroller": "ReplicationController"}


_ABSENT = msgspec.Raw()  # msgspec takes no `Raw | None`: an absent field is an empty Raw


class _Series(msgspec.Struct, forbid_unknown_fields=True):
    metric: dict[str, str]
    values: msgspec.Raw = _ABSENT
    value: msgspec.Raw = _ABSENT
    histograms: msgspec.Raw = _ABSENT
    histogram: msgspec.Raw = _ABSENT


class _Data(msgspec.Struct, forbid_unknown_fields=True):
    resultType: str  # noqa: N815 - the API's field name
    result: msgspec.Raw
    stats: msgspec.Raw = _ABSENT


class _Response(msgspec.Struct, forbid_unknown_fields=True):
    status: str
    data: _Data | None = None
    errorType: str | None = None  # noqa: N815
    error: str | None = None
    warnings: list[str] | None = None
    infos: list[str] | None = None


_RESPONSE = msgspec.json.Decoder(_Response)
_SERIES_LIST = msgspec.json.Decoder(list[_Series])


def looks_like(head: bytes) -> bool:
    """Whether a JSON document is a Prometheus API answer (its first bytes hold `"status"` and `"data"` or
    `"error"`)."""
    return b'"status"' in head and (b'"resultType"' in head or b'"errorType"' in head)


def decode_response(data: bytes | memoryview, source: str, measures: str | None = None) -> UsageData:
    """A Prometheus API answer → usage (see the module's docstring); `measures` is what the file was given as
    (`cpu`, `memory`, None: each series' `__name__` says)."""
    try:
        response = _RESPONSE.decode(data)
    except msgspec.ValidationError as exc:
        raise InputError(f"not a Prometheus API answer: {exc}", file=source) from None
    except msgspec.DecodeError as exc:
        raise InputError(f"not valid JSON: {exc}", file=source) from None
    if response.status != "success":
        raise InputError(f"Prometheus answered {response.status}: {response.errorType or 'error'}: "
                         f"{response.error or '(no message)'}", file=source, field="status")
    if response.data is None:
        raise InputError("a successful answer without data", file=source, field="data")
    kind = response.data.resultType
    if kind not in ("matrix", "vector"):
        raise InputError(f"resultType {kind!r} holds no series: query a range (matrix) or an instant vector",
                         file=source, field="data.resultType")
    try:
        series = _SERIES_LIST.decode(response.data.result)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise InputError(f"not a list of series: {exc}", file=source, field="data.result") from None
    out = UsageData(sources=[source], formats=["prometheus"])
    skipped: Counter[str] = Counter()
    nan = 0
    for i, s in enumerate(series):
        where = f"data.result[{i}]"
        if len(s.histograms) or len(s.histogram):
            raise InputError(f"a native histogram series ({_labels(s.metric)}): kubefit reads float samples of "
                             f"{CPU_COUNTER} and {MEMORY_GAUGE}", file=source, field=where)
        raw = s.values if kind == "matrix" else s.value
        if not len(raw):
            raise InputError(f"a {kind} series without {'values' if kind == 'matrix' else 'value'}", file=source,
                             field=where)
        resource, counter = _resource(s.metric, measures, source, where)
        container = s.metric.get("container", s.metric.get("container_name"))
        if container in (SANDBOX, POD_CGROUP) or container is None:
            skipped["the pod sandbox (container=\"POD\") or pod-level cgroup (no container label)"] += 1
            continue
        times, values = _samples(bytes(raw), kind, source, where)
        bad = np.isinf(values) | (values < 0)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise InputError(f"sample {_number(values[j])} at {_number(times[j])} of {_labels(s.metric)}: usage is "
                             f"a finite number of {'cores' if resource == CPU else 'bytes'}, at least 0",
                             file=source, field=f"{where}.{'values' if kind == 'matrix' else 'value'}")
        keep = ~np.isnan(values)
        if not keep.all():
            nan += int((~keep).sum())
            times, values = times[keep], values[keep]
        if counter:
            times, values = counter_rate(times, values)
        owner = _owner(s.metric)
        namespace, pod = s.metric.get("namespace"), s.metric.get("pod", s.metric.get("pod_name"))
        if not namespace or (not pod and owner is None):
            raise InputError(f"series {_labels(s.metric)} names no namespace and pod (labels namespace, pod, "
                             f"container as cAdvisor writes them)", file=source, field=f"{where}.metric")
        usage = ContainerUsage(namespace, container, pod or None, owner if not pod else owner, source=source)
        setattr(usage, resource, Samples(times, values))
        out.containers.append(usage)
        _widen(out, times)
    out.containers = _merged(out.containers)
    gaps = _gaps(out)
    if gaps:
        out.notes.append(f"{source}: {gaps[0]} series have gaps ({gaps[1]} samples missing at the answer's "
                         f"{out.step:g} s step): percentiles, maxima and risk are of the samples present")
    if response.warnings:
        out.notes += [f"{source}: Prometheus warned: {w}" for w in response.warnings]
    if nan:
        out.notes.append(f"{source}: {nan} NaN sample(s) dropped (a staleness marker or a division by zero is no "
                         f"usage; never read as 0)")
    for what, count in skipped.items():
        out.notes.append(f"{source}: {count} series of {what} left out: not a container")
    if kind == "vector":
        out.notes.append(f"{source}: an instant vector: one sample per container, no history (percentiles and "
                         f"risk are of that one instant)")
    return out


def _resource(metric: dict[str, str], measures: str | None, source: str, where: str) -> tuple[str, bool]:
    """(cpu or memory, whether the samples are a counter to differentiate) of a series."""
    name = metric.get("__name__", "")
    if name == CPU_COUNTER:
        return CPU, True
    if CPU_COUNTER in name or (measures == CPU and not name):
        return CPU, False
    if MEMORY_GAUGE in name or (measures == MEMORY and not name):
        return MEMORY, False
    if measures in (CPU, MEMORY) and name:
        raise InputError(f"series {_labels(metric)} is not {CPU_COUNTER} nor {MEMORY_GAUGE} (nor a rule over them), "
                         f"though the file was given as {measures}=", file=source, field=f"{where}.metric.__name__")
    if name:
        raise InputError(f"series {_labels(metric)}: kubefit reads {CPU_COUNTER} (as a rate) and {MEMORY_GAUGE}",
                         file=source, field=f"{where}.metric.__name__")
    raise InputError(f"series {_labels(metric)} has no metric name (a rate() or sum() drops it): say what the file "
                     f"measures with --usage cpu=FILE or --usage memory=FILE", file=source, field=f"{where}.metric")


def _owner(metric: dict[str, str]) -> tuple[str, str] | None:
    """The workload a series names (kube-state-metrics or kubernetes-mixin labels), or None."""
    for kind_label, name_label in OWNER_LABELS:
        kind, name = metric.get(kind_label), metric.get(name_label)
        if kind and name:
            return _WORKLOAD_TYPES.get(kind.lower(), kind), name
    return None


def _samples(raw: bytes, kind: str, source: str, where: str) -> tuple[np.ndarray, np.ndarray]:
    """A series' `values` (`[[t, "v"], ...]`) or `value` (`[t, "v"]`) as two float64 arrays, read in one pass;
    anything but that shape is refused."""
    pairs = raw.count(b"[") - (1 if kind == "matrix" else 0)
    flat = raw.translate(None, b'[]"')
    if not flat.strip():
        return np.empty(0), np.empty(0)
    numbers = _numbers(flat)
    if numbers.shape[0] != 2 * pairs or raw.count(b'"') != 2 * pairs:
        field = f"{where}.{'values' if kind == 'matrix' else 'value'}"
        raise InputError(f"samples must be [<unix time>, \"<value>\"] pairs, the value a quoted number: "
                         f"{_excerpt(raw, numbers.shape[0])}", file=source, field=field)
    return numbers[0::2].copy(), numbers[1::2].copy()


_FLOATS = msgspec.json.Decoder(list[float])


def _numbers(flat: bytes) -> np.ndarray:
    """`t,v,t,v,...` as float64: as a JSON list by msgspec (exact, twice numpy's text parsing), else (NaN, ±Inf,
    which JSON has no number for) by numpy; a text that is no list of numbers gives what could be read (the
    caller counts)."""
    try:
        values = _FLOATS.decode(b"[" + flat + b"]")
        return np.fromiter(values, np.float64, len(values))
    except (msgspec.DecodeError, msgspec.ValidationError):
        pass
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # a text that stops early: the count says so
        try:
            return np.fromstring(flat, sep=",")
        except ValueError:  # numpy ≥ 2.3 refuses the text instead
            return np.empty(0)


def _excerpt(raw: bytes, parsed: int) -> str:
    """Where a sample list stops being numbers (about the `parsed`-th value), for the message."""
    text = raw.decode("utf-8", "replace")
    at = 0
    for _ in range(max(0, parsed // 2)):
        at = text.find("]", at + 1)
        if at < 0:
            break
    return repr(text[max(0, at):max(0, at) + 40])


def counter_rate(times: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A counter's per-second rate between consecutive samples, at the later one's time; a decrease is a reset
    (the counter restarted from 0, so the increase is the new value, as Prometheus' `rate` counts it). Samples at
    the same time (or out of order) are refused by the caller's time order check: here Δt ≤ 0 is dropped.

    >>> t, r = counter_rate(np.array([0., 60., 120., 180.]), np.array([10., 40., 5., 35.]))
    >>> t.tolist(), r.tolist()
    ([60.0, 120.0, 180.0], [0.5, 0.08333333333333333, 0.5])
    """
    if times.shape[0] < 2:
        return times[:0], values[:0]
    dt = np.diff(times)
    increase = np.diff(values)
    reset = increase < 0
    increase[reset] = values[1:][reset]
    ok = dt > 0
    return times[1:][ok], increase[ok] / dt[ok]


def _merged(containers: list[ContainerUsage]) -> list[ContainerUsage]:
    """One entry per container: a pod's cpu and memory series (two results of the file) joined; two series of the
    same container and resource (a pod restarted under the same name) concatenated in time order."""
    joined: dict[tuple, ContainerUsage] = {}
    for c in containers:
        key = (c.namespace, c.pod, c.owner, c.container)
        have = joined.get(key)
        if have is None:
            joined[key] = c
            continue
        for resource in (CPU, MEMORY):
            new = getattr(c, resource)
            if new is None:
                continue
            old = getattr(have, resource)
            if old is None:
                setattr(have, resource, new)
            else:
                times = np.concatenate([old.times, new.times])
                order = np.argsort(times, kind="stable")
                setattr(have, resource, Samples(times[order], np.concatenate([old.values, new.values])[order]))
    return list(joined.values())


def _gaps(out: UsageData) -> tuple[int, int] | None:
    """(series with gaps, samples missing): a step between two samples longer than 1.5 answer steps."""
    if not out.step:
        return None
    series = missing = 0
    for c in out.containers:
        for samples in (c.cpu, c.memory):
            if samples is None or len(samples) < 2:
                continue
            jumps = np.diff(samples.times) / out.step
            long = jumps > 1.5
            if long.any():
                series += 1
                missing += int(np.rint(jumps[long]).sum() - long.sum())
    return (series, missing) if series else None


def _widen(out: UsageData, times: np.ndarray) -> None:
    """The data's window grows to these times; the step is the smallest gap seen."""
    if times.shape[0] == 0:
        return
    first, last = float(times[0]), float(times[-1])
    out.start = first if out.start is None else min(out.start, first)
    out.end = last if out.end is None else max(out.end, last)
    if times.shape[0] > 1:
        step = float(np.min(np.diff(times)))
        if step > 0:
            out.step = step if out.step is None else min(out.step, step)


def _labels(metric: dict[str, Any]) -> str:
    """`name{a="b", ...}` as Prometheus prints a series."""
    name = metric.get("__name__", "")
    rest = ", ".join(f'{k}="{v}"' for k, v in sorted(metric.items()) if k != "__name__")
    return f"{name}{{{rest}}}"


def _number(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return repr(float(x)).removesuffix(".0")
