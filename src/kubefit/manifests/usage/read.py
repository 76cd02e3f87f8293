"""Usage files → `UsageData`, each file's format recognised from its content.

`--usage [cpu=|memory=]FILE` (repeated): a Prometheus API answer (`prometheus`), an OpenCost `/allocation` answer
(`opencost`), or Kubernetes objects — VerticalPodAutoscalers and their checkpoints (`vpa`), metrics-server
PodMetrics (`metricsserver`) — as YAML, JSON or `kind: List`. VPA objects given with the scenario (`-f`) are read
too (`from_scenario`). A file is read whole, up to `max_usage_bytes()`; what it holds besides usage is refused
by name (a usage file is no scenario file).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from kubefit.errors import InputError
from kubefit.manifests.documents import Document, parse_documents
from kubefit.manifests.usage import metricsserver, opencost, prometheus, vpa
from kubefit.manifests.usage.model import CPU, MEMORY, UsageData

MAX_USAGE_BYTES = 8 << 30  # 30 days of 5-minute series of 10,000 containers, as Prometheus writes them, is ~5 GB
ENV_MAX_USAGE = "KUBEFIT_MAX_USAGE_BYTES"


def max_usage_bytes() -> int:
    """The largest usage file read ($KUBEFIT_MAX_USAGE_BYTES, default 8 GiB)."""
    raw = os.environ.get(ENV_MAX_USAGE)
    if raw and raw.isdigit():
        return int(raw)
    return MAX_USAGE_BYTES


def split_spec(spec: str) -> tuple[str | None, str]:
    """`cpu=FILE` / `memory=FILE` / `FILE` → (what the file measures or None, the path)."""
    for resource in (CPU, MEMORY):
        if spec.startswith(f"{resource}="):
            return resource, spec[len(resource) + 1:]
    return None, spec


def read_usage(specs: Sequence[str]) -> UsageData:
    """Every usage file, merged (see the module's docstring)."""
    out = UsageData()
    for spec in specs:
        measures, path = split_spec(str(spec))
        out.add(read_file(path, measures))
    return out


def read_file(path: str, measures: str | None = None) -> UsageData:
    """One usage file (`-` is stdin)."""
    data = _read(path)
    head = data[:65536].lstrip()
    if head[:1] == b"{" and prometheus.looks_like(head):
        return prometheus.decode_response(data, path, measures)
    if head[:1] == b"{" and opencost.looks_like(head):
        import orjson

        try:
            body = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc}", file=path) from None
        return opencost.decode_allocations(body, path)
    if measures is not None:
        raise InputError(f"{measures}= says what a Prometheus answer's unnamed series measure; this file is not one",
                         file=path)
    docs = parse_documents(data.decode("utf-8", "surrogateescape"), path)
    if not docs:
        raise InputError("holds no usage (the file is empty or only comments)", file=path)
    return from_documents(docs, strict=True)


def from_documents(docs: Iterable[Document], *, strict: bool) -> UsageData:
    """VPA objects, checkpoints and PodMetrics among `docs`; with `strict`, any other kind is refused (a usage
    file), else left to the caller (a scenario's files)."""
    out = UsageData()
    metrics: list[Document] = []
    for doc in docs:
        if doc.kind == vpa.VPA_KIND:
            out.vpas.append(vpa.decode_vpa(doc))
        elif doc.kind == vpa.CHECKPOINT_KIND:
            out.checkpoints.append(vpa.decode_checkpoint(doc))
        elif doc.kind == "PodMetrics":
            metrics.append(doc)
        elif strict:
            raise InputError(f"kind {doc.kind!r} is no usage: a usage file holds VerticalPodAutoscalers, "
                             f"VerticalPodAutoscalerCheckpoints or PodMetrics (or is a Prometheus or OpenCost "
                             f"answer)", file=doc.source, obj=doc.label, field="kind")
    if metrics:
        out.add(metricsserver.decode_pod_metrics(metrics))
    if out.vpas or out.checkpoints:
        out.formats.append("vpa")
        out.sources += sorted({v.source for v in out.vpas} | {c.source for c in out.checkpoints})
    return out


def _read(path: str) -> bytes:
    """The file's bytes, at most `max_usage_bytes()` (a longer one is refused, not cut)."""
    limit = max_usage_bytes()
    try:
        if path == "-":
            import sys

            data = sys.stdin.buffer.read(limit + 1)
        else:
            p = Path(path)
            if p.is_dir():
                raise InputError("is a folder: give the usage files one by one", file=path)
            with p.open("rb") as f:
                data = f.read(limit + 1)
    except FileNotFoundError:
        raise InputError("no such file", file=path) from None
    except PermissionError:
        raise InputError("permission denied", file=path) from None
    except IsADirectoryError:
        raise InputError("is a folder: give the usage files one by one", file=path) from None
    except MemoryError:
        raise InputError("reading it needs more memory than this process may use", file=path) from None
    if len(data) > limit:
        raise InputError(f"larger than {limit} bytes (${ENV_MAX_USAGE} raises the limit)", file=path)
    return data
