"""The real kubectl against a live clusterviz server (tests/kubectl/).

- `kube_server` (session): the server `./dev run` starts (uvicorn, `clusterviz.serve`) with its own
  SQLite file, plus a pool of fresh clusters (node01..node03, nothing else) made in one go.
- `cluster` (function): takes a fresh cluster from the pool (`api_cluster`: the same without the need for
  kubectl) → `Cluster` with `.kubectl(...)` (runs
  the real binary with a scratch HOME and --cache-dir, as /work/shared/kubectl-api.md §1 says),
  `.popen(...)`, `.state()`, `.pods()`, `.node(name)`, `.wait(...)`, `.action(...)`, `.changes()`.

kubectl is only ever pointed at 127.0.0.1. Without kubectl the tests skip locally and fail under CI
(tests/tools.py).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterviz.store import CLUSTER_SCOPED
from tests.live_server import LiveServer
from tests.tools import missing_tool

KUBECTL = os.environ.get("KUBECTL") or shutil.which("kubectl") or "/usr/bin/kubectl"
POOL_SIZE = 100
BASE_NODES = """\
apiVersion: v1
kind: List
items:
""" + "".join(
    f"""\
- apiVersion: v1
  kind: Node
  metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}}}
  status:
    capacity: {{cpu: "2", memory: 4Gi, pods: "110"}}
    allocatable: {{cpu: "2", memory: 4Gi, pods: "110"}}
"""
    for name in ("node01", "node02", "node03")
)

# Creates the pool in one Django process (a manage.py call costs about a second).
POOL_SCRIPT = """
from clusterviz import services
for slug in {slugs!r}:
    cluster = services.create_cluster(slug)
    services.create_from_yaml(cluster, {nodes!r}, "kubectl", source="nodes.yaml")
