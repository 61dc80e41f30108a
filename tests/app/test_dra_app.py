"""DRA in the app: the claim controller makes a pod's claim from its template, the scheduler writes
the allocation PreBind chose before it binds the pod, the claim is released when the pod goes."""

from __future__ import annotations

from typing import Any

import pytest

from clusterviz import services, store
from clusterviz.controllers import resourceclaim, runner, scheduler

from .conftest import node_yaml

pytestmark = pytest.mark.django_db

DRA_OBJECTS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n2-gpus}
spec:
  driver: gpu.example.com
  nodeName: n2
  pool: {name: n2, resourceSliceCount: 1}
  devices:
  - {name: gpu-0}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: single-gpu}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
"""


def gpu_pod(name: str) -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\n"
        "spec:\n  containers: [{name: c, image: i, resources: {claims: [{name: gpu}]}}]\n"
        "  resourceClaims: [{name: gpu, resourceClaimTemplateName: single-gpu}]\n"
    )


def claims(cluster: Any) -> list[dict[str, Any]]:
    return store.list_objects(cluster, "ResourceClaim")


def test_claim_made_allocated_on_bind_and_released(make_cluster: Any) -> None:
    cluster = make_cluster("dra", node_yaml("n1") + "---\n" + node_yaml("n2") + "---\n" + DRA_OBJECTS, "paused")
    services.create_from_yaml(cluster, gpu_pod("trainer"), "kubectl")
    assert resourceclaim.sync_resource_claims(cluster)  # the claim, then the pod's status
    [claim] = claims(cluster)
    pod = store.get(cluster, "Pod", "default", "trainer")
    assert pod["status"]["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}]
    assert not resourceclaim.sync_resource_claims(cluster)
    assert scheduler.schedule_next(cluster)
    pod = store.get(cluster, "Pod", "default", "trainer")
    assert pod["spec"]["nodeName"] == "n2"
    [claim] = claims(cluster)
    assert claim["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert claim["status"]["allocation"]["devices"]["results"] == [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "n2", "device": "gpu-0"}
    ]
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "trainer", "uid": pod["metadata"]["uid"]}]
    store.delete(cluster, "Pod", "default", "trainer", "kubelet")
    runner.reconcile(cluster)
    assert claims(cluster) == []


def test_the_batch_scheduler_writes_every_claim_before_its_pod(make_cluster: Any) -> None:
    objects = DRA_OBJECTS.replace("  - {name: gpu-0}\n", "  - {name: gpu-0}\n  - {name: gpu-1}\n")
    cluster = make_cluster("dra2", node_yaml("n1") + "---\n" + node_yaml("n2") + "---\n" + objects, "paused")
    for name in ("a", "b", "c"):
        services.create_from_yaml(cluster, gpu_pod(name), "kubectl")
    while resourceclaim.sync_resource_claims(cluster):
        pass
    assert scheduler.schedule_batch(cluster, limit=10)
    pods = {p["metadata"]["name"]: p for p in store.list_objects(cluster, "Pod")}
    assert pods["a"]["spec"]["nodeName"] == pods["b"]["spec"]["nodeName"] == "n2"
    assert not pods["c"]["spec"].get("nodeName")  # two devices, three pods
    devices = sorted(
        r["device"]
        for c in claims(cluster)
        if "allocation" in c.get("status", {})
        for r in c["status"]["allocation"]["devices"]["results"]
    )
    assert devices == ["gpu-0", "gpu-1"]


STORAGE = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: csi.example.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: csi.example.com}
spec: {storageCapacity: true}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: n1-fast}
storageClassName: fast
capacity: 1Gi
nodeTopology: {matchLabels: {kubernetes.io/hostname: n1}}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: n2-fast}
storageClassName: fast
capacity: 100Gi
nodeTopology: {matchLabels: {kubernetes.io/hostname: n2}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  storageClassName: fast
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 10Gi}}
"""
DB_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers: [{name: db, image: postgres}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
"""


def test_csi_storage_capacity_keeps_a_volume_off_the_node_without_room(make_cluster: Any) -> None:
    cluster = make_cluster("csi", node_yaml("n1") + "---\n" + node_yaml("n2"), "paused")
    scheduler.schedule_next(cluster)  # the cache exists first: the storage objects come through the log
    services.create_from_yaml(cluster, STORAGE, "kubectl")
    services.create_from_yaml(cluster, DB_POD, "kubectl")
    assert scheduler.schedule_next(cluster)
    assert store.get(cluster, "Pod", "default", "db")["spec"]["nodeName"] == "n2"


def test_csi_storage_capacity_nowhere_enough_keeps_the_pod_pending(make_cluster: Any) -> None:
    cluster = make_cluster("csi2", node_yaml("n1") + "---\n" + node_yaml("n2"), "paused")
    services.create_from_yaml(cluster, STORAGE.replace("capacity: 100Gi", "capacity: 5Gi"), "kubectl")
    services.create_from_yaml(cluster, DB_POD, "kubectl")
    assert scheduler.schedule_next(cluster)
    pod = store.get(cluster, "Pod", "default", "db")
    assert not pod["spec"].get("nodeName")
    [condition] = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert condition["message"] == (
        "0/2 nodes are available: 2 node(s) did not have enough free storage. "
        "no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
