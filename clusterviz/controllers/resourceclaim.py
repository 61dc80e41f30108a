"""The resourceclaim controller (kube-controller-manager, pkg/controller/resourceclaim/controller.go
v1.34), one action per step.

- A pod (not being deleted) whose `spec.resourceClaims[]` names a `resourceClaimTemplateName` and
  has no claim yet gets one made from the template (`scheduler_core.dra.templates`: generateName
  `<pod>-<claim>-`, the pod as controlling owner, the `resource.kubernetes.io/pod-claim-name`
  annotation), then its `status.resourceClaimStatuses` records the names; a claim the controller
  made earlier (owned by the pod, annotated with the pod claim's name) is reused. A missing
  template is a `FailedResourceClaimCreation` warning on the pod.
- A bound pod whose claim is allocated but not reserved for it is added to `status.reservedFor`.
- A claim's `status.reservedFor` loses the pods that are gone, replaced or done (isPodDone: a
  terminal phase, or deleted while unscheduled); once none is left, the allocation is cleared and
  the delete-protection finalizer removed (a claim deleted meanwhile then goes: the finalizer kept
  it while it was in use). A claim made for a pod that is done or replaced is deleted; one whose pod
  is gone is deleted as the garbage collector deletes dependents.
"""

from __future__ import annotations

from typing import Any

from scheduler_core.api.resource import RESERVED_FOR_MAX_SIZE
from scheduler_core.dra.templates import POD_CLAIM_NAME_ANNOTATION, generate_name
from scheduler_core.plugins.dynamic_resources import FINALIZER

from .. import scheduler_cache, store
from ..kube_events import record_event
from ..models import Cluster

__all__ = ["sync_resource_claims"]

COMPONENT = "resource_claim"  # the controller's event source
Obj = dict[str, Any]


def _is_done(pod: Obj) -> bool:
    """isPodDone: none of its containers is running or ever will."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return True
    return bool(pod["metadata"].get("deletionTimestamp")) and not (pod.get("spec") or {}).get("nodeName")


def _owning_pod(claim: Obj) -> tuple[str, str]:
    for ref in claim["metadata"].get("ownerReferences") or []:
        if ref.get("controller") and ref.get("apiVersion") == "v1" and ref.get("kind") == "Pod":
            return str(ref.get("name", "")), str(ref.get("uid", ""))
    return "", ""


def _made_for(claims: dict[str, Obj], pod: Obj, pod_claim: str) -> Obj | None:
    """findPodResourceClaim: a claim owned by the pod and annotated with the pod claim's name."""
    uid = pod["metadata"].get("uid", "")
    for claim in claims.values():
        if _owning_pod(claim)[1] != uid:
            continue
        if (claim["metadata"].get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION) == pod_claim:
            return claim
    return None


def _new_claim(pod: Obj, pod_claim: str, template: Obj) -> Obj:
    meta = (template.get("spec") or {}).get("metadata") or {}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "generateName": generate_name(pod["metadata"]["name"], pod_claim),
            "namespace": pod["metadata"].get("namespace", "default"),
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": pod["metadata"]["name"],
                    "uid": pod["metadata"].get("uid", ""),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "annotations": {**(meta.get("annotations") or {}), POD_CLAIM_NAME_ANNOTATION: pod_claim},
            **({"labels": meta["labels"]} if meta.get("labels") else {}),
        },
        "spec": (template.get("spec") or {}).get("spec") or {},
    }


def _claim_name(pod: Obj, pod_claim: Obj) -> str | None:
    """resourceclaim.Name: the claim's name; "" when made from a template and not created yet."""
    if pod_claim.get("resourceClaimName"):
        return str(pod_claim["resourceClaimName"])
    if not pod_claim.get("resourceClaimTemplateName"):
        return None
    for status in (pod.get("status") or {}).get("resourceClaimStatuses") or []:
        if status.get("name") == pod_claim.get("name"):
            return status.get("resourceClaimName")  # None: no claim was needed
    return ""


def _template(cluster: Cluster, namespace: str, name: str) -> Obj | None:
    entries = scheduler_cache.listed(cluster, "ResourceClaimTemplate", namespace)
    return next((entry.body for entry in entries if entry.name == name), None)


def _sync_pod(cluster: Cluster, pod: Obj, claims: dict[str, Obj]) -> bool:
    """syncPod: claims made from templates, then the bound pod's reservations; True if it wrote."""
    namespace = pod["metadata"].get("namespace", "default")
    made: dict[str, str] = {}
    for pod_claim in pod["spec"]["resourceClaims"]:
        name = _claim_name(pod, pod_claim)
        template_name = pod_claim.get("resourceClaimTemplateName")
        if name is None or (name and name in claims) or not template_name:
            continue
        claim = _made_for(claims, pod, pod_claim["name"])
        if claim is None:
            template = _template(cluster, namespace, template_name)
            if template is None:
                message = (
                    f'PodResourceClaim {pod_claim["name"]}: resource claim template "{template_name}": '
                    f'resourceclaimtemplate.resource.k8s.io "{template_name}" not found'
                )
                record_event(cluster, pod, "Warning", "FailedResourceClaimCreation", message, COMPONENT)
                break  # syncPod stops at the first error (and is retried when something changes)
            claim = store.create(cluster, _new_claim(pod, pod_claim["name"], template), COMPONENT)
        made[pod_claim["name"]] = claim["metadata"]["name"]
    if made:

        def record(body: Obj) -> None:
            status = body.setdefault("status", {})
            kept = [s for s in status.get("resourceClaimStatuses") or [] if s.get("name") not in made]
            status["resourceClaimStatuses"] = [*kept, *({"name": k, "resourceClaimName": v} for k, v in made.items())]

        store.patch(cluster, "Pod", namespace, pod["metadata"]["name"], record, COMPONENT)
        return True
    if not pod["spec"].get("nodeName"):
        return False  # the scheduler deals with the reservations
    return _reserve_for_bound_pod(cluster, pod, claims)


