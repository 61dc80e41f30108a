"""A live class keeps going while a big import runs beside it in the same server (the import works in
a worker process and writes in short transactions), on the server `./dev run` starts (daphne) and
on uvicorn."""

from __future__ import annotations

from typing import Any

import pytest

from bench.cluster_dump import dump

from .conftest import node_yaml, pod_yaml
from .servers import (
    Processes,
    http_json,
    prepare_cluster,
    server_env,
    start_server,
    wait_for,
)

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("kind", ["daphne", "uvicorn"])
def test_a_class_is_served_while_an_import_runs(processes: Processes, kind: str) -> None:
    env = server_env(str(processes.tmp / "db.sqlite3"))
    prepare_cluster(env, "class", node_yaml("n1"))
    server = start_server(processes, kind, env)
    status, _ = http_json(f"{server.base_url}/api/clusters/class/actions", {"action": "create", "yaml": pod_yaml("p0")})
    assert status == 200
    # the cluster to import into: empty, created as `import_cluster` or the home page would
    prepare_cluster(env, "big", migrate=False)
    status, body = http_json(f"{server.base_url}/api/clusters/big/imports", dump(1500, 10), timeout=60)
    assert status == 202, body
    job_url = server.base_url + body["url"]
    wait_for(lambda: http_json(job_url)[1]["import"]["stored"] > 0, 60, "the import to store its first objects")

    served: list[dict[str, Any]] = []
    for k in range(1, 4):  # the presenter creates pods; the scheduler and kubelet run them
        status, result = http_json(
            f"{server.base_url}/api/clusters/class/actions", {"action": "create", "yaml": pod_yaml(f"p{k}")}
        )
        assert status == 200, result

        def running(name: str = f"p{k}") -> bool:
            pods = http_json(f"{server.base_url}/api/clusters/class/state")[1]["objects"]["Pod"]
            return any(p["metadata"]["name"] == name and p["status"].get("phase") == "Running" for p in pods)

        wait_for(running, 30, f"pod p{k} running")
        served.append(http_json(job_url)[1]["import"])
    assert served[-1]["state"] == "running", "the class was served while the import was still running"
    assert 0 < served[0]["stored"] < 16_500
    wait_for(lambda: http_json(job_url)[1]["import"]["state"] == "done", 300, "the import to finish")
