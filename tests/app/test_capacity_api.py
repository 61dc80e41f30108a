"""The capacity what-ifs over HTTP (clusterviz/capacity_views.py): the core's answers on the cluster's
own objects, for anyone who may view it, and nothing changes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from clusterviz.models import Change, KubeObject

from .conftest import node_yaml

NODES = "\n---\n".join(
    node_yaml(f"n{k}", cpu="2", labels={"topology.kubernetes.io/zone": "ab"[k % 2]}) for k in range(3)
)
WEB = """
apiVersion: v1
kind: Pod
metadata:
  name: web-{k}
  namespace: default
  labels: {{app: web}}
  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: web-rs, uid: rs-uid, controller: true}}]
spec:
  nodeName: n0
  containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: "1"}}}}}}]
"""


def post(client: Client, slug: str, body: Any) -> Any:
    return client.post(f"/api/clusters/{slug}/capacity", json.dumps(body), content_type="application/json")


@pytest.fixture
def cluster(make_cluster: Any) -> Any:
    return make_cluster("cap", NODES + "\n---\n" + "\n---\n".join(WEB.format(k=k) for k in range(2)))


@pytest.mark.django_db
def test_drain_over_http_moves_the_pods_and_changes_nothing(client: Client, cluster: Any) -> None:
    objects, changes = KubeObject.objects.count(), Change.objects.count()
    response = post(client, "cap", {"query": "drain", "nodes": ["n0"]})
    assert response.status_code == 200, response.content
    report = response.json()
    assert report["nodes"] == ["n0"] and report["evicted"] == 2 and report["rescheduled"] == 2
    assert {p["from"] for p in report["placements"]} == {"n0"}
    assert {p["node"] for p in report["placements"]} <= {"n1", "n2"}
    assert report["changedNodes"]["n0"]["pods"] == [2, 0]
    assert (KubeObject.objects.count(), Change.objects.count()) == (objects, changes)
    node = KubeObject.objects.get(kind="Node", name="n0")
    assert not node.body.get("spec", {}).get("unschedulable")


@pytest.mark.django_db
def test_fit_and_add_over_http(client: Client, cluster: Any) -> None:
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: probe}\n"
        "spec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: 500m}}}]\n"
    )
    report = post(client, "cap", {"query": "fit", "pod": pod}).json()
    assert report["fits"] == 8 and report["perNode"] == {"n1": 4, "n2": 4}  # n0 is full
    assert report["next"]["message"].startswith("0/3 nodes are available: 3 Insufficient cpu.")
    added = post(client, "cap", {"query": "add", "like": "n1", "count": 2}).json()
    assert added["added"] == ["n1-new-1", "n1-new-2"] and added["pending"] == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"query": "shrink"}, "query: Unsupported value: 'shrink'"),
        ({"query": "drain", "zone": "mars"}, "no node matches zone mars"),
        ({"query": "drain", "selector": "a in (b"}, "--selector: unable to parse requirement"),
        ({"query": "fit", "workload": "deployment/nope"}, 'deployments.apps "nope" not found in namespace "default"'),
        ({"query": "fit", "pod": "kind: Pod\nmetadata: {name: x}\nspec: {containers: 3}\n"}, "pod.yaml:3"),
        ({"query": "add", "like": "n1", "count": 0}, "count: must be a whole number from 1 to 1000"),
        ({"query": "add", "like": "nope"}, 'nodes "nope" not found'),
    ],
)
def test_bad_what_ifs_are_named_and_change_nothing(client: Client, cluster: Any, body: Any, message: str) -> None:
    response = post(client, "cap", body)
    assert response.status_code == 400, response.content
    assert message in response.json()["message"]


@pytest.mark.django_db
def test_a_follower_without_the_edit_key_may_ask_too(cluster: Any) -> None:
    response = post(Client(), "cap", {"query": "drain", "zone": "a"})
    assert response.status_code == 200 and response.json()["nodes"] == ["n0", "n2"]


@pytest.mark.django_db
def test_the_same_question_of_the_same_cluster_is_answered_once(client: Client, cluster: Any, monkeypatch: Any) -> None:
    from clusterviz import capacity_queries

    runs: list[Any] = []
    real = capacity_queries._run
    monkeypatch.setattr(capacity_queries, "_run", lambda *args: runs.append(args) or real(*args))
    body = {"query": "drain", "nodes": ["n0"]}
    first, second = post(client, "cap", body).json(), post(Client(), "cap", body).json()
    assert first == second and len(runs) == 1
    client.post(
        "/api/clusters/cap/actions", json.dumps({"action": "cordon", "node": "n2"}), content_type="application/json"
    )
    assert post(client, "cap", body).json()["placements"][0]["node"] == "n1" and len(runs) == 2  # changed: asked again
