"""What the scheduler writes to ResourceClaims, as DynamicResources writes them through the API.

During a cycle scheduler_core changes the claims only in its assume cache (`table.dra`): Reserve
signals the allocation in flight, PreBind (`bindClaim`) adds the delete-protection finalizer, the
allocation and the pod to `status.reservedFor`. Before the pod is bound these land in the store —
the finalizer by an update of the claim, then the status by an update of its status subresource
(pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go bindClaim) — and PostFilter's
deallocation of a claim that kept a pod from every node likewise (`deallocate`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scheduler_core.api.resource import ResourceClaim
from scheduler_core.dra.claims import ClaimError, claim_name
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.plugins.dynamic_resources import FINALIZER

from .. import scheduler_cache, store
from ..models import Cluster
from ..validation import prune

__all__ = ["deallocate", "write_claims_of"]

_COMPONENT = "default-scheduler"  # the claims' writer, as the scheduler's own client names it
Obj = dict[str, Any]


def _status_of(claim: ResourceClaim) -> Obj:
    """The claim's status as the API server writes it (omitempty: no empty apiGroup, no empty list)."""
    return prune(claim.status.to_dict())


def _claims_of(info: PodInfo) -> Iterable[str]:
    """The names of the claims the pod uses (those not created yet are left out)."""
    for pod_claim in info.pod.spec.resource_claims:
        try:
            name, _ = claim_name(info.pod, pod_claim)
        except ClaimError:
            continue
        if name is not None:
            yield name


def write_claims_of(cluster: Cluster, cache: scheduler_cache.SchedulerCache, infos: Iterable[PodInfo]) -> None:
    """Store what PreBind did to the claims of the pods about to be bound (each claim once)."""
    table = cache.table()
    stored = cache.entries.get("ResourceClaim", {})
    seen: set[tuple[str, str]] = set()
    for info in infos:
        for name in _claims_of(info):
            key = (info.namespace, name)
            if key in seen:
                continue
            seen.add(key)
            claim = table.dra.claim(*key)
            entry = stored.get(key)
            if claim is None or entry is None:
                continue
            _write(cluster, entry.body, claim)


def _write(cluster: Cluster, body: Obj, claim: ResourceClaim) -> None:
    namespace, name = body["metadata"].get("namespace", "default"), body["metadata"]["name"]
    finalizers = (claim.metadata.model_extra or {}).get("finalizers") or []
    try:
        if FINALIZER in finalizers and FINALIZER not in body["metadata"].get("finalizers", []):

            def protect(obj: Obj) -> None:
                obj["metadata"]["finalizers"] = [*obj["metadata"].get("finalizers", []), FINALIZER]

            store.patch(cluster, "ResourceClaim", namespace, name, protect, _COMPONENT)
        status = _status_of(claim)
        if status != {k: v for k, v in (body.get("status") or {}).items() if k in ("allocation", "reservedFor")}:

            def allocate(obj: Obj) -> None:
                kept = {k: v for k, v in (obj.get("status") or {}).items() if k not in ("allocation", "reservedFor")}
                obj["status"] = {**kept, **status}

            store.patch(cluster, "ResourceClaim", namespace, name, allocate, _COMPONENT)
    except store.NotFound:
        return  # deleted meanwhile: the pod's next cycle finds it missing


def deallocate(cluster: Cluster, claim: ResourceClaim) -> None:
    """PostFilter: the claim's allocation and reservations cleared (its status updated)."""

    def clear(obj: Obj) -> None:
        status = obj.setdefault("status", {})
        status.pop("allocation", None)
        status.pop("reservedFor", None)

    try:
        store.patch(
            cluster, "ResourceClaim", claim.metadata.namespace or "default", claim.metadata.name, clear, _COMPONENT
        )
    except store.NotFound:
        return
