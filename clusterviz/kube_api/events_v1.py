"""events.k8s.io/v1 Events: the same stored Events in that group's shape, as kube-apiserver converts
them (pkg/apis/events/v1/conversion.go): involvedObject → regarding, message → note, source →
deprecatedSource, firstTimestamp/lastTimestamp/count → deprecatedFirstTimestamp/… , reportingComponent →
reportingController; eventTime, series, action, related and reportingInstance as they are."""

from __future__ import annotations

from typing import Any

__all__ = ["GROUP", "to_core", "to_events_v1"]

Obj = dict[str, Any]
GROUP = "events.k8s.io"
# core v1 field → events.k8s.io/v1 field
RENAMED = {
    "involvedObject": "regarding",
    "message": "note",
    "source": "deprecatedSource",
    "firstTimestamp": "deprecatedFirstTimestamp",
    "lastTimestamp": "deprecatedLastTimestamp",
    "count": "deprecatedCount",
    "reportingComponent": "reportingController",
}
KEPT = ("metadata", "reason", "type", "eventTime", "series", "action", "related", "reportingInstance")


def to_events_v1(core: Obj) -> Obj:
    out: Obj = {"apiVersion": f"{GROUP}/v1", "kind": "Event"}
    for key in KEPT:
        if key in core:
            out[key] = core[key]
    for old, new in RENAMED.items():
        if core.get(old) not in (None, "", {}):
            out[new] = core[old]
    out.setdefault("eventTime", None)  # a required field: null for an Event recorded the old way
    return out


def to_core(event: Obj) -> Obj:
    """Back to the core shape (what the Table's printer reads)."""
    out: Obj = {key: event[key] for key in (*KEPT, "apiVersion", "kind") if key in event}
    for old, new in RENAMED.items():
        if new in event:
            out[old] = event[new]
    return out
