"""ImageLocality (plugins/imagelocality/image_locality.go)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..framework.columns import constant
from ..framework.cycle_state import CycleState
from ..framework.interface import MAX_NODE_SCORE
from ..framework.node_table import NodeTable
from ..framework.pod_info import PodInfo
from .names import IMAGE_LOCALITY

NAME = IMAGE_LOCALITY
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """Append ":latest" when the part after the last "/" has no tag (digests keep their "@sha256:")."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


class ImageLocality:
    name = NAME

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        spec = pod.pod.spec
        containers = [*spec.init_containers, *spec.containers]
        if containers and not any(table.images.get(normalized_image_name(c.image)) for c in containers):
            return constant(0, len(idx))  # every node sums 0, below the threshold: 0
        total = np.zeros(table.n, dtype=np.int64)
        for container in containers:
            holders = table.image_holders(normalized_image_name(container.image))
            if holders is None:
                continue
            nodes, sizes = holders
            spread = len(nodes) / table.n
            # int(float(size) * spread) per node, in float64 as Go's float64 arithmetic
            total[nodes] += (sizes.astype(np.float64) * spread).astype(np.int64)
        max_threshold = MAX_CONTAINER_THRESHOLD * len(containers)
        clamped = np.clip(total[idx], MIN_THRESHOLD, max_threshold)
        return MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def new(args: dict[str, Any], handle: object) -> ImageLocality:
    return ImageLocality()
