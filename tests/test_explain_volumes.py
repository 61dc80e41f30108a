"""`python -m scheduler_core explain` on clusters with PersistentVolumeClaims, PersistentVolumes,
StorageClasses and CSINodes, as `kubectl get nodes,pods,pvc,pv,storageclasses,csinodes -o yaml` writes
them: the FailedScheduling message with the volume plugins' reasons, the per-node table, and bad input.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from scheduler_core.__main__ import main


def _nodes(zones: dict[str, str]) -> str:
    items = ""
    for name, zone in zones.items():
        items += f"""
        - apiVersion: v1
          kind: Node
          metadata:
            name: {name}
            labels:
              kubernetes.io/hostname: {name}
              topology.kubernetes.io/zone: {zone}
          status:
            allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}"""
    return items


STORAGE = """
        - apiVersion: storage.k8s.io/v1
          kind: StorageClass
          metadata:
            name: local
          provisioner: kubernetes.io/no-provisioner
          volumeBindingMode: WaitForFirstConsumer
        - apiVersion: storage.k8s.io/v1
          kind: StorageClass
          metadata:
            name: standard
          provisioner: ebs.csi.aws.com
        - apiVersion: v1
          kind: PersistentVolume
          metadata:
            name: pv-pinned
          spec:
            capacity: {storage: 10Gi}
            accessModes: [ReadWriteOnce]
            storageClassName: standard
            claimRef: {namespace: default, name: pinned}
            csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}
            nodeAffinity:
              required:
                nodeSelectorTerms:
                - matchExpressions:
                  - {key: kubernetes.io/hostname, operator: In, values: [elsewhere]}
          status: {phase: Bound}
        - apiVersion: v1
          kind: PersistentVolumeClaim
          metadata:
            name: pinned
            namespace: default
            annotations: {pv.kubernetes.io/bind-completed: "yes"}
          spec:
            accessModes: [ReadWriteOnce]
            storageClassName: standard
            resources: {requests: {storage: 10Gi}}
            volumeName: pv-pinned
          status: {phase: Bound}
        - apiVersion: v1
          kind: PersistentVolumeClaim
          metadata:
            name: local-data
            namespace: default
          spec:
            accessModes: [ReadWriteOnce]
            storageClassName: local
            resources: {requests: {storage: 1Gi}}
          status: {phase: Pending}
        - apiVersion: v1
          kind: PersistentVolume
          metadata:
            name: pv-orphan
          spec:
            capacity: {storage: 1Gi}
            accessModes: [ReadWriteOnce]
            storageClassName: local
            claimRef: {namespace: default, name: no-such-claim}
            local: {path: /mnt/disk}
            nodeAffinity:
              required:
                nodeSelectorTerms:
                - matchExpressions:
                  - {key: kubernetes.io/hostname, operator: In, values: [n1]}
          status: {phase: Released}"""


def _cluster(tmp_path: Path, zones: dict[str, str], extra: str = STORAGE) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(textwrap.dedent("apiVersion: v1\nkind: List\nitems:" + _nodes(zones) + extra).lstrip())
    return path


def _pod(tmp_path: Path, claim: str) -> Path:
    path = tmp_path / "pod.yaml"
    path.write_text(
        textwrap.dedent(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: app, namespace: default}}
        spec:
          containers: [{{name: c, image: nginx}}]
          volumes:
          - name: data
            persistentVolumeClaim: {{claimName: {claim}}}
        """)
    )
    return path


