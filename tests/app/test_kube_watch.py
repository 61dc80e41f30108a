"""A Kubernetes watch is driven by the watch log: lost channel-layer messages cost no change."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from clusterviz import services
from clusterviz.kube_api import watch
from tests.app.conftest import node_yaml


class DeafLayer:
    """A channel layer that never delivers (a restarted Redis that forgot the group)."""

    async def new_channel(self) -> str:
        return "deaf"

    async def group_add(self, group: str, channel: str) -> None:
        return None

    async def group_discard(self, group: str, channel: str) -> None:
        return None

    async def receive(self, channel: str) -> dict[str, Any]:
        await asyncio.sleep(3600)
        return {}


@pytest.mark.django_db(transaction=True)
async def test_watch_reads_the_log_when_the_channel_layer_loses_messages(make_cluster: Any, monkeypatch: Any) -> None:
    cluster = await sync_to_async(make_cluster)("c1", node_yaml("n1"))
    monkeypatch.setattr(watch, "HEARTBEAT_SECONDS", 0.1)
    monkeypatch.setattr(watch, "get_channel_layer", DeafLayer)
    events = watch.stream(
        cluster, "Node", None, cluster.resource_version, lambda bodies: bodies, lambda obj: True, lambda obj: obj, 5
    )
    assert await events.__anext__() == b""  # the headers go out at once
    await sync_to_async(services.set_label)(cluster, "n1", "qqq", "1", "kubectl")
    await sync_to_async(services.set_label)(cluster, "n1", "kgc", "a", "kubectl")
    first = json.loads(await asyncio.wait_for(events.__anext__(), 2))
    second = json.loads(await asyncio.wait_for(events.__anext__(), 2))
    assert [first["type"], second["type"]] == ["MODIFIED", "MODIFIED"]
    assert first["object"]["metadata"]["labels"]["qqq"] == "1"
    assert second["object"]["metadata"]["labels"]["kgc"] == "a"
    assert (
        int(second["object"]["metadata"]["resourceVersion"]) == int(first["object"]["metadata"]["resourceVersion"]) + 1
    )
    await events.aclose()


@pytest.mark.django_db(transaction=True)
async def test_both_watch_log_readers_refuse_a_resource_version_ahead_of_the_cluster(
    make_cluster: Any, monkeypatch: Any
) -> None:
    """One reader of the watch log: the Kubernetes watch used to wait silently from a future
    resourceVersion (missing every change up to it) where the browser's stream refused it."""
    from clusterviz.consumers import _changes_since

    cluster = await sync_to_async(make_cluster)("c1", node_yaml("n1"))
    await sync_to_async(cluster.refresh_from_db)()
    current = cluster.resource_version
    monkeypatch.setattr(watch, "get_channel_layer", DeafLayer)
    ahead = current + 5
    events = watch.stream(cluster, "Node", None, ahead, lambda bodies: bodies, lambda obj: True, lambda obj: obj, 5)
    assert await events.__anext__() == b""
    error = json.loads(await asyncio.wait_for(events.__anext__(), 2))
    assert error["type"] == "ERROR"
    assert (error["object"]["code"], error["object"]["reason"]) == (504, "Timeout")
    assert error["object"]["message"] == f"Too large resource version: {ahead}, current: {current}"
    await events.aclose()
    assert await sync_to_async(_changes_since)(cluster, ahead) is None
    assert await sync_to_async(_changes_since)(cluster, current) == []
