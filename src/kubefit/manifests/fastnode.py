"""Nodes decoded straight from their JSON into `Node`s (msgspec's typed decoding), as `fastpod` does for pods.

`kubefit.manifests.load.decode_node` is the rule; this is a faster road to the same `Node` and the same
warnings. msgspec checks in C what decode_node checks in Python — the known fields of the object, its
metadata, spec and status (`load.OBJECT_FIELDS`, `METADATA_FIELDS`, `NODE_SPEC_FIELDS`, `NODE_STATUS_FIELDS`),
the taints' and conditions' fields, `apiVersion: v1`, and each read field's type — and skips what decode_node
does not read (`msgspec.Raw`). Resource lists, taints and images go through decode_node's own helpers
(`decode_resource_list` with its warnings and shared parsing, `_taint`, `_node_images` with its shared image
tuples), so the parts with more than a type to check are checked by the same code. A node this road does not
take as it is — anything msgspec refuses (an unknown field, a null where decode_node reads null as empty or
as "", a number where it wants a string, a type decode_node would still accept), a helper's refusal, a node
without a name — gets None, and the caller decodes it with decode_node, which then gives its exact answer or
error; so does a node whose JSON holds `metadata.managedFields` (the stream's never does: its `raw` must
lack them, as `load.kept_manifest` leaves them out). `tests/test_fastnode.py` holds the two to each other.
"""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET, Raw, UnsetType

from kubefit.api.core import ContainerImage, Node, Taint
from kubefit.errors import InputError
from kubefit.manifests import load
from kubefit.manifests.documents import Document
from kubefit.manifests.fastpod import Quantities, _Strict  # (the same typing: an unknown field refused)


class _ObjectMeta(_Strict):  # load.METADATA_FIELDS; decode_node reads the name and labels only
    name: str = ""
    generateName: Raw = UNSET
    namespace: Raw = UNSET
    selfLink: Raw = UNSET
    uid: Raw = UNSET
    resourceVersion: Raw = UNSET
    generation: Raw = UNSET
    creationTimestamp: Raw = UNSET
    deletionTimestamp: Raw = UNSET
    deletionGracePeriodSeconds: Raw = UNSET
    labels: dict[str, str] | None = None
    annotations: Raw = UNSET
    ownerReferences: Raw = UNSET
    finalizers: Raw = UNSET
    managedFields: Raw = UNSET


class _Taint(_Strict):  # load.TAINT_FIELDS
    key: str | None = None
    value: str | None = None
    effect: str | None = None
    timeAdded: Raw = UNSET


class _NodeSpec(_Strict):  # load.NODE_SPEC_FIELDS
    podCIDR: Raw = UNSET
    podCIDRs: Raw = UNSET
    providerID: Raw = UNSET
    unschedulable: bool | None = None
    taints: list[_Taint] | None = None
    configSource: Raw = UNSET
    externalID: Raw = UNSET


class _NodeCondition(_Strict):  # load.NODE_CONDITION_FIELDS
    type: str | None = None
    status: str | None = None
    lastHeartbeatTime: Raw = UNSET
    lastTransitionTime: Raw = UNSET
    reason: Raw = UNSET
    message: Raw = UNSET


class _NodeStatus(_Strict):  # load.NODE_STATUS_FIELDS
    capacity: Quantities | None | UnsetType = UNSET  # (null and absent differ: `"allocatable" in status`)
    allocatable: Quantities | None | UnsetType = UNSET
    phase: Raw = UNSET
    conditions: list[_NodeCondition] | None = None
    addresses: Raw = UNSET
    daemonEndpoints: Raw = UNSET
    nodeInfo: Raw = UNSET
    images: Raw | UnsetType = UNSET  # (decoded by decode_node's helper once per distinct text)
    volumesInUse: Raw = UNSET
    volumesAttached: Raw = UNSET
    config: Raw = UNSET
    runtimeHandlers: Raw = UNSET
    features: Raw = UNSET
    declaredFeatures: list[str] | None = None


class _Node(_Strict):  # load.OBJECT_FIELDS
    apiVersion: Literal["v1"]
    kind: Literal["Node"]
    metadata: _ObjectMeta
    spec: _NodeSpec | None = None
    status: _NodeStatus | None = None


_NO_SPEC = _NodeSpec()
_NO_STATUS = _NodeStatus()


class FastNodes:
    """Decodes the nodes of one file, remembering what repeats across them (taints, images)."""

    MEMO_MAX = 256  # distinct taint lists and image lists remembered (a file of ever new ones keeps no more)

    def __init__(self) -> None:
        self.decoder = msgspec.json.Decoder(_Node)
        self.taints: dict[tuple[tuple[str | None, ...], ...], tuple[Taint, ...]] = {}
        self.images: dict[bytes, tuple[ContainerImage, ...]] = {}

    def decode(self, data: bytes, source: str, index: int) -> tuple[Node, list[str]] | None:
        """The `Node` (its `raw` this JSON) and warnings decode_node gives for this JSON, or None where it
        must decide."""
        try:
            node = self.decoder.decode(data)
        except (msgspec.ValidationError, msgspec.DecodeError):
            return None
        name = node.metadata.name
        if not name or node.metadata.managedFields is not UNSET:
            return None  # (the compiled reader leaves managedFields out; `raw` must lack them, as decode_node's)
        doc = Document({"kind": "Node", "metadata": {"name": name}}, source, index)
        warnings: list[str] = []
        try:
            decoded = self._node(node, name, data, doc, warnings)
        except (InputError, msgspec.ValidationError, msgspec.DecodeError):
            return None
        return decoded, warnings

    def _node(self, node: _Node, name: str, data: bytes, doc: Document, warnings: list[str]) -> Node:
        """decode_node's fields, in its order (its warnings come in that order); `raw` the JSON, as the stream
        keeps a node (decoded if read)."""
        spec, status = node.spec or _NO_SPEC, node.status or _NO_STATUS
        given = {k: v for k, v in (("allocatable", status.allocatable), ("capacity", status.capacity))
                 if v is not UNSET}
        allocatable = load.node_allocatable(given, doc, warnings)
        labels = node.metadata.labels
        return Node(name=name, allocatable=allocatable, labels={} if labels is None else labels,
                    unschedulable=bool(spec.unschedulable), taints=self._taints(spec.taints, doc),
                    images=self._images(status.images, doc),
                    declared_features=tuple(status.declaredFeatures or ()), raw=data,  # type: ignore[arg-type]
                    source=doc.source)

    def _taints(self, taints: list[_Taint] | None, doc: Document) -> tuple[Taint, ...]:
        """load._taint of each (a key required, a known effect), memoised per list of (key, value, effect)."""
        if not taints:
            return ()
        key = tuple((t.key, t.value, t.effect) for t in taints)
        known = self.taints.get(key)
        if known is None:
            known = tuple(load._taint({"key": k, "value": v, "effect": e}, doc, f"spec.taints[{i}]")
                          for i, (k, v, e) in enumerate(key))
            if len(self.taints) < self.MEMO_MAX:
                self.taints[key] = known
        return known

    def _images(self, images: Raw | UnsetType, doc: Document) -> tuple[ContainerImage, ...]:
        """load._node_images of `status.images` (the tuples it shares among equal lists), once per distinct text."""
        if images is UNSET:
            return ()
        text = bytes(images)
        known = self.images.get(text)
        if known is None:
            known = load._node_images({"images": msgspec.json.decode(text)}, doc)
            if len(self.images) < self.MEMO_MAX:
                self.images[text] = known
        return known
