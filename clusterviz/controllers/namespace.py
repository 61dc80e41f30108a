"""The namespace controller: a deleted namespace (phase Terminating) has its objects deleted — pods
gracefully, through the kubelet — and is removed once empty (pkg/controller/namespace)."""

from __future__ import annotations

from ..models import Cluster, KubeObject

__all__ = ["step"]

COMPONENT = "namespace-controller"
# owners first, so that their dependents go with them
ORDER = ("Deployment", "ReplicaSet", "Pod", "Event")


def step(cluster: Cluster) -> bool:
    """One action for a terminating namespace: delete one of its objects, or the namespace itself."""
    from .. import services, store

    for row in KubeObject.objects.filter(cluster=cluster, kind="Namespace"):
        if not row.body["metadata"].get("deletionTimestamp"):
            continue
        contents = KubeObject.objects.filter(cluster=cluster, namespace=row.name)
        for kind in ORDER:
            for item in contents.filter(kind=kind).order_by("id"):
                if kind == "Pod" and item.body["metadata"].get("deletionTimestamp"):
                    continue  # the kubelet is terminating it
                services.delete_object(cluster, kind, row.name, item.name, COMPONENT)
                return True
        other = contents.exclude(kind__in=ORDER).order_by("id").first()
        if other is not None:
            store.delete(cluster, other.kind, row.name, other.name, COMPONENT)
            return True
        if contents.exists():
            continue  # pods the kubelet is still terminating
        store.delete(cluster, "Namespace", "", row.name, COMPONENT)
        return True
    return False
