"""ImageLocality: favour nodes that already hold the pod's images (node `status.images`).

Per container image (init containers, then containers) found on the node under its normalized name
(":latest" added when the name has no tag): size × (nodes holding it / all nodes), truncated; the sum is
clamped to [23 MiB, 1000 MiB × containers] and scaled to 0..100 with integer division.

From v1.36 (kubernetes#130231, `counts_image_volumes`) the images of image volumes
(`spec.volumes[].image.reference`) are added to the sum too, while the upper threshold still counts the
containers only (a pod's image volume can push a node's score above what the same image as a container
gets); v1.37 (kubernetes#138951, `volumes_in_threshold`) counts each image volume in the threshold as well.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubefit.api.core import Node, Pod
from kubefit.scheduler.plugins.base import CycleContext
from kubefit.scheduler.plugins.selectors import cached_on
from kubefit.scheduler.state import ClusterState

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB
MAX_NODE_SCORE = 100


def normalized_image_name(name: str) -> str:
    """`normalizedImageName`: add ":latest" when the last ':' is not after the last '/'."""
    return name if name.rfind(":") > name.rfind("/") else name + ":latest"


@dataclass
class ImageIndex:
    """Per image name: the size on each node holding it (0 elsewhere) and on how many nodes it is."""

    sizes: dict[str, np.ndarray]
    num_nodes: dict[str, int]
    holders: dict[str, np.ndarray]  # bool [N]: the nodes holding it

    @classmethod
    def build(cls, nodes: list[Node]) -> ImageIndex:
        sizes: dict[str, np.ndarray] = {}
        present: dict[str, np.ndarray] = {}
        for i, node in enumerate(nodes):
            for image in node.images:
                for name in image.names:
                    if name not in sizes:
                        sizes[name] = np.zeros(len(nodes), dtype=np.int64)
                        present[name] = np.zeros(len(nodes), dtype=bool)
                    sizes[name][i] = image.size_bytes
                    present[name][i] = True
        return cls(sizes, {name: int(mask.sum()) for name, mask in present.items()}, present)

    def spread(self, name: str, state: ClusterState) -> float:
        """`scaledImageScore`'s spread: nodes holding the image / nodes (a deleted node is neither)."""
        if state.removed is None:
            return self.num_nodes[name] / len(state)
        return int(np.count_nonzero(self.holders[name] & ~state.removed)) / state.present_count


def image_volume_references(pod: Pod) -> tuple[str, ...]:
    """`spec.volumes[].image.reference` of the pod's image volumes, in order ("" for an absent reference,
    as Go reads it); () without volumes, at no cost."""
    volumes = pod.volumes
    if not volumes:
        return ()
    refs = []
    for volume in volumes:
        source = volume.get("image")
        if source is not None:  # `volume.Image == nil`: not an image volume
            ref = source.get("reference") if isinstance(source, dict) else None
            refs.append(ref if isinstance(ref, str) else "")
    return tuple(refs)


@dataclass
class ImageLocality:
    name: str = NAME
    counts_image_volumes: bool = False  # v1.36+: image volumes' images in the sum (kubernetes#130231)
    volumes_in_threshold: bool = False  # v1.37+: and in the upper threshold's count (kubernetes#138951)
    reads_node_set = True  # the spread of an image is over the cluster's nodes: a deleted node changes every score

    def pre_score(self, state: ClusterState, ctx: CycleContext) -> bool:
        return False

    def score(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> np.ndarray:
        index = cached_on(state, "images", ImageIndex.build)
        pod = ctx.pod
        acc = np.zeros(len(idx), dtype=np.int64)
        held = False  # an image of the pod on some node
        images = [c.image for c in (*pod.init_containers, *pod.containers)]
        count = len(images)
        if self.counts_image_volumes:
            volume_images = image_volume_references(pod)
            images += volume_images
            if self.volumes_in_threshold:
                count += len(volume_images)
        for image in images:
            name = normalized_image_name(image)
            sizes = index.sizes.get(name)
            if sizes is None:
                continue
            held = True
            spread = index.spread(name, state)
            acc += (sizes[idx].astype(np.float64) * spread).astype(np.int64)
        if not held:  # every sum is 0, below the threshold: 0 everywhere
            return acc
        max_threshold = MAX_CONTAINER_THRESHOLD * count
        clamped = np.clip(acc, MIN_THRESHOLD, max_threshold)
        return MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)

    def normalize(self, raw: np.ndarray) -> np.ndarray:
        return raw

    def signature(self, pod: Pod) -> tuple:
        images = tuple(c.image for c in (*pod.init_containers, *pod.containers))
        return (images, image_volume_references(pod)) if self.counts_image_volumes else images
