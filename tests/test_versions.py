"""Versions as data: each supported kube-scheduler version's gates, plugins and changes, and the
command line's --version / --feature-gates / --compare-version."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler_core.__main__ import main
from scheduler_core.api.loading import InputError
from scheduler_core.framework.plugin_args import validate_plugin_args
from scheduler_core.framework.profile import default_profile, load_profile
from scheduler_core.plugins.registry import new_framework
from scheduler_core.versions import NEWEST, SUPPORTED, get_version

REPO = Path(__file__).resolve().parent.parent

CLUSTER = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: tainted}
  spec:
    taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
- apiVersion: v1
  kind: Node
  metadata: {name: small}
  status: {allocatable: {cpu: "1", memory: 8Gi, pods: "110"}}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers:
  - name: c
    image: nginx
    resources: {requests: {cpu: "2"}}
"""


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "pod.yaml").write_text(POD)
    return str(tmp_path / "cluster.yaml"), str(tmp_path / "pod.yaml")


# --- gates as upstream's versioned specs give them ------------------------------------------


@pytest.mark.parametrize(
    ("gate", "defaults"),
    [
        # pkg/features/kube_features.go: (1.33, false, Alpha), (1.36, true, Beta)
        ("DRAPartitionableDevices", {34: False, 35: False, 36: True, 37: True}),
        # (1.33, false, Alpha), (1.37, true, Beta)
        ("StorageCapacityScoring", {34: False, 35: False, 36: False, 37: True}),
        # (1.35, false, Alpha), (1.36, true, Beta), (1.37, true, GA, locked)
        ("NodeDeclaredFeatures", {35: False, 36: True, 37: True}),
        ("DRAPrioritizedList", {34: True, 35: True, 36: True, 37: True}),
    ],
)
def test_gate_defaults_per_version(gate: str, defaults: dict[int, bool]) -> None:
    for minor, expected in defaults.items():
        assert get_version(minor).gates.enabled(gate) is expected, (gate, minor)


def test_a_gate_the_version_lacks_is_unrecognized() -> None:
    with pytest.raises(InputError, match=r"unrecognized feature gate: NodeDeclaredFeatures .*v1\.34"):
        get_version("1.34", "NodeDeclaredFeatures=true")
    with pytest.raises(InputError, match="unrecognized feature gate: SidecarContainers"):
        get_version("1.37", "SidecarContainers=true")  # removed in v1.37 (#137755)
    assert get_version("1.36", "SidecarContainers=true").gates.enabled("SidecarContainers")


def test_locked_gates_and_bad_values_are_refused() -> None:
    with pytest.raises(
        InputError, match="cannot set feature gate DynamicResourceAllocation to false, feature is locked"
    ):
        get_version("1.35", "DynamicResourceAllocation=false")
    with pytest.raises(
        InputError, match=r'invalid value of PodLevelResources=yes, err: strconv.ParseBool: parsing "yes"'
    ):
        get_version("1.35", "PodLevelResources=yes")
    with pytest.raises(InputError, match="missing bool value for PodLevelResources"):
        get_version("1.35", "PodLevelResources")
    # a gate whose "on" behaviour is not modelled cannot be turned on
    with pytest.raises(InputError, match="GenericWorkload=true: the Workload API and gang scheduling are not modelled"):
        get_version("1.37", "GenericWorkload=true")


def test_turning_a_gate_off_and_all_beta() -> None:
    version = get_version("1.36", "DRAPartitionableDevices=false")
    assert not version.gates.enabled("DRAPartitionableDevices")
    assert get_version("1.36", "AllBeta=false").gates.enabled("DRAPartitionableDevices") is False
    assert get_version("1.36", "AllBeta=false,DRADeviceTaints=true").gates.enabled("DRADeviceTaints")


def test_version_names_and_range() -> None:
    assert [get_version(m).git_version for m in SUPPORTED] == ["v1.34.0", "v1.35.0", "v1.36.0", "v1.37.0"]
    assert get_version().minor == NEWEST
    assert get_version("v1.36.3").minor == 36
    for text in ("1.20", "1.38", "2.0", "latest"):
        with pytest.raises(InputError, match=r"supported: v1\.34 to v1\.37"):
            get_version(text)


# --- default plugins and profiles per version -----------------------------------------------


