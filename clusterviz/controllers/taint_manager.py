"""The NoExecute taint manager (pkg/controller/tainteviction): evicts pods that do not tolerate a
node's NoExecute taints — at once, or `tolerationSeconds` after the taint was added."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from scheduler_core.api.objects import Taint, Toleration

from .. import store
from ..kube_events import record_event
from ..models import Cluster, KubeObject
from ..publish import publish

COMPONENT = "taint-eviction-controller"
_announced: set[tuple[int, str, float]] = set()


def _epoch(stamp: str | None, default: float) -> float:
    if not stamp:
        return default
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return default


def eviction_time(taints: list[dict[str, Any]], tolerations: list[Toleration], now: float) -> float | None:
    """When a pod must go: now (an untolerated taint), later (tolerationSeconds), or never (None)."""
    deadline: float | None = None
    for raw in taints:
        if raw.get("effect") != "NoExecute":
            continue
        taint = Taint.model_validate(raw)
        matching = [t for t in tolerations if t.effect in ("", "NoExecute") and t.tolerates(taint)]
        if not matching:
            return now
        bounded = [t.toleration_seconds for t in matching if t.toleration_seconds is not None]
        if len(bounded) < len(matching):
            continue  # some toleration has no limit: tolerated forever
        seconds = max(0, min(bounded))
        due = _epoch(raw.get("timeAdded"), now) + seconds
        deadline = due if deadline is None else min(deadline, due)
    return deadline


def step(cluster: Cluster, now: float | None = None) -> tuple[bool, float | None]:
    """Evict one pod that is due; returns (did something, the next deadline)."""
    now = time.time() if now is None else now
    tainted = {
        row.name: row.body["spec"]["taints"]
        for row in KubeObject.objects.filter(cluster=cluster, kind="Node")
        if any(t.get("effect") == "NoExecute" for t in row.body.get("spec", {}).get("taints", []))
    }
    next_wake: float | None = None
    if not tainted:
        return False, None
    for row in KubeObject.objects.filter(cluster=cluster, kind="Pod", node_name__in=list(tainted)):
        body = row.body
        if body["metadata"].get("deletionTimestamp"):
            continue
        tolerations = [Toleration.model_validate(t) for t in body["spec"].get("tolerations", [])]
        due = eviction_time(tainted[row.node_name], tolerations, now)
        if due is None:
            continue
        if due <= now:
            _evict(cluster, row)
            return True, None
        key = (cluster.pk, body["metadata"]["uid"], due)
        if key not in _announced:
            _announced.add(key)
            publish(
                cluster.pk,
                {
                    "type": "eviction.scheduled",
                    "pod": f"{row.namespace}/{row.name}",
                    "node": row.node_name,
                    "deadline": due,
                    "seconds": round(due - now, 1),
                },
            )
        next_wake = due if next_wake is None else min(next_wake, due)
    return False, next_wake


def _evict(cluster: Cluster, row: KubeObject) -> None:
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
