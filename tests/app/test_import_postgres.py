"""Import and the scheduler cache on PostgreSQL (the production database), end to end: a real
PostgreSQL, a uvicorn server, `manage.py import_cluster`."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from bench.cluster_dump import dump, dump_json

from .conftest import pod_yaml
from .servers import (
    PYTHON,
    REPO,
    Processes,
    django_script,
    http_json,
    prepare_cluster,
    server_env,
    start_postgres,
    start_server,
    wait_for,
)

pytestmark = pytest.mark.slow


def counts(env: dict[str, str], slug: str) -> tuple[int, int, int]:
    """(objects of the cluster, its resourceVersion, staging clusters left)."""
    out = django_script(
        env,
        "from clusterviz.models import Cluster, KubeObject\n"
        f"c = Cluster.objects.get(slug={slug!r})\n"
        "print(KubeObject.objects.filter(cluster=c).count(), c.resource_version,"
        " Cluster.objects.filter(slug__startswith='import.').count())\n",
    )
    a, b, c = out.split()
    return int(a), int(b), int(c)


def test_import_on_postgresql(processes: Processes, tmp_path: Path) -> None:
    env = server_env(start_postgres(processes))
    prepare_cluster(env, "pg")
    server = start_server(processes, "uvicorn", env)
    url = f"{server.base_url}/api/clusters/pg/imports"

    # A bad object deep in the dump: located, nothing stored (a NUL, which PostgreSQL cannot store, too).
    bad = dump(300, 10)
    bad["items"][1234]["metadata"]["labels"]["app"] = "a\u0000b"
    status, body = http_json(url, bad, timeout=60)
    assert status == 202, body

    def finished(path: str) -> dict[str, Any]:
        seen: dict[str, Any] = {}

        def done() -> bool:
            seen.update(http_json(server.base_url + path)[1]["import"])
            return seen["state"] != "running"

        wait_for(done, 120, "the import to finish")
        return seen

    job = finished(body["url"])
    assert job["state"] == "failed" and job["error"].startswith("snapshot:1: items[1234].metadata.labels"), job
    assert counts(env, "pg") == (0, 0, 0)

    # The real thing: 3,300 objects in bulk, then the scheduler (with its cache) places a new pod.
    status, body = http_json(url, dump(300, 10), timeout=60)
    assert status == 202, body
    job = finished(body["url"])
    assert (job["state"], job["stored"]) == ("done", 3300)
    assert counts(env, "pg") == (3300, 3300, 0)
    status, result = http_json(
        f"{server.base_url}/api/clusters/pg/actions", {"action": "create", "yaml": pod_yaml("newcomer")}
    )
    assert status == 200, result

    def placed() -> bool:
        pods = http_json(f"{server.base_url}/api/clusters/pg/state", timeout=30)[1]["objects"]["Pod"]
        return any(p["metadata"]["name"] == "newcomer" and p["spec"].get("nodeName") for p in pods)

    wait_for(placed, 60, "the new pod to be bound")

    # The command line, on the same database: a new cluster, and the absolute edit link.
    path = tmp_path / "dump.json"
    path.write_bytes(dump_json(50, 4))
    out = subprocess.run(
        [PYTHON, "manage.py", "import_cluster", "pg2", str(path), "--base-url", server.base_url],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(
        f"imported 250 objects into cluster pg2; edit link: {server.base_url}/clusters/pg2/?key="
    )
    assert counts(env, "pg2") == (250, 250, 0)
    assert http_json(f"{server.base_url}/api/clusters/pg2/state")[1]["resourceVersion"] == "250"
