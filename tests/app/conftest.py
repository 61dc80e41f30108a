"""Shared fixtures for the clusterviz app tests (tests/app/).

Generic building blocks, usable by any test module here:

- `make_cluster(slug, objects="", pace="instant", lesson="")` (sync; needs a db fixture or mark): a new
  Cluster, optionally with objects created from YAML (all before any runner starts, so nothing is
  reconciled until a test asks for it).
- `ws_connect` (async; needs `@pytest.mark.django_db(transaction=True)`): `await ws_connect(slug, query="")`
  returns a connected `StreamClient` around a `channels.testing.WebsocketCommunicator` on
  `clusterviz.asgi.application` (with the Origin header that AllowedHostsOriginValidator wants). The
  fixture disconnects every client, stops the in-process ClusterRunners (they run in the test's own
  event loop) and flushes the in-memory channel layer at teardown.
- `stop_runners` (async; transactional db): stops the ClusterRunners an async test's requests started.
- `StreamClient` helpers: `send(action)`, `recv()`, `until(predicate)` (collects messages up to and
  including the first match), `quiet()` (collects until nothing arrives for a while), `nothing()`.

Plain helpers (import them from `.conftest`): `ORIGIN` (the headers), `node_yaml(...)` and
`pod_yaml(...)` (small YAML objects, the same shape the stream tests assert on).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.test import AsyncClient, Client

from .servers import Processes

ORIGIN = [(b"origin", b"http://127.0.0.1")]
Message = dict[str, Any]


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    """The registry of the real processes a test starts; all are stopped at teardown, even on failure."""
    registry = Processes(tmp_path)
    try:
        yield registry
    finally:
        registry.stop_all()


def node_yaml(name: str, cpu: str = "2", memory: str = "4Gi", labels: dict[str, str] | None = None) -> str:
    """A minimal schedulable Node."""
    all_labels = {"kubernetes.io/hostname": name, **(labels or {})}
    label_text = ", ".join(f"{k}: {v}" for k, v in all_labels.items())
    return (
        "apiVersion: v1\nkind: Node\n"
        f"metadata: {{name: {name}, labels: {{{label_text}}}}}\n"
        f'status: {{allocatable: {{cpu: "{cpu}", memory: {memory}, pods: "110"}}, '
        f'capacity: {{cpu: "{cpu}", memory: {memory}, pods: "110"}}}}\n'
    )


def pod_yaml(name: str, cpu: str = "100m", node_selector: dict[str, str] | None = None) -> str:
    """A minimal Pod with one container and a CPU request."""
    selector = ""
    if node_selector:
        selector = "  nodeSelector: {" + ", ".join(f"{k}: {v}" for k, v in node_selector.items()) + "}\n"
    return (
        "apiVersion: v1\nkind: Pod\n"
        f"metadata: {{name: {name}}}\n"
        "spec:\n"
        f"{selector}"
        f"  containers: [{{name: app, image: nginx, resources: {{requests: {{cpu: {cpu}}}}}}}]\n"
    )


@pytest.fixture(scope="session", autouse=True)
def _no_lease_release_at_exit() -> Iterator[None]:
    """The runner releases this process's leases at exit (for servers); after a test session the test
    database is gone, so forget them rather than touch whatever database the settings point to then."""
    yield
    from clusterviz.controllers import runner

    runner._held.clear()


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> Iterator[None]:
    """Every test starts with fresh HTTP rate-limit windows (they are per client address and cluster,
    and every test client is 127.0.0.1 asking about clusters of the same names)."""
    from clusterviz import actions

    actions.reset_http_limits()
    yield
    actions.reset_http_limits()


class OwnerClient(Client):
    """A test client that holds every cluster's edit link: requests to a cluster's API carry its
    owner token (`Authorization: Bearer`), as scripts and kubectl send it. Tests of the access rules
    use a plain `django.test.Client`."""

    def generic(self, method: str, path: str, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        from clusterviz.models import Cluster

        match = re.match(r"^/api/clusters/([^/?]+)/", path)
        if match and "HTTP_AUTHORIZATION" not in kwargs:
            token = Cluster.objects.filter(slug=match.group(1)).values_list("owner_token", flat=True).first()
            if token:
                kwargs["HTTP_AUTHORIZATION"] = f"Bearer {token}"
        return super().generic(method, path, *args, **kwargs)


class AsyncOwnerClient(AsyncClient):
    """`OwnerClient` for async tests."""

    async def generic(self, method: str, path: str, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        from asgiref.sync import sync_to_async

        from clusterviz.models import Cluster

        match = re.match(r"^/api/clusters/([^/?]+)/", path)
        headers = dict(kwargs.pop("headers", None) or {})
        if match and "authorization" not in {k.lower() for k in headers}:
            token = await sync_to_async(
                lambda: Cluster.objects.filter(slug=match.group(1)).values_list("owner_token", flat=True).first()
            )()
            if token:
                headers["Authorization"] = f"Bearer {token}"
        return await super().generic(method, path, *args, headers=headers, **kwargs)


@pytest.fixture
def client() -> OwnerClient:
    """pytest-django's `client`, holding every cluster's edit link."""
    return OwnerClient()


@pytest.fixture
def async_client() -> AsyncOwnerClient:
    return AsyncOwnerClient()


@pytest.fixture
def make_cluster() -> Callable[..., Any]:
    """Factory: `make_cluster(slug, objects="", pace="instant", lesson="")` → Cluster (sync)."""
    from clusterviz import services
    from clusterviz.lessons import load_lesson

    def make(slug: str, objects: str = "", pace: str = "instant", lesson: str = "") -> Any:
        cluster = services.create_cluster(slug)
        if objects:
            services.create_from_yaml(cluster, objects, "kubectl")
        if lesson:
            load_lesson(cluster, lesson)
        if pace != "instant":
            services.set_pace(cluster, pace)
        cluster.refresh_from_db()
        return cluster

    return make


class StreamClient:
    """A WebSocket client of one cluster stream, with receive helpers that fail loudly on timeouts."""

    _ids = itertools.count(1)

    def __init__(self, communicator: WebsocketCommunicator) -> None:
        self.communicator = communicator
        self.received: list[Message] = []
        self.batches = 0  # `watch.batch` messages received (each is delivered as its `watch` messages)
        self._unpacked: list[Message] = []

    async def send(self, action: Message) -> str:
        """Send an action (an `id` is added when missing); returns the id."""
        action = dict(action)
        action.setdefault("id", f"a{next(self._ids)}")
        await self.communicator.send_json_to(action)
        return str(action["id"])

    async def recv(self, timeout: float = 3.0) -> Message:
        """The next message; TimeoutError when none comes (the application is NOT cancelled, unlike
        `receive_json_from(timeout)`, so the client stays usable)."""
        if not self._unpacked:
            if await self.communicator.receive_nothing(timeout=timeout, interval=0.01):
                raise TimeoutError(f"no message within {timeout}s")
            message = await self.communicator.receive_json_from(timeout=1)
            if message.get("type") == "watch.batch":  # as the page reads it: change by change
                self.batches += 1
                self._unpacked.extend(message["changes"])
            elif message.get("type") == "scheduler.cycles":  # and cycle by cycle
                self._unpacked.extend(message["cycles"])
            else:
                self._unpacked.append(message)
        message = self._unpacked.pop(0)
        self.received.append(message)
        return message

    async def until(self, predicate: Callable[[Message], bool], timeout: float = 5.0) -> list[Message]:
        """Every message up to and including the first that satisfies `predicate`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        seen: list[Message] = []
        while True:
            left = deadline - loop.time()
            if left <= 0:
                raise AssertionError(f"no matching message within {timeout}s; got {[_brief(m) for m in seen]}")
            try:
                message = await self.recv(timeout=left)
            except TimeoutError:
                raise AssertionError(
                    f"no matching message within {timeout}s; got {[_brief(m) for m in seen]}"
                ) from None
            seen.append(message)
            if predicate(message):
                return seen

    async def quiet(self, idle: float = 0.3, limit: float = 10.0) -> list[Message]:
        """Every message until none arrives for `idle` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        seen: list[Message] = []
        while loop.time() < deadline:
            try:
                seen.append(await self.recv(timeout=idle))
            except TimeoutError:
                return seen
        raise AssertionError(f"the stream did not go quiet within {limit}s")

    async def nothing(self, wait: float = 0.3) -> bool:
        return await self.communicator.receive_nothing(timeout=wait)


def _brief(message: Message) -> str:
    if message.get("type") == "watch":
        meta = message.get("object", {}).get("metadata", {})
        rv = message.get("resourceVersion")
        return f"watch {message.get('event')} {message.get('kind')}/{meta.get('name')} rv={rv}"
    return str(message.get("type"))


async def _stop_runners() -> None:
    from django.db import connections

    from clusterviz.controllers import runner

    await runner.stop_runners()
    layer = get_channel_layer()
    if layer is not None and hasattr(layer, "flush"):
        await layer.flush()
    await sync_to_async(connections.close_all)()


@pytest.fixture
async def stop_runners(transactional_db: None) -> AsyncIterator[None]:
    """For async tests whose requests start ClusterRunners (e.g. AsyncClient POSTs to the actions API):
    stops them, flushes the channel layer and closes the executor's DB connection at teardown."""
    yield
    await _stop_runners()


