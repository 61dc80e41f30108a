"""The cluster stream: `ws/clusters/<slug>/`.

On connect the client gets a snapshot (or, with `?resourceVersion=N`, every change after N from
the watch log), then every change and every scheduling cycle as they happen. Actions sent on the
socket get a `result` or an `error` reply carrying the action's `id`.

The stream survives what a deployment goes through:

- Watch events go out in resourceVersion order without a gap. One that arrives after a gap (the
  channel layer dropped messages: Redis restarted, a full channel, two writers publishing out of
  order) is preceded by the missing changes, read from the watch log.
- The channel layer's receive survives a lost connection (retried with backoff) instead of taking
  the socket down; a heartbeat renews the group membership (a restarted Redis forgets its groups)
  and, when nothing arrived since the last beat, catches up from the watch log.
- A client that does not read (a stuck browser) slows nobody down: what it has not taken yet waits
  in its own bounded outbox, and when that overflows the connection is closed with `CLOSE_RESYNC`
  (4429); the client reconnects with `?resourceVersion=N` and gets exactly what it missed.
- No message is larger than `message_limit()` (1 MiB, daphne's default frame limit, so `runserver`,
  daphne and uvicorn behave alike): a large snapshot goes out in parts (browsers fetch the state
  over HTTP instead, then resume), cycles are compact (`publish`), and a message that still does not
  fit is never sent: an action's answer becomes a `TooLarge` error, a change an `error` followed by
  `CLOSE_REFETCH` (4410), after which the client fetches the state over HTTP and resumes from it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import json
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import translation

from . import access, actions, prediction, retention, store
from .controllers import taint_manager
from .controllers.runner import ensure_runner
from .languages import language_of_scope
from .lesson_view import lesson_messages
from .models import Cluster
from .publish import BATCH_BYTES, group_name, watch_batches, watch_path
from .shared_db import shared_db
from .state_text import state_json, state_texts

log = logging.getLogger(__name__)
COMPONENT = "browser"
CLOSE_RESYNC = 4429  # "you fell behind: reconnect with ?resourceVersion=<the last one you have>"
CLOSE_REFETCH = 4410  # "a change could not be delivered: fetch the state over HTTP, resume from its resourceVersion"
SNAPSHOT_PART_BYTES = 256 * 1024  # a snapshot larger than this goes out in parts
CLOSE_WAIT_SECONDS = 5.0  # how long a resync close may wait for a client that reads nothing
SERVER_BUFFER_BYTES = 256 * 1024  # how much a server may hold unsent for one client before we wait
PENDING_DISPATCH_LIMIT = 1000  # messages read from the sources but not yet handled (the layer's capacity)


def _setting(name: str, default: float) -> float:
    """A tuning knob: Django settings first, then the environment (for servers started by tests)."""
    value = getattr(settings, name, None)
    if value is None:
        value = os.environ.get(name) or default
    return float(value)


def backlog_limit() -> float:
    """The most a client's outbox may hold (bytes of JSON) before the client is told to resync."""
    return _setting("CLUSTERVIZ_STREAM_BACKLOG_BYTES", 4 * 1024 * 1024)


def message_limit() -> int:
    """The largest message (bytes of JSON) the stream sends: daphne's default frame limit."""
    return int(_setting("CLUSTERVIZ_STREAM_MESSAGE_BYTES", 1024 * 1024))


def heartbeat_seconds() -> float:
    """How often a stream renews its group membership and, when idle, checks the watch log."""
    return _setting("CLUSTERVIZ_STREAM_HEARTBEAT_SECONDS", 2.0)


def _may_write(scope: dict[str, Any], cluster: Cluster, key: str | None) -> bool:
    """The stream's writer check: the edit link's key, this browser's session, or the owning user."""
    session = scope.get("session")
    user = scope.get("user")
    return access.may_write(cluster, session=session, user=user, token=key)


def _viewer(scope: dict[str, Any]) -> str | None:
    """The session's follower identity (`prediction.ensure_viewer`, set by the page), if any."""
    session = scope.get("session")
    return None if session is None else session.get(prediction.VIEWER_KEY)


class ClusterConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    cluster: Cluster
    last_rv: int = 0  # the last resourceVersion handed to this client's stream
    # Message types dispatched without channels' per-message database hop (set below the class).
    _direct_handlers: ClassVar[dict[str, Callable[[ClusterConsumer, dict[str, Any]], Awaitable[None]]]] = {}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """As AsyncConsumer.__call__, with a channel-layer receive that survives a lost connection and
        a third source of events: the consumer's own (heartbeats, resync), dispatched in turn with
        the others so that every delivery runs in order, one at a time.

        The sources feed one queue (channels' `await_many_dispatch` started a task and an
        `asyncio.wait` over every source for each message: per follower, per change). The client's
        next frame is read only once its previous one was handled, as before."""
        self.scope = scope
        self.base_send = send
        self._transport = _transport_of(send)
        self.channel_layer = get_channel_layer(self.channel_layer_alias)
        self._outbox: collections.deque[str] = collections.deque()
        self._outbox_bytes = 0
        self._outbox_ready = asyncio.Event()
        self._own: asyncio.Queue[dict[str, Any] | BaseException] = asyncio.Queue()
        # Read once: settings are a lazy object, and these are consulted for every message delivered.
        self._message_limit = message_limit()
        self._backlog_limit = backlog_limit()
        self._tasks: list[asyncio.Task[None]] = []
        self._heard = False
        self._closing = False
        client_handled = asyncio.Event()
        loop = asyncio.get_running_loop()
        pumps = [loop.create_task(self._pump(receive, client_handled))]
        if self.channel_layer is not None:
            self.channel_name = await self.channel_layer.new_channel()
            pumps.append(loop.create_task(self._pump(self._receive_from_layer)))
        try:
            while True:
                message = await self._own.get()
                if isinstance(message, BaseException):
                    raise message
                try:
                    await self.dispatch(message)
                finally:
                    if message.get("type", "").startswith("websocket."):
                        client_handled.set()
        except StopConsumer:
            pass
        finally:
            for task in (*pumps, *self._tasks):
                task.cancel()

    async def _pump(self, source: Any, handled: asyncio.Event | None = None) -> None:
        """Move a source's messages into the dispatch queue (after each, wait for `handled` if given);
        a failing source ends the consumer with its exception, as with channels' dispatch loop."""
        try:
            while True:
                message = await source()
                if handled is not None:
                    handled.clear()
                self._own.put_nowait(message)
                if handled is not None:
                    await handled.wait()
                while self._own.qsize() > PENDING_DISPATCH_LIMIT:  # a dispatch waits on the database
                    await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            self._own.put_nowait(exc)

    async def _receive_from_layer(self) -> dict[str, Any]:
        failures = 0
        while True:
            try:
                if failures and hasattr(self, "group"):
                    await self.channel_layer.group_add(self.group, self.channel_name)
                message: dict[str, Any] = await self.channel_layer.receive(self.channel_name)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failures += 1
                if failures == 1:
                    log.warning("stream %s: lost the channel layer (%r); reconnecting", self.channel_name, exc)
                await asyncio.sleep(min(0.5, 0.05 * 2 ** min(failures - 1, 4)))
                continue
            if failures:
                log.warning("stream %s: channel layer back after %d failed attempts", self.channel_name, failures)
                self._own.put_nowait({"type": "stream.catchup"})
            return message

    async def connect(self) -> None:
        slug = self.scope["url_route"]["kwargs"]["slug"]
        cluster = await Cluster.objects.filter(slug=slug).afirst()
        if cluster is None:
            await self.close(code=4404)
            return
        self.cluster = cluster
        self.language = language_of_scope(self.scope)
        self.group = group_name(cluster.pk)
        await retention.atouch(cluster)
        await self.accept()
        # Join the group before reading, then skip what the backlog already covered: no gap, no duplicate.
        # Without a channel layer (Redis down) the stream still works: the heartbeat reads the watch log.
        try:
            await asyncio.wait_for(self.channel_layer.group_add(self.group, self.channel_name), heartbeat_seconds())
        except Exception as exc:
            log.warning(
                "stream %s: cannot join %s (%r); reading the watch log meanwhile", self.channel_name, self.group, exc
            )
        query = parse_qs(self.scope.get("query_string", b"").decode())
        self.can_write = await database_sync_to_async(_may_write)(self.scope, cluster, query.get("key", [None])[0])
        self.viewer = await database_sync_to_async(_viewer)(self.scope)
        await self._join_presenters()
        self._limits = actions.Limits()  # per connection
        since = query.get("resourceVersion", [""])[0]
        resumed = since.isdigit() and await self._resume(int(since))
        if self._closing:
            return
        if not resumed:
            head, objects = await database_sync_to_async(state_texts)(cluster)
            self.last_rv = int(head["resourceVersion"])
            parts = snapshot_messages(head, objects, min(SNAPSHOT_PART_BYTES, message_limit()))
            if parts is None:
                await self._refuse_and_close("the cluster holds an object too large for the stream")
                return
            for part in parts:
                await self.send(text_data=part)
        # Evictions announced before this client came: each still-running countdown, from now.
        for announcement in await database_sync_to_async(taint_manager.pending_evictions)(cluster):
            self._push(announcement)
        # The class question, if one is open (or was just revealed), with this viewer's own answer.
        for message in await database_sync_to_async(prediction.messages_for)(cluster, self.viewer, self.can_write):
            self._push(message)
        # The lesson as far as this viewer may see it (a presenter's own follower link sees the class's).
        presenter = self.can_write and query.get("role", [""])[0] != "follower"
        for message in await database_sync_to_async(lesson_messages)(cluster, presenter):
            self._push(message)
        loop = asyncio.get_running_loop()
        self._tasks += [loop.create_task(self._write()), loop.create_task(self._beat())]
        ensure_runner(cluster.pk)

    async def _resume(self, since: int) -> bool:
        changes = await database_sync_to_async(_changes_since)(self.cluster, since)
        if changes is None:
            return False
        await self.send_json({"type": "resumed", "from": str(since), "count": len(changes)})
        for change in changes:
            if not await self._send_watch({"type": "watch", **change}):
                break
        self.last_rv = max(self.last_rv, since)
        return True

    async def _refuse_and_close(self, why: str) -> None:
        """Tell the client what could not be delivered, and close with CLOSE_REFETCH."""
        log.warning("stream %s: %s; the client refetches the state", getattr(self, "channel_name", "?"), why)
        self._closing = True
        await self.send_json({"type": "error", "id": None, "reason": "TooLarge", "message": why})
        await self.close(code=CLOSE_REFETCH, reason="refetch")

    async def disconnect(self, code: int) -> None:
        for task in self._tasks:
            task.cancel()
        if hasattr(self, "group"):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.channel_layer.group_discard(self.group, self.channel_name), 2)
            if getattr(self, "can_write", False):
                with contextlib.suppress(Exception):
                    group = prediction.presenters_group(self.cluster.pk)
                    await asyncio.wait_for(self.channel_layer.group_discard(group, self.channel_name), 2)

    async def _join_presenters(self) -> None:
        """A presenter also joins the presenters' group (the live tally of a prediction question)."""
        if self.can_write:
            with contextlib.suppress(Exception):
                group = prediction.presenters_group(self.cluster.pk)
                await asyncio.wait_for(self.channel_layer.group_add(group, self.channel_name), heartbeat_seconds())

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any) -> None:
        """An action (clusterviz/actions.py runs it, as for HTTP); any refusal is an `error` reply and
        the connection stays open."""
        if text_data is None:
            await self._error(None, "Invalid", "action: expected a JSON text frame, got a binary one")
            return

        async def may_write() -> bool:
            return self.can_write

        with translation.override(self.language):  # refusals in the viewer's language
            outcome = await actions.handle(
                self.cluster,
                text_data,
                may_write=may_write,
                limits=self._limits,
                component=COMPONENT,
                run_sync=shared_db,
                viewer=self.viewer,
            )
        if outcome.ok:
            self._push({"type": "result", "id": outcome.action_id, **(outcome.result or {})})
        else:
            await self._error(outcome.action_id, outcome.reason, outcome.message)

    async def _error(self, action_id: Any, reason: str, message: str) -> None:
        self._push({"type": "error", "id": action_id, "reason": reason, "message": message})

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Deliver stream messages, the consumer's own beats and the client's frames straight away:
        channels' dispatch first closes the database connections of the one sync thread all streams
        and the control loops share — a hop per message per client that made 200 followers wait on
        each other (see bench/load.py), and a new connection for every action and controller step.
        Their database work goes through `shared_db` (clusterviz/shared_db.py), which keeps that
        connection and drops it only when broken."""
        handler = self._direct_handlers.get(message.get("type", ""))
        if handler is not None:
            await handler(self, message)
            return
        await super().dispatch(message)

    async def cluster_message(self, event: dict[str, Any]) -> None:
        """A published message: its `text` (encoded once, in `publish`) goes out as it is."""
        self._heard = True
        message = event["message"]
        text = event.get("text")
        if message.get("type") == "watch":
            await self._deliver_watch(message, text)
        elif message.get("type") == "watch.batch":
            await self._deliver_watch_batch(message, text)
        elif message.get("type") != "control.step":
            self._push(message, text)

    async def _deliver_watch(self, message: dict[str, Any], text: str | None = None) -> None:
        """Forward a watch event, preceded by whatever the channel layer lost before it."""
        rv = int(message.get("resourceVersion", 0))
        if rv <= self.last_rv:
            return
        if rv > self.last_rv + 1:
            missed = await shared_db(_changes_since)(self.cluster, self.last_rv, rv)
            if missed is None:
                self._resync("the watch log no longer reaches back to your resourceVersion")
                return
            self._push_watches(missed)
        self._push_watch(message, text)

    async def _deliver_watch_batch(self, message: dict[str, Any], text: str | None) -> None:
        """Forward a `watch.batch` (changes `from`…`resourceVersion`, consecutive) as it is when it
        follows what this client has; changes it already has are left out, a gap before it is
        filled from the watch log first."""
        first, last = int(message.get("from", 0)), int(message.get("resourceVersion", 0))
        if last <= self.last_rv:
            return
        if first > self.last_rv + 1:
            missed = await shared_db(_changes_since)(self.cluster, self.last_rv, first)
            if missed is None:
                self._resync("the watch log no longer reaches back to your resourceVersion")
                return
            self._push_watches(missed)
        if first == self.last_rv + 1 and text is not None and len(text) <= self._message_limit:
            self.last_rv = last
            self._push(message, text)
            return
        full = json.loads(text) if text is not None else message
        self._push_watches(full.get("changes", []))

    async def _send_watch(self, message: dict[str, Any]) -> bool:
        """During connect (the backlog of a resume): straight to the socket, before anything queued.
        False when the change is too large for the stream (the connection is then closed)."""
        rv = int(message.get("resourceVersion", 0))
        if rv <= self.last_rv:
            return True
        text = json.dumps(message)
        if len(text) > self._message_limit:
            await self._refuse_and_close(_too_large(f"change {rv} ({message.get('kind')})", len(text)))
            return False
        self.last_rv = rv
        await self.send(text_data=text)
        return True

    def _push_watches(self, changes: list[dict[str, Any]]) -> None:
        """Queue changes read from the watch log (a catch-up, a gap filled): the ones this client
        lacks, consecutive, as `watch.batch` messages (of about BATCH_BYTES) rather than one message
        each, as a bulk write streams; a single change as a `watch` message."""
        messages = [{"type": "watch", **c} for c in changes if int(c.get("resourceVersion", 0)) > self.last_rv]
        texts = [json.dumps(message) for message in messages]
        for message, text in watch_batches(messages, texts, min(BATCH_BYTES, self._message_limit // 2)):
            if message["type"] == "watch":
                self._push_watch(message, text)
            else:
                self.last_rv = int(message["resourceVersion"])
                self._push({"type": "watch.batch"}, text)

    def _push_watch(self, message: dict[str, Any], text: str | None = None) -> None:
        rv = int(message.get("resourceVersion", 0))
        if rv <= self.last_rv:
            return
        self.last_rv = rv
        self._push(message, text)

    def _push(self, message: dict[str, Any], text: str | None = None) -> None:
        """Queue a message for the client; never waits (a slow client must not hold up the channel layer).

        A message larger than `message_limit()` is not queued: an action's answer is replaced by a
        `TooLarge` error for that action; anything else makes the client refetch the state."""
        if self._closing:
            return
        if text is None:
            text = json.dumps(message)
        if len(text) > self._message_limit:
            what = message.get("type", "message")
            if what in ("result", "error") and message.get("id") is not None:
                self._push(
                    {
                        "type": "error",
                        "id": message["id"],
                        "reason": "TooLarge",
                        "message": _too_large("the answer", len(text)),
                    }
                )
            else:
                name = f"change {message.get('resourceVersion')} ({message.get('kind')})" if what == "watch" else what
                self._resync(_too_large(name, len(text)), refetch=True)
            return
        self._outbox.append(text)
        self._outbox_bytes += len(text)
        self._outbox_ready.set()
        if self._outbox_bytes > self._backlog_limit and len(self._outbox) > 1:
            self._resync(f"too far behind ({self._outbox_bytes} bytes queued)")

    def _resync(self, why: str, refetch: bool = False) -> None:
        if not self._closing:
            self._closing = True
            self._outbox.clear()
            self._outbox_bytes = 0
            self._own.put_nowait({"type": "stream.resync", "why": why, "refetch": refetch})

    async def _write(self) -> None:
        """The outbox to the socket, in order, as fast as the client takes it."""
        try:
            while True:
                while not self._outbox:
                    self._outbox_ready.clear()
                    await self._outbox_ready.wait()
                text = self._outbox[0]
                while _server_backlog(self._transport) > SERVER_BUFFER_BYTES:
                    await asyncio.sleep(0.02)
                await self.send(text_data=text)
                if self._outbox and self._outbox[0] is text:
                    self._outbox.popleft()
                    self._outbox_bytes -= len(text)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the client went away; its disconnect follows
            log.debug("stream %s: send failed: %r", getattr(self, "channel_name", "?"), exc)

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(heartbeat_seconds())
            self._own.put_nowait({"type": "stream.heartbeat"})

    async def stream_heartbeat(self, event: dict[str, Any]) -> None:
        """Renew the group membership; when nothing arrived since the last beat, check the watch log."""
        try:
            await asyncio.wait_for(self.channel_layer.group_add(self.group, self.channel_name), heartbeat_seconds())
        except Exception:
            self._heard = False  # the layer is away (the receive loop reports it): poll the watch log
        await self._join_presenters()
        if self._heard:
            self._heard = False
            return
        await self.stream_catchup(event)

    async def stream_catchup(self, event: dict[str, Any]) -> None:
        missed = await _shared_changes_since(self.cluster, self.last_rv)
        if missed is None:
            self._resync("the watch log no longer reaches back to your resourceVersion")
            return
        self._push_watches(missed)

    async def stream_resync(self, event: dict[str, Any]) -> None:
        """Close the connection with CLOSE_RESYNC (the client resumes from its last resourceVersion) or,
        when a message could not be delivered, with an `error` naming it and CLOSE_REFETCH."""
        log.info("stream %s: closing for a resync: %s", self.channel_name, event["why"])
        for task in self._tasks:
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.channel_layer.group_discard(self.group, self.channel_name), 2)
        if self.can_write:
            with contextlib.suppress(Exception):
                group = prediction.presenters_group(self.cluster.pk)
                await asyncio.wait_for(self.channel_layer.group_discard(group, self.channel_name), 2)
        refetch = event.get("refetch", False)
        # A client that reads nothing cannot take the close frame either (uvicorn waits for room).
        with contextlib.suppress(Exception):
            if refetch:
                notice = {"type": "error", "id": None, "reason": "TooLarge", "message": event["why"]}
                await asyncio.wait_for(self.send_json(notice), CLOSE_WAIT_SECONDS)
            code, reason = (CLOSE_REFETCH, "refetch") if refetch else (CLOSE_RESYNC, "resync")
            await asyncio.wait_for(self.close(code=code, reason=reason), CLOSE_WAIT_SECONDS)
        raise StopConsumer


ClusterConsumer._direct_handlers = {
    "cluster.message": ClusterConsumer.cluster_message,
    "stream.heartbeat": ClusterConsumer.stream_heartbeat,
    "stream.catchup": ClusterConsumer.stream_catchup,
    "stream.resync": ClusterConsumer.stream_resync,
    "websocket.receive": ClusterConsumer.websocket_receive,
}


def _too_large(what: str, size: int) -> str:
    """E.g. "the answer is too large for the stream (3.1 MB > 1 MiB)"."""
    shown = f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.0f} kB"
    limit = message_limit()
    bound = f"{limit / 2**20:g} MiB" if limit >= 2**20 else f"{limit / 2**10:g} KiB"
    return f"{what} is too large for the stream ({shown} > {bound})"


def snapshot_messages(head: dict[str, Any], objects: dict[str, list[str]], part_bytes: int) -> list[str] | None:
    """The snapshot (`state_texts`) as messages of about `part_bytes` each (one when it fits): the first
    a `snapshot`, the rest `snapshot.part`, all with `part` and `parts`; the client has the whole state
    after the last. None when one object alone is larger than the stream's message limit."""
    parts: list[list[tuple[str, str]]] = [[]]
    size = len(json.dumps(head))
    for kind, texts in objects.items():
        for text in texts:
            if len(text) + 512 > message_limit():
                return None
            if size + len(text) > part_bytes and parts[-1]:
                parts.append([])
                size = 256
            parts[-1].append((kind, text))
            size += len(text) + 1
    messages = []
    for number, items in enumerate(parts, 1):
        kinds: dict[str, list[str]] = {}
        for kind, text in items:
            kinds.setdefault(kind, []).append(text)
        meta = {"type": "snapshot" if number == 1 else "snapshot.part", **head, "part": number, "parts": len(parts)}
        if number > 1:
            del meta["cluster"]
        messages.append(state_json(meta, kinds))
    return messages


