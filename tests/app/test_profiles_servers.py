"""Profiles and Compare on the server `./dev run` starts (runserver, i.e. daphne) and on uvicorn:
the owner stores a profile (a watcher gets 403), the stream tells the browsers, the scheduler uses
it, the download is kube-scheduler's file, and Compare gives two winners."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from scheduler_core.framework.profile import load_config

from .servers import TOKENS, Processes, Stream, http_json, prepare_cluster, server_env, start_server
from .test_profiles import BIN_PACKING, CLUSTER, sized_pod

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def put(url: str, body: Any, token: str | None) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="PUT")
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with _OPENER.open(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


@pytest.mark.parametrize("kind", ["daphne", "uvicorn"])
def test_profiles_on_real_servers(processes: Processes, tmp_path: Path, kind: str) -> None:
    env = server_env(str(tmp_path / "db.sqlite3"))
    prepare_cluster(env, "prof", CLUSTER)
    server = start_server(processes, kind, env)
    url = f"{server.base_url}/api/clusters/prof/profile"

    status, body = put(url, {"yaml": BIN_PACKING}, token=None)
    assert (status, body["reason"]) == (403, "Forbidden")
    with Stream(server, "prof") as stream:
        status, body = put(url, {"yaml": BIN_PACKING}, token=TOKENS["prof"])
        assert status == 200, body
        stream.until(lambda m: m.get("type") == "profile.updated")
        status, created = http_json(
            f"{server.base_url}/api/clusters/prof/actions", {"action": "create", "yaml": sized_pod("packed", 1)}
        )
        assert status == 200, created
        stream.until(lambda m: m.get("type") == "scheduler.cycle" and m.get("pod") == "default/packed")
    assert any(m.get("node") == "busy" for m in stream.received if m.get("type") == "scheduler.cycle")

    with _OPENER.open(f"{url}.yaml", timeout=10) as response:
        assert response.headers["Content-Type"] == "application/yaml"
        assert load_config(response.read(), "d.yaml") == load_config(BIN_PACKING, "sent.yaml")

    compare = {"pod": sized_pod("incoming", 1), "a": {"config": {"kind": "KubeSchedulerConfiguration"}}, "b": None}
    status, result = http_json(f"{server.base_url}/api/clusters/prof/compare", compare)
    assert status == 200, result
    # packed went to busy (3 of 4 CPUs), so spreading now prefers empty and packing busy.
    assert (result["a"]["selectedNode"], result["b"]["selectedNode"]) == ("empty", "busy")
