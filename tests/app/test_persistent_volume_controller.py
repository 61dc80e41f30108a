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
from tests.app import create, node_yaml, pod_yaml


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


def test_an_immediate_claim_takes_the_smallest_volume_that_fits(cluster: Cluster) -> None:
    """syncUnboundClaim + FindMatchingVolume: the 10Gi volume over the 50Gi one for a 1Gi claim; the
    volume's claimRef and the claim's volumeName, annotations and status as the controller writes them."""
    big = json.loads(volume_json("big"))
    big["spec"]["capacity"]["storage"] = "50Gi"
    create(cluster, json.dumps(big), volume_json("small"), claim_json("data"))
    reconcile(cluster)
    assert phases(cluster) == {"big": "Available", "small": "Bound"}
    [claim] = store.list_objects(cluster, "PersistentVolumeClaim")
    assert claim["spec"]["volumeName"] == "small"
    assert claim["metadata"]["annotations"] == {
        "pv.kubernetes.io/bind-completed": "yes",
        "pv.kubernetes.io/bound-by-controller": "yes",
    }
    assert claim["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "10Gi"}}
    small = next(v for v in store.list_objects(cluster, "PersistentVolume") if v["metadata"]["name"] == "small")
    ref = small["spec"]["claimRef"]
    assert (ref["kind"], ref["namespace"], ref["name"], ref["uid"]) == (
        "PersistentVolumeClaim",
        "default",
        "data",
        claim["metadata"]["uid"],
    )
    assert small["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}


def test_a_wait_for_first_consumer_claim_waits_and_too_big_a_claim_stays_pending(cluster: Cluster) -> None:
    wffc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "local"},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    local = json.loads(volume_json("local-1"))
    local["spec"]["storageClassName"] = "local"
    waiting = json.loads(claim_json("waits"))
    waiting["spec"]["storageClassName"] = "local"
    huge = json.loads(claim_json("huge"))
    huge["spec"]["resources"]["requests"]["storage"] = "1Ti"
    create(cluster, json.dumps(wffc), json.dumps(local), volume_json("plain"), json.dumps(waiting), json.dumps(huge))
    reconcile(cluster)
    assert phases(cluster) == {"local-1": "Available", "plain": "Available"}
    assert all(c["status"]["phase"] == "Pending" for c in store.list_objects(cluster, "PersistentVolumeClaim"))


def test_a_pod_on_a_bound_local_volume_lands_on_the_volumes_node(cluster: Cluster) -> None:
    """The claim bound by the controller, VolumeBinding reads the volume's node affinity: the pod goes
    to node02, where the volume is, though node01 is emptier (VolumeBinding's Filter)."""
    local = json.loads(volume_json("disk-node02"))
    local["spec"]["nodeAffinity"] = {
        "required": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["node02"]}]}
            ]
        }
    }
    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    create(cluster, node_yaml("node01", cpu="8"), node_yaml("node02"), json.dumps(local), claim_json("data"))
    reconcile(cluster)
    create(cluster, pod_yaml("db", volumes=volumes))
    reconcile(cluster)
    [pod] = store.list_objects(cluster, "Pod")
    assert pod["spec"]["nodeName"] == "node02"


def _local(name: str, node: str) -> str:
    volume = json.loads(volume_json(name))
    volume["spec"]["storageClassName"] = "local"
    volume["spec"]["nodeAffinity"] = {
        "required": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}
            ]
        }
    }
    return json.dumps(volume)


def _local_claim(name: str) -> str:
    claim = json.loads(claim_json(name))
    claim["spec"]["storageClassName"] = "local"
    return json.dumps(claim)


LOCAL_CLASS = json.dumps(
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "local"},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
)


@pytest.mark.parametrize("pace", ["instant", "slow"])
def test_first_consumer_claims_bind_to_the_volume_on_their_pods_node(cluster: Cluster, pace: str) -> None:
    """WaitForFirstConsumer: the scheduler's PreBind writes the matched volume's claimRef, the
    controller binds the claim; each pod gets its own node's volume (none taken twice, the batch of
    the instant pace included), and the third pod, with no volume left, stays Pending with
    VolumeBinding's reason."""
    cluster.pace = pace
    cluster.save(update_fields=["pace"])
    create(cluster, node_yaml("node01"), node_yaml("node02"), LOCAL_CLASS)
    create(cluster, _local("disk-1", "node01"), _local("disk-2", "node02"))
    reconcile(cluster)
    for name in ("a", "b", "c"):
        volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": f"data-{name}"}}]
        create(cluster, _local_claim(f"data-{name}"), pod_yaml(name, volumes=volumes))
    reconcile(cluster)
    pods = {p["metadata"]["name"]: p for p in store.list_objects(cluster, "Pod")}
    placed = {name: pods[name]["spec"].get("nodeName") for name in ("a", "b", "c")}
    claims = {c["metadata"]["name"]: c for c in store.list_objects(cluster, "PersistentVolumeClaim")}
    bound = {name: claims[f"data-{name}"]["spec"].get("volumeName") for name in ("a", "b", "c")}
    on = {"disk-1": "node01", "disk-2": "node02"}
    assert sorted(n for n in placed.values() if n) == ["node01", "node02"]
    for name, node in placed.items():
        if node:
            assert on[bound[name]] == node and claims[f"data-{name}"]["status"]["phase"] == "Bound"
        else:
            assert bound[name] is None
            condition = pods[name]["status"]["conditions"][0]
            assert "didn't find available persistent volumes to bind" in condition["message"]
    assert phases(cluster) == {"disk-1": "Bound", "disk-2": "Bound"}