"""


class KubeServer(LiveServer):
    """A clusterviz server process with a pool of fresh clusters for the kubectl tests."""

    def __init__(self, workdir: Path, kind: str = "dev", pool_size: int = POOL_SIZE) -> None:
        super().__init__(workdir, kind)
        self.pool_size = pool_size
        self.pool: list[str] = []

    def manage(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run(*args, check=check)

    def start(self) -> None:
        self.run("migrate", "-v0")
        self.pool = [f"k{i:02d}" for i in range(self.pool_size)]
        self.run("shell", "-c", POOL_SCRIPT.format(nodes=BASE_NODES, slugs=self.pool))
        super().start()

    def request(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> Response:
        """An HTTP request to the server (never raises on HTTP errors)."""
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=all_headers)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return Response(resp.status, resp.headers, resp.read())
        except urllib.error.HTTPError as exc:
            return Response(exc.code, exc.headers, exc.read())


@dataclass
class Response:
    status: int
    headers: Message  # looked up without regard to case, as HTTP header names are
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        return self.stdout.splitlines()

    def rows(self) -> list[list[str]]:
        """The table kubectl printed, split on whitespace (header first)."""
        return [line.split() for line in self.lines]


class Cluster:
    """One cluster of the live server, and the real kubectl pointed at it."""

    def __init__(self, server: KubeServer, slug: str, scratch: Path, cache: Path) -> None:
        self.server = server
        self.slug = slug
        self.scratch = scratch
        self.home = scratch / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.cache = cache
        self.kubeconfig = scratch / "kubeconfig"
        # The kubeconfig `manage.py kubeconfig` writes, carrying the cluster's owner token.
        document = server.manage("kubeconfig", slug, "--server", server.url).stdout
        self.kubeconfig.write_text(document)
        self.token: str = yaml.safe_load(document)["users"][0]["user"]["token"]
        self.env = {"HOME": str(self.home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}

    def _argv(self, args: tuple[str, ...]) -> list[str]:
        return [KUBECTL, "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.cache), *args]

    def kubectl(self, *args: str, stdin: str | None = None, ok: bool | None = True, timeout: float = 30) -> Result:
        """Run kubectl; `ok=True` insists on exit code 0, `ok=False` on a failure, None accepts both."""
        proc = subprocess.run(
            self._argv(args),
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.scratch,
            timeout=timeout,
        )
        result = Result(proc.returncode, proc.stdout, proc.stderr)
        if ok is True:
            assert proc.returncode == 0, f"kubectl {' '.join(args)} failed ({proc.returncode}): {proc.stderr}"
        elif ok is False:
            assert proc.returncode != 0, f"kubectl {' '.join(args)} unexpectedly succeeded: {proc.stdout}"
        return result

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self._argv(args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
            cwd=self.scratch,
        )

    def write(self, name: str, text: str) -> str:
        """A manifest file in the scratch folder (kubectl runs there): returns its name."""
        (self.scratch / name).write_text(text)
        return name

    # --- the cluster's state, read back through the app's own API and database

    def state(self) -> dict[str, Any]:
        response = self.server.request("GET", f"/api/clusters/{self.slug}/state")
        assert response.status == 200, response.body
        return response.json()

    def objects(self, kind: str) -> dict[str, dict[str, Any]]:
        """`namespace/name` (or `name` for a cluster-scoped kind) → body."""
        out = {}
        for body in self.state()["objects"].get(kind, []):
            meta = body["metadata"]
            key = meta["name"] if kind in CLUSTER_SCOPED else f"{meta.get('namespace', 'default')}/{meta['name']}"
            out[key] = body
        return out

    def pods(self) -> dict[str, dict[str, Any]]:
        return self.objects("Pod")

    def node(self, name: str) -> dict[str, Any]:
        return self.objects("Node")[name]

    def wait(self, predicate: Callable[[], Any], timeout: float = 10.0, what: str = "condition") -> Any:
        deadline = time.time() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.time() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.05)

    def wait_running(self, *names: str, namespace: str = "default", timeout: float = 10.0) -> dict[str, Any]:
        def running() -> dict[str, Any] | None:
            pods = self.pods()
            keys = [f"{namespace}/{n}" for n in names]
            if all(pods.get(k, {}).get("status", {}).get("phase") == "Running" for k in keys):
                return pods
            return None

        return self.wait(running, timeout, f"pods {names} to run")

    def action(self, action: dict[str, Any]) -> dict[str, Any]:
        response = self.server.request(
            "POST", f"/api/clusters/{self.slug}/actions", action, {"Authorization": f"Bearer {self.token}"}
        )
        assert response.status == 200, response.body
        return response.json()

    def dump(self) -> dict[str, Any]:
        """Everything the store holds for the cluster, read from its database: the cluster's
        resourceVersion, every object row (body and resourceVersion), the watch log's length and the
        scheduling cycles — equal dumps mean nothing was written."""
        with sqlite3.connect(f"file:{self.server.db}?mode=ro", uri=True, timeout=10) as db:
            cid, rv, cycle = db.execute(
                "SELECT id, resource_version, cycle FROM clusterviz_cluster WHERE slug = ?", (self.slug,)
            ).fetchone()
            rows = db.execute(
                "SELECT kind, namespace, name, uid, resource_version, body, queue_state FROM clusterviz_kubeobject "
                "WHERE cluster_id = ? ORDER BY kind, namespace, name",
                (cid,),
            ).fetchall()
            changes = db.execute(
                "SELECT COUNT(*), MAX(resource_version) FROM clusterviz_change WHERE cluster_id = ?", (cid,)
            ).fetchone()
            cycles = db.execute(
                "SELECT COUNT(*) FROM clusterviz_schedulingcycle WHERE cluster_id = ?", (cid,)
            ).fetchone()
        return {"resourceVersion": rv, "cycle": cycle, "objects": rows, "changes": changes, "cycles": cycles}

    def changes(self, kind: str, name: str) -> list[tuple[str, str]]:
        """(type, component) of every logged write to an object, oldest first (the List-Watch writer)."""
        with sqlite3.connect(f"file:{self.server.db}?mode=ro", uri=True, timeout=10) as db:
            rows = db.execute(
                "SELECT ch.type, ch.component FROM clusterviz_change ch JOIN clusterviz_cluster c "
                "ON ch.cluster_id = c.id WHERE c.slug = ? AND ch.kind = ? AND ch.name = ? "
                "ORDER BY ch.resource_version",
                (self.slug, kind, name),
            ).fetchall()
        return [(str(t), str(c)) for t, c in rows]


@pytest.fixture(scope="session")
def kube_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeServer]:
    workdir = tmp_path_factory.mktemp("kubectl-live")
    server = KubeServer(workdir)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def kube_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """kubectl's discovery/HTTP cache, shared by the tests (every cluster serves the same API)."""
    return tmp_path_factory.mktemp("kubectl-cache")


@pytest.fixture
def api_cluster(kube_server: KubeServer, kube_cache: Path, tmp_path: Path) -> Cluster:
    """A fresh cluster (node01..node03, 2 CPU / 4Gi each), for tests that speak HTTP themselves."""
    if not kube_server.pool:
        pytest.fail("the pool of fresh clusters is used up: raise POOL_SIZE in tests/kubectl/conftest.py")
    return Cluster(kube_server, kube_server.pool.pop(0), tmp_path, kube_cache)


@pytest.fixture
def cluster(api_cluster: Cluster) -> Cluster:
    """A fresh cluster and the real kubectl for it (see tests/tools.py when kubectl is not installed)."""
    if not Path(KUBECTL).exists():
        missing_tool(f"kubectl not found ({KUBECTL}): install it (or set KUBECTL) to run the real-kubectl tests")
    return api_cluster
