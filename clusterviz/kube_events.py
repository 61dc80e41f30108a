"""Kubernetes Events (core/v1), recorded and aggregated as the event recorder does: the same
reason and message about the same object bump `count` and `lastTimestamp` ("(x3 over 2m)")."""

from __future__ import annotations

import hashlib
from typing import Any

from scheduler_core.framework.diagnosis import truncate_event_message

from . import scheduler_cache, store
from .models import Cluster

__all__ = ["record_event"]


def event_name(involved: dict[str, Any], reason: str, message: str, component: str) -> str:
    """The name of the Event that `record_event` writes (and bumps on a repeat)."""
    meta = involved.get("metadata", {})
    message = truncate_event_message(message)
    digest = hashlib.sha256(f"{meta.get('uid')}|{reason}|{message}|{component}".encode()).hexdigest()[:16]
    return f"{meta.get('name')}.{digest}"


def record_event(
    cluster: Cluster,
    involved: dict[str, Any],
    event_type: str,
    reason: str,
    message: str,
    component: str,
    host: str = "",
    related: dict[str, Any] | None = None,
    action: str = "",
) -> dict[str, Any]:
    """Record (or bump) an Event; `related` is the second object the event is about (as
    `Eventf(regarding, related, …)` records it: the preemptor of a Preempted victim)."""
    meta = involved.get("metadata", {})
    kind = involved.get("kind", "")
    namespace = meta.get("namespace") or "default"
    message = truncate_event_message(message)
    name = event_name(involved, reason, message, component)
    now = store.now_rfc3339()

    def bump(event: dict[str, Any]) -> None:
        event["count"] = int(event.get("count", 1)) + 1
        event["lastTimestamp"] = now

    def create() -> dict[str, Any]:
        source: dict[str, str] = {"component": component}
        if host:
            source["host"] = host
        extra: dict[str, Any] = {}
        if related is not None:
            extra["related"] = _reference(related)
        if action:
            extra["action"] = action
        return store.create(
            cluster,
            {
                **extra,
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "involvedObject": {
                    "apiVersion": involved.get("apiVersion", "v1"),
                    "kind": kind,
                    "name": meta.get("name"),
                    "namespace": namespace,
                    "uid": meta.get("uid"),
                },
                "reason": reason,
                "message": message,
                "source": source,
                "firstTimestamp": now,
                "lastTimestamp": now,
                "count": 1,
                "type": event_type,
                "reportingComponent": component,
                "reportingInstance": host or component,
            },
            component,
        )

    # A controller step knows which events exist (its pinned view of the cluster): a new one is
    # created straight away instead of after a failed bump. Either way, a miss falls back to the other.
    if scheduler_cache.known_absent(cluster, "Event", namespace, name):
        try:
            return create()
        except store.AlreadyExists:
            return store.patch(cluster, "Event", namespace, name, bump, component)
    try:
        return store.patch(cluster, "Event", namespace, name, bump, component)
    except store.NotFound:
        return create()


def _reference(obj: dict[str, Any]) -> dict[str, Any]:
    """An ObjectReference to `obj`."""
    meta = obj.get("metadata", {})
    ref = {"apiVersion": obj.get("apiVersion", "v1"), "kind": obj.get("kind", ""), "name": meta.get("name")}
    if meta.get("namespace"):
        ref["namespace"] = meta["namespace"]
    ref["uid"] = meta.get("uid")
    return ref
