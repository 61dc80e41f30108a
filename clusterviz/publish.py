"""Fan-out of changes and scheduling events: the channel layer for browsers (and other server
processes), plus in-process listeners that wake the control loops."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

__all__ = ["add_listener", "group_name", "publish", "publish_change", "remove_listener"]

log = logging.getLogger(__name__)
_listeners: list[Callable[[int, dict[str, Any]], None]] = []


def group_name(cluster_id: int) -> str:
    return f"cluster_{cluster_id}"


def add_listener(listener: Callable[[int, dict[str, Any]], None]) -> None:
    _listeners.append(listener)


def remove_listener(listener: Callable[[int, dict[str, Any]], None]) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def publish(cluster_id: int, message: dict[str, Any]) -> None:
    """Send one message to every client of the cluster (all processes) and local listeners."""
    for listener in list(_listeners):
        try:
            listener(cluster_id, message)
        except Exception:  # a listener must never break a write
            log.exception("change listener failed")
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(group_name(cluster_id), {"type": "cluster.message", "message": message})
    except Exception:
        log.exception("publishing to the channel layer failed")


def publish_change(cluster_id: int, change: dict[str, Any]) -> None:
    publish(cluster_id, {"type": "watch", **change, "path": watch_path(change)})


WATCHERS = {
    "Pod": ["scheduler", "kubelet", "controller-manager"],
    "Node": ["scheduler", "controller-manager"],
    "Deployment": ["controller-manager"],
    "ReplicaSet": ["controller-manager"],
}


def watch_path(change: dict[str, Any]) -> list[str]:
    """The List-Watch path a change took: writer → API server → etcd → API server → watchers."""
    writer = change.get("component") or "kubectl"
    if writer == "kube-apiserver":
        return ["kube-apiserver", "etcd", "kube-apiserver", *WATCHERS.get(change["kind"], [])]
    return [writer, "kube-apiserver", "etcd", "kube-apiserver", *WATCHERS.get(change["kind"], [])]
