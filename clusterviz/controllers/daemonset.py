"""The DaemonSet controller (pkg/controller/daemon/daemon_controller.go), one action per step.

For every node the controller decides, as upstream's `NodeShouldRunDaemonPod` does, whether a
daemon pod should run there and whether an existing one may keep running: the pod template (with
the DaemonSet tolerations added) must name the node if it names one, match its required node
affinity / nodeSelector, and tolerate its NoSchedule/NoExecute taints (an untolerated NoSchedule
taint only stops new pods). Each pod is created for one node through a `matchFields`
`metadata.name` node affinity (pkg/controller/daemon/util/daemonset_util.go), so it goes through
the scheduler, which shows every other node failing NodeAffinity. A node the DaemonSet skips gets one
`NodeNotEligible` event on the DaemonSet saying why (clusterviz's teaching aid: upstream is silent).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from scheduler_core.api.objects import Node, Pod
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.plugins.helper import COMPARISON_OPERATORS_GATE, find_untolerated_taint
from scheduler_core.plugins.node_affinity import ERR_REASON_POD, required_node_affinity
from scheduler_core.plugins.taint_toleration import untolerated_taint_reason

from .. import profiles, scheduler_cache
from ..kube_events import event_name, record_event
from ..models import Cluster
from ..services import delete_object
from .history import sync_history
from .owners import create_pod, is_finished, is_ready, is_terminating, owned_pods, owner_ref, set_status
from .replicaset import template_hash

COMPONENT = "daemonset-controller"
REVISION_LABEL = "controller-revision-hash"
GENERATION_LABEL = "pod-template-generation"
SKIPPED_REASON = "NodeNotEligible"
Obj = dict[str, Any]

# pkg/controller/daemon/util/daemonset_util.go AddOrUpdateDaemonPodTolerations, in its order
DAEMON_TOLERATIONS: tuple[Obj, ...] = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)
HOST_NETWORK_TOLERATION: Obj = {
    "key": "node.kubernetes.io/network-unavailable",
    "operator": "Exists",
    "effect": "NoSchedule",
}


@dataclass(frozen=True)
class Placement:
    """NodeShouldRunDaemonPod's answer for one node, and why not."""

    should_run: bool
    should_continue: bool
    reason: str = ""


def daemon_tolerations(spec: Obj) -> list[Obj]:
    """The template's tolerations plus the DaemonSet ones (daemonset_util.go AddOrUpdateDaemonPodTolerations)."""
    wanted = list(DAEMON_TOLERATIONS)
    if spec.get("hostNetwork"):
        wanted.append(HOST_NETWORK_TOLERATION)
    tolerations = [dict(t) for t in spec.get("tolerations", [])]
    for toleration in wanted:
        # AddOrUpdateTolerationInPodSpec: one that MatchToleration()s (key, operator, value, effect) is replaced
        same = [i for i, t in enumerate(tolerations) if _matches(t, toleration)]
        if same:
            tolerations[same[0]] = dict(toleration)
        else:
            tolerations.append(dict(toleration))
    return tolerations


def _matches(one: Obj, other: Obj) -> bool:
    fields = ("key", "operator", "value", "effect")
    return all((one.get(f) or "") == (other.get(f) or "") for f in fields)


