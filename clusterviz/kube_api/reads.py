"""Reads: the presented objects of a list or get, including what is synthesized rather than stored
(the built-in namespaces, the nodes' leases)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from .. import kubernetes_service, service_account, store
from ..admission import builtin_priority_classes
from ..models import Change, Cluster, KubeObject
from ..resource_quotas import with_status
from .present import node_addresses, present, synthetic_lease
from .resources import Resource
from .selectors import FieldSelector, LabelSelector
from .served import served_version
from .status import not_found

__all__ = ["BUILTIN_NAMESPACES", "get_object", "list_objects", "namespace_exists", "presenter"]

Obj = dict[str, Any]
BUILTIN_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


def presenter(cluster: Cluster, res: Resource) -> Any:
    """A function presenting stored bodies of `res` (node addresses are looked up once)."""
    addresses = node_addresses(cluster) if res.kind == "Node" else None
    kubelet = served_version(cluster).git_version if res.kind == "Node" else ""

    def prepare(bodies: list[Obj]) -> list[Obj]:
        if res.kind == "ResourceQuota":  # its status as the resourcequota controller keeps it
            bodies = [with_status(cluster, body) for body in bodies]
        return [present(res, body, addresses, kubelet) for body in bodies]

    return prepare


def _synthetic_namespaces(cluster: Cluster, stored: dict[str, Obj]) -> list[Obj]:
    used = set(KubeObject.objects.filter(cluster=cluster).exclude(namespace="").values_list("namespace", flat=True))
    created = cluster.created_rfc3339()
    out = []
    for name in sorted(set(BUILTIN_NAMESPACES) | used):
        if name not in stored:
            out.append(
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {
                        "name": name,
                        "uid": f"namespace-{cluster.pk}-{name}",
                        "resourceVersion": "1",
                        "creationTimestamp": created,
                        "labels": {"kubernetes.io/metadata.name": name},
                    },
                    "spec": {"finalizers": ["kubernetes"]},
                    "status": {"phase": "Active"},
                }
            )
    return out


def _default_service_accounts(cluster: Cluster, namespace: str | None, listed: list[Obj]) -> list[Obj]:
    """The `default` ServiceAccount the serviceaccount controller keeps in every namespace (or in
    `namespace`), where `listed` — the stored ones the request read — has none (computed, as the
    built-in namespaces are)."""
    own = {obj["metadata"].get("namespace") for obj in listed if obj["metadata"].get("name") == "default"}
    if namespace is None:
        names = [ns["metadata"]["name"] for ns in _namespaces(cluster)]
    else:
        names = [namespace] if namespace_exists(cluster, namespace) else []
    created = cluster.created_rfc3339()
    return [service_account.default_service_account(cluster, name, created) for name in names if name not in own]


KUBERNETES_KINDS = ("Service", "Endpoints", "EndpointSlice")


def _is_kubernetes(obj: Obj) -> bool:
    meta = obj["metadata"]
    return (meta.get("namespace"), meta.get("name")) == (kubernetes_service.NAMESPACE, kubernetes_service.NAME)


def _namespaces(cluster: Cluster) -> list[Obj]:
    stored = {body["metadata"]["name"]: body for body in store.list_objects(cluster, "Namespace")}
    return list(stored.values()) + _synthetic_namespaces(cluster, stored)


def _builtin(cluster: Cluster, kind: str, stored: dict[str, Obj]) -> list[Obj]:
    """The objects every cluster has without storing them: its namespaces and system PriorityClasses."""
    if kind == "Namespace":
        return _synthetic_namespaces(cluster, stored)
    if kind == "PriorityClass":
        created = cluster.created_rfc3339()
        return [pc for pc in builtin_priority_classes(created) if pc["metadata"]["name"] not in stored]
    return []


def namespace_exists(cluster: Cluster, name: str) -> bool:
    """A built-in namespace, a stored Namespace, or one that objects already live in (imports)."""
    return (
        name in BUILTIN_NAMESPACES
        or KubeObject.objects.filter(cluster=cluster, namespace=name).exists()
        or (KubeObject.objects.filter(cluster=cluster, kind="Namespace", name=name).exists())
    )


def _leases(cluster: Cluster, namespace: str | None) -> list[Obj]:
    if namespace not in (None, "kube-node-lease"):
        return []
    return [synthetic_lease(body) for body in store.list_objects(cluster, "Node")]


def _stored(cluster: Cluster, res: Resource, namespace: str | None, fields: FieldSelector) -> tuple[list[Obj], str]:
    rows = KubeObject.objects.filter(cluster=cluster, kind=res.kind)
    if namespace is not None and res.namespaced:
        rows = rows.filter(namespace=namespace)
    name = fields.required("metadata.name")
    if name is not None:
        rows = rows.filter(name=name)
    node = fields.required("spec.nodeName") if res.kind == "Pod" else None
    if node is not None:
        rows = rows.filter(node_name=node)
    order = ("namespace", "id") if res.kind == "Event" else ("namespace", "name")
    rv = Cluster.objects.filter(pk=cluster.pk).values_list("resource_version", flat=True).get()
    return [row.body for row in rows.order_by(*order)], str(rv)


def _stored_at(cluster: Cluster, res: Resource, namespace: str | None, at: int) -> list[Obj]:
    """The stored bodies of a kind as they were at resourceVersion `at`: today's, with every object
    changed since put back as the watch log last had it at `at` (absent if it was added since).
    Raises store.LogGap when the log cannot tell (pruned since, or the object's older body gone)."""
    current = int(Cluster.objects.filter(pk=cluster.pk).values_list("resource_version", flat=True).get())
    if not store.log_reaches_back_to(cluster, at, current):
        raise store.LogGap(at, current)
    rows = KubeObject.objects.filter(cluster=cluster, kind=res.kind)
    changes = Change.objects.filter(cluster=cluster, kind=res.kind, resource_version__gt=at)
    if namespace is not None and res.namespaced:
        rows, changes = rows.filter(namespace=namespace), changes.filter(namespace=namespace)
    bodies = {(row.namespace, row.name): row.body for row in rows}
    first: dict[tuple[str, str], str] = {}
    for change in changes.order_by("resource_version").only("namespace", "name", "type"):
        first.setdefault((change.namespace, change.name), change.type)
    for key, change_type in first.items():
        bodies.pop(key, None)
        if change_type == "ADDED":
            continue  # created after `at`
        before = (
            Change.objects.filter(
                cluster=cluster, kind=res.kind, namespace=key[0], name=key[1], resource_version__lte=at
            )
            .order_by("-resource_version")
            .first()
        )
        if before is None or before.type == "DELETED":
            raise store.LogGap(at, current)
        bodies[key] = before.body
    return list(bodies.values())


def list_objects(
    cluster: Cluster,
    res: Resource,
    namespace: str | None,
    labels: LabelSelector,
    fields: FieldSelector,
    at: int | None = None,
) -> tuple[list[Obj], str]:
    """The presented objects a list request selects, and the resourceVersion of the read (`at`: as
    the cluster was at that resourceVersion, for a continued list; store.LogGap if it cannot be told)."""
    with transaction.atomic():
        bodies, rv = _stored(cluster, res, namespace, fields)
        if at is not None and at < int(rv) and not res.synthetic and res.kind != "Lease":
            bodies, rv = _stored_at(cluster, res, namespace, at), str(at)
        if res.kind == "Lease":
            objects = _leases(cluster, namespace)
        elif res.synthetic:
            objects = []  # no Service is simulated
        else:
            objects = presenter(cluster, res)(bodies)
        if res.kind in ("Namespace", "PriorityClass"):
            stored = {obj["metadata"]["name"]: obj for obj in objects}
            builtin = _builtin(cluster, res.kind, stored)
            objects = sorted(objects + builtin, key=lambda o: o["metadata"]["name"])
        elif res.kind == "ServiceAccount":
            computed = _default_service_accounts(cluster, namespace, objects)
            objects = sorted(objects + computed, key=lambda o: (o["metadata"]["namespace"], o["metadata"]["name"]))
        elif res.kind in KUBERNETES_KINDS and namespace in (None, kubernetes_service.NAMESPACE):
            own = kubernetes_service.computed(cluster, res.kind)
            if own is not None and not any(_is_kubernetes(obj) for obj in objects):
                objects = sorted([*objects, own], key=lambda o: (o["metadata"]["namespace"], o["metadata"]["name"]))
    return [obj for obj in objects if labels.matches(obj) and fields.matches(obj)], rv


def get_object(cluster: Cluster, res: Resource, namespace: str | None, name: str) -> Obj:
    """The presented object (leases and built-in namespaces are synthesized)."""
    if res.kind == "Lease":
        if namespace != "kube-node-lease":
            raise not_found(res, name)
        try:
            return synthetic_lease(store.get(cluster, "Node", "", name))
        except store.NotFound:
            raise not_found(res, name) from None
    if res.synthetic:
        raise not_found(res, name)
    try:
        body = store.get(cluster, res.kind, namespace or "", name)
    except store.NotFound:
        if res.kind == "ServiceAccount" and name == "default" and namespace:
            for computed in _default_service_accounts(cluster, namespace, []):
                return computed
        if res.kind in KUBERNETES_KINDS and (namespace, name) == (
            kubernetes_service.NAMESPACE,
            kubernetes_service.NAME,
        ):
            own = kubernetes_service.computed(cluster, res.kind)
            if own is not None:
                return own
        for synthetic in _builtin(cluster, res.kind, {}):
            if synthetic["metadata"]["name"] == name:
                return synthetic
        raise not_found(res, name) from None
    return presenter(cluster, res)([body])[0]
