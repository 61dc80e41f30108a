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
    assert [row[0] for row in storage[1:]] == ["csidrivers", "csistoragecapacities", "storageclasses"]


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
