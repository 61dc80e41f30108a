"""The resource.k8s.io/v1 kinds (DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate)
and the storage.k8s.io/v1 kinds VolumeBinding reads, driven by the real kubectl: discovery, `get`'s
columns as printers.go prints them, explain, strict fields, refusals in kube-apiserver's words."""

from __future__ import annotations

import pytest

from .conftest import Cluster

pytestmark = pytest.mark.slow

GPU_CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
"""
SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node01-gpus}
spec:
  driver: gpu.example.com
  nodeName: node01
  pool: {name: node01, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      model: {string: a100}
  - name: gpu-1
    attributes:
      model: {string: a100}
"""
TEMPLATE = """\
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
CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-gpu}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors:
        - cel: {expression: 'device.attributes["gpu.example.com"].model == "a100"'}
"""
CAPACITY = """\
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: fast-node01}
storageClassName: fast
capacity: 100Gi
nodeTopology:
  matchLabels: {kubernetes.io/hostname: node01}
"""


def test_discovery_lists_the_dra_and_storage_kinds(cluster: Cluster) -> None:
    rows = cluster.kubectl("api-resources", "--api-group=resource.k8s.io").rows()
    names = [row[0] for row in rows[1:]]
    assert names == ["deviceclasses", "resourceclaims", "resourceclaimtemplates", "resourceslices"]
    assert rows[1][1:] == ["resource.k8s.io/v1", "false", "DeviceClass"]
    assert rows[2][1:] == ["resource.k8s.io/v1", "true", "ResourceClaim"]
    storage = cluster.kubectl("api-resources", "--api-group=storage.k8s.io").rows()
    assert [row[0] for row in storage[1:]] == ["csidrivers", "csinodes", "csistoragecapacities", "storageclasses"]


