"""NodeVolumeLimits (plugins/nodevolumelimits/csi.go, v1.34).

A node's CSINode lists, per CSI driver, how many volumes it can attach (`allocatable.count`).
Filter counts the unique volumes (driver + volume handle) of the pods already on the node and
the new ones the pod brings; more than the limit fails with `node(s) exceed max volume count`.
Volumes come from claims (the bound PV's CSI source, or the claim's StorageClass provisioner
while unbound) and from in-tree sources migrated to CSI (utils.go `isCSIMigrationOn`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..api.objects import Pod, Volume
from ..api.storage import CSINode, PersistentVolumeClaim, claim_class
from ..framework.cycle_state import CycleState
from ..framework.node_table import NodeTable
from ..framework.pod_info import PodInfo
from ..framework.status import SKIP, SUCCESS, Code, NodeVerdicts, PreFilterResult, Status
from ..framework.volume_index import VolumeIndex, claim_is_for_pod, ephemeral_owner_error, not_found
from .names import NODE_VOLUME_LIMITS

NAME = NODE_VOLUME_LIMITS
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"

# csi-translation-lib: in-tree plugin name → CSI driver, and the inline volume field of each.
CSI_DRIVER_OF = {
    "kubernetes.io/aws-ebs": "ebs.csi.aws.com",
    "kubernetes.io/gce-pd": "pd.csi.storage.gke.io",
    "kubernetes.io/azure-disk": "disk.csi.azure.com",
    "kubernetes.io/azure-file": "file.csi.azure.com",
    "kubernetes.io/cinder": "cinder.csi.openstack.org",
    "kubernetes.io/vsphere-volume": "csi.vsphere.vmware.com",
    "kubernetes.io/portworx-volume": "pxd.portworx.com",
}
_INLINE = (  # (Volume attribute, in-tree plugin, the source field that identifies the disk)
    ("aws_elastic_block_store", "kubernetes.io/aws-ebs", "volumeID"),
    ("gce_persistent_disk", "kubernetes.io/gce-pd", "pdName"),
    ("azure_disk", "kubernetes.io/azure-disk", "diskURI"),
    ("azure_file", "kubernetes.io/azure-file", "shareName"),
    ("cinder", "kubernetes.io/cinder", "volumeID"),
    ("vsphere_volume", "kubernetes.io/vsphere-volume", "volumePath"),
    ("portworx_volume", "kubernetes.io/portworx-volume", "volumeID"),
)
# Migration always on for these (given a CSINode); Portworx (GA in v1.33) only when the node's
# CSINode lists it in the migrated-plugins annotation; the rest are never counted.
_ALWAYS_MIGRATED = {"kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk", "kubernetes.io/cinder"}
# The unique handle upstream gives a claim that has no PV yet (a random prefix per plugin instance).
_UNBOUND_PREFIX = "unbound"


def is_csi_migration_on(csi_node: CSINode | None, plugin: str) -> bool:
    """`isCSIMigrationOn` (nodevolumelimits/utils.go)."""
    if csi_node is None or not plugin:
        return False
    if plugin in _ALWAYS_MIGRATED:
        return True
    if plugin != "kubernetes.io/portworx-volume":
        return False
    migrated = csi_node.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION, "")
    return plugin in migrated.split(",")


def _inline_source(volume: Volume) -> tuple[str, dict[str, Any]] | None:
    for attribute, plugin, _ in _INLINE:
        source = getattr(volume, attribute)
        if source is not None:
            return plugin, source
    return None


def _handle(plugin: str, source: dict[str, Any]) -> str:
    """The translated volume handle, reduced to the disk's identity (see README, Fidelity notes)."""
    key = next(field for _, name, field in _INLINE if name == plugin)
    handle = str(source.get(key, ""))
    if plugin == "kubernetes.io/aws-ebs" and handle.startswith("aws://"):
        handle = handle.removeprefix("aws://").partition("/")[2].strip("/")  # KubernetesVolumeIDToEBSVolumeID
    return handle


def is_inline_migratable(volume: Volume) -> bool:
    """`CSITranslator.IsInlineMigratable`."""
    return _inline_source(volume) is not None


class _Lookup(Exception):
    """A claim of the pod being scheduled cannot be used (the status to return)."""

    def __init__(self, status: Status) -> None:
        self.status = status


def _claim_driver(index: VolumeIndex, csi_node: CSINode | None, claim: PersistentVolumeClaim) -> tuple[str, str]:
    """`getCSIDriverInfo`: (driver, volume handle), or ("", "") when the claim is not counted."""
    pv = index.volumes.get(claim.spec.volume_name) if claim.spec.volume_name else None
    if pv is None:
        return _claim_driver_from_class(index, csi_node, claim)
    if pv.spec.csi is not None:
        return pv.spec.csi.driver, pv.spec.csi.volume_handle
    for attribute, plugin, _ in _INLINE[:5]:  # the PV sources csi-translation-lib migrates
        source = getattr(pv.spec, attribute, None)
        if source is not None:
            if not is_csi_migration_on(csi_node, plugin):
                return "", ""
            return CSI_DRIVER_OF[plugin], _handle(plugin, source)
    return "", ""


