"""The in-process channel layer, without channels' per-message sweeps.

channels' InMemoryChannelLayer walks every channel of the process to expire old messages on each
`receive` and `group_send`, and sends to a group through one task and one deep copy per member: with
200 followers each change cost 200 sweeps of 200 channels and 200 copies (see bench/load.py). Here a
group send copies the message once, puts it straight into each member's queue, and expiry runs at
most every `SWEEP_SECONDS`. A receiver keeps its queue between messages (channels builds a new
`asyncio.Queue` for every receive and drops it whenever it runs empty: one allocation per message per
follower); the queue goes when its receiver is cancelled, i.e. when its consumer closes. Same semantics
otherwise: capacity, ChannelFull members skipped, expiry.
"""

from __future__ import annotations

import asyncio
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

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self._swept < SWEEP_SECONDS:
            return
        self._swept = now
        super()._clean_expired()

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        assert isinstance(message, dict), "Message is not a dict"
        self.require_valid_group_name(group)
        self._clean_expired()
        members = list(self.groups.get(group, {}))
        if not members:
            return
        # One copy for every member: receivers only read what the layer hands them.
        entry = (time.time() + self.expiry, deepcopy(message))
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
