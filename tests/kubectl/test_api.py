"""The endpoint over plain HTTP (what kubectl relies on, checked shape by shape; spec:
/work/shared/kubectl-api.md): discovery, OpenAPI, Tables, watch streams, server-side apply, dry
runs, preconditions, JSON patch, the status subresource. Needs the live server, not kubectl."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from .conftest import Cluster

pytestmark = pytest.mark.slow

AGGREGATED = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
)
TABLE = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "labels": {"app": "web", "tier": "fe"}},
    "spec": {"containers": [{"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]},
}
DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx"}]},
        },
    },
}


def call(
    cluster: Cluster, method: str, path: str, body: Any = None, content_type: str = "application/json", accept: str = ""
) -> Any:
    headers = {"Content-Type": content_type}
    if accept:
        headers["Accept"] = accept
    headers = {"Authorization": f"Bearer {cluster.token}", **(headers or {})}
    return cluster.server.request(method, f"/k8s/{cluster.slug}{path}", body, headers)


def test_version_discovery_and_openapi(api_cluster: Cluster) -> None:
    version = call(api_cluster, "GET", "/version").json()
    assert (version["major"], version["minor"], version["gitVersion"]) == ("1", "34", "v1.34.0")
    assert (version["emulationMinor"], version["minCompatibilityMinor"]) == ("34", "33")

    core = call(api_cluster, "GET", "/api", accept=AGGREGATED)
    assert core.headers["Content-Type"] == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    resources = {r["resource"]: r for r in core.json()["items"][0]["versions"][0]["resources"]}
    assert set(resources) == {
        "pods",
        "nodes",
        "events",
        "namespaces",
        "services",
        "endpoints",
        "configmaps",
        "secrets",
        "serviceaccounts",
        "limitranges",
        "resourcequotas",
        "persistentvolumeclaims",
        "persistentvolumes",
    }
    assert resources["persistentvolumes"]["scope"] == "Cluster" and resources["persistentvolumes"]["shortNames"] == [
        "pv"
    ]
    assert [(s["subresource"], s["verbs"]) for s in resources["pods"]["subresources"]] == [
        ("eviction", ["create"]),
        ("status", ["get", "patch", "update"]),
    ]
    assert resources["pods"]["shortNames"] == ["po"] and resources["pods"]["categories"] == ["all"]
    beta = call(
        api_cluster, "GET", "/apis", accept="application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
    )
    assert beta.json()["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
    apps = next(g for g in beta.json()["items"] if g["metadata"]["name"] == "apps")
    deployments = next(r for r in apps["versions"][0]["resources"] if r["resource"] == "deployments")
    assert [s["subresource"] for s in deployments["subresources"]] == ["scale", "status"]
    assert deployments["subresources"][0]["responseKind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}

    assert call(api_cluster, "GET", "/api").json()["kind"] == "APIVersions"
    assert [g["name"] for g in call(api_cluster, "GET", "/apis").json()["groups"]] == [
        "apps",
        "events.k8s.io",
        "scheduling.k8s.io",
        "batch",
        "discovery.k8s.io",
        "policy",
        "resource.k8s.io",
        "storage.k8s.io",
        "coordination.k8s.io",
        "authorization.k8s.io",
        "authentication.k8s.io",
    ]
    legacy = call(api_cluster, "GET", "/apis/apps/v1").json()
    assert [r["name"] for r in legacy["resources"]][:3] == ["deployments", "deployments/scale", "deployments/status"]

    index = call(api_cluster, "GET", "/openapi/v3").json()["paths"]
    # resolved against the host by kubectl, so the path prefix must be there
    assert index["api/v1"]["serverRelativeURL"].startswith(f"/k8s/{api_cluster.slug}/openapi/v3/api/v1?hash=")
    document = call(api_cluster, "GET", index["apis/apps/v1"]["serverRelativeURL"].split(api_cluster.slug, 1)[1])
    patch = document.json()["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "apps", "version": "v1", "kind": "Deployment"}
    assert {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}} in patch["parameters"]
    v2 = call(api_cluster, "GET", "/openapi/v2", accept="application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
    assert v2.status == 200 and v2.body == b"\n\x032.0"


def test_tables_lists_and_selectors(api_cluster: Cluster) -> None:
    assert call(api_cluster, "POST", "/api/v1/namespaces/default/pods", POD).status == 201
    api_cluster.wait_running("web")
    listed = call(api_cluster, "GET", "/api/v1/namespaces/default/pods").json()
    assert listed["kind"] == "PodList" and int(listed["metadata"]["resourceVersion"]) > 0
    table = call(api_cluster, "GET", "/api/v1/pods", accept=TABLE).json()
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Ready",
        "Status",
        "Restarts",
        "Age",
        "IP",
        "Node",
        "Nominated Node",
        "Readiness Gates",
    ]
    (row,) = table["rows"]
    assert row["cells"][:4] == ["web", "1/1", "Running", "0"]
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["metadata"]["namespace"] == "default"
    full = call(api_cluster, "GET", "/api/v1/pods?includeObject=Object", accept=TABLE).json()
    assert full["rows"][0]["object"]["kind"] == "Pod" and "spec" in full["rows"][0]["object"]

    def names(query: str) -> list[str]:
        body = call(api_cluster, "GET", f"/api/v1/namespaces/default/pods?{query}").json()
        return [item["metadata"]["name"] for item in body["items"]]

    assert names("labelSelector=app%3Dweb") == ["web"]
    assert names("labelSelector=tier+in+%28fe%2Cbe%29%2C%21gone") == ["web"]
    assert names("labelSelector=app%21%3Dweb") == []
    assert names("fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed") == ["web"]
    assert names("fieldSelector=spec.nodeName%3Dnowhere") == []
    refused = call(api_cluster, "GET", "/api/v1/namespaces/default/pods?fieldSelector=spec.foo%3Dx")
    assert refused.status == 400 and refused.json()["message"] == "field label not supported: spec.foo"
    empty = call(api_cluster, "GET", "/apis/apps/v1/namespaces/default/deployments", accept=TABLE).json()
    assert empty["rows"] == [] and empty["columnDefinitions"][1]["name"] == "Ready"


def _watch(cluster: Cluster, query: str, accept: str = "application/json") -> list[dict[str, Any]]:
    request = urllib.request.Request(
        f"{cluster.server.url}/k8s/{cluster.slug}/api/v1/namespaces/default/pods?watch=true&{query}",
        headers={"Accept": accept},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.headers["Content-Type"] == "application/json"
        return [json.loads(line) for line in response.read().splitlines() if line.strip()]


def test_watch_streams_changes_after_a_resource_version(api_cluster: Cluster) -> None:
    rv = call(api_cluster, "GET", "/api/v1/namespaces/default/pods").json()["metadata"]["resourceVersion"]
    call(api_cluster, "POST", "/api/v1/namespaces/default/pods", POD)
    api_cluster.wait_running("web")
    events = _watch(api_cluster, f"resourceVersion={rv}&timeoutSeconds=1")
    assert events[0]["type"] == "ADDED"
    assert all(e["object"]["kind"] == "Pod" and e["object"]["apiVersion"] == "v1" for e in events)
    phases = [e["object"]["status"]["phase"] for e in events]
    assert phases[0] == "Pending" and phases[-1] == "Running"
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert versions == sorted(versions) and versions[0] > int(rv)

    # no resourceVersion: the current state as synthetic ADDED events
    current = _watch(api_cluster, "timeoutSeconds=1&fieldSelector=metadata.name%3Dweb")
    assert [(e["type"], e["object"]["status"]["phase"]) for e in current] == [("ADDED", "Running")]
    tables = _watch(api_cluster, "timeoutSeconds=1", accept=TABLE)
    assert tables[0]["object"]["kind"] == "Table" and tables[0]["object"]["rows"][0]["cells"][0] == "web"


def test_server_side_apply_dry_run_and_preconditions(api_cluster: Cluster) -> None:
    path = "/apis/apps/v1/namespaces/default/deployments/web?fieldManager=kubectl&force=false"
    created = call(api_cluster, "PATCH", path, DEPLOYMENT, "application/apply-patch+yaml")
    assert created.status == 201 and created.json()["spec"]["replicas"] == 2
    changed = {**DEPLOYMENT, "spec": {**DEPLOYMENT["spec"], "replicas": 3}}
    updated = call(api_cluster, "PATCH", path, changed, "application/apply-patch+yaml")
    assert updated.status == 200
    assert api_cluster.objects("Deployment")["default/web"]["spec"]["replicas"] == 3

    dry = call(api_cluster, "POST", "/api/v1/namespaces/default/pods?dryRun=All", {**POD, "metadata": {"name": "dry"}})
    assert dry.status == 201 and dry.json()["metadata"]["name"] == "dry"
    assert "default/dry" not in api_cluster.pods()

    node = call(api_cluster, "GET", "/api/v1/nodes/node03").json()
    stale = {**node, "metadata": {**node["metadata"], "resourceVersion": "1"}}
    conflict = call(api_cluster, "PUT", "/api/v1/nodes/node03", stale)
    assert conflict.status == 409 and conflict.json()["reason"] == "Conflict"
    assert conflict.json()["message"].startswith('Operation cannot be fulfilled on nodes "node03"')

    scale = call(api_cluster, "GET", "/apis/apps/v1/namespaces/default/deployments/web/scale").json()
    assert (scale["apiVersion"], scale["kind"], scale["spec"]["replicas"]) == ("autoscaling/v1", "Scale", 3)
    negative = call(
        api_cluster,
        "PATCH",
        "/apis/apps/v1/namespaces/default/deployments/web/scale",
        {"spec": {"replicas": -1}},
        "application/merge-patch+json",
    )
    assert negative.status == 422 and "spec.replicas: Invalid value: -1" in negative.json()["message"]


def test_json_patch_and_the_status_subresource(api_cluster: Cluster) -> None:
    patched = call(
        api_cluster,
        "PATCH",
        "/api/v1/nodes/node02",
        [{"op": "add", "path": "/metadata/labels/zone", "value": "a"}],
        "application/json-patch+json",
    )
    assert patched.status == 200
    assert api_cluster.node("node02")["metadata"]["labels"]["zone"] == "a"
    failed = call(
        api_cluster,
        "PATCH",
        "/api/v1/nodes/node02",
        [{"op": "test", "path": "/metadata/labels/zone", "value": "b"}],
        "application/json-patch+json",
    )
    assert failed.status == 422

    # status changes through the main resource are ignored (as a real server does) ...
    merge = "application/merge-patch+json"
    call(api_cluster, "PATCH", "/api/v1/nodes/node02", {"status": {"allocatable": {"cpu": "8"}}}, merge)
    assert api_cluster.node("node02")["status"]["allocatable"]["cpu"] == "2"
    # ... and made through /status, which changes nothing else
    status = call(
        api_cluster,
        "PATCH",
        "/api/v1/nodes/node02/status",
        {"status": {"allocatable": {"cpu": "8"}}, "metadata": {"labels": {"zone": "b"}}},
        merge,
    )
    assert status.status == 200
    node = api_cluster.node("node02")
    assert node["status"]["allocatable"]["cpu"] == "8" and node["metadata"]["labels"]["zone"] == "a"
    assert api_cluster.changes("Node", "node02")[-1] == ("MODIFIED", "kubectl")


def test_a_json_patch_that_does_not_apply_is_refused_as_upstream(cluster: Cluster) -> None:
    before = cluster.dump()
    ops = '[{"op":"replace","path":"/spec/taints/01","value":{"key":"a","effect":"NoSchedule"}}]'
    refused = cluster.kubectl("patch", "node", "node01", "--type=json", "-p", ops, ok=False)
    assert refused.stderr.startswith("The request is invalid: patch: "), refused.stderr
    assert cluster.dump() == before
