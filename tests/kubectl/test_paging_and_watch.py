"""List paging (`limit`/`continue`), watches from a compacted resourceVersion and the root paths of
`kubectl get --raw`, as kube-apiserver 1.32 answers them."""

from __future__ import annotations

import base64
import json
import sqlite3
from typing import Any

import pytest

from clusterviz.kube_api.paging import CONTINUE_EXPIRED

from .conftest import Cluster

pytestmark = pytest.mark.slow

PODS = "".join(
    f"""\
---
apiVersion: v1
kind: Pod
metadata: {{name: p{i}}}
spec:
  nodeName: node0{1 + i % 3}
  containers:
  - {{name: app, image: nginx:1.27}}
"""
    for i in range(1, 6)
)


def _list(cluster: Cluster, query: str) -> Any:
    return cluster.server.request("GET", f"/k8s/{cluster.slug}/api/v1/namespaces/default/pods?{query}")


def _names(body: dict[str, Any]) -> list[str]:
    return [item["metadata"]["name"] for item in body["items"]]


def _compact(cluster: Cluster, through: int) -> None:
    """What etcd's compaction does to the versions a list or watch may start from: the watch log up
    to `through` pruned."""
    with sqlite3.connect(cluster.server.db, timeout=10) as db:
        (cid,) = db.execute("SELECT id FROM clusterviz_cluster WHERE slug = ?", (cluster.slug,)).fetchone()
        db.execute("DELETE FROM clusterviz_change WHERE cluster_id = ? AND resource_version <= ?", (cid, through))


def test_kubectl_pages_a_list_in_chunks(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("pods.yaml", PODS))
    listed = cluster.kubectl("get", "pods", "-A", "--chunk-size=2", "-v=6")
    assert [row[1] for row in listed.rows()[1:]] == ["p1", "p2", "p3", "p4", "p5"]
    requests = [line for line in listed.stderr.splitlines() if "/api/v1/pods?" in line]
    assert len(requests) == 3 and all("limit=2" in line for line in requests)
    assert "continue=" not in requests[0] and all("continue=" in line for line in requests[1:])


def test_a_continued_list_is_consistent_and_a_stale_token_expires(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("pods.yaml", PODS))
    first = _list(cluster, "limit=2").json()
    assert _names(first) == ["p1", "p2"]
    assert first["metadata"]["remainingItemCount"] == 3
    token = first["metadata"]["continue"]
    decoded = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    assert decoded == {
        "v": "meta.k8s.io/v1",
        "rv": int(first["metadata"]["resourceVersion"]),
        "start": "default/p2\x00",
    }

    cluster.kubectl("delete", "pod", "p4", "--grace-period=0", "--force")
    cluster.kubectl("run", "p35", "--image=nginx")
    second = _list(cluster, f"limit=2&continue={token}").json()
    # as the cluster was when the list began: p4 still there, p35 not yet
    assert _names(second) == ["p3", "p4"]
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert second["metadata"]["remainingItemCount"] == 1

    _compact(cluster, int(first["metadata"]["resourceVersion"]) + 1)
    stale = _list(cluster, f"limit=2&continue={second['metadata']['continue']}")
    status = stale.json()
    assert (stale.status, status["reason"], status["message"]) == (410, "Expired", CONTINUE_EXPIRED)
    assert CONTINUE_EXPIRED == (
        "The provided continue parameter is too old to display a consistent list result. You can start a new "
        "list without the continue parameter, or use the continue value from the response to continue this list."
    )
    latest = _list(cluster, f"limit=2&continue={status['metadata']['continue']}").json()  # rv -1: the latest
    assert _names(latest) == ["p5"]

    tampered = _list(cluster, f"limit=2&continue={token[:-3]}!!x").json()
    assert (tampered["code"], tampered["reason"]) == (400, "BadRequest")
    assert tampered["message"] == (
        f"invalid continue token: continue key is not valid: illegal base64 data at input byte {len(token) - 3}"
    )


def test_a_watch_from_a_compacted_version_is_gone(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("pods.yaml", PODS))
    rv = int(_list(cluster, "").json()["metadata"]["resourceVersion"])
    _compact(cluster, rv - 2)
    reply = _list(cluster, "watch=true&resourceVersion=2")
    event = json.loads(reply.body.splitlines()[0])
    assert event["type"] == "ERROR"
    assert (event["object"]["code"], event["object"]["reason"]) == (410, "Expired")
    assert event["object"]["message"] == f"too old resource version: 2 ({rv - 2})"


def test_kubectl_raw_root_paths(cluster: Cluster) -> None:
    # the root path carries no cluster: the owner token kubectl sends names it
    assert json.loads(cluster.kubectl("get", "--raw", "/version").stdout)["gitVersion"] == "v1.34.0"
    assert cluster.kubectl("get", "--raw", "/livez").stdout == "ok"
    assert cluster.kubectl("get", "--raw", "/readyz").stdout == "ok"
    index = json.loads(cluster.kubectl("get", "--raw", "/openapi/v3").stdout)["paths"]
    assert index["api/v1"]["serverRelativeURL"].startswith("/openapi/v3/api/v1?hash=")
    document = json.loads(cluster.kubectl("get", "--raw", index["apis/apps/v1"]["serverRelativeURL"]).stdout)
    assert "io.k8s.api.apps.v1.Deployment" in document["components"]["schemas"]
    # under the cluster's prefix, as the kubeconfig's server path has it
    assert cluster.kubectl("get", "--raw", f"/k8s/{cluster.slug}/healthz").stdout == "ok"