def _claim_driver_from_class(
    index: VolumeIndex, csi_node: CSINode | None, claim: PersistentVolumeClaim
) -> tuple[str, str]:
    """`getCSIDriverInfoFromSC`: the class's provisioner, with a handle unique to the claim."""
    class_name = claim_class(claim)
    storage_class = index.classes.get(class_name) if class_name else None
    if storage_class is None:
        return "", ""
    handle = f"{_UNBOUND_PREFIX}-{claim.metadata.namespace}/{claim.metadata.name}"
    provisioner = storage_class.provisioner
    if provisioner in CSI_DRIVER_OF:
        if not is_csi_migration_on(csi_node, provisioner):
            return "", ""
        return CSI_DRIVER_OF[provisioner], handle
    return provisioner, handle


def attachable_volumes(
    index: VolumeIndex, pod: Pod, csi_node: CSINode | None, new_pod: bool, into: dict[str, str]
) -> None:
    """`filterAttachableVolumes`: add `driver/handle` → driver for each volume the pod attaches.

    For the pod being scheduled a missing claim raises `_Lookup`; other pods' are skipped.
    """
    namespace = pod.metadata.namespace or "default"
    for volume in pod.spec.volumes:
        if volume.persistent_volume_claim is not None:
            claim_name = volume.claim_name or ""
            ephemeral = False
        elif volume.ephemeral is not None:
            claim_name = f"{pod.metadata.name}-{volume.name}"
            ephemeral = True
        else:
            inline = _inline_source(volume)
            if inline is not None and is_csi_migration_on(csi_node, inline[0]):
                plugin, source = inline
                driver = CSI_DRIVER_OF[plugin]
                into[f"{driver}/{_handle(plugin, source)}"] = driver
            continue
        if not claim_name:
            raise _Lookup(Status(Code.ERROR, ("PersistentVolumeClaim had no name",)))
        claim = index.claim(namespace, claim_name)
        if claim is None:
            if new_pod:
                message = f"looking up PVC {namespace}/{claim_name}: {not_found('PersistentVolumeClaim', claim_name)}"
                raise _Lookup(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,)))
            continue
        if ephemeral and not claim_is_for_pod(claim, pod):
            raise _Lookup(Status(Code.ERROR, (ephemeral_owner_error(claim, pod),)))
        driver, handle = _claim_driver(index, csi_node, claim)
        if driver and handle:
            into[f"{driver}/{handle}"] = driver


class _Same:
    """A key part that is one object (hashed and compared by identity): a memo of the volume index
    it was computed from is not used with a newer index."""

    __slots__ = ("obj",)

    def __init__(self, obj: object) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.obj is self.obj


Attached = tuple[dict[str, str], dict[str, int]] | Status | None  # (unique → driver, count per driver)


def _attached_on(index: VolumeIndex, table: NodeTable, idx: np.ndarray) -> np.ndarray:
    """Per node of `idx`, the volumes its pods attach and their count per driver (None: no CSINode;
    a Status: a pod's claim that fails the lookup)."""
    column = np.empty(len(idx), dtype=object)
    for k, i in enumerate(idx.tolist()):
        csi_node = index.csi_nodes.get(table.names[i])
        if csi_node is None:
            column[k] = None
            continue
        attached: dict[str, str] = {}
        try:
            for other in table.pods[i]:
                if other.has_plugin_volumes:
                    attachable_volumes(index, other.pod, csi_node, False, attached)
        except _Lookup as failure:
            column[k] = failure.status
            continue
        counts: dict[str, int] = {}
        for driver in attached.values():
            counts[driver] = counts.get(driver, 0) + 1
        column[k] = (attached, counts)
    return column


def _attached_count(entry: Attached, driver: str) -> int:
    return entry[1].get(driver, 0) if isinstance(entry, tuple) else 0


class _NodeFacts:
    """Per-node columns from each node's CSINode (and what it has attached), kept as memos: a node
    without a CSINode has no limits (None, False, -1)."""

    def __init__(self, table: NodeTable, index: VolumeIndex, attached: np.ndarray) -> None:
        self.table, self.index, self.attached = table, index, attached

    def _column(self, key: object, value: Callable[[CSINode, int], Any], missing: Any, dtype: Any) -> np.ndarray:
        table, index = self.table, self.index

        def compute(idx: np.ndarray) -> np.ndarray:
            column = np.empty(len(idx), dtype=dtype) if dtype is object else np.zeros(len(idx), dtype=dtype)
            for k, i in enumerate(idx.tolist()):
                csi = index.csi_nodes.get(table.names[i])
                column[k] = missing if csi is None else value(csi, i)
            return column

        return table.memo(("csi-node-facts", key, _Same(index)), compute)

    def objects(self, key: object, value: Callable[[CSINode, int], Any]) -> np.ndarray:
        return self._column(key, value, None, object)

    def flags(self, key: object, value: Callable[[CSINode, int], bool]) -> np.ndarray:
        return self._column(key, value, False, bool)

    def numbers(self, key: object, value: Callable[[CSINode, int], int]) -> np.ndarray:
        return self._column(key, value, -1, np.int64)