def test_default_plugins_per_version() -> None:
    names34 = [ref.name for ref in default_profile(get_version(34)).multi_point.enabled]
    names36 = [ref.name for ref in default_profile(get_version(36)).multi_point.enabled]
    assert "NodeDeclaredFeatures" not in names34 and len(names34) == 19
    assert names36[names36.index("NodeAffinity") + 1] == "NodeDeclaredFeatures"
    assert "NodeDeclaredFeatures" not in [r.name for r in default_profile(get_version(35)).multi_point.enabled]
    framework = new_framework(default_profile(get_version(37)))
    assert "NodeDeclaredFeatures" in framework.filter_plugin_names


def test_a_profile_naming_a_plugin_of_a_later_version() -> None:
    config = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    filter:
      enabled:
      - name: NodeDeclaredFeatures
"""
    with pytest.raises(InputError) as caught:
        load_profile(config, "sched.yaml", version=get_version("1.34"))
    assert 'FilterPlugin "NodeDeclaredFeatures" does not exist in kube-scheduler v1.34' in str(caught.value)
    assert "sched.yaml:7" in str(caught.value)
    load_profile(config, "sched.yaml", version=get_version("1.36"))


def test_volume_binding_shape_needs_storage_capacity_scoring() -> None:
    args = {"shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]}
    assert "turn on the feature gate StorageCapacityScoring" in validate_plugin_args("VolumeBinding", args)[0][1]
    assert validate_plugin_args("VolumeBinding", args, get_version("1.37")) == []
    bad = {"shape": [{"utilization": 50, "score": 10}, {"utilization": 40, "score": 0}]}
    assert validate_plugin_args("VolumeBinding", bad, get_version("1.37")) == [
        (("shape", 1, "utilization"), "Invalid value: 40: values must be sorted in increasing order")
    ]


# --- the command line ---------------------------------------------------------------------------


def _explain(inputs: tuple[str, str], capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    cluster, pod = inputs
    code = main(["explain", "--cluster", cluster, "--pod", pod, "--seed", "0", *extra, "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_the_taint_reason_differs_between_v134_and_v135(
    inputs: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """kubernetes/kubernetes#134740 (v1.35): the reason no longer names the taint."""
    old = _explain(inputs, capsys, "--version", "1.34")
    new = _explain(inputs, capsys, "--version", "1.35")
    assert old["nodes"]["tainted"]["filter"]["reasons"] == ["node(s) had untolerated taint {dedicated: gpu}"]
    assert new["nodes"]["tainted"]["filter"]["reasons"] == ["node(s) had untolerated taint(s)"]
    assert old["message"] == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {dedicated: gpu}. "
        "no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    assert "1 node(s) had untolerated taint(s)." in new["message"]


def test_compare_version_names_the_cause(inputs: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    body = _explain(inputs, capsys, "--version", "1.34", "--compare-version", "1.35")
    assert body["versions"] == ["1.34", "1.35"]
    kinds = {d["what"]: d for d in body["differences"]}
    assert set(kinds) == {"filter", "message"}
    assert kinds["filter"]["nodes"] == ["tainted"]
    assert [c["source"] for c in kinds["filter"]["causes"]] == ["kubernetes/kubernetes#134740"]
    assert [c["change"] for c in kinds["message"]["causes"]] == ["taint-reason-constant"]
    cluster, pod = inputs
    assert main(["explain", "--cluster", cluster, "--pod", pod, "--version", "1.34", "--compare-version", "1.35"]) == 0
    text = capsys.readouterr().out
    assert "Compared: kube-scheduler v1.34 and v1.35" in text
    assert "because: TaintToleration's Filter reason is the constant" in text
    assert "kubernetes/kubernetes#134740; since v1.35" in text


def test_same_answer_in_two_versions(inputs: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    body = _explain(inputs, capsys, "--version", "1.35", "--compare-version", "1.35")
    assert body["differences"] == []


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--version", "1.20"], "error: --version 1.20: unsupported Kubernetes version; supported: v1.34 to v1.37"),
        (["--feature-gates", "Nope=true"], "error: --feature-gates: unrecognized feature gate: Nope"),
        (["--compare-version", "9.9"], "error: --compare-version 9.9: unsupported Kubernetes version"),
    ],
)
def test_bad_versions_exit_2_with_one_line(inputs: tuple[str, str], argv: list[str], line: str) -> None:
    cluster, pod = inputs
    out = subprocess.run(
        [sys.executable, "-m", "scheduler_core", "explain", "--cluster", cluster, "--pod", pod, *argv],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert out.returncode == 2
    assert out.stdout == ""
    assert len(out.stderr.splitlines()) == 1 and out.stderr.startswith(line), out.stderr
