"""Usage as kubefit holds it, whatever format it came in: per container, samples of cpu (cores) and memory
(bytes) over time, or a histogram of them (a VPA checkpoint), and what the data says about itself.

Every decoder of `kubefit.manifests.usage` returns a `UsageData`: its containers (`ContainerUsage`: namespace,
pod or workload, container name, and the samples of each resource as float64 numpy arrays, never Python
floats per sample), the VerticalPodAutoscalers and checkpoints it held, the window it covers and its notes
(what was dropped and why: NaN samples, a counter reset, a gap). `owners.attribute` then maps each to the
scenario's workloads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from kubefit.manifests.usage.histogram import Histogram

CPU, MEMORY = "cpu", "memory"
RESOURCES = (CPU, MEMORY)

# What a source measured, which decides what can be said from it.
SERIES = "series"  # samples over a window (Prometheus, several metrics-server samples)
AVERAGES = "averages"  # one average per window step (OpenCost): no peaks
SAMPLE = "sample"  # one instant (metrics-server): no history at all
HISTOGRAM = "histogram"  # a VPA checkpoint: the recommender's decayed histograms


@dataclass
class Samples:
    """One container's usage of one resource: `values` (float64, cores or bytes) at `times` (float64 seconds
    since the epoch), in time order."""

    times: np.ndarray
    values: np.ndarray

    def __len__(self) -> int:
        return int(self.values.shape[0])


@dataclass
class ContainerUsage:
    """A container's usage: of a pod (`pod`), or of a workload's containers already aggregated by the source
    (`owner` = (kind, name), `pod` None); `cpu`/`memory` samples, or the checkpoint's histograms."""

    namespace: str
    container: str
    pod: str | None = None
    owner: tuple[str, str] | None = None
    cpu: Samples | None = None
    memory: Samples | None = None
    histograms: dict[str, Histogram] = field(default_factory=dict)
    measured: str = SERIES
    source: str = ""
    summed: dict[str, float] | None = None  # an aggregate's request averages (OpenCost): its values are sums


    @property
    def where(self) -> str:
        """How messages name it: `namespace/pod` container `c`, or the workload's."""
        owner = f"{self.owner[0]}/{self.owner[1]}" if self.owner else self.pod
        return f"{self.namespace}/{owner} container {self.container!r}"


@dataclass
class UsageData:
    """What the usage files (or a Prometheus) held: containers' usage, VPA objects and checkpoints (decoded,
    `kubefit.manifests.usage.vpa`), the window covered (seconds since the epoch) and the notes of decoding."""

    containers: list[ContainerUsage] = field(default_factory=list)
    vpas: list[Any] = field(default_factory=list)
    checkpoints: list[Any] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    formats: list[str] = field(default_factory=list)
    start: float | None = None
    end: float | None = None
    step: float | None = None
    notes: list[str] = field(default_factory=list)

    def add(self, other: UsageData) -> None:
        """Merge another file's data into this one (its window widens this one)."""
        self.containers += other.containers
        self.vpas += other.vpas
        self.checkpoints += other.checkpoints
        self.sources += other.sources
        self.formats += [f for f in other.formats if f not in self.formats]
        self.notes += other.notes
        if other.start is not None:
            self.start = other.start if self.start is None else min(self.start, other.start)
        if other.end is not None:
            self.end = other.end if self.end is None else max(self.end, other.end)
        if other.step is not None:
            self.step = other.step if self.step is None else min(self.step, other.step)

    def window(self) -> dict[str, Any] | None:
        """The window the series cover, for the result (ISO times, its length in seconds, the step)."""
        if self.start is None or self.end is None:
            return None
        from datetime import UTC, datetime

        def iso(t: float) -> str:
            return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

        return {"start": iso(self.start), "end": iso(self.end), "seconds": round(self.end - self.start, 3),
                "step": self.step}

    @property
    def samples(self) -> int:
        """Samples held, both resources."""
        return sum(len(c.cpu or ()) + len(c.memory or ()) for c in self.containers)
