"""Watch streams (`?watch=true`): one JSON document per line, `{"type": ADDED|MODIFIED|DELETED, "object": …}`.

The stream joins the cluster's channel-layer group first (so changes made by any server process
arrive), then sends either the current objects as synthetic ADDED events (no resourceVersion, or
"0") or every change after the given resourceVersion from the store's watch log, then live changes.
A resourceVersion older than the log answers a 410 Expired ERROR event, as a real server does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.db import transaction

from .. import store
from ..models import Cluster, KubeObject
from ..publish import group_name
from .status import status_body

__all__ = ["stream"]

Obj = dict[str, Any]
Prepare = Callable[[list[Obj]], list[Obj]]  # presents stored bodies (sync; may read the database)

HEARTBEAT_SECONDS = 2.0  # an idle watch re-reads the log this often (a lost layer message costs no more)


def _json_line(event_type: str, obj: Obj) -> bytes:
    return (json.dumps({"type": event_type, "object": obj}, separators=(",", ":")) + "\n").encode()


def _current(cluster: Cluster, kind: str, namespace: str | None) -> tuple[list[Obj], int]:
    """The objects of a kind and the resourceVersion they were read at (in one transaction)."""
    with transaction.atomic():
        rv = Cluster.objects.filter(pk=cluster.pk).values_list("resource_version", flat=True).get()
        rows = KubeObject.objects.filter(cluster=cluster, kind=kind)
        if namespace is not None:
            rows = rows.filter(namespace=namespace)
        return [row.body for row in rows.order_by("namespace", "id")], int(rv)


def _changes_since(cluster: Cluster, kind: str, since: int) -> list[tuple[str, int, Obj]] | Obj:
    """The changes of a kind after `since`, or the Status of the ERROR event when the watch log cannot
    serve them: pruned (410 Expired) or `since` ahead of the cluster (504 Timeout, as the watch cache
    answers: staging/src/k8s.io/apiserver/pkg/storage/errors.go NewTooLargeResourceVersionError)."""
    try:
        changes = store.changes_since(cluster, since, kind=kind)
    except store.LogGap as gap:
        if gap.too_large:
            cause = {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
            message = f"Too large resource version: {since}, current: {gap.current}"
            body = status_body(504, "Timeout", message, {"causes": [cause], "retryAfterSeconds": 1})
        else:  # the watch cache's getAllEventsSinceLocked: "too old resource version: %d (%d)"
            oldest = store.oldest_logged(cluster)
            floor = oldest - 1 if oldest is not None else gap.current
            body = status_body(410, "Expired", f"too old resource version: {since} ({floor})")
        body.pop("metadata")
        return body
    return [(change.type, int(change.resource_version), change.body) for change in changes]


async def stream(
    cluster: Cluster,
    kind: str,
    namespace: str | None,
    since: int | None,
    prepare: Prepare,
    matches: Callable[[Obj], bool],
    encode: Callable[[Obj], Obj],
    timeout_seconds: float | None = None,
    frame: Callable[[str, Obj], bytes] | None = None,
) -> AsyncIterator[bytes]:
    """The watch of one kind (in `namespace`, or all): presented, filtered, encoded events, each a
    JSON line or what `frame` makes of it (a protobuf watch's length-delimited WatchEvent)."""
    _line = frame or _json_line
    layer = get_channel_layer()
    channel = await layer.new_channel() if layer is not None else None
    last = 0
    if layer is not None:
        await layer.group_add(group_name(cluster.pk), channel)
    deadline = time.monotonic() + timeout_seconds if timeout_seconds else None

    async def emit(event_type: str, bodies: list[Obj]) -> list[bytes]:
        objects = await sync_to_async(prepare)(bodies)
        return [_line(event_type, encode(obj)) for obj in objects if matches(obj)]

    try:
        # An empty first chunk sends the response headers now: a real API server answers a watch at once,
        # and kubectl's delete wait cannot stop its informer while the request is still waiting for them.
        yield b""
        if since is None or since == 0:
            bodies, last = await sync_to_async(_current)(cluster, kind, namespace)
            for line in await emit("ADDED", bodies):
                yield line
        else:
            backlog = await sync_to_async(_changes_since)(cluster, kind, since)
            if isinstance(backlog, dict):
                yield _line("ERROR", backlog)
                return
            last = since
            for event_type, rv, body in backlog:
                last = rv
                if _in_namespace(body, namespace):
                    for line in await emit(event_type, [body]):
                        yield line
        # Live: every message of the cluster's group (or a heartbeat) means "read the watch log from
        # the last version sent". The log, not the message, is what is sent: no gap or reordering
        # when the channel layer drops, reorders or loses messages (a restarted Redis), and a watch
        # keeps going without a channel layer at all.
        failures = 0
        while True:
            wait = HEARTBEAT_SECONDS
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
                if wait <= 0:
                    return
            if layer is None:
                await asyncio.sleep(wait)
            else:
                try:
                    if failures:
                        await layer.group_add(group_name(cluster.pk), channel)
                    await asyncio.wait_for(layer.receive(channel), timeout=wait)
                    failures = 0
                except TimeoutError:
                    pass
                except asyncio.CancelledError:
                    raise
                except Exception:  # the channel layer is gone for now: poll the log meanwhile
                    failures += 1
                    await asyncio.sleep(min(wait, 0.5))
            backlog = await sync_to_async(_changes_since)(cluster, kind, last)
            if isinstance(backlog, dict):
                yield _line("ERROR", backlog)
                return
            for event_type, rv, body in backlog:
                last = rv
                if _in_namespace(body, namespace):
                    for line in await emit(event_type, [body]):
                        yield line
    finally:
        if layer is not None:
            with contextlib.suppress(Exception):
                await layer.group_discard(group_name(cluster.pk), channel)


def _in_namespace(body: Obj, namespace: str | None) -> bool:
    return namespace is None or body.get("metadata", {}).get("namespace", "") == namespace
