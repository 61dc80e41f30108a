"""Fan-out of changes and scheduling events: the channel layer for browsers (and other server
processes), plus in-process listeners that wake the control loops."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

__all__ = [
    "INLINE_CYCLE_BYTES",
    "add_listener",
    "cycle_message",
    "group_name",
    "publish",
    "publish_change",
    "publish_changes",
    "publish_cycles",
    "remove_listener",
]

log = logging.getLogger(__name__)
_listeners: list[Callable[[int, dict[str, Any]], None]] = []
_failures = 0  # messages not sent to the channel layer since it last worked
_down_until = 0.0  # monotonic time before which a failed channel layer is not tried again
PUBLISH_TIMEOUT = 0.5  # a local Redis answers in about a millisecond
RETRY_AFTER = 1.0  # how long a failed channel layer is left alone before the next try


def group_name(cluster_id: int) -> str:
    return f"cluster_{cluster_id}"


def add_listener(listener: Callable[[int, dict[str, Any]], None]) -> None:
    _listeners.append(listener)


def remove_listener(listener: Callable[[int, dict[str, Any]], None]) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def publish(cluster_id: int, message: dict[str, Any], group: str | None = None, text: str | None = None) -> None:
    """Send one message to every client of the cluster (all processes) and local listeners; with
    `group`, to that group's clients only (e.g. the presenters'), and to no listener.

    The message is encoded to JSON here, once: every stream forwards that text as it is (a
    5,000-node cycle is not encoded again per client, nor copied per client by the channel layer).

    Never holds a write up for long: a channel layer that fails or does not answer within
    `PUBLISH_TIMEOUT` (a hung Redis would block for redis-py's 5 s socket timeout, on every write)
    is left alone for `RETRY_AFTER`, then probed again. What is not published is still in the
    watch log, where the streams find it (a gap, or their heartbeat). `text`: the message already
    encoded (`publish_changes` splices bodies the store encoded).
    """
    global _failures, _down_until
    for listener in list(_listeners) if group is None else ():
        try:
            listener(cluster_id, message)
        except Exception:  # a listener must never break a write
            log.exception("change listener failed")
    layer = get_channel_layer()
    if layer is None:
        return
    if _failures and time.monotonic() < _down_until:
        _failures += 1
        return
    envelope = {"type": "cluster.message", "message": _header(message), "text": text or json.dumps(message)}
    group = group or group_name(cluster_id)
    send_soon = getattr(layer, "send_soon", None)  # the in-process layer: no round trip to its loop
    if send_soon is not None and send_soon(group, envelope):
        return
    try:
        async_to_sync(_group_send)(layer, group, envelope)
    except Exception:
        _failures += 1
        _down_until = time.monotonic() + RETRY_AFTER
        if _failures == 1:  # an outage is logged once
            log.exception("publishing to the channel layer failed (clients will resync from the watch log)")
        return
    if _failures:
        log.warning("publishing to the channel layer works again, after %d messages not sent", _failures)
        _failures = 0


def _header(message: dict[str, Any]) -> dict[str, Any]:
    """What a receiver needs without decoding the text: the message's scalar fields (its type,
    resourceVersion, a step count…), not its objects or events."""
    return {
        key: value for key, value in message.items() if isinstance(value, str | int | float | bool) or value is None
    }


async def _group_send(layer: Any, group: str, message: dict[str, Any]) -> None:
    """One group send within `PUBLISH_TIMEOUT`. A connection error (not a timeout) is tried once more:
    after a Redis restart the first use of a pooled connection fails, and a fresh one works."""
    try:
        await asyncio.wait_for(layer.group_send(group, message), timeout=PUBLISH_TIMEOUT)
    except (TimeoutError, asyncio.CancelledError):
        raise
    except Exception:
        await asyncio.wait_for(layer.group_send(group, message), timeout=PUBLISH_TIMEOUT)


def publish_change(cluster_id: int, change: dict[str, Any]) -> None:
    publish(cluster_id, {"type": "watch", **change, "path": watch_path(change)})


BATCH_BYTES = 256 * 1024  # a `watch.batch` message carries changes up to about this much JSON


def watch_batches(
    messages: list[dict[str, Any]], texts: list[str], limit: int = 0
) -> Iterator[tuple[dict[str, Any], str]]:
    """Consecutive `watch` messages (and their JSON texts) grouped as `watch.batch` messages of about
    `limit` bytes (`BATCH_BYTES` by default): `{"type": "watch.batch", "from": first rv,
    "resourceVersion": last rv, "changes": [watch message…]}`; a message that comes alone, or is
    larger than that on its own, stays a plain `watch` message. Yields (message, text)."""
    limit = limit or BATCH_BYTES
    start, size = 0, 0
    for end in range(len(messages) + 1):
        if end < len(messages) and (end == start or size + len(texts[end]) <= limit):
            size += len(texts[end])
            continue
        if end - start == 1:
            yield messages[start], texts[start]
        elif end > start:
            batch = messages[start:end]
            first, last = batch[0]["resourceVersion"], batch[-1]["resourceVersion"]
            head = json.dumps({"type": "watch.batch", "from": first, "resourceVersion": last})
            message = {"type": "watch.batch", "from": first, "resourceVersion": last, "changes": batch}
            yield message, f'{head[:-1]}, "changes": [{", ".join(texts[start:end])}]}}'
        if end < len(messages):
            start, size = end, len(texts[end])


def publish_changes(cluster_id: int, changes: list[dict[str, Any]], bodies: list[str | None] | None = None) -> None:
    """Publish consecutive changes (a bulk write) as few messages (`watch_batches`), each change as a
    `watch` message would carry it. `bodies`: each change's object already encoded as JSON (or None),
    spliced in rather than encoded again."""
    messages: list[dict[str, Any]] = []
    texts: list[str] = []
    for k, change in enumerate(changes):
        message = {"type": "watch", **change, "path": watch_path(change)}
        body = bodies[k] if bodies is not None else None
        if body is None:
            text = json.dumps(message)
        else:
            rest = json.dumps({key: value for key, value in message.items() if key != "object"})
            text = f'{rest[:-1]}, "object": {body}}}'
        messages.append(message)
        texts.append(text)
    for message, text in watch_batches(messages, texts):
        publish(cluster_id, message, text=text)


CYCLES_PER_MESSAGE = 250  # summaries per `scheduler.cycles` message (about 0.3 kB each)


def publish_cycles(cluster_id: int, messages: list[dict[str, Any]]) -> None:
    """Publish the `scheduler.cycle` messages of a batch of cycles as few `scheduler.cycles` messages
    (`{"type": "scheduler.cycles", "cycles": [scheduler.cycle message…]}`): a 1,000-pod batch is 4
    messages on the channel layer, not 1,000 (whose per-channel capacity they would overflow)."""
    if len(messages) == 1:
        publish(cluster_id, messages[0])
        return
    for start in range(0, len(messages), CYCLES_PER_MESSAGE):
        publish(cluster_id, {"type": "scheduler.cycles", "cycles": messages[start : start + CYCLES_PER_MESSAGE]})


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


INLINE_CYCLE_BYTES = 64 * 1024  # a larger cycle streams as its summary; clients fetch it over HTTP


def cycle_message(summary: dict[str, Any], wire_events: list[dict[str, Any]]) -> dict[str, Any]:
    """The stream's `scheduler.cycle`: the summary with its compact events, or, when those are larger
    than INLINE_CYCLE_BYTES, the summary alone with `events: null` (`GET …/cycles/<n>` has them)."""
    size = len(json.dumps(wire_events))
    message = {"type": "scheduler.cycle", **summary, "path": ["kube-apiserver", "scheduler"]}
    if size <= INLINE_CYCLE_BYTES:
        return {**message, "events": wire_events}
    return {**message, "events": None, "eventsBytes": size}
