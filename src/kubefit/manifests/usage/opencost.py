"""OpenCost's `/allocation` answer → per-container usage.

The answer is `{"code": 200, "data": [{"<name>": Allocation, ...}, ...]}`: one set of allocations per `step` of the
window (opencost `pkg/costmodel` `ComputeAllocation`, `core/pkg/opencost/allocation.go`). An allocation's
`cpuCoreUsageAverage` and `ramByteUsageAverage` are time averages over its window (with `cpuCoreUsageMax` and
`ramByteUsageMax` where OpenCost records them): one sample per step, averages, not peaks — said in a note, and
risk is computed on them.

When allocations are aggregated (`aggregate=controller`, `namespace`, …) OpenCost adds them (`Allocation.add`:
usage core-minutes summed, then divided by the window's minutes): an aggregate's "average" is the sum of its
containers' averages. A controller's allocation with a container (`aggregate=namespace,controllerKind,controller,
container`) is read back as one pod's by dividing it by the average number of pods running, which its
`cpuCoreRequestAverage` (also a sum) over one pod's request gives (`ContainerUsage.summed`; the request comes from
the scenario, see `owners.attribute`). Allocations of no container (`__idle__`, `__unallocated__`, an aggregate
without a container) are left out, counted in a note.
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import datetime
from typing import Any

import numpy as np

from kubefit.errors import InputError
from kubefit.manifests.usage.model import AVERAGES, CPU, MEMORY, ContainerUsage, Samples, UsageData

_USAGE = {CPU: ("cpuCoreUsageAverage", "cpuCoreUsageMax", "cpuCoreRequestAverage"),
          MEMORY: ("ramByteUsageAverage", "ramByteUsageMax", "ramByteRequestAverage")}
_SPECIAL = ("__idle__", "__unallocated__", "__unmounted__")


def looks_like(head: bytes) -> bool:
    """An OpenCost answer: `"code"` and `"data"` at the top, allocations with `cpuCoreUsageAverage`."""
    return b'"code"' in head and b'"data"' in head and (b"cpuCoreUsageAverage" in head or b"ramByteUsage" in head)


def decode_allocations(body: Any, source: str, use_max: bool = False) -> UsageData:
    """An `/allocation` answer (parsed JSON) → usage (see the module's docstring); `use_max`: the `...Max` fields
    where present instead of the averages."""
    if not isinstance(body, dict):
        raise InputError("an OpenCost answer is a JSON object with code and data", file=source)
    code = body.get("code")
    if code != 200:
        raise InputError(f"OpenCost answered code {code!r}: {body.get('message') or '(no message)'}", file=source,
                         field="code")
    sets = body.get("data")
    if not isinstance(sets, list):
        raise InputError(f"must be a list of allocation sets, got {type(sets).__name__}", file=source, field="data")
    series: dict[tuple, dict[str, list[tuple[float, float]]]] = {}
    summed: dict[tuple, dict[str, float]] = {}
    skipped: Counter[str] = Counter()
    out = UsageData(sources=[source], formats=["opencost"])
    for i, allocations in enumerate(sets):
        if allocations is None:
            continue
        if not isinstance(allocations, dict):
            raise InputError(f"an allocation set is an object of allocations by name, got {type(allocations).__name__}",
                             file=source, field=f"data[{i}]")
        for name, a in allocations.items():
            where = f"data[{i}].{name}"
            if name in _SPECIAL:
                skipped[name] += 1
                continue
            key, owner = _key(a, source, where)
            if key is None:
                skipped["an aggregate without a container"] += 1
                continue
            end = _time(a, source, where)
            into = series.setdefault(key, {CPU: [], MEMORY: []})
            for resource, (average, peak, request) in _USAGE.items():
                v = _number(a, peak if use_max and peak in a else average, source, where)
                if v is None:
                    continue
                into[resource].append((end, v))
                if owner is not None:
                    r = _number(a, request, source, where)
                    if r is not None:
                        summed.setdefault(key, {}).setdefault(resource, 0.0)
                        summed[key][resource] = max(summed[key][resource], r)
            out.start = end if out.start is None else min(out.start, end)
            out.end = end if out.end is None else max(out.end, end)
    for key, by in series.items():
        namespace, pod, owner, container = key
        usage = ContainerUsage(namespace, container, pod, owner, measured=AVERAGES, source=source)
        for resource, pairs in by.items():
            if pairs:
                pairs.sort()
                setattr(usage, resource, Samples(np.array([t for t, _ in pairs]), np.array([v for _, v in pairs])))
        if owner is not None:
            usage.summed = dict(summed.get(key, {}))
        out.containers.append(usage)
    out.notes.append(f"{source}: OpenCost allocations are {'peaks' if use_max else 'averages'} over each step of "
                     f"the window, one sample per step per container: percentiles and risk are of those "
                     f"{'peaks' if use_max else 'averages, not of the peaks between them'}")
    for what, count in skipped.items():
        out.notes.append(f"{source}: {count} allocation(s) of {what} left out: no container")
    return out


def _key(a: Any, source: str, where: str) -> tuple[tuple | None, tuple[str, str] | None]:
    """(namespace, pod, owner, container) of an allocation, and its owner when it is a controller's aggregate."""
    if not isinstance(a, dict):
        raise InputError(f"an allocation is an object, got {type(a).__name__}", file=source, field=where)
    props = a.get("properties")
    if not isinstance(props, dict):
        raise InputError("an allocation without properties (namespace, pod, container)", file=source,
                         field=f"{where}.properties")
    for k in ("namespace", "pod", "container", "controller", "controllerKind"):
        if k in props and not isinstance(props[k], str):
            raise InputError(f"must be a string, got {props[k]!r}", file=source, field=f"{where}.properties.{k}")
    namespace, pod, container = props.get("namespace"), props.get("pod"), props.get("container")
    if not namespace or not container:
        return None, None
    if pod:
        return (namespace, pod, None, container), None
    kind, name = props.get("controllerKind"), props.get("controller")
    if not kind or not name:
        return None, None
    owner = (_KINDS.get(kind.lower(), kind), name)
    return (namespace, None, owner, container), owner


_KINDS = {"deployment": "Deployment", "statefulset": "StatefulSet", "daemonset": "DaemonSet", "job": "Job",
          "replicaset": "ReplicaSet", "cronjob": "CronJob"}


def _number(a: dict, key: str, source: str, where: str) -> float | None:
    """A usage field: a finite number at least 0 (absent: None); anything else refused."""
    if key not in a or a[key] is None:
        return None
    v = a[key]
    if isinstance(v, bool) or not isinstance(v, int | float) or math.isnan(v) or math.isinf(v) or v < 0:
        raise InputError(f"must be a finite number of {'cores' if key.startswith('cpu') else 'bytes'}, at least 0, "
                         f"got {v!r}", file=source, field=f"{where}.{key}")
    return float(v)


def _time(a: dict, source: str, where: str) -> float:
    """The allocation's `end` (its window's, else its own) as seconds since the epoch."""
    raw = (a.get("window") or {}).get("end") if isinstance(a.get("window"), dict) else None
    raw = raw or a.get("end")
    if raw is None:
        raise InputError("an allocation without window.end (when its average was taken)", file=source,
                         field=f"{where}.window.end")
    try:
        return datetime.fromisoformat(str(raw).replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise InputError(f"must be an RFC 3339 time, got {raw!r}", file=source, field=f"{where}.window.end") from None