class _Verdicts:
    """Codes and reasons per node, set a column (or a node) at a time."""

    def __init__(self, n: int) -> None:
        self.codes = np.zeros(n, dtype=np.int8)
        self.reasons: dict[str, np.ndarray] = {}
        self.n = n

    def reject(self, where: np.ndarray, status: Status) -> None:
        if not where.any():
            return
        self.codes[where] = np.int8(status.code)
        for reason in status.reasons:
            self.reasons.setdefault(reason, np.zeros(self.n, dtype=bool))[where] = True

    def reject_one(self, i: int, status: Status) -> None:
        where = np.zeros(self.n, dtype=bool)
        where[i] = True
        self.reject(where, status)

    def done(self) -> NodeVerdicts:
        return NodeVerdicts(self.codes, list(self.reasons.items()))


class NodeVolumeLimits:
    name = NAME

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> tuple[PreFilterResult | None, Status]:
        for volume in pod.pod.spec.volumes:
            if volume.persistent_volume_claim is not None or volume.ephemeral is not None:
                return None, SUCCESS
            if is_inline_migratable(volume):
                return None, SUCCESS
        return None, SKIP

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> NodeVerdicts:
        index = table.volumes
        codes = np.zeros(table.n, dtype=np.int8)
        failed = self._lookup_only(index, pod)  # the same on every node, with or without a CSINode
        if failed is not None:
            codes[:] = np.int8(failed.code)
            return NodeVerdicts(codes, [(reason, np.ones(table.n, dtype=bool)) for reason in failed.reasons])
        # The pod's own volumes depend on the node only through its CSINode's migrated plugins: they
        # are gathered once per such group of nodes. What each node has attached, per driver, and
        # its limits are kept across cycles (`NodeTable.memo`), recounted where pods changed; the
        # verdicts are then column arithmetic (CSILimits.Filter: a node over a driver's limit fails).
        attached = table.memo(("attached-volumes", _Same(index)), lambda idx: _attached_on(index, table, idx))
        memo = _NodeFacts(table, index, attached)
        migrated = memo.objects(
            "migrated", lambda csi, i: csi.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION, "")
        )
        has_limits = memo.flags("has-limits", lambda csi, i: bool(csi.limits()))
        failed = memo.flags("failed", lambda csi, i: isinstance(attached[i], Status))
        verdicts = _Verdicts(table.n)
        for key in sorted({m for m in migrated.tolist() if m is not None}):
            group = migrated == key
            first = int(np.flatnonzero(group)[0])
            wanted = self._new_volumes(index, pod, index.csi_nodes[table.names[first]])
            if isinstance(wanted, Status):
                verdicts.reject(group, wanted)
                continue
            if not wanted:
                continue
            limited = group & has_limits
            for i in np.flatnonzero(limited & failed).tolist():
                verdicts.reject_one(i, attached[i])
            fits = limited & ~failed
            exceeded = np.zeros(table.n, dtype=bool)
            for driver in sorted(set(wanted.values())):
                uniques = [u for u, d in wanted.items() if d == driver]
                limit = memo.numbers(("limit", driver), lambda csi, i, d=driver: csi.limits().get(d, -1))
                count = memo.numbers(("count", driver), lambda csi, i, d=driver: _attached_count(attached[i], d))
                already = np.zeros(table.n, dtype=np.int64)
                for i in np.flatnonzero(fits & (count > 0)).tolist():
                    on_node = attached[i][0]
                    already[i] = sum(1 for u in uniques if u in on_node)
                exceeded |= fits & (limit >= 0) & (count + len(uniques) - already > limit)
            verdicts.reject(exceeded, Status(Code.UNSCHEDULABLE, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,)))
        return verdicts.done()

    @staticmethod
    def _lookup_only(index: VolumeIndex, pod: PodInfo) -> Status | None:
        try:
            attachable_volumes(index, pod.pod, None, True, {})
        except _Lookup as failure:
            return failure.status
        return None

    @staticmethod
    def _new_volumes(index: VolumeIndex, pod: PodInfo, csi_node: CSINode) -> dict[str, str] | Status:
        """The volumes the pod attaches on a node with this CSINode (or the lookup's failure)."""
        new: dict[str, str] = {}
        try:
            attachable_volumes(index, pod.pod, csi_node, True, new)
        except _Lookup as failure:
            return failure.status
        return new


def new(args: dict[str, Any], handle: object) -> NodeVolumeLimits:
    return NodeVolumeLimits()
