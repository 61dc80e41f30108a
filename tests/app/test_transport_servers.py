"""A cluster whose state is well over 1 MiB, on the server `./dev run` starts (`manage.py runserver`,
i.e. daphne, whose WebSocket frames stop at 1 MiB) and on uvicorn: the state over HTTP, the stream
from its resourceVersion, a snapshot in parts, and a create/explain YAML between 1 and 2 MiB."""

from __future__ import annotations

import gzip
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from .conftest import pod_yaml
from .servers import Process, Processes, Stream, http_json, prepare_cluster, server_env, start_server

MiB = 1024 * 1024
NODES = 800  # a state over 2 MiB (2.8 KB a node as the browser gets it)


def big_cluster_env(tmp_path: Path, slug: str) -> dict[str, str]:
    env = server_env(str(tmp_path / "db.sqlite3"))
    then = f"from tests.big_cluster import import_big_cluster\nimport_big_cluster(cluster, {NODES})\n"
    prepare_cluster(env, slug, then=then, timeout=300)
    return env


def get_state(server: Process, slug: str) -> tuple[dict[str, Any], int]:
    request = urllib.request.Request(
        f"{server.base_url}/api/clusters/{slug}/state", headers={"Accept-Encoding": "gzip"}
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=30) as response:
        assert response.headers["Content-Encoding"] == "gzip"
        raw = response.read()
    return json.loads(gzip.decompress(raw)), len(raw)


@pytest.mark.parametrize("kind", ["daphne", "uvicorn"])
def test_a_cluster_over_1_mib_is_served(processes: Processes, tmp_path: Path, kind: str) -> None:
    env = big_cluster_env(tmp_path, "big")
    server = start_server(processes, kind, env)

    state, wire_bytes = get_state(server, "big")
    assert len(state["objects"]["Node"]) == NODES
    assert len(json.dumps(state)) > 2 * MiB and wire_bytes < MiB / 2
    rv = int(state["resourceVersion"])

    # The stream from the state's resourceVersion: nothing missed, nothing twice.
    with Stream(server, "big", f"resourceVersion={rv}") as stream:
        assert stream.recv() == {"type": "resumed", "from": str(rv), "count": 0}
        node = state["objects"]["Node"][7]["metadata"]["name"]
        status, _ = http_json(
            f"{server.base_url}/api/clusters/big/actions", {"action": "label", "node": node, "key": "k", "value": "v"}
        )
        assert status == 200
        watch = stream.until(lambda m: m.get("type") == "watch")
        assert [(m["object"]["metadata"]["name"], int(m["resourceVersion"])) for m in watch] == [(node, rv + 1)]

    # A client that asks for no resourceVersion gets the snapshot in parts, none over daphne's limit.
    with Stream(server, "big") as stream:
        first = stream.recv(timeout=30)
        parts = [first] + [stream.recv(timeout=30) for _ in range(first["parts"] - 1)]
        assert first["parts"] > 4
        assert max(len(json.dumps(part)) for part in parts) < MiB
        assert sum(len(p["objects"].get("Node", [])) for p in parts) == NODES
        assert {p["resourceVersion"] for p in parts} == {str(rv + 1)}

    # A YAML between 1 and 2 MiB (too large for one daphne frame) goes through the HTTP action.
    padding = "".join(f"# {'x' * 97}\n" for _ in range(15_000))  # 1.5 MB of comments
    yaml = pod_yaml("web") + padding
    assert MiB < len(yaml) < 2 * MiB
    status, answer = http_json(f"{server.base_url}/api/clusters/big/actions", {"action": "explain", "yaml": yaml})
    assert status == 200, answer
    assert answer["explanation"]["scheduled"] is True
    status, answer = http_json(f"{server.base_url}/api/clusters/big/actions", {"action": "explain", "yaml": yaml * 2})
    assert (status, answer["reason"]) == (400, "Invalid")
    assert answer["message"] == "yaml: String should have at most 2097152 characters"
