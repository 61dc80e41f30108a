"""The pod GC's quarantine for pods created for a node that does not exist, and cluster slugs."""

from __future__ import annotations

import time
from typing import Any

import pytest

from clusterviz import services
from clusterviz.controllers import kubelet
from clusterviz.controllers.runner import reconcile, step_once
from clusterviz.models import KubeObject
from scheduler_core.api.loading import InputError
from tests.app.conftest import node_yaml

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: myapp}
spec:
  replicas: 2
  selector: {matchLabels: {app: myapp}}
  template:
    metadata: {labels: {app: myapp}}
    spec:
      nodeName: node09
      containers: [{name: myapp, image: "soscscs/myapp:v1"}]
"""


@pytest.mark.django_db
def test_pods_for_a_missing_node_wait_in_quarantine_instead_of_a_hot_loop(make_cluster: Any, monkeypatch: Any) -> None:
    cluster = make_cluster("c1", node_yaml("node01"))
    services.create_from_yaml(cluster, DEPLOYMENT, "kubectl")
    taken = reconcile(cluster, limit=200)
    assert taken < 50  # quiet: no create/delete loop
    pods = KubeObject.objects.filter(cluster=cluster, kind="Pod")
    assert pods.count() == 2 and {p.node_name for p in pods} == {"node09"}
    actor, deadline = step_once(cluster)
    assert actor is None and deadline is not None and 35 < deadline - time.time() <= 40.5
    # 41 s later the pod GC removes them and the ReplicaSet makes new ones (which wait again).
    real = time.time
    monkeypatch.setattr(kubelet.time, "time", lambda: real() + 41)
    before = set(pods.values_list("name", flat=True))
    actor, _ = step_once(cluster)
    assert actor == "kubelet"
    assert len(set(KubeObject.objects.filter(cluster=cluster, kind="Pod").values_list("name", flat=True)) & before) == 1


@pytest.mark.django_db
def test_slugs_are_dns_labels() -> None:
    with pytest.raises(InputError, match="slug: Invalid value"):
        services.create_cluster("class.1")
    assert services.create_cluster("class-1").slug == "class-1"
