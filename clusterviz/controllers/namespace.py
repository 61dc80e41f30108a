"""The namespace controller: a deleted namespace (phase Terminating) has its objects deleted — pods
gracefully, through the kubelet — and is removed once empty (pkg/controller/namespace)."""

from __future__ import annotations

from .. import scheduler_cache
from ..models import Cluster

__all__ = ["step"]

COMPONENT = "namespace-controller"
# owners first, so that their dependents go with them
ORDER = ("Deployment", "ReplicaSet", "Pod", "Event")


def step(cluster: Cluster) -> bool:
    """One action for a terminating namespace: delete one of its objects, or the namespace itself."""
    from .. import services, store

    cache = scheduler_cache.view(cluster)
    for row in cache.listed("Namespace"):
        if not row.body["metadata"].get("deletionTimestamp"):
            continue
        contents = {kind: cache.listed(kind, row.name) for kind in sorted(cache.entries)}
        for kind in ORDER:
            for item in contents.get(kind, []):
                if kind == "Pod" and item.body["metadata"].get("deletionTimestamp"):
                    continue  # the kubelet is terminating it
                services.delete_object(cluster, kind, row.name, item.name, COMPONENT)
                return True
        others = [item for kind, items in contents.items() if kind not in ORDER for item in items]
        other = min(others, key=lambda item: item.created, default=None)
        if other is not None:
            store.delete(cluster, other.kind, row.name, other.name, COMPONENT)
            return True
        if any(contents.values()):
            continue  # pods the kubelet is still terminating
        store.delete(cluster, "Namespace", "", row.name, COMPONENT)
        return True
    return False