@pytest.fixture
async def ws_connect(transactional_db: None) -> AsyncIterator[Callable[..., Any]]:
    """Factory: `await ws_connect(slug, query="", expect_close=False)` → StreamClient (connected).

    With expect_close=True returns the (accepted, close_code) pair of `connect()` instead.
    Teardown: disconnect clients, stop the runners started in this loop, flush the channel layer.
    """
    from clusterviz.asgi import application

    clients: list[WebsocketCommunicator] = []

    async def connect(
        slug: str, query: str = "", expect_close: bool = False, owner: bool = True, headers: tuple[Any, ...] = ()
    ) -> Any:
        from asgiref.sync import sync_to_async

        from clusterviz.models import Cluster

        if owner:  # connect with the cluster's edit link, as its presenter does
            token = await sync_to_async(
                lambda: Cluster.objects.filter(slug=slug).values_list("owner_token", flat=True).first()
            )()
            if token:
                query = "&".join(q for q in (query, f"key={token}") if q)
        path = f"/ws/clusters/{slug}/" + (f"?{query}" if query else "")
        communicator = WebsocketCommunicator(application, path, headers=[*ORIGIN, *headers])
        clients.append(communicator)
        connected, code = await communicator.connect(timeout=5)
        if expect_close:
            return connected, code
        assert connected, f"connection to {path} refused with {code}"
        return StreamClient(communicator)

    try:
        yield connect
    finally:
        for communicator in clients:
            # (a client the test or the server already closed raises here)
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await communicator.disconnect(timeout=2)
        await _stop_runners()
