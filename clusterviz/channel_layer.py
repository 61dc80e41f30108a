"""The in-process channel layer, without channels' per-message sweeps.

channels' InMemoryChannelLayer walks every channel of the process to expire old messages on each
`receive` and `group_send`, and sends to a group through one task and one deep copy per member: with
200 followers each change cost 200 sweeps of 200 channels and 200 copies (see bench/load.py). Here a
group send copies the message once, puts it straight into each member's queue, and expiry runs at
most every `SWEEP_SECONDS`. A receiver keeps its queue between messages (channels builds a new
`asyncio.Queue` for every receive and drops it whenever it runs empty: one allocation per message per
follower); the queue goes when its receiver is cancelled, i.e. when its consumer closes. Same semantics
otherwise: capacity, ChannelFull members skipped, expiry.

`send_soon` lets the database thread publish without waiting: channels' way from sync code
(`async_to_sync(group_send)`) parks the thread until the loop has run the send — a round trip
between the two threads for every change, paid while every other write waits behind it. The sends
queued while the loop has not yet run them go out together (one wake-up of the loop, not one each).
"""

from __future__ import annotations

import asyncio
import threading
import time
from copy import deepcopy
from typing import Any

from channels.layers import InMemoryChannelLayer

SWEEP_SECONDS = 1.0


class SharedCopyInMemoryChannelLayer(InMemoryChannelLayer):  # type: ignore[misc]
    """InMemoryChannelLayer with O(members) group sends and throttled expiry."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._swept = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None  # where the receivers wait (last seen)
        self._outgoing: list[tuple[str, dict[str, Any]]] = []  # `send_soon`'s, not yet delivered
        self._outgoing_lock = threading.Lock()
        self._outgoing_loop: asyncio.AbstractEventLoop | None = None  # the loop called to deliver them

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self._swept < SWEEP_SECONDS:
            return
        self._swept = now
        super()._clean_expired()

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        assert isinstance(message, dict), "Message is not a dict"
        self.require_valid_group_name(group)
        if self.groups.get(group):
            # One copy for every member: receivers only read what the layer hands them.
            self._deliver(group, deepcopy(message))

    def send_soon(self, group: str, message: dict[str, Any]) -> bool:
        """A group send from a thread other than the receivers' loop, without waiting for it: queued on
        that loop (in call order: one thread's sends arrive in the order it made them). The message is
        handed over (not copied): the caller must not change it. False, and nothing sent, when no loop
        of receivers is running (the caller sends the usual way)."""
        assert isinstance(message, dict), "Message is not a dict"
        self.require_valid_group_name(group)
        loop = self._loop
        if loop is None or not loop.is_running() or loop.is_closed():
            return False
        if _running_loop() is loop:  # already on the loop's thread
            self._deliver(group, message)
            return True
        with self._outgoing_lock:
            self._outgoing.append((group, message))
            if self._outgoing_loop is loop:  # already called: it takes this one too
                return True
            self._outgoing_loop = loop
        try:
            loop.call_soon_threadsafe(self._deliver_outgoing)
        except RuntimeError:  # the loop closed meanwhile
            with self._outgoing_lock:
                self._outgoing.clear()
                self._outgoing_loop = None
            return False
        return True

    def _deliver_outgoing(self) -> None:
        """Deliver what `send_soon` queued, in the order it was sent (on the receivers' loop)."""
        with self._outgoing_lock:
            outgoing, self._outgoing = self._outgoing, []
            self._outgoing_loop = None
        for group, message in outgoing:
            self._deliver(group, message)

    def _deliver(self, group: str, message: dict[str, Any]) -> None:
        """Put `message` into the queue of every member of `group` (on the receivers' loop)."""
        self._clean_expired()
        members = list(self.groups.get(group, {}))
        if not members:
            return
        entry = (time.time() + self.expiry, message)
        for channel in members:
            queue = self.channels.get(channel)
            if queue is None:
                queue = self.channels[channel] = asyncio.Queue(maxsize=self.get_capacity(channel))
            try:
                queue.put_nowait(entry)
            except asyncio.QueueFull:
                continue  # as channels does: a full member misses this message (it resyncs from the log)

    async def receive(self, channel: str) -> dict[str, Any]:
        self.require_valid_channel_name(channel)
        self._loop = asyncio.get_running_loop()
        self._clean_expired()
        queue = self.channels.get(channel)
        if queue is None:
            queue = self.channels[channel] = asyncio.Queue(maxsize=self.get_capacity(channel))
        try:
            _, message = await queue.get()
        except asyncio.CancelledError:
            # The receiver is gone (its consumer closed): forget the channel unless messages still wait.
            if queue.empty() and self.channels.get(channel) is queue:
                del self.channels[channel]
            raise
        return message  # type: ignore[no-any-return]


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
