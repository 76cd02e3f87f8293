"""metrics-server's `metrics.k8s.io/v1beta1` PodMetrics (and PodMetricsList, what `kubectl get --raw
/apis/metrics.k8s.io/v1beta1/pods` prints) → per-container usage.

Each object is one sample per container (`timestamp`, averaged over `window`; kubernetes-sigs/metrics-server
`pkg/api/pod.go`): cpu and memory as quantities (`3415101n` cores, `21060Ki` bytes). Several files (or several
objects of one pod at different timestamps) make a short series; a single sample is said to be one (no percentile,
no peak, no risk can be read from one instant). Fields are the k8s.io/metrics `PodMetrics` type's, checked
strictly.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np

from kubefit.manifests.decode import Complete, decode_quantities, fail
from kubefit.manifests.documents import Document
from kubefit.manifests.usage.model import CPU, MEMORY, SAMPLE, SERIES, ContainerUsage, Samples, UsageData
from kubefit.manifests.usage.vpa import check_object

API_VERSION = "metrics.k8s.io/v1beta1"
KINDS = ("PodMetrics", "PodMetricsList")
NANO = 10**9
_SHAPE = Complete({"apiVersion": str, "kind": str, "metadata": dict, "timestamp": str, "window": str,
                   "containers": [Complete({"name": str, "usage": dict})]})


def decode_pod_metrics(docs: Sequence[Document]) -> UsageData:
    """PodMetrics documents → usage: per pod container, its samples in time order (see the module's docstring)."""
    samples: dict[tuple[str, str, str], dict[str, list[tuple[float, float]]]] = {}
    out = UsageData(sources=sorted({d.source for d in docs}), formats=["metrics-server"])
    for doc in docs:
        if doc.body.get("apiVersion") != API_VERSION:
            raise fail(doc, "apiVersion", f"unsupported apiVersion {doc.body.get('apiVersion')!r} for "
                                          f"{doc.kind} (expected {API_VERSION!r})")
        check_object(doc, _SHAPE)
        meta = doc.body.get("metadata") or {}
        namespace, pod = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
        if not pod:
            raise fail(doc, "metadata.name", "Required value: the pod the metrics are of")
        when = _time(doc)
        for i, c in enumerate(doc.body.get("containers") or []):
            usage = decode_quantities(c.get("usage"), doc, f"containers[{i}].usage") or {}
            into = samples.setdefault((namespace, pod, c.get("name") or ""), {CPU: [], MEMORY: []})
            for resource in (CPU, MEMORY):
                q = usage.get(resource)
                if q is None:
                    continue
                if q.nanos < 0:
                    raise fail(doc, f"containers[{i}].usage.{resource}", f"usage below zero ({q.text})")
                into[resource].append((when, q.nanos / NANO))
        out.start = when if out.start is None else min(out.start, when)
        out.end = when if out.end is None else max(out.end, when)
    single = 0
    for (namespace, pod, container), by in samples.items():
        usage = ContainerUsage(namespace, container, pod, source=out.sources[0] if out.sources else "")
        count = 0
        for resource, pairs in by.items():
            if not pairs:
                continue
            pairs.sort()
            setattr(usage, resource, Samples(np.array([t for t, _ in pairs]), np.array([v for _, v in pairs])))
            count = max(count, len(pairs))
        usage.measured = SAMPLE if count <= 1 else SERIES
        single += count <= 1
        out.containers.append(usage)
    if single:
        out.notes.append(f"metrics-server: {single} container(s) have one sample each (an instant, averaged over "
                         f"its window): no percentile, peak or risk can be read from it; several PodMetrics files "
                         f"taken over time make a series")
    return out


def _time(doc: Document) -> float:
    raw = doc.body.get("timestamp")
    if raw is None:
        raise fail(doc, "timestamp", "Required value: when the sample was taken")
    try:
        return datetime.fromisoformat(str(raw).replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise fail(doc, "timestamp", f"must be an RFC 3339 time, got {raw!r}") from None
