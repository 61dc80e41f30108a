"""The PersistentVolume controller's volume phases (pkg/controller/volume/persistentvolume
pv_controller.go syncVolume), one action per step: a volume without a claim, or pre-bound to one
that has not taken it yet, is `Available`; one its claim names in `spec.volumeName` is `Bound`; one
whose bound claim is gone is `Released`. Binding claims to volumes (and provisioning) is not modelled:
the claims stay as written, and VolumeBinding reads the volumes as they are.
"""

from __future__ import annotations

from typing import Any

from .. import scheduler_cache
from ..models import Cluster
from .owners import set_status

COMPONENT = "persistentvolume-binder-controller"
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


def sync_volumes(cluster: Cluster) -> bool:
    """Write the first volume whose phase is not the one syncVolume gives it; False when none."""
    volumes = scheduler_cache.listed(cluster, "PersistentVolume")
    if not volumes:
        return False
    claims = {(row.namespace, row.name): row.body for row in scheduler_cache.listed(cluster, "PersistentVolumeClaim")}
    for row in volumes:
        volume = row.body
        if volume["metadata"].get("deletionTimestamp"):
            continue
        phase = volume_phase(volume, claims)
        if phase != (volume.get("status") or {}).get("phase"):
            return set_status(cluster, volume, {"phase": phase}, COMPONENT)
    return False
