"""Typed API objects read from manifests: plain data, no scheduling logic."""

from kubefit.api.core import Container, Node, Pod, ResourceList, Taint, Toleration

__all__ = ["Container", "Node", "Pod", "ResourceList", "Taint", "Toleration"]
