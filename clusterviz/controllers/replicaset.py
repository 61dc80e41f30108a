"""The controller manager's ReplicaSet controller, one action per step: a ReplicaSet keeps
`replicas` pods named `<replicaset>-<5 random characters>` (Deployments: deployment.py)."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from scheduler_core.api.objects import LabelSelector
from scheduler_core.framework.selectors import compile_label_selector

from .. import scheduler_cache, store
from ..admission import admission_context
from ..kube_events import event_body, record_event, record_events
from ..limit_ranges import limit_ranges_of
from ..models import Cluster
from ..services import delete_object
from .owners import admitted_pod, owned_by, owner_ref

COMPONENT = "replicaset-controller"
HASH_LABEL = "pod-template-hash"
_SAFE = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(template: dict[str, Any]) -> str:
    """A stable 10-character hash of the pod template (upstream: fnv32a + SafeEncodeString)."""
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).digest()
    return "".join(_SAFE[b % len(_SAFE)] for b in digest[:10])


def sync_replica_sets(cluster: Cluster, bulk: bool = False) -> bool:
    """One action: create or delete a ReplicaSet's pod, or update its status. With `bulk` (the
    instant pace), the missing pods are created as upstream's syncReplicaSet does, in slow-start
    batches in one step."""
    replica_sets = scheduler_cache.listed(cluster, "ReplicaSet")
    if not replica_sets:  # a dump of nodes and pods: nothing to read
        return False
    pods = [row.body for row in scheduler_cache.listed(cluster, "Pod")]
    for row in replica_sets:
        rs = row.body
        meta, spec = rs["metadata"], rs["spec"]
        owned = [p for p in pods if owned_by(p, meta["uid"]) and not p["metadata"].get("deletionTimestamp")]
        wanted = int(spec.get("replicas", 1))
        if len(owned) < wanted:
            created = create_pods_slow_start(cluster, rs, wanted - len(owned)) if bulk else _create_pod(cluster, rs)
            if created:
                return True
            continue  # admission forbids its pods (FailedCreate): the next ReplicaSet
        if len(owned) > wanted:
            victim = min(owned, key=_deletion_rank)
            # an API delete: a bound pod turns Terminating (its kubelet stops it), a pending one goes at once
            delete_object(cluster, "Pod", victim["metadata"]["namespace"], victim["metadata"]["name"], COMPONENT)
            record_event(
                cluster,
                rs,
                "Normal",
                "SuccessfulDelete",
                f"Deleted pod: {victim['metadata']['name']}",
                "replicaset-controller",
            )
            return True
        running = [p for p in owned if p.get("status", {}).get("phase") == "Running"]
        status = {
            "replicas": len(owned),
            "fullyLabeledReplicas": len(owned),
            "readyReplicas": len(running),
            "availableReplicas": len(running),
            "observedGeneration": meta.get("generation", 1),
        }
        if {k: rs.get("status", {}).get(k) for k in status} != status:

            def update(body: dict[str, Any], status: dict[str, int] = status) -> None:
                body["status"] = status

            store.patch(cluster, "ReplicaSet", row.namespace, row.name, update, COMPONENT)
            return True
    return False


def _deletion_rank(pod: dict[str, Any]) -> tuple[int, int, str]:
    """Prefer deleting unscheduled, then pending, then the newest pods (controller.ActivePods order)."""
    scheduled = 1 if pod["spec"].get("nodeName") else 0
    running = 1 if pod.get("status", {}).get("phase") == "Running" else 0
    created = pod["metadata"].get("creationTimestamp", "")
    return (scheduled, running, "".join(chr(255 - ord(c)) for c in created))


# pkg/controller/replicaset/replica_set.go: BurstReplicas (at most this many creations per sync) and
# pkg/controller/controller_utils.go: SlowStartInitialBatchSize.
BURST_REPLICAS = 500
SLOW_START_INITIAL_BATCH_SIZE = 1


def slow_start_batches(count: int, initial: int = SLOW_START_INITIAL_BATCH_SIZE) -> list[int]:
    """The batch sizes upstream's slowStartBatch creates `count` objects in: 1, 2, 4, … (doubling,
    the last one what remains)."""
    sizes: list[int] = []
    remaining = count
    size = min(remaining, initial)
    while size > 0:
        sizes.append(size)
        remaining -= size
        size = min(2 * size, remaining)
    return sizes


def create_pods_slow_start(cluster: Cluster, rs: dict[str, Any], missing: int) -> int:
    """Create up to BURST_REPLICAS of the `missing` pods in slow-start batches, each batch one bulk
    write (pods, then their SuccessfulCreate events); returns how many were created. A batch that
    creates fewer than asked (a refused name) ends the sync, as upstream's skipped batches."""
    from ..store_bulk import create_many

    context = admission_context(cluster)
    ranges = limit_ranges_of(cluster, rs["metadata"]["namespace"])
    created_total = 0
    for size in slow_start_batches(min(missing, BURST_REPLICAS)):
        bodies: list[dict[str, Any]] = []
        for _ in range(size):  # one by one, as the API server admits them: a quota counts the batch so far
            body = admitted_pod(cluster, rs, _pod_body(rs), COMPONENT, context, ranges, bodies)
            if body is None:
                break
            bodies.append(body)
        if not bodies:
            break
        created = create_many(cluster, bodies, COMPONENT)
        events = [
            event_body(rs, "Normal", "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}", COMPONENT)
            for pod in created
        ]
        record_events(cluster, events, COMPONENT)
        created_total += len(created)
        if len(created) < size:
            break
    return created_total


def _pod_body(rs: dict[str, Any]) -> dict[str, Any]:
    """A new pod of the ReplicaSet's template (named by the store from `generateName`)."""
    template = copy.deepcopy(rs["spec"]["template"])
    meta = template.setdefault("metadata", {})
    meta.pop("name", None)
    meta["generateName"] = rs["metadata"]["name"] + "-"
    meta["namespace"] = rs["metadata"]["namespace"]
    meta["ownerReferences"] = [owner_ref(rs)]
    selector = compile_label_selector(LabelSelector.model_validate(rs["spec"]["selector"]))
    assert selector.matches(meta.get("labels", {}))
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": template["spec"]}


def _create_pod(cluster: Cluster, rs: dict[str, Any]) -> bool:
    # The API server admits pods created by controllers like any other (priority, defaults, LimitRanger).
    body = admitted_pod(cluster, rs, _pod_body(rs), COMPONENT)
    if body is None:
        return False
    created = store.create(cluster, body, COMPONENT)
    record_event(
        cluster,
        rs,
        "Normal",
        "SuccessfulCreate",
        f"Created pod: {created['metadata']['name']}",
        "replicaset-controller",
    )
    return True
