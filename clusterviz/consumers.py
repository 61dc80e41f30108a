"""The cluster stream: `ws/clusters/<slug>/`.

On connect the client gets a snapshot (or, with `?resourceVersion=N`, every change after N from
the watch log), then every change and every scheduling cycle as they happen. Actions sent on the
socket get a `result` or an `error` reply carrying the action's `id`.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.db import DataError

from scheduler_core.api.loading import InputError

from . import store
from .controllers.runner import ensure_runner
from .messages import Step, data_error_message, parse_action, perform
from .models import Change, Cluster
from .publish import group_name, publish, watch_path
from .services import state

log = logging.getLogger(__name__)
COMPONENT = "browser"


class ClusterConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    cluster: Cluster
    last_rv: int = 0

    async def connect(self) -> None:
        slug = self.scope["url_route"]["kwargs"]["slug"]
        cluster = await Cluster.objects.filter(slug=slug).afirst()
        if cluster is None:
            await self.close(code=4404)
            return
        self.cluster = cluster
        self.group = group_name(cluster.pk)
        await self.accept()
        # Join the group before reading, then skip what the backlog already covered: no gap, no duplicate.
        await self.channel_layer.group_add(self.group, self.channel_name)
        query = parse_qs(self.scope.get("query_string", b"").decode())
        since = query.get("resourceVersion", [""])[0]
        resumed = since.isdigit() and await self._resume(int(since))
        if not resumed:
            snapshot = await database_sync_to_async(state)(cluster)
            self.last_rv = int(snapshot["resourceVersion"])
            await self.send_json({"type": "snapshot", **snapshot})
        ensure_runner(cluster.pk)

    async def _resume(self, since: int) -> bool:
        changes = await database_sync_to_async(_changes_since)(self.cluster, since)
        if changes is None:
            return False
        await self.send_json({"type": "resumed", "from": str(since), "count": len(changes)})
        for change in changes:
            await self._send_watch({"type": "watch", **change})
        self.last_rv = max(self.last_rv, since)
        return True

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any) -> None:
        """A frame that is not JSON text gets an error reply; it must not take the connection down."""
        if text_data is None:
            await self._error(None, "Invalid", "action: expected a JSON text frame, got a binary one")
            return
        try:
            content = await self.decode_json(text_data)
        except json.JSONDecodeError as exc:
            await self._error(None, "Invalid", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")
            return
        await self.receive_json(content, **kwargs)

    async def _error(self, action_id: Any, reason: str, message: str) -> None:
        await self.send_json({"type": "error", "id": action_id, "reason": reason, "message": message})

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        action_id = content.get("id") if isinstance(content, dict) else None
        try:
            action = parse_action(content)
            result = await database_sync_to_async(perform)(self.cluster, action, COMPONENT)
            if isinstance(action, Step):
                await database_sync_to_async(publish)(self.cluster.pk, {"type": "control.step", "steps": action.steps})
            elif getattr(action, "action", "") == "pace":
                await self.cluster.arefresh_from_db()
                await database_sync_to_async(publish)(
                    self.cluster.pk, {"type": "cluster.updated", "cluster": self.cluster.to_dict()}
                )
        except (InputError, store.StoreError) as exc:
            await self._error(action_id, _reason(exc), str(exc))
            return
        except DataError as exc:  # e.g. a NUL character, which PostgreSQL cannot store in JSON
            await self._error(action_id, "Invalid", data_error_message(exc))
            return
        except Exception:
            log.exception("action failed")
            await self._error(action_id, "InternalError", "the action failed on the server; nothing was changed")
            return
        await self.send_json({"type": "result", "id": action_id, **result})
        ensure_runner(self.cluster.pk)

    async def cluster_message(self, event: dict[str, Any]) -> None:
        message = event["message"]
        if message.get("type") == "watch":
            await self._send_watch(message)
        elif message.get("type") != "control.step":
            await self.send_json(message)

    async def _send_watch(self, message: dict[str, Any]) -> None:
        rv = int(message.get("resourceVersion", 0))
        if rv <= self.last_rv:
            return
        self.last_rv = rv
        await self.send_json(message)


def _reason(exc: Exception) -> str:
    return exc.reason if isinstance(exc, store.StoreError) else "Invalid"


def _changes_since(cluster: Cluster, since: int) -> list[dict[str, Any]] | None:
    """The changes after `since`, or None when the log no longer reaches back that far."""
    current = Cluster.objects.filter(pk=cluster.pk).values_list("resource_version", flat=True).get()
    if since > current:
        return None
    if since < current:
        oldest = (
            Change.objects.filter(cluster=cluster)
            .order_by("resource_version")
            .values_list("resource_version", flat=True)
            .first()
        )
        if oldest is None or oldest > since + 1:
            return None
    return [
        {**change.to_dict(), "path": watch_path(change.to_dict())}
        for change in Change.objects.filter(cluster=cluster, resource_version__gt=since).order_by("resource_version")
    ]
