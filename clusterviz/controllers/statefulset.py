"""The StatefulSet controller (pkg/controller/statefulset/stateful_set_control.go), one action per step.

Pods are `<set>-<ordinal>`. With `OrderedReady` (the default) ordinal i+1 is created only when
0..i are Running and Ready, scale-down removes the highest ordinal first and only while the others
are Running and Ready, and nothing proceeds while a pod is terminating; `Parallel` skips the waits.
Each `volumeClaimTemplates` entry gives every pod a PVC `<template>-<set>-<ordinal>`, created before
the pod and kept after it (the default Retain policy). A changed template rolls the pods from the
highest ordinal down (RollingUpdate with partition 0).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from .. import scheduler_cache, store
from ..admission import admission_context
from ..admission_plugins import admit_new
from ..kube_events import record_event
from ..models import Cluster
from ..services import delete_object
from ..validation import admit
from .history import sync_history
from .owners import (
    create_pod,
    is_finished,
    is_ready,
    is_running_and_ready,
    is_terminating,
    owned_pods,
    owner_ref,
    set_status,
)
from .replicaset import template_hash

COMPONENT = "statefulset-controller"
REVISION_LABEL = "controller-revision-hash"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
Obj = dict[str, Any]


def ordinal(set_name: str, pod_name: str) -> int | None:
    """getOrdinal: the number after `<set>-`, or None for a name that is not the set's."""
    match = re.fullmatch(re.escape(set_name) + r"-(0|[1-9][0-9]*)", pod_name)
    return int(match.group(1)) if match else None


def claim_name(template: Obj, set_name: str, index: int) -> str:
    return f"{template['metadata']['name']}-{set_name}-{index}"


def revision_name(sts: Obj) -> str:
    return f"{sts['metadata']['name']}-{template_hash(sts['spec']['template'])}"


def _new_pod(sts: Obj, index: int) -> Obj:
    """newVersionedStatefulSetPod: identity (name, hostname, subdomain, labels) and storage."""
    name = sts["metadata"]["name"]
    template = copy.deepcopy(sts["spec"]["template"])
    meta = template.get("metadata", {})
    pod_name = f"{name}-{index}"
    labels = {
        **meta.get("labels", {}),
        REVISION_LABEL: revision_name(sts),
        POD_NAME_LABEL: pod_name,
        POD_INDEX_LABEL: str(index),
    }
    spec = template.get("spec", {})
    spec["hostname"] = pod_name
    if sts["spec"].get("serviceName"):
        spec["subdomain"] = sts["spec"]["serviceName"]
    claims = sts["spec"].get("volumeClaimTemplates", [])
    if claims:
        names = {c["metadata"]["name"] for c in claims}
        volumes = [v for v in spec.get("volumes", []) if v.get("name") not in names]
        for claim in claims:
            source = {"claimName": claim_name(claim, name, index)}
            volumes.append({"name": claim["metadata"]["name"], "persistentVolumeClaim": source})
        spec["volumes"] = volumes
    return {
        "metadata": {
            **{k: v for k, v in meta.items() if k not in ("name", "generateName")},
            "name": pod_name,
            "labels": labels,
            "namespace": sts["metadata"].get("namespace", "default"),
            "ownerReferences": [owner_ref(sts)],
        },
        "spec": spec,
    }


def _create_claims(cluster: Cluster, sts: Obj, index: int) -> bool:
    """createPersistentVolumeClaims: the pod's missing claims (True if one was created)."""
    namespace = sts["metadata"].get("namespace", "default")
    set_name = sts["metadata"]["name"]
    selector_labels = sts["spec"].get("selector", {}).get("matchLabels", {})
    for template in sts["spec"].get("volumeClaimTemplates", []):
        name = claim_name(template, set_name, index)
        if (namespace, name) in scheduler_cache.view(cluster).entries.get("PersistentVolumeClaim", {}):
            continue
        claim = copy.deepcopy(template)
        claim.pop("status", None)
        claim["metadata"] = {
            "name": name,
            "namespace": namespace,
            "labels": {**template["metadata"].get("labels", {}), **selector_labels},
        }
        admitted = admit_new(cluster, admit(claim, COMPONENT, None, *admission_context(cluster)))  # a default class
        store.create(cluster, admitted, COMPONENT)
        message = f"create Claim {name} Pod {set_name}-{index} in StatefulSet {set_name} success"
        record_event(cluster, sts, "Normal", "SuccessfulCreate", message, COMPONENT)
        return True
    return False


