"""Resource pools as the structured allocator sees them from one node (GatherPools).

Upstream: staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/pools_stable.go
(v1.34). A slice reaches a node by `nodeName`, `allNodes` or `nodeSelector`; slices with
`perDeviceNodeSelection` are ignored while DRAPartitionableDevices is off (alpha in v1.34). The
slices of one (driver, pool) form a pool: only those of the newest generation count, the pool is
*incomplete* when fewer than `resourceSliceCount` of them are seen, and *invalid* when a device
name repeats. Upstream returns the pools in Go map order (random); here they are sorted by
driver and pool name, and a pool's slices by name, so every run picks the same devices.

`SliceIndex` is built once per set of slices: slices by node name and the shared ones (which are
matched against each node's labels), with the node-local pools of each node memoised. It also
memoises selector results per (expression, device), which do not depend on the node or on what
is allocated: across the thousands of nodes and pods of a replay each device meets each
expression once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..api.objects import NodeSelector
from ..api.resource import Device, ResourceSlice
from ..framework.selectors import compile_node_selector_term

__all__ = ["Pool", "PoolDevice", "SliceIndex", "node_selector_matches"]


@dataclass(frozen=True, slots=True)
class PoolDevice:
    """One device of a pool, with the slice that publishes it."""

    driver: str
    pool: str
    device: Device
    slice: ResourceSlice
    serial: int  # position in the SliceIndex: the key of memoised selector results

    @property
    def name(self) -> str:
        return self.device.name


@dataclass(slots=True)
class Pool:
    driver: str
    name: str
    generation: int
    slices: list[ResourceSlice] = field(default_factory=list)
    devices: list[PoolDevice] = field(default_factory=list)
    incomplete: bool = False
    invalid_reason: str = ""

    @property
    def invalid(self) -> bool:
        return bool(self.invalid_reason)

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"


def node_selector_matches(selector: NodeSelector, name: str, labels: Mapping[str, str]) -> bool:
    """`nodeaffinity.NodeSelector.Match`: the terms are ORed."""
    return any(compile_node_selector_term(term).matches(name, labels) for term in selector.node_selector_terms)


def _node_name_and_labels(node: Any) -> tuple[str, Mapping[str, str]]:
    meta = node.metadata
    return meta.name, meta.labels or {}


class SliceIndex:
    """The cluster's ResourceSlices, indexed for GatherPools on each node."""

    def __init__(self, slices: Iterable[ResourceSlice], partitionable_devices: bool = False) -> None:
        self.local: dict[str, list[ResourceSlice]] = {}
        self.shared: list[ResourceSlice] = []
        self.partitionable_devices = partitionable_devices
        self._serials: dict[int, int] = {}  # id(slice) → serial of its first device
        self._next_serial = 0
        self._local_pools: dict[str, list[Pool]] = {}
        self.selector_results: dict[tuple[str, int], Any] = {}  # (expression, device serial) → bool | SelectorError
        self.fast_columns: dict[Any, Any] = {}  # allocator.Features → fast_path.DeviceColumns
        for item in sorted(slices, key=lambda s: s.metadata.name):
            spec = item.spec
            if spec.per_device_node_selection is not None and not partitionable_devices:
                continue
            if spec.node_name:
                self.local.setdefault(spec.node_name, []).append(item)
            elif spec.all_nodes or spec.node_selector is not None or spec.per_device_node_selection:
                self.shared.append(item)
            # nothing known set: some future extension, ignored as upstream does

    def _serial(self, item: ResourceSlice) -> int:
        serial = self._serials.get(id(item))
        if serial is None:
            serial = self._serials[id(item)] = self._next_serial
            self._next_serial += max(len(item.spec.devices), 1)
        return serial

    def reaches(self, node_name: str) -> bool:
        """Whether any slice may be seen from this node (shared slices might be)."""
        return bool(self.shared) or node_name in self.local

    def local_pools(self, name: str) -> list[Pool]:
        """The pools of the slices published for node `name` alone (memoised)."""
        pools = self._local_pools.get(name)
        if pools is None:
            pools = self._local_pools[name] = self._gather(self.local.get(name, []))
        return pools

    def pools_for(self, node: Any) -> list[Pool]:
        """GatherPools: the pools whose devices are accessible from `node`, in a fixed order."""
        name, labels = _node_name_and_labels(node)
        if not self.shared:
            return self.local_pools(name)
        seen = list(self.local.get(name, []))
        for item in self.shared:
            spec = item.spec
            if spec.all_nodes:
                seen.append(item)
            elif spec.node_selector is not None:
                if node_selector_matches(spec.node_selector, name, labels):
                    seen.append(item)
            elif spec.per_device_node_selection and any(
                _device_reaches(device, name, labels) for device in spec.devices
            ):
                seen.append(item)
        return self._gather(seen)

    def _gather(self, slices: list[ResourceSlice]) -> list[Pool]:
        pools: dict[tuple[str, str], Pool] = {}
        for item in slices:
            spec = item.spec
            key = (spec.driver, spec.pool.name)
            pool = pools.get(key)
            if pool is None:
                pools[key] = Pool(spec.driver, spec.pool.name, spec.pool.generation, [item])
            elif spec.pool.generation > pool.generation:  # newer: replaces the older slices
                pool.generation = spec.pool.generation
                pool.slices = [item]
            elif spec.pool.generation == pool.generation:
                pool.slices.append(item)
            # older generation: out of date, ignored
        out = []
        for key in sorted(pools):
            pool = pools[key]
            pool.incomplete = len(pool.slices) != pool.slices[0].spec.pool.resource_slice_count
            names: set[str] = set()
            for item in sorted(pool.slices, key=lambda s: s.metadata.name):
                serial = self._serial(item)
                for k, device in enumerate(item.spec.devices):
                    if device.name in names and not pool.invalid_reason:
                        pool.invalid_reason = f"duplicate device name {device.name}"
                    names.add(device.name)
                    pool.devices.append(PoolDevice(pool.driver, pool.name, device, item, serial + k))
            out.append(pool)
        return out


def _device_reaches(device: Device, name: str, labels: Mapping[str, str]) -> bool:
    if device.node_name:
        return device.node_name == name
    if device.all_nodes:
        return True
    if device.node_selector is not None:
        return node_selector_matches(device.node_selector, name, labels)
    return False