def _reason(exc: Exception) -> str:
    return exc.reason if isinstance(exc, store.StoreError) else "Invalid"


def _changes_since(cluster: Cluster, since: int, before: int | None = None) -> list[dict[str, Any]] | None:
    """The changes after `since` (and before `before`), or None when the log cannot serve them."""
    try:
        changes = store.changes_since(cluster, since, before=before)
    except store.LogGap:
        return None
    return [{**change.to_dict(), "path": watch_path(change.to_dict())} for change in changes]


# Idle streams of one cluster check the watch log at the same resourceVersion: one read serves them all
# for a moment. 200 idle followers (a class thinking about a question) otherwise made 100 reads a
# second on the one database thread, and everything else (actions, the scheduler) waited behind them.
_shared_reads: dict[tuple[int, int], tuple[float, asyncio.AbstractEventLoop, asyncio.Task[Any]]] = {}


async def _shared_changes_since(cluster: Cluster, since: int) -> list[dict[str, Any]] | None:
    """`_changes_since(cluster, since)`, shared with the streams asking the same within a half heartbeat."""
    loop = asyncio.get_running_loop()
    now = loop.time()
    fresh = heartbeat_seconds() / 2
    for key, (at, _, _) in list(_shared_reads.items()):
        if now - at > fresh:
            del _shared_reads[key]
    entry = _shared_reads.get((cluster.pk, since))
    if entry is None or entry[1] is not loop:
        task = loop.create_task(shared_db(_changes_since)(cluster, since))
        entry = _shared_reads[(cluster.pk, since)] = (now, loop, task)
    return await asyncio.shield(entry[2])  # type: ignore[no-any-return]


def _transport_of(send: Any) -> Any:
    """The Twisted transport behind daphne's `send`, or None (uvicorn, tests).

    uvicorn's `send` waits while its transport buffer is full (real backpressure). daphne's never
    waits: Twisted keeps every frame in memory until the client takes it, so a client that reads
    nothing would grow the server without bound; `_server_backlog` reads that buffer's size instead.
    daphne's send is `partial(Server.handle_reply, protocol)`, possibly wrapped by middleware
    (channels' session middleware keeps it as `real_send`).
    """
    for _ in range(10):
        if isinstance(send, functools.partial):
            transport = getattr(next(iter(send.args), None), "transport", None)
            if transport is not None:
                return transport
            send = send.func
            continue
        inner = getattr(getattr(send, "__self__", None), "real_send", None) or getattr(send, "__wrapped__", None)
        if inner is None:
            return None
        send = inner
    return None


def _server_backlog(transport: Any) -> int:
    """Bytes a Twisted transport holds unsent (0 when there is none to ask)."""
    if transport is None:
        return 0
    try:
        return int(len(transport.dataBuffer) - transport.offset + transport._tempDataLen)
    except (AttributeError, TypeError):
        return 0