def _delete(cluster: Cluster, sts: Obj, pod: Obj) -> None:
    delete_object(cluster, "Pod", pod["metadata"]["namespace"], pod["metadata"]["name"], COMPONENT)
    message = f"delete Pod {pod['metadata']['name']} in StatefulSet {sts['metadata']['name']} successful"
    record_event(cluster, sts, "Normal", "SuccessfulDelete", message, COMPONENT)


def sync_stateful_sets(cluster: Cluster) -> bool:
    """One action for the first StatefulSet that needs one."""
    for row in scheduler_cache.listed(cluster, "StatefulSet"):
        if not row.body["metadata"].get("deletionTimestamp") and _sync_one(cluster, row.body):
            return True
    return False


def _sync_one(cluster: Cluster, sts: Obj) -> bool:
    set_name = sts["metadata"]["name"]
    replicas = int(sts["spec"].get("replicas", 1))
    ordered = sts["spec"].get("podManagementPolicy", "OrderedReady") == "OrderedReady"
    update_revision = revision_name(sts)
    pods: dict[int, Obj] = {}
    for pod in owned_pods(cluster, sts):
        index = ordinal(set_name, pod["metadata"]["name"])
        if index is not None and is_finished(pod):
            _delete(cluster, sts, pod)  # a failed or succeeded pod is replaced under its name
            return True
        if index is not None:
            pods[index] = pod
    prefix = f"{set_name}-"
    in_use = {p["metadata"].get("labels", {}).get(REVISION_LABEL, "").removeprefix(prefix) for p in pods.values()}
    if sync_history(cluster, sts, template_hash(sts["spec"]["template"]), in_use, COMPONENT):
        return True
    if _manage(cluster, sts, pods, replicas, ordered, update_revision):
        return True
    live = [p for p in pods.values() if not is_terminating(p)]
    ready = sum(1 for p in live if is_ready(p))

    def at(revision: str) -> int:
        return sum(1 for p in live if p["metadata"].get("labels", {}).get(REVISION_LABEL) == revision)

    updated = at(update_revision)
    # the revision the set is rolling from, until every replica is updated and ready (completeRollingUpdate)
    current_revision = sts.get("status", {}).get("currentRevision") or update_revision
    if updated == replicas and ready == replicas == len(live):
        current_revision = update_revision
    status = {
        "observedGeneration": sts["metadata"].get("generation", 1),
        "replicas": len(live),
        "readyReplicas": ready,
        "currentReplicas": at(current_revision),
        "updatedReplicas": updated,
        "availableReplicas": ready,
        "currentRevision": current_revision,
        "updateRevision": update_revision,
        "collisionCount": 0,
    }
    return set_status(cluster, sts, status, COMPONENT)


def _manage(cluster: Cluster, sts: Obj, pods: dict[int, Obj], replicas: int, ordered: bool, revision: str) -> bool:
    """Create, then condemn, then roll — waiting on unhealthy pods when ordered (monotonic)."""
    set_name = sts["metadata"]["name"]
    for index in range(replicas):
        pod = pods.get(index)
        if pod is None:
            if _create_claims(cluster, sts, index):
                return True
            message = f"create Pod {{name}} in StatefulSet {set_name} successful"
            # forbidden by admission: a FailedCreate event, and nothing more this step
            return create_pod(cluster, sts, _new_pod(sts, index), COMPONENT, COMPONENT, message) is not None
        if ordered and (is_terminating(pod) or not is_running_and_ready(pod)):
            return False  # OrderedReady: wait for this pod before touching the next
    condemned = sorted((i for i in pods if i >= replicas), reverse=True)
    for index in condemned:
        pod = pods[index]
        if is_terminating(pod):
            if ordered:
                return False
            continue
        if ordered and not all(is_running_and_ready(pods[i]) for i in pods if i != index):
            return False
        _delete(cluster, sts, pod)
        return True
    strategy = sts["spec"].get("updateStrategy", {})
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return False
    partition = int(strategy.get("rollingUpdate", {}).get("partition", 0) or 0)
    for index in sorted(pods, reverse=True):
        pod = pods[index]
        if index < partition or is_terminating(pod):
            if is_terminating(pod):
                return False
            continue
        if pod["metadata"].get("labels", {}).get(REVISION_LABEL) != revision:
            if all(is_running_and_ready(p) for p in pods.values()):
                _delete(cluster, sts, pod)
                return True
            return False
    return False
