"""Node declared features (KEP-5328) as kube-scheduler matches them: `k8s.io/component-helpers/nodedeclaredfeatures`.

A node publishes the features its kubelet has (`status.declaredFeatures`, names); a pod requires those its
spec uses (each registered feature's `InferForScheduling`); the NodeDeclaredFeatures Filter wants the
pod's required features among the node's declared ones. Of the registered features only two infer a
requirement at scheduling (the others, in-place resize and websockets, only at a pod's update):

- RestartAllContainersOnContainerExits: a container or init container with a `restartPolicyRules` entry
  whose action is `RestartAllContainers` (`features/restartallcontainers`, v1.35 and later);
- UserNamespacesHostNetworkSupport: `hostNetwork: true` with `hostUsers: false`
  (`features/usernamespaceshostnetwork`, v1.36 and later).

Decoding keeps on each pod what any version infers (`inferred`); a version keeps those its registry
holds (`registry`). No feature has a `MaxVersion`, so a registered feature is always required when inferred.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

RESTART_ALL_CONTAINERS = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK = "UserNamespacesHostNetworkSupport"
RESTART_ALL_CONTAINERS_ACTION = "RestartAllContainers"  # v1.ContainerRestartRuleActionRestartAllContainers

# features/registry.go `AllFeatures` by minor, as `Framework.New` keeps them: sorted by name.
_V135 = ("GuaranteedQoSPodCPUResize", "InPlacePodLevelResourcesVerticalScaling", RESTART_ALL_CONTAINERS)
_V136 = ("ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling",
         "InPlacePodVerticalScalingInitContainers", RESTART_ALL_CONTAINERS, USER_NAMESPACES_HOST_NETWORK)
_REGISTRY = {35: _V135, 36: _V136, 37: _V136}  # v1.37's registry could not be read: v1.36's (its plugin is)

_NONE: tuple[str, ...] = ()
_RESTART = (RESTART_ALL_CONTAINERS,)
_HOST_NETWORK = (USER_NAMESPACES_HOST_NETWORK,)
_BOTH = (RESTART_ALL_CONTAINERS, USER_NAMESPACES_HOST_NETWORK)


def registry(minor: int) -> tuple[str, ...]:
    """The feature names `minor`'s registry knows, sorted (none before v1.35)."""
    return _REGISTRY.get(minor, ())


def restarts_all_containers(rule_lists: Iterable[Any]) -> bool:
    """Whether any container's `restartPolicyRules` (one list, or None, per container and init container)
    holds an entry whose action is `RestartAllContainers`."""
    for rules in rule_lists:
        if rules:
            for rule in rules:
                if (rule.get("action") if isinstance(rule, dict) else getattr(rule, "action", None)) \
                        == RESTART_ALL_CONTAINERS_ACTION:
                    return True
    return False


def inferred(restart_all_containers: bool, host_network: bool | None, host_users: bool | None) -> tuple[str, ...]:
    """The features a pod requires in any version, sorted (`Framework.InferForPodScheduling`): shared
    tuples, `()` for the pods that require none."""
    user_namespaces = host_network is True and host_users is False
    if restart_all_containers:
        return _BOTH if user_namespaces else _RESTART
    return _HOST_NETWORK if user_namespaces else _NONE


def try_map(declared: Sequence[str], known: Sequence[str]) -> frozenset[str]:
    """`FeatureMapper.TryMap` (v1.36): the node's declared names found in `known` (sorted) by one merge walk,
    which expects `declared` sorted as the API server keeps it; unknown names are dropped, and so is a
    known one written after a greater name."""
    found = []
    i = j = 0
    while i < len(declared) and j < len(known):
        if declared[i] == known[j]:
            found.append(known[j])
            i += 1
            j += 1
        elif declared[i] < known[j]:
            i += 1
        else:
            j += 1
    return frozenset(found)
