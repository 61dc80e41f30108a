"""The PersistentVolume controller's phases (pv_controller.go syncVolume) through the control loop:
Available without a claim or pre-bound to a claim that has not taken it, Bound once its claim names
it, Released when that bound claim is gone."""

from __future__ import annotations

import json
from typing import Any

import pytest

from clusterviz import services, store
from clusterviz.controllers.runner import reconcile
from clusterviz.models import Cluster
from tests.app import create


@pytest.fixture
def cluster(db: None) -> Cluster:
    return services.create_cluster("volumes-test")


def volume_json(name: str, claim: dict[str, str] | None = None) -> str:
    spec: dict[str, Any] = {
        "capacity": {"storage": "10Gi"},
        "accessModes": ["ReadWriteOnce"],
        "hostPath": {"path": "/d"},
    }
    if claim is not None:
        spec["claimRef"] = {"namespace": "default", **claim}
    return json.dumps({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec})


def claim_json(name: str, volume: str = "") -> str:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    if volume:
        spec["volumeName"] = volume
    return json.dumps({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name}, "spec": spec})


def phases(cluster: Cluster) -> dict[str, str]:
    return {v["metadata"]["name"]: v["status"]["phase"] for v in store.list_objects(cluster, "PersistentVolume")}


def test_volume_phases_follow_their_claims(cluster: Cluster) -> None:
    create(
        cluster,
        volume_json("free"),
        volume_json("prebound", {"name": "later"}),
        volume_json("taken", {"name": "data", "uid": "u1"}),
    )
    stored = store.list_objects(cluster, "PersistentVolume")[0]
    assert stored["status"] == {"phase": "Pending"} and stored["spec"]["hostPath"] == {"path": "/d", "type": ""}
    create(cluster, claim_json("data", volume="taken"))
    reconcile(cluster)
    assert phases(cluster) == {"free": "Available", "prebound": "Available", "taken": "Bound"}
    services.delete_object(cluster, "PersistentVolumeClaim", "default", "data", "kubectl")
    reconcile(cluster)
    assert phases(cluster)["taken"] == "Released"
