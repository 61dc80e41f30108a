"""The PersistentVolume controller (pkg/controller/volume/persistentvolume pv_controller.go), one
write per step.

- syncUnboundClaim: a Pending claim without a volume whose class binds `Immediate` (or which names
  no class) takes the volume `FindMatchingVolume` picks — the one pre-bound to it, else the smallest
  Available volume of its class, modes, size, volume mode and selector (the scheduler's own check,
  `candidate_volumes`): first the volume's `claimRef` (bound-by-controller), then the claim's
  `volumeName` and bind-completed annotation, then the claim's status (Bound, the volume's
  capacity and access modes).
- syncVolume: a volume without a claim, or pre-bound to one that has not taken it, is `Available`;
  one its claim names in `spec.volumeName` is `Bound`; one whose bound claim is gone is `Released`.

A claim of a `WaitForFirstConsumer` class waits for its first pod: the scheduler's PreBind
(`bind_pod_volumes`, as BindPodVolumes) writes the claimRef of the volume VolumeBinding matched on
the pod's node, and the controller then binds the claim to that pre-bound volume. Provisioning is
not modelled.
"""

from __future__ import annotations

from typing import Any

from scheduler_core.api.storage import ANN_BIND_COMPLETED, PersistentVolume, PersistentVolumeClaim, StorageClass
from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.plugins.volume_binding import candidate_volumes, is_delay_binding, volumes_to_bind

from .. import scheduler_cache, store
from ..models import Cluster
from .owners import set_status

COMPONENT = "persistentvolume-binder-controller"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
Obj = dict[str, Any]


def volume_phase(volume: Obj, claims: dict[tuple[str, str], Obj]) -> str:
    """The phase syncVolume gives `volume`, with the cluster's claims by (namespace, name)."""
    ref = (volume.get("spec") or {}).get("claimRef")
    current = (volume.get("status") or {}).get("phase", "")
    if not isinstance(ref, dict) or not ref.get("name"):
        return "Available"
    claim = claims.get((ref.get("namespace") or "default", ref["name"]))
    if claim is None:
        return "Released" if current in ("Bound", "Released") and ref.get("uid") else "Available"
    if (claim.get("spec") or {}).get("volumeName") == volume["metadata"]["name"]:
        return "Bound"
    return "Available"  # pre-bound: waiting for its claim


def _annotate(body: Obj, *keys: str) -> None:
    annotations = body.setdefault("metadata", {}).setdefault("annotations", {})
    for key in keys:
        annotations[key] = "yes"


def _bind_step(
    cluster: Cluster,
    claim_row: scheduler_cache.Entry,
    volumes: list[PersistentVolume],
    classes: dict[str, StorageClass],
) -> bool:
    """The next write binding one unbound Immediate claim, if it has a volume to take."""
    body = claim_row.body
    claim = PersistentVolumeClaim.model_validate(body)
    if claim.spec.volume_name:
        return False
    prebound, ranked = candidate_volumes(claim, volumes)
    # a first-consumer claim takes only the volume the scheduler pre-bound to it (FindMatchingVolume
    # with delayBinding)
    delayed = is_delay_binding(claim, classes)
    volume = prebound if delayed else prebound or (ranked[0] if ranked else None)
    if volume is None:
        return False
    if volume.spec.claim_ref is None or not volume.spec.claim_ref.uid:
        return _take(cluster, volume.name, body, claim_row.resource_version, COMPONENT)

    def bind(pvc: Obj) -> None:
        pvc["spec"]["volumeName"] = volume.name
        _annotate(pvc, ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER)

    store.patch(cluster, "PersistentVolumeClaim", claim_row.namespace, claim_row.name, bind, COMPONENT)
    return True


def _take(cluster: Cluster, volume: str, claim: Obj, claim_rv: int, component: str) -> bool:
    """Set `volume`'s claimRef to `claim` (`bindVolumeToClaim`: bound-by-controller), unless another
    claim took it meanwhile; True when written."""
    meta = claim["metadata"]
    reference = {
        "kind": "PersistentVolumeClaim",
        "namespace": meta.get("namespace", "default"),
        "name": meta["name"],
        "uid": meta.get("uid", ""),
        "apiVersion": "v1",
        "resourceVersion": str(claim_rv),
    }
    taken = False

    def take(pv: Obj) -> None:
        nonlocal taken
        ref = pv["spec"].get("claimRef")
        if isinstance(ref, dict) and ref.get("uid") and ref.get("uid") != reference["uid"]:
            return  # another claim's
        pv["spec"]["claimRef"] = reference
        _annotate(pv, ANN_BOUND_BY_CONTROLLER)
        taken = True

    store.patch(cluster, "PersistentVolume", "", volume, take, component)
    return taken


def bind_pod_volumes(cluster: Cluster, state: CycleState | None, node: int, component: str) -> None:
    """The scheduler's PreBind for a bound pod (`BindPodVolumes`): each first-consumer claim's matched
    volume gets the claim as its claimRef; the controller's next steps bind the claim."""
    for claim, volume in volumes_to_bind(state, node):
        try:
            body = store.get(
                cluster, "PersistentVolumeClaim", claim.metadata.namespace or "default", claim.metadata.name
            )
        except store.NotFound:
            continue
        _take(cluster, volume.name, body, int(body["metadata"].get("resourceVersion") or 0), component)


def _claim_status_step(cluster: Cluster, claim: Obj, volumes: dict[str, Obj]) -> bool:
    """A bound claim's status: Bound, with its volume's capacity and access modes."""
    volume = volumes.get((claim.get("spec") or {}).get("volumeName", ""))
    if volume is None or ANN_BIND_COMPLETED not in (claim["metadata"].get("annotations") or {}):
        return False
    spec = volume.get("spec") or {}
    status = {"phase": "Bound", "accessModes": spec.get("accessModes") or [], "capacity": spec.get("capacity") or {}}
    return set_status(cluster, claim, status, COMPONENT)


def sync_volumes(cluster: Cluster) -> bool:
    """One write of the controller; False when every claim and volume is as it wants them."""
    volume_rows = scheduler_cache.listed(cluster, "PersistentVolume")
    claim_rows = scheduler_cache.listed(cluster, "PersistentVolumeClaim")
    if not volume_rows:
        return False
    by_name = {row.name: row.body for row in volume_rows}
    volumes = [PersistentVolume.model_validate(row.body) for row in volume_rows]
    classes = {
        row.name: StorageClass.model_validate(row.body) for row in scheduler_cache.listed(cluster, "StorageClass")
    }
    claims = {(row.namespace, row.name): row.body for row in claim_rows}
    for row in volume_rows:  # the volumes' phases first: a new volume is Available before claims look
        volume = row.body
        if volume["metadata"].get("deletionTimestamp"):
            continue
        phase = volume_phase(volume, claims)
        if phase != (volume.get("status") or {}).get("phase"):
            return set_status(cluster, volume, {"phase": phase}, COMPONENT)
    for row in claim_rows:
        if row.body["metadata"].get("deletionTimestamp"):
            continue
        if _claim_status_step(cluster, row.body, by_name) or _bind_step(cluster, row, volumes, classes):
            return True
    return False
