"""The in-process channel layer (clusterviz/channel_layer.py): channels' semantics, one copy per group send."""

from __future__ import annotations

import asyncio
import time

import pytest

from clusterviz import channel_layer
from clusterviz.channel_layer import SharedCopyInMemoryChannelLayer


async def test_group_send_reaches_every_member_once_in_order() -> None:
    layer = SharedCopyInMemoryChannelLayer(capacity=10)
    members = [await layer.new_channel() for _ in range(50)]
    for channel in members:
        await layer.group_add("g", channel)
    outsider = await layer.new_channel()
    for n in range(3):
        await layer.group_send("g", {"type": "m", "n": n})
    for channel in members:
        assert [(await layer.receive(channel))["n"] for _ in range(3)] == [0, 1, 2]
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(layer.receive(outsider), 0.05)


async def test_group_send_is_isolated_from_the_sender() -> None:
    layer = SharedCopyInMemoryChannelLayer()
    channel = await layer.new_channel()
    await layer.group_add("g", channel)
    message = {"type": "m", "body": {"a": 1}}
    await layer.group_send("g", message)
    message["body"]["a"] = 2  # the sender reuses its dict
    assert (await layer.receive(channel))["body"] == {"a": 1}


async def test_a_full_member_misses_the_message_and_the_others_get_it() -> None:
    layer = SharedCopyInMemoryChannelLayer(capacity=1)
    full, other = await layer.new_channel(), await layer.new_channel()
    for channel in (full, other):
        await layer.group_add("g", channel)
    await layer.group_send("g", {"type": "m", "n": 1})
    assert (await layer.receive(other))["n"] == 1
    await layer.group_send("g", {"type": "m", "n": 2})  # `full` still holds n=1
    assert (await layer.receive(other))["n"] == 2
    assert (await layer.receive(full))["n"] == 1
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(layer.receive(full), 0.05)


async def test_expired_messages_are_dropped_with_their_channel_from_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    layer = SharedCopyInMemoryChannelLayer(expiry=1)
    stale, fresh = await layer.new_channel(), await layer.new_channel()
    await layer.group_add("g", stale)
    await layer.group_send("g", {"type": "m"})
    now = time.time()
    monkeypatch.setattr(channel_layer.time, "time", lambda: now + 5)  # the message is past its expiry
    monkeypatch.setattr(channel_layer, "SWEEP_SECONDS", 0.0)
    await layer.group_add("g", fresh)
    await layer.group_send("g", {"type": "m", "n": "new"})
    assert stale not in layer.groups["g"]  # expired, so dropped from the group (as channels does)
    assert (await layer.receive(fresh))["n"] == "new"


async def test_a_receiver_keeps_its_queue_and_a_cancelled_one_leaves_nothing_behind() -> None:
    layer = SharedCopyInMemoryChannelLayer()
    channel = await layer.new_channel()
    await layer.send(channel, {"type": "m", "n": 1})
    assert (await layer.receive(channel))["n"] == 1
    queue = layer.channels[channel]  # kept while its receiver is alive: no queue built per message
    await layer.send(channel, {"type": "m", "n": 2})
    assert layer.channels[channel] is queue and (await layer.receive(channel))["n"] == 2
    waiting = asyncio.ensure_future(layer.receive(channel))
    await asyncio.sleep(0)
    waiting.cancel()  # the consumer closed
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert channel not in layer.channels