def test_create_and_get_the_four_kinds_with_their_columns(cluster: Cluster) -> None:
    for name, text in (("class", GPU_CLASS), ("slice", SLICE), ("template", TEMPLATE), ("claim", CLAIM)):
        cluster.kubectl("create", "-f", cluster.write(f"{name}.yaml", text))
    assert cluster.kubectl("get", "deviceclasses").rows()[0] == ["NAME", "AGE"]
    slices = cluster.kubectl("get", "resourceslices").rows()
    assert slices[0] == ["NAME", "NODE", "DRIVER", "POOL", "AGE"]
    assert slices[1][:4] == ["node01-gpus", "node01", "gpu.example.com", "node01"]
    assert cluster.kubectl("get", "resourceclaimtemplates").rows()[1][0] == "single-gpu"
    claims = cluster.kubectl("get", "resourceclaims").rows()
    assert claims[0] == ["NAME", "STATE", "AGE"]
    assert claims[1][:2] == ["shared-gpu", "pending"]
    stored = cluster.objects("ResourceClaim")["default/shared-gpu"]
    # pkg/apis/resource/v1 defaults.go: one device, ExactCount
    assert stored["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] == "ExactCount"
    assert stored["spec"]["devices"]["requests"][0]["exactly"]["count"] == 1
    assert "namespace" not in cluster.objects("ResourceSlice")["node01-gpus"]["metadata"]


def test_a_malformed_cel_selector_is_refused_as_kube_apiserver_refuses_it(cluster: Cluster) -> None:
    bad = GPU_CLASS.replace('device.driver == "gpu.example.com"', "device.driver == ")
    out = cluster.kubectl("create", "-f", cluster.write("bad.yaml", bad), ok=False)
    assert out.stderr.startswith(
        'The DeviceClass "gpu.example.com" is invalid: spec.selectors[0].cel.expression: Invalid value: '
        '"device.driver == ": compilation failed: '
    )
    assert cluster.objects("DeviceClass") == {}


def test_a_request_without_a_device_class_and_a_slice_with_duplicate_devices(cluster: Cluster) -> None:
    no_class = CLAIM.replace("deviceClassName: gpu.example.com", "allocationMode: ExactCount")
    out = cluster.kubectl("create", "-f", cluster.write("noclass.yaml", no_class), ok=False)
    assert out.stderr == (
        'The ResourceClaim "shared-gpu" is invalid: spec.devices.requests[0].exactly.deviceClassName: Required value\n'
    )
    twice = SLICE.replace("name: gpu-1", "name: gpu-0")
    out = cluster.kubectl("create", "-f", cluster.write("twice.yaml", twice), ok=False)
    assert out.stderr == (
        'The ResourceSlice "node01-gpus" is invalid: spec.devices[1].name: Duplicate value: "gpu-0"\n'
    )
    assert cluster.objects("ResourceClaim") == {} and cluster.objects("ResourceSlice") == {}


def test_strict_fields_and_explain(cluster: Cluster) -> None:
    typo = TEMPLATE.replace("deviceClassName", "deviceClasName")
    out = cluster.kubectl("create", "-f", cluster.write("typo.yaml", typo), ok=False)
    assert 'unknown field "spec.spec.devices.requests[0].exactly.deviceClasName"' in out.stderr
    explained = cluster.kubectl("explain", "resourceclaim.spec.devices.requests.exactly").stdout
    assert "KIND:       ResourceClaim" in explained
    assert "deviceClassName\t<string> -required-" in explained
    assert "DeviceClassName references a specific DeviceClass" in explained


def test_csi_storage_capacity_and_storage_classes(cluster: Cluster) -> None:
    cluster.kubectl("create", "-f", cluster.write("capacity.yaml", CAPACITY))
    rows = cluster.kubectl("get", "csistoragecapacities").rows()
    assert rows == [["NAME", "STORAGECLASSNAME", "CAPACITY"], ["fast-node01", "fast", "100Gi"]]
    cluster.kubectl(
        "create",
        "-f",
        cluster.write(
            "sc.yaml",
            "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: fast\n  annotations:\n"
            "    storageclass.kubernetes.io/is-default-class: 'true'\nprovisioner: csi.example.com\n"
            "volumeBindingMode: WaitForFirstConsumer\n",
        ),
    )
    sc = cluster.kubectl("get", "sc").rows()
    assert sc[0] == ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"]
    assert sc[1][:5] == ["fast", "(default)", "csi.example.com", "Delete", "WaitForFirstConsumer"]


VOLUME = """\
apiVersion: v1
kind: PersistentVolume
metadata: {name: local-node01}
spec:
  capacity: {storage: 50Gi}
  accessModes: [ReadOnlyMany, ReadWriteOnce]
  storageClassName: local
  local: {path: /mnt/disks/ssd1}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node01]}]
"""
CSI_NODE = """\
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: node01}
spec:
  drivers:
  - {name: ebs.csi.aws.com, nodeID: i-0123, allocatable: {count: 25}, topologyKeys: [topology.ebs.csi.aws.com/zone]}
"""


def test_persistent_volumes_and_csi_nodes_are_served(cluster: Cluster) -> None:
    """`kubectl get pv` and `kubectl get csinodes` as against a real cluster: the volume stored with
    its defaults, Pending until the PersistentVolume controller makes it Available, the columns of
    printPersistentVolume (access modes in RWO, ROX order) and printCSINode."""
    cluster.kubectl("create", "-f", cluster.write("pv.yaml", VOLUME))
    stored = cluster.objects("PersistentVolume")["local-node01"]
    assert (stored["spec"]["persistentVolumeReclaimPolicy"], stored["spec"]["volumeMode"]) == ("Retain", "Filesystem")
    cluster.wait(
        lambda: cluster.objects("PersistentVolume")["local-node01"]["status"]["phase"] == "Available",
        what="the volume Available",
    )
    header, row = cluster.kubectl("get", "pv").lines
    assert header.split() == [
        "NAME", "CAPACITY", "ACCESS", "MODES", "RECLAIM", "POLICY", "STATUS", "CLAIM", "STORAGECLASS",
        "VOLUMEATTRIBUTESCLASS", "REASON", "AGE",
    ]  # fmt: skip
    assert row.split()[:7] == ["local-node01", "50Gi", "RWO,ROX", "Retain", "Available", "local", "<unset>"]
    cluster.kubectl("create", "-f", cluster.write("csinode.yaml", CSI_NODE))
    assert cluster.kubectl("get", "csinodes").rows()[0] == ["NAME", "DRIVERS", "AGE"]
    assert cluster.kubectl("get", "csinode", "node01").rows()[1][:2] == ["node01", "1"]
    refused = cluster.kubectl("create", "-f", cluster.write("bad.yaml", VOLUME.replace("50Gi", "fifty")), ok=False)
    assert refused.stderr.startswith(
        'Error from server (BadRequest): error when creating "bad.yaml": PersistentVolume in version "v1" cannot be '
        "handled as a PersistentVolume: quantities must match the regular expression"
    )
    cluster.kubectl("delete", "pv", "local-node01")
    assert cluster.objects("PersistentVolume") == {}


TRAINER = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  containers:
  - name: train
    image: trainer:1
    resources:
      claims: [{name: gpu}]
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: single-gpu}
"""


def _events(cluster: Cluster, reason: str) -> list[str]:
    out = cluster.kubectl("get", "events", f"--field-selector=reason={reason}", "-o", "jsonpath={.items[*].message}")
    return [m for m in out.stdout.split("\n") if m]


def test_a_gpu_pod_gets_its_claim_made_allocated_and_released(cluster: Cluster) -> None:
    for name, text in (("class", GPU_CLASS), ("slice", SLICE), ("template", TEMPLATE)):
        cluster.kubectl("create", "-f", cluster.write(f"{name}.yaml", text))
    cluster.kubectl("create", "-f", cluster.write("trainer.yaml", TRAINER))
    pod = cluster.wait_running("trainer")["default/trainer"]
    assert pod["spec"]["nodeName"] == "node01"  # the only node with the devices
    [status] = pod["status"]["resourceClaimStatuses"]
    claim_name = status["resourceClaimName"]
    assert (
        status["name"] == "gpu" and claim_name.startswith("trainer-gpu-") and len(claim_name) == len("trainer-gpu-") + 5
    )
    claim = cluster.objects("ResourceClaim")[f"default/{claim_name}"]
    assert claim["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"}
    [owner] = claim["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == ("Pod", "trainer", pod["metadata"]["uid"])
    [result] = claim["status"]["allocation"]["devices"]["results"]
    assert (result["request"], result["driver"], result["pool"], result["device"]) == (
        "gpu",
        "gpu.example.com",
        "node01",
        "gpu-0",
    )
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "trainer", "uid": pod["metadata"]["uid"]}]
    rows = cluster.kubectl("get", "resourceclaims").rows()
    assert rows[1][:2] == [claim_name, "allocated,reserved"]
    assert cluster.kubectl("delete", "pod", "trainer", "--wait=true").stdout == 'pod "trainer" deleted\n'
    cluster.wait(lambda: cluster.objects("ResourceClaim") == {}, what="the pod's claim released and removed")


def test_a_pod_whose_template_is_missing_stays_pending_until_it_exists(cluster: Cluster) -> None:
    for name, text in (("class", GPU_CLASS), ("slice", SLICE)):
        cluster.kubectl("create", "-f", cluster.write(f"{name}.yaml", text))
    cluster.kubectl("create", "-f", cluster.write("trainer.yaml", TRAINER))
    cluster.wait(lambda: _events(cluster, "FailedResourceClaimCreation"), what="the controller's warning")
    assert _events(cluster, "FailedResourceClaimCreation")[0] == (
        'PodResourceClaim gpu: resource claim template "single-gpu": '
        'resourceclaimtemplate.resource.k8s.io "single-gpu" not found'
    )
    message = cluster.wait(lambda: _events(cluster, "FailedScheduling"), what="the scheduler's verdict")[0]
    assert message == (
        '0/3 nodes are available: pod "default/trainer": ResourceClaim not created yet. '
        "no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    assert cluster.pods()["default/trainer"]["spec"].get("nodeName") is None
    cluster.kubectl("create", "-f", cluster.write("template.yaml", TEMPLATE))
    assert cluster.wait_running("trainer")["default/trainer"]["spec"]["nodeName"] == "node01"


def test_two_pods_share_one_claim_and_a_third_waits_for_a_free_device(cluster: Cluster) -> None:
    one_gpu = SLICE.replace("  - name: gpu-1\n    attributes:\n      model: {string: a100}\n", "")
    for name, text in (("class", GPU_CLASS), ("slice", one_gpu), ("claim", CLAIM), ("template", TEMPLATE)):
        cluster.kubectl("create", "-f", cluster.write(f"{name}.yaml", text))
    shared = TRAINER.replace("resourceClaimTemplateName: single-gpu", "resourceClaimName: shared-gpu")
    for pod in ("a", "b"):
        cluster.kubectl("create", "-f", cluster.write(f"{pod}.yaml", shared.replace("name: trainer", f"name: {pod}")))
    pods = cluster.wait_running("a", "b")
    assert pods["default/a"]["spec"]["nodeName"] == pods["default/b"]["spec"]["nodeName"] == "node01"
    reserved = cluster.objects("ResourceClaim")["default/shared-gpu"]["status"]["reservedFor"]
    assert sorted(r["name"] for r in reserved) == ["a", "b"]
    cluster.kubectl("create", "-f", cluster.write("trainer.yaml", TRAINER))  # its own claim: no device is free
    message = cluster.wait(lambda: _events(cluster, "FailedScheduling"), what="the third pod's verdict")[0]
    assert message.startswith("0/3 nodes are available: ")
    assert "cannot allocate all claims" in message
    cluster.kubectl("delete", "pod", "a", "b", "--wait=true")
    # the shared claim is released when its last consumer goes: its device is free again
    assert cluster.wait_running("trainer", timeout=20)["default/trainer"]["spec"]["nodeName"] == "node01"
    shared_claim = cluster.objects("ResourceClaim")["default/shared-gpu"]
    assert "allocation" not in shared_claim.get("status", {}) and "finalizers" not in shared_claim["metadata"]


def test_a_claim_deleted_while_in_use_stays_until_its_pod_goes(cluster: Cluster) -> None:
    for name, text in (("class", GPU_CLASS), ("slice", SLICE), ("claim", CLAIM)):
        cluster.kubectl("create", "-f", cluster.write(f"{name}.yaml", text))
    shared = TRAINER.replace("resourceClaimTemplateName: single-gpu", "resourceClaimName: shared-gpu")
    cluster.kubectl("create", "-f", cluster.write("trainer.yaml", shared))
    cluster.wait_running("trainer")
    out = cluster.kubectl("delete", "resourceclaim", "shared-gpu", "--wait=false")
    assert out.stdout == 'resourceclaim.resource.k8s.io "shared-gpu" deleted\n'
    # the delete-protection finalizer keeps it while the pod uses it (printers.go: deleted,allocated,reserved)
    assert cluster.kubectl("get", "resourceclaims").rows()[1][:2] == ["shared-gpu", "deleted,allocated,reserved"]
    cluster.kubectl("delete", "pod", "trainer", "--wait=true")
    cluster.wait(lambda: cluster.objects("ResourceClaim") == {}, what="the claim removed with its last consumer")
