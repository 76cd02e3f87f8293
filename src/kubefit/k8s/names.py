"""Names as Kubernetes makes them up: `generateName` suffixes and controllers' pod names, seeded and stable."""

from __future__ import annotations

import random

ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand: no vowels, no 0/1/3


def random_suffix(rng: random.Random, n: int = 5) -> str:
    """`utilrand.String(n)`: n characters of the controllers' alphabet."""
    return "".join(rng.choice(ALPHANUMS) for _ in range(n))


def seeded(*parts: str) -> random.Random:
    """A generator seeded by the object it names things for: same input, same names on every run."""
    return random.Random("\x00".join(parts))


def generate_name(prefix: str, *seed: str) -> str:
    """`metadata.generateName` + 5 characters, as the API server names an object given no name."""
    return prefix + random_suffix(seeded(*seed, prefix))


def safe_encode(text: str) -> str:
    """`rand.SafeEncodeString`: each byte mapped onto the alphabet (how a hash becomes a name part)."""
    return "".join(ALPHANUMS[ord(c) % len(ALPHANUMS)] for c in text)
