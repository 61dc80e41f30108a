"""The controller manager's Deployment and ReplicaSet controllers, one action per step.

A Deployment owns a ReplicaSet `<name>-<pod-template-hash>`; a ReplicaSet keeps `replicas` pods
named `<replicaset>-<5 random characters>`. Older ReplicaSets of a Deployment are scaled to 0.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from scheduler_core.api.objects import LabelSelector
from scheduler_core.framework.selectors import compile_label_selector

from .. import store
from ..admission import admission_context
from ..kube_events import record_event
from ..models import Cluster, KubeObject
from ..services import delete_object
from ..validation import admit

COMPONENT = "controller-manager"
HASH_LABEL = "pod-template-hash"
_SAFE = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(template: dict[str, Any]) -> str:
    """A stable 10-character hash of the pod template (upstream: fnv32a + SafeEncodeString)."""
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).digest()
    return "".join(_SAFE[b % len(_SAFE)] for b in digest[:10])


def _owner(body: dict[str, Any]) -> dict[str, Any]:
    meta = body["metadata"]
    return {
        "apiVersion": body.get("apiVersion", "apps/v1"),
        "kind": body["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _owned_by(body: dict[str, Any], uid: str) -> bool:
    return any(ref.get("uid") == uid and ref.get("controller") for ref in body["metadata"].get("ownerReferences", []))


def sync_deployments(cluster: Cluster) -> bool:
    deployments = KubeObject.objects.filter(cluster=cluster, kind="Deployment")
    replica_sets = [row.body for row in KubeObject.objects.filter(cluster=cluster, kind="ReplicaSet")]
    for row in deployments:
        deployment = row.body
        meta, spec = deployment["metadata"], deployment["spec"]
        if meta.get("deletionTimestamp"):
            continue
        owned = [rs for rs in replica_sets if _owned_by(rs, meta["uid"])]
        pod_hash = template_hash(spec["template"])
        name = f"{meta['name']}-{pod_hash}"
        current = next((rs for rs in owned if rs["metadata"]["name"] == name), None)
        if current is None:
            template = copy.deepcopy(spec["template"])
            template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = pod_hash
            selector = copy.deepcopy(spec["selector"])
            selector.setdefault("matchLabels", {})[HASH_LABEL] = pod_hash
            store.create(
                cluster,
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "metadata": {
                        "name": name,
                        "namespace": row.namespace,
                        "labels": {**template["metadata"].get("labels", {})},
                        "ownerReferences": [_owner(deployment)],
                    },
                    "spec": {"replicas": spec.get("replicas", 1), "selector": selector, "template": template},
                },
                COMPONENT,
            )
            record_event(
                cluster,
                deployment,
                "Normal",
                "ScalingReplicaSet",
                f"Scaled up replica set {name} from 0 to {spec.get('replicas', 1)}",
                "deployment-controller",
            )
            return True
        for old in owned:
            if old is not current and old["spec"].get("replicas", 0) != 0:
                _scale(cluster, old, 0, deployment)
                return True
        if current["spec"].get("replicas") != spec.get("replicas", 1):
            _scale(cluster, current, spec.get("replicas", 1), deployment)
            return True
        if _sync_status(cluster, row, current):
            return True
    return False


def _scale(cluster: Cluster, rs: dict[str, Any], replicas: int, deployment: dict[str, Any]) -> None:
    before = rs["spec"].get("replicas", 0)

    def scale(body: dict[str, Any]) -> None:
        body["spec"]["replicas"] = replicas

    store.patch(cluster, "ReplicaSet", rs["metadata"]["namespace"], rs["metadata"]["name"], scale, COMPONENT)
    direction = "up" if replicas > before else "down"
    record_event(
        cluster,
        deployment,
        "Normal",
        "ScalingReplicaSet",
        f"Scaled {direction} replica set {rs['metadata']['name']} from {before} to {replicas}",
        "deployment-controller",
    )


def _sync_status(cluster: Cluster, row: KubeObject, rs: dict[str, Any]) -> bool:
    rs_status = rs.get("status", {})
    wanted = {
        "replicas": rs_status.get("replicas", 0),
        "updatedReplicas": rs_status.get("replicas", 0),
        "readyReplicas": rs_status.get("readyReplicas", 0),
        "availableReplicas": rs_status.get("availableReplicas", 0),
    }
    if {k: row.body.get("status", {}).get(k, 0) for k in wanted} == wanted:
        return False

    def update(body: dict[str, Any]) -> None:
        body.setdefault("status", {}).update(wanted)

    store.patch(cluster, "Deployment", row.namespace, row.name, update, COMPONENT)
    return True


def sync_replica_sets(cluster: Cluster) -> bool:
    replica_sets = list(KubeObject.objects.filter(cluster=cluster, kind="ReplicaSet"))
    if not replica_sets:  # a dump of nodes and pods: nothing to read
        return False
    pods = [row.body for row in KubeObject.objects.filter(cluster=cluster, kind="Pod")]
    for row in replica_sets:
        rs = row.body
        meta, spec = rs["metadata"], rs["spec"]
        owned = [p for p in pods if _owned_by(p, meta["uid"]) and not p["metadata"].get("deletionTimestamp")]
        wanted = int(spec.get("replicas", 1))
        if len(owned) < wanted:
            _create_pod(cluster, rs)
            return True
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
            "observedGeneration": 1,
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


def _create_pod(cluster: Cluster, rs: dict[str, Any]) -> None:
    template = copy.deepcopy(rs["spec"]["template"])
    meta = template.setdefault("metadata", {})
    meta.pop("name", None)
    meta["generateName"] = rs["metadata"]["name"] + "-"
    meta["namespace"] = rs["metadata"]["namespace"]
    meta["ownerReferences"] = [_owner(rs)]
    selector = compile_label_selector(LabelSelector.model_validate(rs["spec"]["selector"]))
    assert selector.matches(meta.get("labels", {}))
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": template["spec"]}
    # The API server admits pods created by controllers like any other (priority, defaults).
    created = store.create(cluster, admit(body, "replicaset", None, *admission_context(cluster)), COMPONENT)
    record_event(
        cluster,
        rs,
        "Normal",
        "SuccessfulCreate",
        f"Created pod: {created['metadata']['name']}",
        "replicaset-controller",
    )
