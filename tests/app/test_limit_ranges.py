"""LimitRanger at the browser's door and for controllers (clusterviz/limit_ranges.py): the same
defaults and refusals as through kubectl (tests/kubectl/test_limit_ranges.py); a ReplicaSet whose
pods a LimitRange forbids records upstream's FailedCreate event and the control loops settle."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from clusterviz import store
from clusterviz.controllers.runner import reconcile
from clusterviz.limit_ranges import ANNOTATION

from .conftest import node_yaml

LIMITS = """\
apiVersion: v1
kind: LimitRange
metadata: {name: limits}
spec:
  limits:
  - {type: Container, max: {cpu: "1"}, defaultRequest: {cpu: 250m}}
"""
WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, resources: {limits: {cpu: "2"}}}]
"""


def act(client: Client, body: dict[str, Any]) -> Any:
    return client.post("/api/clusters/lr/actions", json.dumps(body), content_type="application/json")


@pytest.mark.django_db
def test_the_browser_door_and_controllers_meet_the_same_limit_range(client: Client, make_cluster: Any) -> None:
    cluster = make_cluster("lr", node_yaml("node01", cpu="4", memory="8Gi"))
    assert act(client, {"action": "create", "yaml": LIMITS}).status_code == 200
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: nginx}]}\n"
    assert act(client, {"action": "create", "yaml": pod}).status_code == 200
    stored = store.get(cluster, "Pod", "default", "p")
    assert stored["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "1"}, "requests": {"cpu": "250m"}}
    assert stored["metadata"]["annotations"][ANNOTATION] == (
        "LimitRanger plugin set: cpu request for container c; cpu limit for container c"
    )

    greedy = pod.replace("name: p}", "name: greedy}").replace(
        "image: nginx}", 'image: nginx, resources: {limits: {cpu: "2"}}}'
    )
    refused = act(client, {"action": "create", "yaml": greedy})
    assert refused.status_code == 403
    assert (
        refused.json()["message"] == 'pods "greedy" is forbidden: maximum cpu usage per Container is 1, but limit is 2.'
    )
    with pytest.raises(store.NotFound):
        store.get(cluster, "Pod", "default", "greedy")

    assert act(client, {"action": "create", "yaml": WEB}).status_code == 200
    reconcile(cluster)  # settles: the ReplicaSet's pods are refused, not retried in a loop
    assert not [p for p in store.list_objects(cluster, "Pod") if p["metadata"]["name"].startswith("web-")]
    failures = [e for e in store.list_objects(cluster, "Event") if e["reason"] == "FailedCreate"]
    assert failures and failures[0]["type"] == "Warning"
    assert failures[0]["involvedObject"]["kind"] == "ReplicaSet"
    assert failures[0]["message"].startswith('Error creating: pods "web-')
    assert failures[0]["message"].endswith('" is forbidden: maximum cpu usage per Container is 1, but limit is 2.')
