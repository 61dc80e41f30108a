"""The cluster snapshot held as columns, so a plugin evaluates one pod against every node at once.

It plays the part of upstream's `Snapshot` + `NodeInfo` list (pkg/scheduler/framework/types.go):
allocatable and requested resources as int64 arrays, label columns with vocabularies, taint sets
deduplicated, used host ports, images, and the pods on each node grouped by namespace and labels
so that selector counts cost one match per distinct label set instead of one per pod.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..api.objects import Namespace, Node, Taint
from ..api.policy import PodDisruptionBudget
from ..dra.index import DraIndex
from .pod_info import PodInfo, is_scalar_resource, resource_value
from .selectors import LabelRequirement, NodeTermCompiled, Selector, parse_int64
from .volume_index import VolumeIndex

__all__ = ["BASE_RESOURCES", "LabelColumn", "NodeTable", "PodColumns"]

BASE_RESOURCES = ("cpu", "memory", "ephemeral-storage")

GroupKey = tuple[str, frozenset[tuple[str, str]], bool]  # (namespace, labels, terminating)
PLUGIN_CACHE_LIMIT = 4096  # entries of `NodeTable.plugin_cache` (the oldest dropped first)
MEMO_LIMIT = 32  # per-node memos kept per table at least (the least recently used dropped first)
MEMO_CELLS = 4_000_000  # … and as many more as fit in this many cells (32 MB of int64 in all)


@dataclass
class _Memo:
    """A per-node column as of `generation` and journal `position`."""

    column: np.ndarray
    generation: int
    position: int


@dataclass
class LabelColumn:
    """One label key across all nodes: `codes[i]` indexes `values`, -1 where the node lacks the key."""

    codes: np.ndarray
    values: list[str]
    vocab: dict[str, int]
    _numeric: list[int | None] | None = None
    _present: np.ndarray | None = None
    _identity: bool | None = None
    _grouping: tuple[np.ndarray | None, np.ndarray] | None = None
    _grouped: bool = False

    @property
    def present(self) -> np.ndarray:
        """Nodes carrying the key (computed once; read-only)."""
        if self._present is None:
            present = self.codes >= 0
            present.flags.writeable = False
            self._present = present
        return self._present

    @property
    def identity(self) -> bool:
        """Every node has a value of its own, in node order (codes are 0..n-1), as with
        kubernetes.io/hostname: a per-domain column is then the per-node column itself."""
        if self._identity is None:
            n = len(self.codes)
            self._identity = len(self.values) == n and bool(np.array_equal(self.codes, np.arange(n)))
        return self._identity

    @property
    def grouping(self) -> tuple[np.ndarray | None, np.ndarray] | None:
        """For summing per-node integers by value with `np.add.reduceat`: the order that puts the
        nodes carrying the key grouped by value (None when codes are already sorted and all
        present) and each value's start in that order; None when a value has no node."""
        if not self._grouped:
            self._grouped = True
            codes = self.codes
            sizes = np.bincount(codes[codes >= 0], minlength=len(self.values))
            if len(sizes) and sizes.all():
                starts = np.zeros(len(sizes), dtype=np.int64)
                np.cumsum(sizes[:-1], out=starts[1:])
                in_order = codes[0] >= 0 and bool((codes[1:] >= codes[:-1]).all())
                order = None if in_order else np.argsort(codes, kind="stable")[len(codes) - int(sizes.sum()) :]
                self._grouping = (order, starts)
        return self._grouping

    def lookup(self, value_mask: np.ndarray, absent: bool) -> np.ndarray:
        """Per-node booleans from per-value booleans (`absent` for nodes without the key)."""
        table = np.empty(len(self.values) + 1, dtype=bool)
        table[:-1] = value_mask
        table[-1] = absent  # code -1 picks the last entry
        return table[self.codes]

    def spread(self, by_value: np.ndarray) -> np.ndarray:
        """Per node, its value's entry of `by_value` (one per value), 0 for nodes without the key:
        `np.where(codes >= 0, by_value[codes], 0)` in one gather."""
        table = np.zeros(len(self.values) + 1, dtype=by_value.dtype)
        table[:-1] = by_value
        return table[self.codes]  # code -1 picks the last entry

    def requirement_mask(self, requirement: LabelRequirement) -> np.ndarray:
        op = requirement.operator
        if op in ("Exists", "DoesNotExist"):
            present = self.codes >= 0
            return present if op == "Exists" else ~present
        if op in ("In", "NotIn"):
            hit = np.zeros(len(self.values), dtype=bool)
            for value in requirement.values:
                code = self.vocab.get(value)
                if code is not None:
                    hit[code] = True
            return self.lookup(hit, False) if op == "In" else self.lookup(~hit, True)
        if op in ("Gt", "Lt") and len(requirement.values) == 1:
            want = parse_int64(next(iter(requirement.values)))
            if want is None:
                return np.zeros(len(self.codes), dtype=bool)
            if self._numeric is None:
                self._numeric = [parse_int64(v) for v in self.values]
            hit = np.array(
                [v is not None and (v > want if op == "Gt" else v < want) for v in self._numeric], dtype=bool
            )
            return self.lookup(hit, False)
        return np.zeros(len(self.codes), dtype=bool)


