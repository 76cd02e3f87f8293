"""Resource-name classes of `k8s.io/api/core/v1/helper`: native, extended, hugepages, scalar."""

from __future__ import annotations

import re
from functools import lru_cache

CPU, MEMORY, EPHEMERAL_STORAGE, PODS = "cpu", "memory", "ephemeral-storage", "pods"
BASIC_RESOURCES = (CPU, MEMORY, PODS, EPHEMERAL_STORAGE)  # kubefit's fixed column order

_QNAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def is_qualified_name(value: str) -> bool:
    """apimachinery `IsQualifiedName(value)` returns no error."""
    parts = value.split("/")
    if len(parts) > 2:
        return False
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix):
            return False
    name = parts[-1]
    return 0 < len(name) <= 63 and bool(_QNAME.match(name))


def is_prefixed_native(name: str) -> bool:
    """Contains `kubernetes.io/` anywhere (`IsPrefixedNativeResource`)."""
    return "kubernetes.io/" in name


def is_native(name: str) -> bool:
    """No `/`, or in the kubernetes.io namespace (`IsNativeResource`)."""
    return "/" not in name or is_prefixed_native(name)


@lru_cache(maxsize=4096)
def is_extended(name: str) -> bool:
    """`IsExtendedResourceName`: e.g. `intel.com/foo`, `nvidia.com/gpu`."""
    if is_native(name) or name.startswith("requests."):
        return False
    return is_qualified_name("requests." + name)


def is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def is_attachable_volumes(name: str) -> bool:
    return name.startswith("attachable-volumes-")


@lru_cache(maxsize=4096)
def is_scalar(name: str) -> bool:
    """`IsScalarResourceName`: extended, hugepages, `*kubernetes.io/*` or attachable volumes."""
    return is_extended(name) or is_hugepages(name) or is_prefixed_native(name) or is_attachable_volumes(name)


def is_schedulable(name: str) -> bool:
    """A name kube-scheduler accounts for at all; any other (`foo`, `storage`) it silently ignores."""
    return name in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) or is_scalar(name)