def _reserve_for_bound_pod(cluster: Cluster, pod: Obj, claims: dict[str, Obj]) -> bool:
    """A bound pod's allocated claims that are not reserved for it yet (reserveForPod)."""
    uid = pod["metadata"].get("uid", "")
    for pod_claim in pod["spec"]["resourceClaims"]:
        claim = claims.get(_claim_name(pod, pod_claim) or "")
        if claim is None:
            continue
        status = claim.get("status") or {}
        reserved = status.get("reservedFor") or []
        if status.get("allocation") is None or any(r.get("uid") == uid for r in reserved):
            continue
        if len(reserved) >= RESERVED_FOR_MAX_SIZE:
            continue

        def reserve(body: Obj) -> None:
            entry = {"resource": "pods", "name": pod["metadata"]["name"], "uid": uid}
            body.setdefault("status", {})["reservedFor"] = [*(body["status"].get("reservedFor") or []), entry]

        meta = claim["metadata"]
        store.patch(cluster, "ResourceClaim", meta["namespace"], meta["name"], reserve, COMPONENT)
        return True
    return False


def _sync_claim(cluster: Cluster, claim: Obj, pods: dict[str, Obj]) -> bool:
    """syncClaim: stale reservations dropped (and the allocation with the last), unused pod claims removed."""
    namespace, name = claim["metadata"]["namespace"], claim["metadata"]["name"]
    reserved = (claim.get("status") or {}).get("reservedFor") or []
    valid = []
    for ref in reserved:
        pod = pods.get(ref.get("name", "")) if ref.get("resource") == "pods" and not ref.get("apiGroup") else None
        if pod is not None and pod["metadata"].get("uid") == ref.get("uid") and not _is_done(pod):
            valid.append(ref)
    protected = FINALIZER in (claim["metadata"].get("finalizers") or [])
    if len(valid) < len(reserved):

        def release(body: Obj) -> None:
            status = body.setdefault("status", {})
            status["reservedFor"] = valid
            if not valid:
                status.pop("reservedFor")
                if protected:
                    status.pop("allocation", None)  # deallocated as soon as the last consumer is gone

        claim = store.patch(cluster, "ResourceClaim", namespace, name, release, COMPONENT)
        if protected and (claim.get("status") or {}).get("allocation") is None:
            _drop_finalizer(cluster, namespace, name)
        return True
    if valid:
        return False
    if protected and claim["metadata"].get("deletionTimestamp"):
        # deleted while allocated and unused: the allocation goes, then the finalizer (and with it the claim)
        if (claim.get("status") or {}).get("allocation") is not None:

            def deallocate(body: Obj) -> None:
                body.setdefault("status", {}).pop("allocation", None)

            store.patch(cluster, "ResourceClaim", namespace, name, deallocate, COMPONENT)
        _drop_finalizer(cluster, namespace, name)
        return True
    pod_name, pod_uid = _owning_pod(claim)
    if not pod_name:
        return False
    pod = pods.get(pod_name)
    if pod is not None and pod["metadata"].get("uid") == pod_uid and not _is_done(pod):
        return False
    if protected and (claim.get("status") or {}).get("allocation") is not None:
        return False  # still allocated: released first (above) once its reservations go
    if protected:
        _drop_finalizer(cluster, namespace, name)
    # done or replaced: the controller deletes it; gone: the garbage collector does
    store.delete(cluster, "ResourceClaim", namespace, name, COMPONENT if pod is not None else "garbage-collector")
    return True


def _drop_finalizer(cluster: Cluster, namespace: str, name: str) -> None:
    def drop(body: Obj) -> None:
        body["metadata"]["finalizers"] = [f for f in body["metadata"].get("finalizers") or [] if f != FINALIZER]
        if not body["metadata"]["finalizers"]:
            del body["metadata"]["finalizers"]

    store.patch(cluster, "ResourceClaim", namespace, name, drop, COMPONENT)


def sync_resource_claims(cluster: Cluster, bulk: bool = False) -> bool:
    """One action: a pod's claims made or reserved, or one claim's reservations brought up to date;
    `bulk` (the instant pace): every pod and claim that needs one in one pass."""
    claims: dict[str, dict[str, Obj]] = {}
    for entry in scheduler_cache.listed(cluster, "ResourceClaim"):
        claims.setdefault(entry.namespace, {})[entry.name] = entry.body
    pods: dict[str, dict[str, Obj]] = {}
    acted = False
    for entry in scheduler_cache.listed(cluster, "Pod"):
        pods.setdefault(entry.namespace, {})[entry.name] = pod = entry.body
        if not (pod.get("spec") or {}).get("resourceClaims") or pod["metadata"].get("deletionTimestamp"):
            continue
        if _sync_pod(cluster, pod, claims.get(entry.namespace, {})):
            if not bulk:
                return True
            acted = True
    if acted:
        return True  # the claims it made are read again next step
    for namespace, named in claims.items():
        for claim in named.values():
            if _sync_claim(cluster, claim, pods.get(namespace, {})):
                if not bulk:
                    return True
                acted = True
    return acted