@dataclass
class PodGroup:
    """Pods sharing namespace, labels and terminating state: one count per node."""

    namespace: str
    labels: dict[str, str]
    terminating: bool
    counts: np.ndarray


@dataclass
class AffinityGroup:
    """Pods with the same (anti-)affinity terms: one representative, one count per node."""

    pod: PodInfo
    counts: np.ndarray


@dataclass
class PodColumns:
    """Some pods (each with its node index) as columns, to add or remove many at once (`NodeTable.shift`)."""

    pods: list[PodInfo]
    nodes: np.ndarray
    requests: dict[str, np.ndarray]
    non_zero_cpu: np.ndarray
    non_zero_memory: np.ndarray
    special: np.ndarray  # bool: pods with host ports or volumes, accounted one by one

    @classmethod
    def of(cls, pairs: Sequence[tuple[PodInfo, int]]) -> PodColumns:
        n = len(pairs)
        pods = [info for info, _ in pairs]
        requests: dict[str, np.ndarray] = {}
        for k, info in enumerate(pods):
            for resource, value in info.requests.items():
                column = requests.get(resource)
                if column is None:
                    column = requests[resource] = np.zeros(n, dtype=np.int64)
                column[k] = value
        return cls(
            pods,
            np.fromiter((i for _, i in pairs), dtype=np.int64, count=n),
            requests,
            np.fromiter((info.non_zero_cpu for info in pods), dtype=np.int64, count=n),
            np.fromiter((info.non_zero_memory for info in pods), dtype=np.int64, count=n),
            np.fromiter((bool(info.host_ports) or _tracked_volumes(info) for info in pods), dtype=bool, count=n),
        )


