"""A plain, per-node Python rendering of SPEC-kube-scheduler §3–6, independent of kubefit's numpy code.

Used only by the property tests: the vectorised plugins must agree with it on every node.
"""

from __future__ import annotations

import math

from kubefit.k8s.resourcenames import is_scalar


def go_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def fits(node_alloc: dict, node_req: dict, pods_on_node: int, p: dict) -> list[str]:
    reasons = []
    if pods_on_node + 1 > node_alloc.get("pods", 0):
        reasons.append("Too many pods")
    for name in ("cpu", "memory", "ephemeral-storage"):
        if p.get(name, 0) > 0 and p[name] > node_alloc.get(name, 0) - node_req.get(name, 0):
            reasons.append(f"Insufficient {name}")
    for name in sorted(n for n in p if is_scalar(n) and p[n] != 0):
        if p[name] > node_alloc.get(name, 0) - node_req.get(name, 0):
            reasons.append(f"Insufficient {name}")
    return reasons


def pair(name: str, p: int, alloc: dict, req: dict, nonzero: dict | None) -> tuple[int, int]:
    if p == 0 and is_scalar(name):
        return 0, 0
    if name in ("cpu", "memory"):
        used = (nonzero or req).get(name, 0)
        return alloc.get(name, 0), used + p
    if name == "ephemeral-storage" or (is_scalar(name) and name in alloc):
        return alloc.get(name, 0), req.get(name, 0) + p
    return 0, 0


def fit_score(strategy: str, resources: list[tuple[str, int]], shape, p: dict, alloc: dict, req: dict,
              nonzero: dict) -> int:
    num = den = 0
    for name, w in resources:
        a, r = pair(name, p.get(name, 0), alloc, req, nonzero)
        if a == 0:
            continue
        if strategy == "LeastAllocated":
            s = 0 if r > a else go_div((a - r) * 100, a)
        elif strategy == "MostAllocated":
            s = go_div(min(r, a) * 100, a)
        else:
            u = 100 if r > a else go_div(r * 100, a)
            s = broken_linear(u, [(x, y * 10) for x, y in shape])
            if s <= 0:
                continue
        num += s * w
        den += w
    if den == 0:
        return 0
    if strategy == "RequestedToCapacityRatio":
        x = num / den
        return int(math.floor(x + 0.5))
    return go_div(num, den)


def broken_linear(u: int, shape) -> int:
    for i, (x, y) in enumerate(shape):
        if u <= x:
            if i == 0:
                return y
            x0, y0 = shape[i - 1]
            return y0 + go_div((y - y0) * (u - x0), x - x0)
    return shape[-1][1]


def balanced_score(resources: list[str], p: dict, alloc: dict, req: dict) -> int:
    fr = []
    for name in resources:
        a, r = pair(name, p.get(name, 0), alloc, req, None)
        if a == 0:
            continue
        fr.append(min(r / a, 1.0))
    if len(fr) == 2:
        std = abs((fr[0] - fr[1]) / 2)
    elif len(fr) > 2:
        mean = sum(fr) / len(fr)
        std = math.sqrt(sum((f - mean) ** 2 for f in fr) / len(fr))
    else:
        std = 0.0
    return int((1 - std) * 100)