def node_affinity_for(affinity: Obj | None, node: str) -> Obj:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required terms become one `matchFields` term."""
    affinity = copy.deepcopy(affinity or {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}
    return affinity


def template_pod(ds: Obj) -> PodInfo:
    """The pod the controller checks nodes against (NewPod: the template with the daemon tolerations)."""
    spec = copy.deepcopy(ds["spec"]["template"].get("spec", {}))
    spec["tolerations"] = daemon_tolerations(spec)
    meta = {"name": ds["metadata"]["name"], "namespace": ds["metadata"].get("namespace", "default")}
    return PodInfo.of(Pod.model_validate({"metadata": meta, "spec": spec}))


def placement(pod: PodInfo, node: Node, comparison_operators: bool = False) -> Placement:
    """NodeShouldRunDaemonPod / predicates: node name, required node affinity, taints (`Lt`/`Gt`
    tolerations compare only with TaintTolerationComparisonOperators, which the controller-manager
    reads at the cluster's release as the scheduler does)."""
    wanted_node = pod.pod.spec.node_name
    if wanted_node and wanted_node != node.metadata.name:
        return Placement(False, False, "node(s) didn't match the requested node name")
    if not required_node_affinity(pod).matches(node.metadata.name, node.metadata.labels):
        return Placement(False, False, ERR_REASON_POD)
    taint = find_untolerated_taint(node.spec.taints, pod.tolerations, comparison_operators=comparison_operators)
    if taint is not None:
        # pods already there keep running unless a NoExecute taint is untolerated
        evicting = find_untolerated_taint(node.spec.taints, pod.tolerations, ("NoExecute",), comparison_operators)
        return Placement(False, evicting is None, untolerated_taint_reason(taint.key, taint.value))
    return Placement(True, True)


def target_node(pod: Obj) -> str:
    """GetTargetNodeName: spec.nodeName, else the node of the `matchFields` affinity."""
    spec = pod.get("spec", {})
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = (
        spec.get("affinity", {}).get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", {})
    )
    for term in required.get("nodeSelectorTerms", []):
        for field in term.get("matchFields", []):
            if (
                field.get("key") == "metadata.name"
                and field.get("operator") == "In"
                and len(field.get("values", [])) == 1
            ):
                return str(field["values"][0])
    return ""


def _new_pod(ds: Obj, node: str, revision: str) -> Obj:
    template = copy.deepcopy(ds["spec"]["template"])
    meta = template.get("metadata", {})
    meta.pop("name", None)
    labels = {**meta.get("labels", {}), REVISION_LABEL: revision}
    labels[GENERATION_LABEL] = str(ds["metadata"].get("generation", 1))
    spec = template.get("spec", {})
    spec["tolerations"] = daemon_tolerations(spec)
    spec["affinity"] = node_affinity_for(spec.get("affinity"), node)
    return {
        "metadata": {
            **meta,
            "labels": labels,
            "generateName": f"{ds['metadata']['name']}-",
            "namespace": ds["metadata"].get("namespace", "default"),
            "ownerReferences": [owner_ref(ds)],
        },
        "spec": spec,
    }


def _recorded_events(cluster: Cluster, ds: Obj) -> set[str]:
    """The names of the events already recorded about this DaemonSet (`<name>.<digest>`)."""
    namespace = ds["metadata"].get("namespace", "default")
    prefix = f"{ds['metadata']['name']}."
    return {row.name for row in scheduler_cache.listed(cluster, "Event", namespace) if row.name.startswith(prefix)}


def _skip_event(cluster: Cluster, ds: Obj, node: str, reason: str, recorded: set[str]) -> bool:
    """One event per DaemonSet, node and reason (True if it was written now)."""
    message = f"{node}: {reason}"
    if event_name(ds, SKIPPED_REASON, message, COMPONENT) in recorded:
        return False
    record_event(cluster, ds, "Normal", SKIPPED_REASON, message, COMPONENT)
    return True


def _delete(cluster: Cluster, ds: Obj, pod: Obj) -> None:
    delete_object(cluster, "Pod", pod["metadata"]["namespace"], pod["metadata"]["name"], COMPONENT)
    record_event(cluster, ds, "Normal", "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}", COMPONENT)


def sync_daemon_sets(cluster: Cluster) -> bool:
    """One action for the first DaemonSet that needs one; False when all are in their wanted state."""
    rows = scheduler_cache.listed(cluster, "DaemonSet")
    if not rows:
        return False
    nodes = [
        Node.model_validate(row.body)
        for row in sorted(scheduler_cache.listed(cluster, "Node"), key=lambda row: row.name)
    ]
    comparisons = profiles.version_of(cluster).gates.enabled(COMPARISON_OPERATORS_GATE)
    live = [row.body for row in rows if not row.body["metadata"].get("deletionTimestamp")]
    return any(_sync_one(cluster, ds, nodes, comparisons) for ds in live)


def _sync_one(cluster: Cluster, ds: Obj, nodes: list[Node], comparison_operators: bool) -> bool:
    pod_info = template_pod(ds)
    revision = template_hash(ds["spec"]["template"])
    by_node: dict[str, list[Obj]] = {}
    for pod in owned_pods(cluster, ds):
        # a terminating pod still holds its node until it is gone (getNodesToDaemonPods)
        if not is_finished(pod):
            by_node.setdefault(target_node(pod), []).append(pod)
    in_use = {p["metadata"].get("labels", {}).get(REVISION_LABEL, "") for pods in by_node.values() for p in pods}
    if sync_history(cluster, ds, revision, in_use, COMPONENT):
        return True
    node_names = {node.metadata.name for node in nodes}
    for name, pods in by_node.items():
        stale = [p for p in pods if not p["spec"].get("nodeName") and not is_terminating(p)]
        if name not in node_names and stale:
            _delete(cluster, ds, stale[0])  # a pod for a node that is gone (never bound)
            return True
    desired = current = misscheduled = ready = updated = 0
    recorded: set[str] | None = None
    for node in nodes:
        name = node.metadata.name
        where = placement(pod_info, node, comparison_operators)
        pods = [p for p in by_node.get(name, []) if not is_terminating(p)]
        if by_node.get(name) and not pods:
            continue  # wait for the terminating pod to go
        if where.should_run:
            desired += 1
            if not pods:
                if create_pod(cluster, ds, _new_pod(ds, name, revision), COMPONENT, COMPONENT) is not None:
                    return True
                continue  # forbidden by admission (a FailedCreate event): the next node
            if len(pods) > 1:
                _delete(cluster, ds, pods[-1])
                return True
            current += 1
            ready += is_ready(pods[0])
            updated += pods[0]["metadata"].get("labels", {}).get(REVISION_LABEL) == revision
        elif pods:
            if not where.should_continue:
                _delete(cluster, ds, pods[0])
                return True
            misscheduled += 1
        if not where.should_run and where.reason:
            recorded = _recorded_events(cluster, ds) if recorded is None else recorded
            if _skip_event(cluster, ds, name, where.reason, recorded):
                return True
    if _roll(cluster, ds, by_node, revision, ready, desired):
        return True
    status = {
        "currentNumberScheduled": current,
        "numberMisscheduled": misscheduled,
        "desiredNumberScheduled": desired,
        "numberReady": ready,
        "observedGeneration": ds["metadata"].get("generation", 1),
        "updatedNumberScheduled": updated,
        "numberAvailable": ready,
        "numberUnavailable": (desired - ready) or None,
    }
    return set_status(cluster, ds, status, COMPONENT)


def _roll(cluster: Cluster, ds: Obj, by_node: dict[str, list[Obj]], revision: str, ready: int, desired: int) -> bool:
    """RollingUpdate with maxUnavailable 1 (the default): replace one old pod while all others are ready."""
    strategy = ds["spec"].get("updateStrategy", {})
    if strategy.get("type", "RollingUpdate") != "RollingUpdate" or ready < desired:
        return False
    pods = [pod for node_pods in by_node.values() for pod in node_pods]
    if any(is_terminating(pod) for pod in pods):
        return False  # one at a time
    for pod in pods:
        if pod["metadata"].get("labels", {}).get(REVISION_LABEL) != revision:
            _delete(cluster, ds, pod)
            return True
    return False