@dataclass
class NodeTable:
    """Columnar view of the nodes and the pods bound to them."""

    nodes: list[Node]
    namespace_labels: dict[str, dict[str, str]] = field(default_factory=dict)
    # For PodTopologySpread's system default selector (helper.DefaultSelector):
    # Services as (namespace, spec.selector map); controllers by (apiVersion, kind, namespace, name)
    # → their selector (a map for ReplicationControllers, a LabelSelector dict otherwise).
    services: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    controllers: dict[tuple[str, str, str, str], dict[str, object]] = field(default_factory=dict)
    # PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes (the volume plugins' listers).
    volumes: VolumeIndex = field(default_factory=VolumeIndex)
    # PodDisruptionBudgets (policy/v1), which preemption reads (filterPodsWithPDBViolation).
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    # DeviceClasses, ResourceSlices, ResourceClaims and templates (DynamicResources' DRA manager).
    dra: DraIndex = field(default_factory=DraIndex)

    def __post_init__(self) -> None:
        nodes = self.nodes
        self.n = len(nodes)
        self.names: list[str] = [node.metadata.name for node in nodes]
        self.index: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        self.labels: list[dict[str, str]] = [node.metadata.labels for node in nodes]
        self.unschedulable = np.array([node.spec.unschedulable for node in nodes], dtype=bool)
        self.alloc: dict[str, np.ndarray] = {}
        names = set(BASE_RESOURCES) | {"pods"}
        for node in nodes:
            names.update(r for r in node.status.allocatable if is_scalar_resource(r))
        for resource in sorted(names):
            self.alloc[resource] = np.array(
                [
                    resource_value(resource, node.status.allocatable[resource])
                    if resource in node.status.allocatable
                    else 0
                    for node in nodes
                ],
                dtype=np.int64,
            )
        self.requested: dict[str, np.ndarray] = {r: np.zeros(self.n, dtype=np.int64) for r in self.alloc if r != "pods"}
        self.non_zero_cpu = np.zeros(self.n, dtype=np.int64)
        self.non_zero_memory = np.zeros(self.n, dtype=np.int64)
        self.pod_count = np.zeros(self.n, dtype=np.int64)
        self.pods: list[list[PodInfo]] = [[] for _ in nodes]
        # taints, deduplicated into signatures
        self.taints: list[tuple[Taint, ...]] = [tuple(node.spec.taints) for node in nodes]
        # status.declaredFeatures (NodeDeclaredFeatures, v1.35+)
        self.declared_features: list[frozenset[str]] = [frozenset(node.status.declared_features) for node in nodes]
        sig_index: dict[tuple[tuple[str, str, str], ...], int] = {}
        self.taint_sets: list[tuple[Taint, ...]] = []
        sigs = np.empty(self.n, dtype=np.int32)
        for i, taints in enumerate(self.taints):
            key = tuple((t.key, t.value, t.effect) for t in taints)
            code = sig_index.get(key)
            if code is None:
                code = sig_index[key] = len(self.taint_sets)
                self.taint_sets.append(taints)
            sigs[i] = code
        self.taint_sig = sigs
        # host ports: node index -> list of (ip, protocol, port)
        self.used_ports: list[list[tuple[str, str, int]]] = [[] for _ in nodes]
        self.port_users: dict[tuple[str, int], set[int]] = {}
        # images: name -> {node index: size}
        self.images: dict[str, dict[int, int]] = {}
        for i, node in enumerate(nodes):
            for image in node.status.images:
                for name in image.names:
                    self.images.setdefault(name, {})[i] = image.size_bytes
        self.groups: dict[GroupKey, PodGroup] = {}
        self.affinity_groups: dict[tuple[object, ...], AffinityGroup] = {}
        self._label_columns: dict[str, LabelColumn] = {}
        self._has_labels: np.ndarray | None = None
        self._statics: dict[str, tuple[np.ndarray, np.ndarray, bool, bool]] = {}
        self._every_node: np.ndarray | None = None
        self.nominated: dict[int, list[PodInfo]] = {}  # node index → pods nominated there by preemption
        self.volume_pods: list[tuple[int, PodInfo]] = []
        # `namespace/claim` → pods on the nodes using it (NodeInfo.PVCRefCounts, summed over nodes).
        self.pvc_refs: dict[str, int] = {}
        # Nodes whose pods changed, in order (`memo` recomputes only those); a new generation
        # (nodes or allocatable changed, or the journal grew long) recomputes every node.
        self._journal: list[int] = []
        self._generation = 0
        self._memos: dict[object, _Memo] = {}
        self._selected_groups: dict[object, tuple[int, list[PodGroup]]] = {}  # see _groups_of
        self._image_arrays: dict[str, tuple[int, np.ndarray, np.ndarray]] = {}  # see image_holders
        self.affinity_group_list: list[AffinityGroup] = []  # in the order made (only ever added)
        # What plugins keep across cycles, keyed by everything the value depends on (bounded).
        self.plugin_cache: dict[object, Any] = {}
        self.group_list: list[PodGroup] = []  # the groups in the order they were made (only ever added)
        self._label_groups: dict[tuple[str, str, str], list[PodGroup]] = {}  # (namespace, key, value) → groups
        self._dirty: tuple[tuple[int, int, int], np.ndarray] | None = None  # see _dirty_since

    # --- construction -----------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        nodes: Sequence[Node],
        pods: Iterable[PodInfo] = (),
        namespaces: Iterable[Namespace] = (),
    ) -> NodeTable:
        """A table of `nodes` with the bound pods among `pods` added; unbound pods that carry a
        `status.nominatedNodeName` are remembered as nominated there (the scheduler's nominator)."""
        table = cls(list(nodes), {ns.metadata.name: ns.metadata.labels for ns in namespaces})
        bound: list[tuple[PodInfo, int]] = []
        for info in pods:
            node_name = info.pod.spec.node_name
            phase = info.pod.status.phase
            # Succeeded/Failed pods are not in the scheduler's cache (field selector on the informer).
            if phase in ("Succeeded", "Failed"):
                continue
            if node_name:
                if node_name in table.index:
                    bound.append((info, table.index[node_name]))
            elif info.pod.status.nominated_node_name in table.index:
                table.nominated.setdefault(table.index[info.pod.status.nominated_node_name], []).append(info)
        table._add_bound(bound)
        return table

    def _add_bound(self, pairs: list[tuple[PodInfo, int]]) -> None:
        """`add_pod` of every (pod, node index) pair, in order, with each column summed in one
        numpy pass (the table of a 50,000-pod snapshot is built once: per-pod numpy scalar updates
        were most of its cost)."""
        if not pairs:
            return
        nodes = np.fromiter((i for _, i in pairs), dtype=np.int64, count=len(pairs))
        requested: dict[str, tuple[list[int], list[int]]] = {}
        groups: dict[GroupKey, list[int]] = {}  # the nodes of each group's pods
        affinity: dict[tuple[object, ...], list[int]] = {}
        for info, i in pairs:
            self.pods[i].append(info)
            for resource, value in info.requests.items():
                where, values = requested.setdefault(resource, ([], []))
                where.append(i)
                values.append(value)
            if info.host_ports or _tracked_volumes(info):
                self._account_ports_and_volumes(info, i, +1)
            key = _group_key(info)
            if key not in self.groups:
                self._new_group(key, PodGroup(info.namespace, info.labels, info.terminating, self._zeros()))
            groups.setdefault(key, []).append(i)
            if info.has_affinity:
                signature = _affinity_signature(info)
                if signature not in self.affinity_groups:
                    self.affinity_groups[signature] = AffinityGroup(info, self._zeros())
                    self.affinity_group_list.append(self.affinity_groups[signature])
                affinity.setdefault(signature, []).append(i)
        self._changed(nodes.tolist())
        self.pod_count += self._counts(nodes)
        for resource, (where, values) in requested.items():
            np.add.at(self._requested_column(resource), where, np.array(values, dtype=np.int64))
        np.add.at(self.non_zero_cpu, nodes, np.fromiter((p.non_zero_cpu for p, _ in pairs), dtype=np.int64))
        np.add.at(self.non_zero_memory, nodes, np.fromiter((p.non_zero_memory for p, _ in pairs), dtype=np.int64))
        for key, where in groups.items():
            self.groups[key].counts += self._counts(where)
        for signature, where in affinity.items():
            self.affinity_groups[signature].counts += self._counts(where)

    def _zeros(self) -> np.ndarray:
        return np.zeros(self.n, dtype=np.int64)

    def _counts(self, nodes: Sequence[int] | np.ndarray) -> np.ndarray:
        """How many times each node index occurs in `nodes`."""
        return np.bincount(np.asarray(nodes, dtype=np.int64), minlength=self.n)

    def add_pod(self, info: PodInfo, i: int) -> None:
        """Account a pod on node `i` (`NodeInfo.AddPod`)."""
        self.pods[i].append(info)
        self._account(info, i, +1)

    def remove_pod(self, info: PodInfo, i: int) -> None:
        """Remove a pod from node `i` (`NodeInfo.RemovePod`)."""
        pods = self.pods[i]
        for k, other in enumerate(pods):
            if other is info:
                del pods[k]
                break
        else:
            raise KeyError(info.key)
        self._account(info, i, -1)

    def shift(self, columns: PodColumns, which: np.ndarray, sign: int) -> None:
        """Add (+1) or remove (-1) the pods `columns` selects by `which` on their nodes, in one
        pass over the resource columns; host ports and volumes follow, one pod at a time.

        The per-node pod lists and the label/affinity groups are left alone: this is for a
        caller that undoes its changes before anything reads those (preemption's dry run, which
        reuses the cycle's PreFilter state and re-runs Filter only).
        """
        if len(which) == 0:
            return
        nodes = columns.nodes[which]
        self._changed(nodes.tolist())
        np.add.at(self.pod_count, nodes, sign)
        np.add.at(self.non_zero_cpu, nodes, sign * columns.non_zero_cpu[which])
        np.add.at(self.non_zero_memory, nodes, sign * columns.non_zero_memory[which])
        for resource, values in columns.requests.items():
            np.add.at(self._requested_column(resource), nodes, sign * values[which])
        for k in which[columns.special[which]].tolist():
            self._account_ports_and_volumes(columns.pods[k], int(columns.nodes[k]), sign)

    def _requested_column(self, resource: str) -> np.ndarray:
        column = self.requested.get(resource)
        if column is None:
            column = self.requested[resource] = np.zeros(self.n, dtype=np.int64)
            self.alloc.setdefault(resource, np.zeros(self.n, dtype=np.int64))
            self._renewed()
        return column

    def _account(self, info: PodInfo, i: int, sign: int) -> None:
        """Everything `NodeInfo.AddPod` / `RemovePod` changes, for one pod on node i."""
        self._changed((i,))
        self.pod_count[i] += sign
        for resource, value in info.requests.items():
            self._requested_column(resource)[i] += sign * value
        self.non_zero_cpu[i] += sign * info.non_zero_cpu
        self.non_zero_memory[i] += sign * info.non_zero_memory
        self._account_ports_and_volumes(info, i, sign)
        self._account_groups(info, i, sign)

    def _account_ports_and_volumes(self, info: PodInfo, i: int, sign: int) -> None:
        if _tracked_volumes(info):
            for volume in info.pod.spec.volumes:
                if volume.persistent_volume_claim is not None:
                    claim = f"{info.namespace}/{volume.claim_name}"
                    self.pvc_refs[claim] = self.pvc_refs.get(claim, 0) + sign
            if sign > 0:
                self.volume_pods.append((i, info))
            else:
                self.volume_pods = [(j, p) for j, p in self.volume_pods if p is not info]
        for ip, protocol, port in info.host_ports:
            if sign > 0:
                self.used_ports[i].append((ip, protocol, port))
                self.port_users.setdefault((protocol, port), set()).add(i)
            else:
                self.used_ports[i].remove((ip, protocol, port))
                if not any(p == protocol and q == port for _, p, q in self.used_ports[i]):
                    self.port_users[(protocol, port)].discard(i)

    def _account_groups(self, info: PodInfo, i: int, sign: int) -> None:
        key = _group_key(info)
        group = self.groups.get(key)
        if group is None:
            group = self._new_group(
                key, PodGroup(info.namespace, info.labels, info.terminating, np.zeros(self.n, dtype=np.int64))
            )
        group.counts[i] += sign
        if info.has_affinity:
            signature = _affinity_signature(info)
            affinity_group = self.affinity_groups.get(signature)
            if affinity_group is None:
                affinity_group = self.affinity_groups[signature] = AffinityGroup(info, np.zeros(self.n, dtype=np.int64))
                self.affinity_group_list.append(affinity_group)
            affinity_group.counts[i] += sign

    # --- incremental node changes (the scheduler cache's UpdateSnapshot) -----------------------

    def update_node(self, i: int, node: Node) -> None:
        """Replace node `i` by a new version of itself (`NodeInfo.SetNode`): labels, taints,
        unschedulable, allocatable and images; its pods and their accounting stay."""
        if node.metadata.name != self.names[i]:
            raise ValueError(f"node {i} is {self.names[i]!r}, not {node.metadata.name!r}")
        old = self.nodes[i]
        self.nodes[i] = node
        self.labels[i] = node.metadata.labels
        self.unschedulable[i] = node.spec.unschedulable
        allocatable = node.status.allocatable
        for resource in set(allocatable) - set(self.alloc):
            if resource in BASE_RESOURCES or resource == "pods" or is_scalar_resource(resource):
                self.alloc[resource] = np.zeros(self.n, dtype=np.int64)
                if resource != "pods":
                    self.requested.setdefault(resource, np.zeros(self.n, dtype=np.int64))
        for resource, column in self.alloc.items():
            column[i] = resource_value(resource, allocatable[resource]) if resource in allocatable else 0
        self.taints[i] = tuple(node.spec.taints)
        self.taint_sig[i] = self._taint_code(self.taints[i])
        self.declared_features[i] = frozenset(node.status.declared_features)
        for image in old.status.images:
            for name in image.names:
                holders = self.images.get(name)
                if holders is not None:
                    holders.pop(i, None)
                    if not holders:
                        del self.images[name]
        for image in node.status.images:
            for name in image.names:
                self.images.setdefault(name, {})[i] = image.size_bytes
        self._label_columns.clear()
        self._has_labels = None
        self._statics.clear()  # allocatable changed in place
        self._renewed()

    def insert_node(self, i: int, node: Node) -> None:
        """Add a node without pods at position `i` (the nodes from `i` on move up by one)."""
        if node.metadata.name in self.index:
            raise ValueError(f"node {node.metadata.name!r} is already in the table")
        self.nodes.insert(i, node)
        self.names.insert(i, node.metadata.name)
        self.labels.insert(i, node.metadata.labels)
        self.n += 1
        self.index = {name: k for k, name in enumerate(self.names)}
        self.unschedulable = np.insert(self.unschedulable, i, node.spec.unschedulable)
        allocatable = node.status.allocatable
        for resource in allocatable:
            if resource not in self.alloc and (
                resource in BASE_RESOURCES or resource == "pods" or is_scalar_resource(resource)
            ):
                self.alloc[resource] = np.zeros(self.n - 1, dtype=np.int64)
                if resource != "pods":
                    self.requested.setdefault(resource, np.zeros(self.n - 1, dtype=np.int64))
        for resource, column in self.alloc.items():
            value = resource_value(resource, allocatable[resource]) if resource in allocatable else 0
            self.alloc[resource] = np.insert(column, i, value)
        for resource, column in self.requested.items():
            self.requested[resource] = np.insert(column, i, 0)
        self.non_zero_cpu = np.insert(self.non_zero_cpu, i, 0)
        self.non_zero_memory = np.insert(self.non_zero_memory, i, 0)
        self.pod_count = np.insert(self.pod_count, i, 0)
        self.pods.insert(i, [])
        self.taints.insert(i, tuple(node.spec.taints))
        self.declared_features.insert(i, frozenset(node.status.declared_features))
        self.taint_sig = np.insert(self.taint_sig, i, self._taint_code(self.taints[i]))
        self.used_ports.insert(i, [])
        self._renumber(lambda k: k + 1 if k >= i else k)
        for image in node.status.images:
            for name in image.names:
                self.images.setdefault(name, {})[i] = image.size_bytes
        for group in self.groups.values():
            group.counts = np.insert(group.counts, i, 0)
        for affinity_group in self.affinity_groups.values():
            affinity_group.counts = np.insert(affinity_group.counts, i, 0)
        self._label_columns.clear()
        self._has_labels = None
        self._renewed()

    def remove_node(self, i: int) -> None:
        """Drop node `i` with the pods accounted on it and nominated to it (the nodes after it move down)."""
        for info in self.pods[i]:  # their claims no longer count as in use on a node
            for volume in info.pod.spec.volumes:
                if volume.persistent_volume_claim is not None:
                    claim = f"{info.namespace}/{volume.claim_name}"
                    self.pvc_refs[claim] -= 1
                    if not self.pvc_refs[claim]:
                        del self.pvc_refs[claim]
        del self.nodes[i], self.names[i], self.labels[i], self.pods[i], self.taints[i], self.used_ports[i]
        del self.declared_features[i]
        self.n -= 1
        self.index = {name: k for k, name in enumerate(self.names)}
        self.unschedulable = np.delete(self.unschedulable, i)
        for columns in (self.alloc, self.requested):
            for resource, column in columns.items():
                columns[resource] = np.delete(column, i)
        self.non_zero_cpu = np.delete(self.non_zero_cpu, i)
        self.non_zero_memory = np.delete(self.non_zero_memory, i)
        self.pod_count = np.delete(self.pod_count, i)
        self.taint_sig = np.delete(self.taint_sig, i)
        self.nominated.pop(i, None)
        self.volume_pods = [(k, info) for k, info in self.volume_pods if k != i]
        for users in self.port_users.values():
            users.discard(i)
        for holders in self.images.values():
            holders.pop(i, None)
        self.images = {name: holders for name, holders in self.images.items() if holders}
        self._renumber(lambda k: k - 1 if k > i else k)
        for group in self.groups.values():
            group.counts = np.delete(group.counts, i)
        for affinity_group in self.affinity_groups.values():
            affinity_group.counts = np.delete(affinity_group.counts, i)
        self._label_columns.clear()
        self._has_labels = None
        self._renewed()

    def _renumber(self, move: Callable[[int], int]) -> None:
        """Apply a change of node positions to the structures keyed by position."""
        self.port_users = {key: {move(k) for k in users} for key, users in self.port_users.items()}
        self.images = {name: {move(k): size for k, size in holders.items()} for name, holders in self.images.items()}
        self.nominated = {move(k): pods for k, pods in self.nominated.items()}
        self.volume_pods = [(move(k), info) for k, info in self.volume_pods]

    def _taint_code(self, taints: tuple[Taint, ...]) -> int:
        key = tuple((t.key, t.value, t.effect) for t in taints)
        for code, known in enumerate(self.taint_sets):
            if tuple((t.key, t.value, t.effect) for t in known) == key:
                return code
        self.taint_sets.append(taints)
        return len(self.taint_sets) - 1

    # --- per-node memos ------------------------------------------------------------------------

    def _changed(self, nodes: Iterable[int]) -> None:
        journal = self._journal
        journal.extend(nodes)
        if len(journal) > max(4 * self.n, 4096):
            self._renewed()

    def image_holders(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The nodes holding image `name` and its size on each, as arrays (None: no node has it);
        kept until the nodes change (images change only with them)."""
        holders = self.images.get(name)
        if not holders:
            return None
        kept = self._image_arrays.get(name)
        if kept is None or kept[0] != self._generation:
            nodes = np.fromiter(holders.keys(), dtype=np.int64, count=len(holders))
            sizes = np.fromiter(holders.values(), dtype=np.int64, count=len(holders))
            kept = self._image_arrays[name] = (self._generation, nodes, sizes)
        return kept[1], kept[2]

    def _renewed(self) -> None:
        """Every memo is stale (nodes or allocatable changed, or the journal grew long)."""
        self._generation += 1
        self._journal.clear()

    def memo(self, key: object, compute: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """`compute(every node)`, kept across cycles under `key`: later calls recompute only the
        nodes whose pods changed since. For per-node values that depend on the node alone (its
        allocatable and the pods on it) and on what `key` names (e.g. the pod's requests).

        The column is updated in place later: a caller that keeps values copies them."""
        entry = self._memos.get(key)
        journal = self._journal
        if entry is not None and entry.generation == self._generation:
            self._memos[key] = self._memos.pop(key)  # the most recently used is dropped last
            if entry.position == len(journal):
                return entry.column
            if len(journal) - entry.position <= self.n // 8:
                idx = self._dirty_since(entry.position)
                entry.column[idx] = compute(idx)
                entry.position = len(journal)
                return entry.column
        column = np.array(compute(self.every_node))  # a copy: never a table column itself
        if entry is None and len(self._memos) >= max(MEMO_LIMIT, MEMO_CELLS // max(self.n, 1)):
            del self._memos[next(iter(self._memos))]
        self._memos.pop(key, None)
        self._memos[key] = _Memo(column, self._generation, len(journal))
        return column

    def _dirty_since(self, position: int) -> np.ndarray:
        """The nodes changed since journal `position` (read-only), shared by the memos a cycle
        brings up to date from the same position."""
        key = (self._generation, position, len(self._journal))
        if self._dirty is None or self._dirty[0] != key:
            idx = np.fromiter(set(self._journal[position:]), dtype=np.int64)
            idx.flags.writeable = False
            self._dirty = (key, idx)
        return self._dirty[1]

    # --- queries ----------------------------------------------------------------------------

    def resource_statics(self, resource: str) -> tuple[np.ndarray, bool, bool]:
        """Node-static facts about allocatable `resource`, computed once per table: the column as a
        float64 divisor (1 where it is 0), whether every node has some, and whether
        `alloc·101 < 2**53` on every node (so a float quotient of at most alloc·100 truncates exactly)."""
        alloc = self.alloc[resource]
        cached = self._statics.get(resource)
        if cached is None or cached[0] is not alloc:
            positive = alloc != 0
            divisor = np.where(positive, alloc, 1).astype(np.float64)
            exact = not len(alloc) or int(np.abs(alloc).max()) * 101 < 2**53
            cached = self._statics[resource] = (alloc, divisor, bool(positive.all()), exact)
        return cached[1], cached[2], cached[3]

    @property
    def every_node(self) -> np.ndarray:
        """0..n-1: the idx of "all nodes" (`take` then hands columns over without a copy)."""
        if self._every_node is None or len(self._every_node) != self.n:
            self._every_node = np.arange(self.n, dtype=np.int64)
            self._every_node.flags.writeable = False
        return self._every_node

    def take(self, column: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """`column[idx]`, without a copy when `idx` (sorted, unique) covers every node."""
        return column if len(idx) == self.n else column[idx]

    @property
    def has_labels(self) -> np.ndarray:
        """Nodes with at least one label."""
        if self._has_labels is None:
            self._has_labels = np.array([bool(labels) for labels in self.labels], dtype=bool)
        return self._has_labels

    def label_column(self, key: str) -> LabelColumn:
        column = self._label_columns.get(key)
        if column is None:
            vocab: dict[str, int] = {}
            codes = np.full(self.n, -1, dtype=np.int64)
            for i, labels in enumerate(self.labels):
                value = labels.get(key)
                if value is not None:
                    code = vocab.get(value)
                    if code is None:
                        code = vocab[value] = len(vocab)
                    codes[i] = code
            column = self._label_columns[key] = LabelColumn(codes, list(vocab), vocab)
        return column

    def term_mask(self, term: NodeTermCompiled) -> np.ndarray:
        """Nodes matching one node selector term."""
        if not term.valid:
            return np.zeros(self.n, dtype=bool)
        mask = np.ones(self.n, dtype=bool)
        for requirement in term.label_requirements:
            mask &= self.label_column(requirement.key).requirement_mask(requirement)
        for requirement in term.field_requirements:
            hit = np.zeros(self.n, dtype=bool)
            for name in requirement.values:
                i = self.index.get(name)
                if i is not None:
                    hit[i] = True
            mask &= hit if requirement.operator == "In" else ~hit
        return mask

    def selector_mask(self, selector: Mapping[str, str]) -> np.ndarray:
        """Nodes whose labels contain every `key: value` of a nodeSelector map."""
        mask = np.ones(self.n, dtype=bool)
        for key, value in selector.items():
            mask &= self.label_column(key).requirement_mask(LabelRequirement(key, "In", frozenset([value])))
        return mask

    def _new_group(self, key: GroupKey, group: PodGroup) -> PodGroup:
        self.groups[key] = group
        self.group_list.append(group)
        for label, value in group.labels.items():
            self._label_groups.setdefault((group.namespace, label, value), []).append(group)
        return group

    def candidate_groups(self, selector: Selector, namespace: str) -> list[PodGroup]:
        """The groups of `namespace` that may match `selector`: those carrying a value one of its `In`
        requirements asks for (found through the label index), else every group."""
        for requirement in selector.requirements:
            if requirement.operator == "In":
                found: list[PodGroup] = []
                for value in requirement.values:
                    found.extend(self._label_groups.get((namespace, requirement.key, value), ()))
                return found
        return self.group_list

    def count_pods(
        self,
        wanted: Callable[[PodGroup], bool],
        include_terminating: bool = True,
        key: object = None,
        candidates: Callable[[], list[PodGroup]] | None = None,
    ) -> np.ndarray:
        """Per node, the number of pods whose group (namespace, labels) satisfies `wanted`.

        With a `key` naming what `wanted` selects, the counts are a `memo` (read-only here; they
        change in place with the table: a caller that keeps them copies them); `candidates`, the
        groups among which `wanted` can hold (default: all)."""
        if key is None:
            return self._count_pods(wanted, include_terminating, self.every_node)
        memo_key = ("count_pods", key, include_terminating)
        counts = self.memo(
            memo_key,
            lambda i: self._sum_groups(self._groups_of(memo_key, wanted, include_terminating, candidates), i),
        )
        view = counts.view()
        view.flags.writeable = False
        return view

    def _groups_of(
        self,
        key: object,
        wanted: Callable[[PodGroup], bool],
        include_terminating: bool,
        candidates: Callable[[], list[PodGroup]] | None = None,
    ) -> list[PodGroup]:
        """The label groups `wanted` selects, kept per `key`: groups are only ever added, so only the
        ones added since are looked at (a cycle on a cluster of 2,000 label groups need not test
        them all again for every pod it counts); the first time, only the `candidates`."""
        known = self._selected_groups.get(key)
        if known is None:
            pool = candidates() if candidates is not None else self.group_list
            groups = [g for g in pool if (include_terminating or not g.terminating) and wanted(g)]
            self._selected_groups[key] = (len(self.group_list), groups)
            return groups
        seen, groups = known
        if seen != len(self.group_list):
            for group in self.group_list[seen:]:
                if (include_terminating or not group.terminating) and wanted(group):
                    groups.append(group)
            self._selected_groups[key] = (len(self.group_list), groups)
        return groups

    def _sum_groups(self, groups: list[PodGroup], idx: np.ndarray) -> np.ndarray:
        total = np.zeros(len(idx), dtype=np.int64)
        for group in groups:
            total += self.take(group.counts, idx)
        return total

    def _count_pods(self, wanted: Callable[[PodGroup], bool], include_terminating: bool, idx: np.ndarray) -> np.ndarray:
        total = np.zeros(len(idx), dtype=np.int64)
        for group in self.groups.values():
            if group.terminating and not include_terminating:
                continue
            if wanted(group):
                total += self.take(group.counts, idx)
        return total

    def count_matching(self, selector: Selector, namespace: str, include_terminating: bool = True) -> np.ndarray:
        """Per node, the pods of `namespace` whose labels match `selector` (as `count_pods` with a key)."""
        if selector.nothing:
            return np.zeros(self.n, dtype=np.int64)
        return self.count_pods(
            lambda g: g.namespace == namespace and selector.matches(g.labels),
            include_terminating,
            key=("matching", selector, namespace),
            candidates=lambda: self.candidate_groups(selector, namespace),
        )

    def key_mask(self, key: str) -> np.ndarray:
        """Nodes that carry label `key` (read-only)."""
        return self.label_column(key).present

    def domain_counts(self, key: str, per_node: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Sum `per_node` over the nodes of each value of label `key` (nodes in `mask` only)."""
        column = self.label_column(key)
        if column.identity:  # one domain per node: the sums are the per-node values
            return (per_node if mask is None else np.where(mask, per_node, 0)).astype(np.int64)
        grouping = column.grouping
        if per_node.dtype.kind not in "iu" or grouping is None:
            ok = column.codes >= 0
            if mask is not None:
                ok &= mask
            return np.bincount(column.codes[ok], weights=per_node[ok], minlength=len(column.values)).astype(np.int64)
        # Integers: sorted-segment sums (exact, and much cheaper than bincount's weighted scatter
        # when few values hold many nodes, e.g. one zone).
        order, starts = grouping
        values = per_node if mask is None else np.where(mask, per_node, 0)
        return np.add.reduceat(values if order is None else values[order], starts, dtype=np.int64)


def _tracked_volumes(info: PodInfo) -> bool:
    """Whether any of a pod's volumes counts for the volume plugins (claims and disks; not emptyDir
    nor the sources the loader dropped), so the pod is kept in `volume_pods`."""
    return info.has_plugin_volumes


def _group_key(info: PodInfo) -> GroupKey:
    """The pods counted together: same namespace, labels and terminating state."""
    return (info.namespace, frozenset(info.labels.items()), info.terminating)


def _affinity_signature(info: PodInfo) -> tuple[object, ...]:
    """The pods whose affinity terms are counted together: same namespace and terms."""
    return (
        info.namespace,
        info.required_affinity,
        info.required_anti_affinity,
        info.preferred_affinity,
        info.preferred_anti_affinity,
    )
