"""`python -m scheduler_core explain` on pods that ask for devices through ResourceClaims (DRA).

Three nodes; only `gpu-b` publishes a ResourceSlice, with two devices of which `gpu-0` is held by
another pod's claim. Upstream v1.34 keeps a pod whose claim is not created yet Pending at
DynamicResources' PreEnqueue (`pod "default/trainer": ResourceClaim not created yet`, the
resourceclaim package's text); with its claim it lands on `gpu-b` and gets `gpu-1`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

CLUSTER = """\
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: cpu-a, labels: {kubernetes.io/hostname: cpu-a}},
   status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: gpu-b, labels: {kubernetes.io/hostname: gpu-b}},
   status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: gpu-c, labels: {kubernetes.io/hostname: gpu-c}},
   status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}}
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.example.com}
  spec:
    selectors:
    - cel: {expression: 'device.driver == "gpu.example.com"'}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: gpu-b-gpu.example.com}
  spec:
    driver: gpu.example.com
    nodeName: gpu-b
    pool: {name: gpu-b, generation: 1, resourceSliceCount: 1}
    devices:
    - {name: gpu-0, attributes: {model: {string: a100}}}
    - {name: gpu-1, attributes: {model: {string: a100}}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {name: other-gpu, namespace: default, uid: other-uid}
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
  status:
    allocation:
      devices:
        results:
        - {request: gpu, driver: gpu.example.com, pool: gpu-b, device: gpu-0}
      nodeSelector:
        nodeSelectorTerms:
        - matchFields: [{key: metadata.name, operator: In, values: [gpu-b]}]
    reservedFor:
    - {resource: pods, name: other, uid: other-pod-uid}
"""

MY_CLAIM = """\
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {name: my-gpu, namespace: default, uid: my-uid}
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.example.com
          selectors:
          - cel: {expression: 'device.attributes["gpu.example.com"].model == "%s"'}
"""


def pod(claim: str) -> str:
    return textwrap.dedent(
        f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: trainer, namespace: default, uid: trainer-uid}}
        spec:
          containers:
          - name: trainer
            image: trainer
            resources: {{claims: [{{name: gpu}}]}}
          resourceClaims:
          - {claim}
        """
    )


def explain(tmp_path: Path, cluster: str, pod_yaml: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "cluster.yaml").write_text(cluster)
    (tmp_path / "pod.yaml").write_text(pod_yaml)
    return subprocess.run(
        [sys.executable, "-m", "scheduler_core", "explain", "--cluster", "cluster.yaml", "--pod", "pod.yaml", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        check=False,
    )


def test_a_claim_not_created_yet_keeps_the_pod_pending(tmp_path: Path) -> None:
    run = explain(tmp_path, CLUSTER, pod("{name: gpu, resourceClaimTemplateName: single-gpu}"))
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == (
        'Pending  PreEnqueue  DynamicResources: pod "default/trainer": ResourceClaim not created yet'
    )
    data = json.loads(explain(tmp_path, CLUSTER, pod("{name: gpu, resourceClaimTemplateName: x}"), "-o", "json").stdout)
    assert data["scheduled"] is False
    assert data["preEnqueue"] == {
        "plugin": "DynamicResources",
        "code": "UnschedulableAndUnresolvable",
        "reasons": ['pod "default/trainer": ResourceClaim not created yet'],
    }


def test_a_missing_claim_keeps_the_pod_pending(tmp_path: Path) -> None:
    run = explain(tmp_path, CLUSTER, pod("{name: gpu, resourceClaimName: my-gpu}"))
    assert run.stdout.splitlines()[0] == (
        'Pending  PreEnqueue  DynamicResources: resourceclaim.resource.k8s.io "my-gpu" not found'
    )


def test_the_pod_lands_where_a_free_device_is_and_explain_names_it(tmp_path: Path) -> None:
    cluster = CLUSTER + MY_CLAIM % "a100"
    run = explain(tmp_path, cluster, pod("{name: gpu, resourceClaimName: my-gpu}"))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].endswith("Successfully assigned default/trainer to gpu-b")
    assert "  cpu-a: DynamicResources UnschedulableAndUnresolvable: cannot allocate all claims" in lines
    assert "  gpu-b: default/my-gpu request gpu: gpu.example.com/gpu-b/gpu-1" in lines
    assert "    gpu.example.com/gpu-b/gpu-0: allocated to another claim" in lines

    data = json.loads(explain(tmp_path, cluster, pod("{name: gpu, resourceClaimName: my-gpu}"), "-o", "json").stdout)
    assert data["devices"]["claims"] == [
        {"claim": "default/my-gpu", "allocated": False, "devices": [], "reservedFor": [], "toAllocate": True}
    ]
    assert data["devices"]["nodes"] == {
        "gpu-b": {
            "requests": [
                {
                    "claim": "default/my-gpu",
                    "request": "gpu",
                    "chosen": ["gpu.example.com/gpu-b/gpu-1"],
                    "rejected": [{"device": "gpu.example.com/gpu-b/gpu-0", "why": "allocated to another claim"}],
                }
            ]
        }
    }


def test_a_selector_no_device_matches_leaves_the_pod_pending_with_the_reason(tmp_path: Path) -> None:
    cluster = CLUSTER + MY_CLAIM % "h100"
    run = explain(tmp_path, cluster, pod("{name: gpu, resourceClaimName: my-gpu}"))
    lines = run.stdout.splitlines()
    assert lines[0] == (
        "Warning  FailedScheduling  default-scheduler  0/3 nodes are available: 3 cannot allocate all claims. "
        "still not schedulable, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    why = 'claim default/my-gpu: selector #0 is false (device.attributes["gpu.example.com"].model == "h100")'
    assert f"    gpu.example.com/gpu-b/gpu-1: {why}" in lines


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (
            'device.attributes["gpu.example.com"].memory > 1',
            "claim default/my-gpu: selector #0: CEL runtime error: no such key: memory",
        ),
        (
            "device.nosuch",
            "claim default/my-gpu: selector #0: CEL compile error: compilation failed: ERROR: <input>:1:7",
        ),
    ],
)
def test_a_broken_selector_is_upstreams_error_not_a_traceback(tmp_path: Path, expression: str, message: str) -> None:
    cluster = (CLUSTER + MY_CLAIM % "a100").replace(
        'device.attributes["gpu.example.com"].model == "a100"', expression.replace("'", "''")
    )
    run = explain(tmp_path, cluster, pod("{name: gpu, resourceClaimName: my-gpu}"))
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    first = run.stdout.splitlines()[0]
    prefix = 'Warning  FailedScheduling  default-scheduler  running "DynamicResources" filter plugin: '
    assert first.startswith(prefix + message)
