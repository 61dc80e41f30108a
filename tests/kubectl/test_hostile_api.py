"""Hostile requests to the Kubernetes API on both servers the README names — `./dev run`'s
(`manage.py runserver`, i.e. Daphne) and uvicorn: each is refused with the Status a kube-apiserver
sends (never a 5xx), the cluster stays byte-identical, and the server keeps serving."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import Cluster, KubeServer

pytestmark = pytest.mark.slow

MiB = 1024 * 1024
PODS = "/api/v1/namespaces/default/pods"
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "c", "image": "x"}]},
}


@pytest.fixture(scope="module", params=["runserver", "uvicorn"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeServer]:
    live = KubeServer(tmp_path_factory.mktemp(f"hostile-{request.param}"), request.param, pool_size=1)
    live.start()
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture(scope="module")
def target(server: KubeServer, tmp_path_factory: pytest.TempPathFactory) -> Cluster:
    scratch = tmp_path_factory.mktemp("hostile-cluster")
    return Cluster(server, server.pool[0], scratch, scratch / "cache")


def refused(
    cluster: Cluster, method: str, path: str, body: Any, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """Send a request that must be refused: returns its Status after checking that it is a 4xx
    Status, that nothing changed, and that the server still answers."""
    before = cluster.dump()
    response = cluster.server.request(method, path, body, headers)
    assert 400 <= response.status < 500, (response.status, response.body[:500])
    status = response.json()
    assert status["kind"] == "Status" and status["status"] == "Failure" and status["code"] == response.status
    assert "Traceback" not in status["message"]
    assert cluster.dump() == before
    alive = cluster.server.request("GET", f"/k8s/{cluster.slug}/version")
    assert alive.status == 200
    return status


def owner(cluster: Cluster) -> dict[str, str]:
    return {"Authorization": f"Bearer {cluster.token}"}


def test_a_20_mib_body_is_413_request_entity_too_large(target: Cluster) -> None:
    body = json.dumps({**POD, "metadata": {"name": "p", "annotations": {"a": "x" * (20 * MiB)}}}).encode()
    status = refused(target, "POST", f"/k8s/{target.slug}{PODS}", body, owner(target))
    assert status["code"] == 413 and status["reason"] == "RequestEntityTooLarge"
    assert status["message"].startswith("Request entity too large: limit is ")


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"[" * 100_000 + b"]" * 100_000, id="100000-deep-list"),
        pytest.param(b'{"a":' * 50_000 + b"1" + b"}" * 50_000, id="50000-deep-object"),
        pytest.param(b'{"metadata":' * 500 + b"{}" + b"}" * 500, id="500-deep-object"),
        pytest.param(b'{"spec": {"replicas": ' + b"9" * 5000 + b"}}", id="5000-digit-integer"),
    ],
)
@pytest.mark.parametrize(
    ("method", "path", "content_type"),
    [
        ("POST", PODS, "application/json"),
        ("PUT", "/api/v1/nodes/node01", "application/json"),
        ("PATCH", "/api/v1/nodes/node01", "application/merge-patch+json"),
        ("PATCH", "/api/v1/nodes/node01", "application/strategic-merge-patch+json"),
        ("PATCH", "/api/v1/nodes/node01", "application/json-patch+json"),
        ("PATCH", "/api/v1/nodes/node01?fieldManager=kubectl", "application/apply-patch+yaml"),
        ("DELETE", "/api/v1/nodes/node01", "application/json"),
    ],
)
def test_deeply_nested_or_huge_json_is_a_400(
    target: Cluster, body: bytes, method: str, path: str, content_type: str
) -> None:
    headers = {**owner(target), "Content-Type": content_type}
    status = refused(target, method, f"/k8s/{target.slug}{path}", body, headers)
    assert status["code"] == 400 and status["reason"] == "BadRequest", status


@pytest.mark.parametrize(
    "token",
    [
        pytest.param("%C3%A9", id="non-ascii"),
        pytest.param("%E2%80%8B" * 10, id="zero-width-spaces"),
        pytest.param("%00", id="nul"),
        pytest.param("t" * 5000, id="5000-chars"),
    ],
)
def test_a_hostile_token_in_the_path_is_401_unauthorized(target: Cluster, token: str) -> None:
    status = refused(target, "POST", f"/k8s/{target.slug}/key/{token}{PODS}", POD)
    assert status["code"] in (401, 403) and status["reason"] in ("Unauthorized", "Forbidden")


@pytest.mark.parametrize("token", ["é", "\u00ff" * 300, "x" * 8000])
def test_a_hostile_bearer_token_is_401_unauthorized(target: Cluster, token: str) -> None:
    status = refused(target, "POST", f"/k8s/{target.slug}{PODS}", POD, {"Authorization": f"Bearer {token}"})
    assert status["code"] == 401 and status["reason"] == "Unauthorized"


@pytest.mark.parametrize("slug", ["%C3%A9", "a" * 300, "x" * 5000, "%00"])
def test_a_hostile_slug_is_a_4xx_status(target: Cluster, slug: str) -> None:
    for path in (f"/k8s/{slug}{PODS}", f"/k8s/{slug}/key/{target.token}{PODS}"):
        refused(target, "POST", path, POD)
        refused(target, "GET", path, None)


def test_the_owner_still_writes_after_all_that(target: Cluster, tmp_path: Path) -> None:
    created = target.server.request("POST", f"/k8s/{target.slug}{PODS}", POD, owner(target))
    assert created.status == 201, created.body
