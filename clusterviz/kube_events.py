"""Kubernetes Events (core/v1), recorded and aggregated as the event recorder does: the same
reason and message about the same object bump `count` and `lastTimestamp` ("(x3 over 2m)")."""

from __future__ import annotations

import hashlib
from typing import Any

from scheduler_core.framework.diagnosis import truncate_event_message

from . import scheduler_cache, store
from .models import Cluster

__all__ = ["event_body", "record_event", "record_events"]


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
    body = event_body(involved, event_type, reason, message, component, host, related, action)
    namespace, name, now = body["metadata"]["namespace"], body["metadata"]["name"], body["lastTimestamp"]

    def bump(event: dict[str, Any]) -> None:
        event["count"] = int(event.get("count", 1)) + 1
        event["lastTimestamp"] = now

    def create() -> dict[str, Any]:
        return store.create(cluster, body, component)

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


def event_body(
    involved: dict[str, Any],
    event_type: str,
    reason: str,
    message: str,
    component: str,
    host: str = "",
    related: dict[str, Any] | None = None,
    action: str = "",
    now: str | None = None,
) -> dict[str, Any]:
    """A new Event (count 1) about `involved`, named as `record_event` names it."""
    meta = involved.get("metadata", {})
    namespace = meta.get("namespace") or "default"
    message = truncate_event_message(message)
    now = now or store.now_rfc3339()
    source: dict[str, str] = {"component": component}
    if host:
        source["host"] = host
    extra: dict[str, Any] = {}
    if related is not None:
        extra["related"] = _reference(related)
    if action:
        extra["action"] = action
    return {
        **extra,
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": event_name(involved, reason, message, component), "namespace": namespace},
        "involvedObject": {
            "apiVersion": involved.get("apiVersion", "v1"),
            "kind": involved.get("kind", ""),
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
    }


def record_events(cluster: Cluster, events: list[dict[str, Any]], component: str) -> None:
    """Record many Events (bodies from `event_body`) at once, as `record_event` each would: the new
    ones in one bulk write, a repeat (one the controller step's view already holds) bumped."""
    from .store_bulk import create_many

    new, repeats, seen = [], [], set()
    for body in events:
        meta = body["metadata"]
        key = (meta["namespace"], meta["name"])
        if key in seen or not scheduler_cache.known_absent(cluster, "Event", *key):
            repeats.append(body)
        else:
            seen.add(key)
            new.append(body)
    create_many(cluster, new, component)
    for body in repeats:
        involved = {"kind": body["involvedObject"]["kind"], "metadata": body["involvedObject"]}
        record_event(
            cluster,
            {**involved, "apiVersion": body["involvedObject"]["apiVersion"]},
            body["type"],
            body["reason"],
            body["message"],
            component,
            body["source"].get("host", ""),
        )


def _reference(obj: dict[str, Any]) -> dict[str, Any]:
    """An ObjectReference to `obj`."""
    meta = obj.get("metadata", {})
    ref = {"apiVersion": obj.get("apiVersion", "v1"), "kind": obj.get("kind", ""), "name": meta.get("name")}
    if meta.get("namespace"):
        ref["namespace"] = meta["namespace"]
    ref["uid"] = meta.get("uid")
    return ref
