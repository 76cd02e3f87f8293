"""KRR-style strategies: a workload container's new request from its observed usage (`--requests-from usage
--cpu p95 --memory max+15%`).

A strategy is a statistic of every sample of the container across the workload's pods — `pN` (numpy's
`percentile`, linear interpolation, as robusta-dev/krr `strategies/simple.py` `calculate_cpu_proposal` computed
it on the pods' concatenated samples) or `max` — plus an optional margin (`+15%`), then rounded up and floored
as KRR's runner does (`core/runner.py` `_round_value`: cpu up to the millicore, memory up to the megabyte, at
least `cpu_min_value` 10m and `memory_min_value` 100M by default). KRR's `simple` strategy is `--cpu p95
--memory max+15%`. From a VPA checkpoint's histogram, `pN` is the recommender's percentile (the end of the bucket
reaching N %, `histogram.Histogram.percentile`) and `max` its 100th.

The limits follow `--limits`: `proportional` (the default) keeps each container's request:limit ratio as the VPA
admission controller does for `RequestsAndLimits` (`vpaadmission.proportional_limit`), `keep` leaves them, `krr`
is KRR's simple strategy (memory limit = the memory request, no cpu limit).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from kubefit.errors import InputError
from kubefit.k8s.quantity import QuantityError, parse_quantity
from kubefit.manifests.usage.model import CPU, MEMORY

NANO, MILLI = 10**9, 10**6
MEGABYTE = 10**6
DEFAULT_CPU, DEFAULT_MEMORY = "p95", "max+15%"  # KRR's simple strategy
DEFAULT_CPU_FLOOR, DEFAULT_MEMORY_FLOOR = "10m", "100M"  # KRR's cpu_min_value, memory_min_value
LIMIT_POLICIES = ("proportional", "keep", "krr")
_SPEC = re.compile(r"^(?:p(?P<pct>[0-9]+(?:\.[0-9]+)?)|(?P<max>max))(?:\+(?P<margin>[0-9]+(?:\.[0-9]+)?)%)?$")


@dataclass(frozen=True)
class Strategy:
    """One resource's rule: the statistic (a percentile 0..100, or None for the maximum), the margin (a fraction)
    and the floor (nano-units)."""

    resource: str
    percentile: float | None
    margin: float
    floor: int
    text: str
    floor_text: str = ""

    @classmethod
    def parse(cls, resource: str, text: str, floor: str) -> Strategy:
        """`p95`, `p99.5+10%`, `max`, `max+15%` (refused otherwise, naming the option)."""
        option = f"--{resource}"
        m = _SPEC.match(text.strip().lower())
        if m is None:
            raise InputError(f"must be pN or max, optionally +M% (p95, max+15%), got {text!r}", field=option)
        pct = float(m["pct"]) if m["pct"] is not None else None
        if pct is not None and not 0 < pct <= 100:
            raise InputError(f"a percentile is above 0 and at most 100, got {text!r}", field=option)
        try:
            low = parse_quantity(floor)
        except QuantityError as exc:
            raise InputError(str(exc), field=f"--{resource}-floor") from None
        if low < 0:
            raise InputError(f"must be 0 or more, got {floor!r}", field=f"--{resource}-floor")
        return cls(resource, pct, float(m["margin"] or 0) / 100.0, low, text.strip(), floor.strip())

    def statistic(self, values: np.ndarray) -> float:
        """The statistic of the samples (cores or bytes)."""
        if self.percentile is None:
            return float(values.max())
        return float(np.percentile(values, self.percentile))

    def from_histogram(self, histogram) -> float:  # noqa: ANN001
        """The statistic read from a VPA histogram (`max`: its 100th percentile)."""
        return histogram.percentile(1.0 if self.percentile is None else self.percentile / 100.0)

    def request(self, statistic: float) -> int:
        """The new request (nano-units): the statistic plus the margin, rounded up (cpu to the millicore, memory
        to the megabyte), at least the floor."""
        amount = statistic * (1.0 + self.margin)
        if self.resource == CPU:
            rounded = math.ceil(round(amount * 1000.0, 9)) * MILLI
        else:
            rounded = math.ceil(round(amount / MEGABYTE, 9)) * MEGABYTE * NANO
        return max(rounded, self.floor)


@dataclass(frozen=True)
class Strategies:
    """`--cpu`, `--memory`, their floors and `--limits`."""

    cpu: Strategy
    memory: Strategy
    limits: str = "proportional"

    @classmethod
    def parse(cls, cpu: str | None = None, memory: str | None = None, cpu_floor: str | None = None,
              memory_floor: str | None = None, limits: str | None = None) -> Strategies:
        policy = limits or "proportional"
        if policy not in LIMIT_POLICIES:
            raise InputError(f"must be one of {', '.join(LIMIT_POLICIES)}, got {limits!r}", field="--limits")
        return cls(Strategy.parse(CPU, cpu or DEFAULT_CPU, cpu_floor or DEFAULT_CPU_FLOOR),
                   Strategy.parse(MEMORY, memory or DEFAULT_MEMORY, memory_floor or DEFAULT_MEMORY_FLOOR), policy)

    def of(self, resource: str) -> Strategy:
        return self.cpu if resource == CPU else self.memory

    def describe(self) -> dict:
        return {"cpu": self.cpu.text, "memory": self.memory.text, "cpuFloor": self.cpu.floor_text,
                "memoryFloor": self.memory.floor_text, "limits": self.limits}
