"""What every workload controller shares: owner references, the pods a controller owns, pod
readiness as the controllers read it (pkg/api/v1/pod IsPodReady), and creating a pod through
admission like any API client."""

from __future__ import annotations

from typing import Any

from .. import scheduler_cache, store
from ..admission import admission_context
from ..admission_plugins import admit_new
from ..kube_events import record_event
from ..models import Cluster
from ..validation import admit

Obj = dict[str, Any]


def owner_ref(body: Obj) -> Obj:
    """A controller ownerReference to `body`."""
    meta = body["metadata"]
    return {
        "apiVersion": body.get("apiVersion", "apps/v1"),
        "kind": body["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controller_of(body: Obj) -> Obj | None:
    """The ownerReference of the object's controller (`controller: true`), if it has one."""
    return next((ref for ref in body["metadata"].get("ownerReferences") or [] if ref.get("controller")), None)


def owned_by(body: Obj, uid: str) -> bool:
    return any(ref.get("uid") == uid and ref.get("controller") for ref in body["metadata"].get("ownerReferences", []))


def owned_pods(cluster: Cluster, owner: Obj) -> list[Obj]:
    """The pods `owner` controls, terminating ones included."""
    uid = owner["metadata"]["uid"]
    rows = scheduler_cache.listed(cluster, "Pod", owner["metadata"].get("namespace", ""))
    return [row.body for row in rows if owned_by(row.body, uid)]


def is_terminating(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def is_finished(pod: Obj) -> bool:
    return pod.get("status", {}).get("phase") in ("Succeeded", "Failed")


def is_ready(pod: Obj) -> bool:
    """IsPodReady: the Ready condition is True (a Running pod that is not Ready is not)."""
    return any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in pod.get("status", {}).get("conditions", [])
    )


def is_running_and_ready(pod: Obj) -> bool:
    return pod.get("status", {}).get("phase") == "Running" and is_ready(pod)


def admitted_pod(
    cluster: Cluster,
    owner: Obj,
    body: Obj,
    controller: str,
    context: Any = None,
    ranges: list[Obj] | None = None,
    alongside: list[Obj] | tuple[Obj, ...] = (),
) -> Obj | None:
    """A controller's new pod as the API server admits it (validation, defaults, priority, then
    LimitRanger, ServiceAccount); None when admission forbids it — the controller's `FailedCreate` event says why,
    as kube-controller-manager's does (`Error creating: pods "web-…" is forbidden: …`)."""
    admitted = admit(body, controller, None, *(context or admission_context(cluster)))
    try:
        return admit_new(cluster, admitted, ranges, alongside)
    except store.Forbidden as refused:  # LimitRanger, ServiceAccount
        record_event(cluster, owner, "Warning", "FailedCreate", f"Error creating: {refused}", controller)
        return None


def create_pod(
    cluster: Cluster, owner: Obj, pod: Obj, component: str, controller: str, message: str = "Created pod: {name}"
) -> Obj | None:
    """Admit and store a pod the controller built; records the controller's SuccessfulCreate event
    (None, and a FailedCreate event, when admission forbids it)."""
    body = admitted_pod(cluster, owner, {"apiVersion": "v1", "kind": "Pod", **pod}, controller)
    if body is None:
        return None
    created = store.create(cluster, body, component)
    name = created["metadata"]["name"]
    record_event(cluster, owner, "Normal", "SuccessfulCreate", message.format(name=name), controller)
    return created


def set_status(cluster: Cluster, owner: Obj, status: Obj, component: str) -> bool:
    """Write `status` (the keys given; others kept) when it differs; True if something was written."""
    current = owner.get("status", {})
    if all(current.get(k) == v for k, v in status.items()):
        return False

    def update(body: Obj) -> None:
        merged = {**body.get("status", {}), **status}
        body["status"] = {k: v for k, v in merged.items() if v is not None}

    store.patch(
        cluster, owner["kind"], owner["metadata"].get("namespace", ""), owner["metadata"]["name"], update, component
    )
    return True