def _explain(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["explain", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


ZONES = {"n1": "a", "n2": "a", "n3": "b"}


def test_bound_claim_on_another_node(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cluster, pod = _cluster(tmp_path, ZONES), _pod(tmp_path, "pinned")
    code, out, err = _explain(["--cluster", str(cluster), "--pod", str(pod), "-o", "json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["message"] == (
        "0/3 nodes are available: 3 node(s) didn't match PersistentVolume's node affinity. no new claims to "
        "deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    assert data["nodes"]["n1"]["filter"] == {
        "plugin": "VolumeBinding",
        "code": "UnschedulableAndUnresolvable",
        "reasons": ["node(s) didn't match PersistentVolume's node affinity"],
    }


def test_local_volume_claim_without_a_free_pv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """WaitForFirstConsumer with no-provisioner: no available PV (pv-orphan is Released and claimed
    by a claim that does not exist) and no provisioning, on every node."""
    cluster, pod = _cluster(tmp_path, ZONES), _pod(tmp_path, "local-data")
    code, out, err = _explain(["--cluster", str(cluster), "--pod", str(pod)], capsys)
    assert code == 0, err
    assert out.startswith(
        "Warning  FailedScheduling  default-scheduler  0/3 nodes are available: 3 node(s) didn't find available "
        "persistent volumes to bind. no new claims to deallocate, preemption:"
    )
    header = next(line for line in out.splitlines() if line.startswith("NODE"))
    assert header.split()[8:12] == ["VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"]
    assert "  n1: VolumeBinding UnschedulableAndUnresolvable: node(s) didn't find available persistent volumes" in out


def test_pod_naming_a_missing_claim(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Upstream's own status: VolumeRestrictions' PreFilter, before VolumeBinding's."""
    cluster, pod = _cluster(tmp_path, ZONES), _pod(tmp_path, "nope")
    code, out, err = _explain(["--cluster", str(cluster), "--pod", str(pod), "-o", "json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["preFilter"] == {
        "plugin": "VolumeRestrictions",
        "code": "UnschedulableAndUnresolvable",
        "reasons": ['persistentvolumeclaim "nope" not found'],
    }
    assert data["message"].startswith('0/3 nodes are available: persistentvolumeclaim "nope" not found.')


def test_claim_in_a_zone_fits_only_there(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    zoned = """
        - apiVersion: v1
          kind: PersistentVolume
          metadata:
            name: pv-b
            labels: {topology.kubernetes.io/zone: b}
          spec:
            capacity: {storage: 1Gi}
            accessModes: [ReadWriteOnce]
            csi: {driver: ebs.csi.aws.com, volumeHandle: vol-b}
        - apiVersion: v1
          kind: PersistentVolumeClaim
          metadata:
            name: zoned
            annotations: {pv.kubernetes.io/bind-completed: "yes"}
          spec:
            accessModes: [ReadWriteOnce]
            volumeName: pv-b
            storageClassName: ""
        - apiVersion: storage.k8s.io/v1
          kind: CSINode
          metadata: {name: n3}
          spec:
            drivers:
            - {name: ebs.csi.aws.com, nodeID: i-3, allocatable: {count: 25}}"""
    cluster, pod = _cluster(tmp_path, ZONES, zoned), _pod(tmp_path, "zoned")
    code, out, err = _explain(["--cluster", str(cluster), "--pod", str(pod), "-o", "json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["selectedNode"] == "n3"
    assert data["nodes"]["n1"]["filter"]["plugin"] == "VolumeZone"
    assert data["nodes"]["n1"]["filter"]["reasons"] == ["node(s) had no available volume zone"]


def test_bad_storage_object_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = """
        - apiVersion: v1
          kind: PersistentVolumeClaim
          metadata: {name: weird}
          spec:
            accessModes: [ReadWriteSometimes]"""
    cluster, pod = _cluster(tmp_path, ZONES, bad), _pod(tmp_path, "weird")
    code, out, err = _explain(["--cluster", str(cluster), "--pod", str(pod)], capsys)
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    assert err.startswith(f"error: {cluster}:")
    assert 'items[3].spec.accessModes[0]: Unsupported value: "ReadWriteSometimes"' in err


def test_kubectl_json_storage_objects_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What `kubectl get pvc,pv,storageclasses,csinodes -o json` writes, nulls included."""
    items = [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {
                "name": "n1",
                "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "u"}],
            },
            "spec": {
                "drivers": [
                    {"name": "ebs.csi.aws.com", "nodeID": "i-1", "topologyKeys": None, "allocatable": {"count": 1}}
                ]
            },
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "gp3", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "ebs.csi.aws.com",
            "parameters": {"type": "gp3"},
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowVolumeExpansion": True,
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": "default", "finalizers": ["kubernetes.io/pvc-protection"]},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "8Gi"}},
                "storageClassName": "gp3",
                "volumeMode": "Filesystem",
                "selector": None,
            },
            "status": {"phase": "Pending"},
        },
    ]
    cluster = tmp_path / "cluster.json"
    node_items = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1", "topology.kubernetes.io/zone": "a"}},
            "spec": {"taints": None},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
    ]
    cluster.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [*node_items, *items]}))
    code, out, err = _explain(["--cluster", str(cluster), "--pod", str(_pod(tmp_path, "data")), "-o", "json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    # gp3 can provision on n1 (no allowedTopologies): the claim would be provisioned there.
    assert data["selectedNode"] == "n1"
