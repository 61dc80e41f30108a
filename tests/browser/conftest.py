"""Browser tests: a real server process and Debian's Chromium driven by Playwright.

Run them in their own pytest session (`-m browser`): pytest-playwright's event loop and
pytest-asyncio cannot share one.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from tests.big_cluster import create_big_cluster
from tests.live_server import LiveServer as BaseLiveServer
from tests.tools import missing_tool

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:  # type: ignore[type-arg]
    if not Path(CHROMIUM).exists():
        missing_tool(f"{CHROMIUM} not found: install Debian's chromium to run the browser tests")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


class LiveServer(BaseLiveServer):
    """The browser tests' server; `manage()` returns what the command printed."""

    def manage(self, *args: str) -> str:
        return self.run(*args).stdout


# Not named `live_server`: pytest-django's autouse `_live_server_helper` would then set up its test database.
@pytest.fixture(scope="session")
def cv_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with running_server(tmp_path_factory.mktemp("live")) as server:
        yield server


@contextlib.contextmanager
def running_server(workdir: Path, **env: str) -> Iterator[LiveServer]:
    """A started LiveServer (with more environment), stopped and its directory removed afterwards."""
    server = LiveServer(workdir)
    server.env.update(env)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


_counter = iter(range(1, 10_000))


@pytest.fixture
def lesson_cluster(cv_server: LiveServer):  # type: ignore[no-untyped-def]
    """Create a fresh cluster from a lesson: `lesson_cluster("demo")` → its URL."""

    def make(lesson: str) -> str:
        return load_lesson(cv_server, lesson, f"{lesson}-{os.getpid()}-{next(_counter)}").url

    return make


# --- helpers for the tests: the cluster's JSON API and the page's readiness ------------------------

# slug → the edit link `load_scenario` printed: the tests act as each cluster's presenter.
EDIT_LINKS: dict[str, str] = {}

VIEWPORT = {"width": 1280, "height": 800}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict) -> dict:  # type: ignore[type-arg]
    return {**browser_context_args, "viewport": VIEWPORT}


class ClusterApi:
    """One cluster of the live server: its page URL and its JSON API (/api/clusters/<slug>/...)."""

    def __init__(self, server: LiveServer, slug: str) -> None:
        self.server = server
        self.slug = slug
        self.url = f"{server.url}/clusters/{slug}/"
        self.edit_url = EDIT_LINKS[slug]
        self.token = self.edit_url.rsplit("key=", 1)[1]

    def _get(self, path: str) -> bytes:
        with urllib.request.urlopen(f"{self.server.url}/api/clusters/{self.slug}/{path}", timeout=10) as response:
            return bytes(response.read())

    def state(self) -> dict[str, Any]:
        return dict(json.loads(self._get("state")))

    def export(self) -> str:
        return self._get("export").decode()

    def snapshot(self) -> str:
        return self._get("snapshot").decode()

    def act(self, action: dict[str, Any]) -> dict[str, Any]:
        """POST one action; a refusal raises with the server's Status message."""
        request = urllib.request.Request(
            f"{self.server.url}/api/clusters/{self.slug}/actions",
            data=json.dumps(action).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.token}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return dict(json.loads(response.read()))
        except urllib.error.HTTPError as exc:
            raise AssertionError(f"action {action.get('action')} refused: {exc.read().decode()}") from None

    def objects(self, kind: str) -> dict[str, dict[str, Any]]:
        """The objects of a kind by "namespace/name" (or name for cluster-scoped kinds)."""
        out = {}
        for body in self.state()["objects"].get(kind, []):
            meta = body["metadata"]
            out[f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]] = body
        return out

    def wait_for(self, what: str, check: Callable[[], Any], timeout: float = 10) -> Any:
        """Poll `check` until it returns something truthy; fail naming `what`."""
        deadline = time.time() + timeout
        while True:
            value = check()
            if value:
                return value
            if time.time() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.1)


@pytest.fixture
def new_cluster(cv_server: LiveServer, lesson_cluster):  # type: ignore[no-untyped-def]
    """`new_cluster("demo")` → a ClusterApi for a fresh cluster made from that lesson."""

    def make(lesson: str = "demo") -> ClusterApi:
        url = lesson_cluster(lesson)
        return ClusterApi(cv_server, url.rstrip("/").rsplit("/", 1)[1])

    return make


def load_lesson(server: LiveServer, lesson: str, slug: str) -> ClusterApi:
    """`manage.py load_scenario` into a new cluster, with its edit link."""
    output = server.manage("load_scenario", lesson, "--cluster", slug, "--base-url", server.url)
    EDIT_LINKS[slug] = output.rsplit("edit link: ", 1)[1].strip()
    return ClusterApi(server, slug)


def make_big_cluster(server: LiveServer, slug: str, nodes: int) -> ClusterApi:
    """A realistic cluster stored through the services (as the import does), with its edit link."""
    EDIT_LINKS[slug] = create_big_cluster(server, slug, nodes)
    return ClusterApi(server, slug)


def set_editor_text(page: Page, text: str) -> None:
    """Put text in the editor as a paste would (one `input` event)."""
    page.evaluate(
        """(text) => {
          const area = document.querySelector('#editor textarea');
          area.value = text;
          area.dispatchEvent(new Event('input'));
        }""",
        text,
    )


def open_cluster(page: Page, url: str) -> Page:
    """Open a cluster page and wait until its stream is live and the board is drawn."""
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page._clusterviz_errors = errors  # type: ignore[attr-defined]
    sent: list[str] = []  # every WebSocket frame the page sent (see `frames_sent`)
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(str(payload))))
    page._clusterviz_sent = sent  # type: ignore[attr-defined]
    slug = url.split("/clusters/", 1)[1].split("/", 1)[0] if "/clusters/" in url else ""
    if slug in EDIT_LINKS and "role=follower" not in url:
        page.goto(EDIT_LINKS[slug])  # hold the edit link (the session remembers it), as the presenter does
    page.goto(url)
    page.wait_for_selector("#ws-state[data-state=open]")
    page.wait_for_selector("#board [data-node], #board .map-canvas[data-cells]")  # cards, or the node map
    page.wait_for_load_state("networkidle")  # the recent cycles and the lesson are fetched after the snapshot
    return page


def frames_sent(page: Page) -> list[str]:
    """The WebSocket frames the page has sent so far (after a round trip to the page, so that every
    frame its earlier event handlers sent has been reported)."""
    page.evaluate("0")
    return list(page._clusterviz_sent)  # type: ignore[attr-defined]
