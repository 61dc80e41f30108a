"""The NoExecute taint manager (pkg/controller/tainteviction): evicts pods that do not tolerate a
node's NoExecute taints — at once, or `tolerationSeconds` after the taint was added."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from scheduler_core.api.objects import Taint, Toleration
from scheduler_core.plugins.helper import COMPARISON_OPERATORS_GATE

from .. import profiles, scheduler_cache, store
from ..kube_events import record_event
from ..models import Cluster
from ..publish import publish
from ..scheduler_cache import Entry

COMPONENT = "taint-eviction-controller"
_announced: set[tuple[int, str, float]] = set()


def _epoch(stamp: str | None, default: float) -> float:
    if not stamp:
        return default
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return default


def eviction_time(
    taints: list[dict[str, Any]],
    tolerations: list[Toleration],
    now: float,
    since: float | None = None,
    comparison_operators: bool = False,
) -> float | None:
    """When a pod must go: now (an untolerated taint), later (tolerationSeconds), or never (None).

    As tainteviction's processPodOnNode: per NoExecute taint the *first* toleration that tolerates
    it is used (v1helper.GetMatchingTolerations); the smallest tolerationSeconds among those counts
    (getMinTolerationTime: <= 0 means now, none means forever), from when the controller first saw
    the pod on the tainted node — the later of the earliest taint's timeAdded and `since` (when
    the pod arrived on the node). `Lt`/`Gt` tolerations compare only with the cluster release's
    TaintTolerationComparisonOperators (`comparison_operators`).
    """
    no_execute = [Taint.model_validate(raw) for raw in taints if raw.get("effect") == "NoExecute"]
    if not no_execute:
        return None
    used: list[Toleration] = []
    for taint in no_execute:
        match = next((t for t in tolerations if t.tolerates(taint, comparison_operators)), None)
        if match is None:
            return now
        used.append(match)
    bounded = [t.toleration_seconds for t in used if t.toleration_seconds is not None]
    if not bounded:
        return None
    seconds = min(bounded)
    if seconds <= 0:
        return now
    added = [_epoch(raw.get("timeAdded"), now) for raw in taints if raw.get("effect") == "NoExecute"]
    start = max(min(added), since if since is not None else 0.0)
    return start + seconds


def _no_execute_taints(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The node's NoExecute taints; one without timeAdded (written in YAML) dates from the node's creation."""
    created = node["metadata"].get("creationTimestamp")
    return [
        {**t, "timeAdded": t.get("timeAdded") or created}
        for t in node.get("spec", {}).get("taints", [])
        if t.get("effect") == "NoExecute"
    ]


def _arrival(body: dict[str, Any], now: float) -> float:
    """When the pod landed on its node: its bind (PodScheduled True), else its creation."""
    for condition in body.get("status", {}).get("conditions", []):
        if condition.get("type") == "PodScheduled" and condition.get("status") == "True":
            return _epoch(condition.get("lastTransitionTime"), now)
    return _epoch(body["metadata"].get("creationTimestamp"), now)


def _scheduled(cluster: Cluster, now: float) -> list[tuple[Entry, float]]:
    """Every pod on a NoExecute-tainted node that does not tolerate it for ever, with when it is due."""
    tainted = {
        row.name: _no_execute_taints(row.body)
        for row in scheduler_cache.listed(cluster, "Node")
        if any(t.get("effect") == "NoExecute" for t in row.body.get("spec", {}).get("taints", []))
    }
    if not tainted:
        return []
    comparisons = profiles.version_of(cluster).gates.enabled(COMPARISON_OPERATORS_GATE)
    scheduled = []
    for row in scheduler_cache.listed(cluster, "Pod"):
        if row.node_name not in tainted:
            continue
        body = row.body
        if body["metadata"].get("deletionTimestamp"):
            continue
        tolerations = [Toleration.model_validate(t) for t in body["spec"].get("tolerations", [])]
        due = eviction_time(tainted[row.node_name], tolerations, now, _arrival(body, now), comparisons)
        if due is not None:
            scheduled.append((row, due))
    return scheduled


def _announcement(row: Entry, due: float, now: float) -> dict[str, Any]:
    """The stream's `eviction.scheduled`: which pod leaves which node, and in how many seconds."""
    return {
        "type": "eviction.scheduled",
        "pod": f"{row.namespace}/{row.name}",
        "node": row.node_name,
        "deadline": due,
        "seconds": round(due - now, 1),
    }


def pending_evictions(cluster: Cluster, now: float | None = None) -> list[dict[str, Any]]:
    """The evictions still to come, as announcements: what a browser that connects late is told."""
    now = time.time() if now is None else now
    return [_announcement(row, due, now) for row, due in _scheduled(cluster, now) if due > now]


def step(cluster: Cluster, now: float | None = None) -> tuple[bool, float | None]:
    """Evict one pod that is due; returns (did something, the next deadline)."""
    now = time.time() if now is None else now
    next_wake: float | None = None
    for row, due in _scheduled(cluster, now):
        if due <= now:
            _evict(cluster, row)
            return True, None
        key = (cluster.pk, row.body["metadata"]["uid"], due)
        if key not in _announced:
            _announced.add(key)
            publish(cluster.pk, _announcement(row, due, now))
        next_wake = due if next_wake is None else min(next_wake, due)
    return False, next_wake


def _evict(cluster: Cluster, row: Entry) -> None:
    def mark(body: dict[str, Any]) -> None:
        body["metadata"]["deletionTimestamp"] = store.now_rfc3339()
        body["metadata"]["deletionGracePeriodSeconds"] = 30
        conditions = [c for c in body.setdefault("status", {}).get("conditions", []) if c["type"] != "DisruptionTarget"]
        conditions.append(
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "DeletionByTaintManager",
                "message": "Taint manager: deleting due to NoExecute taint",
                "lastTransitionTime": store.now_rfc3339(),
            }
        )
        body["status"]["conditions"] = conditions

    body = store.patch(cluster, "Pod", row.namespace, row.name, mark, COMPONENT)
    record_event(
        cluster,
        body,
        "Normal",
        "TaintManagerEviction",
        f"Marking for deletion Pod {row.namespace}/{row.name}",
        COMPONENT,
    )
