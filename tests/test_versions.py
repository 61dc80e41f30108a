"""Versions as data: each supported kube-scheduler version's gates, plugins and changes, and the
command line's --version / --feature-gates / --compare-version."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

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
    assert names36 == [*names34, "NodeDeclaredFeatures"]  # appended to MultiPoint
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
    # cherry-picked to v1.34.2 (#135023): a patch release answers as that patch does
    patched = _explain(inputs, capsys, "--version", "v1.34.2")
    assert patched["nodes"]["tainted"]["filter"]["reasons"] == ["node(s) had untolerated taint(s)"]
    assert get_version("1.34.1").git_version == "v1.34.1"


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


# --- behaviour switched by version ----------------------------------------------------------


def _cycle(version: str, nodes: list[dict], pods: list[dict], pod: dict, gates: str = "") -> dict:
    """One explain on a cluster given as objects; the answer's JSON."""
    from scheduler_core.api.loading import load_cluster, load_pod
    from scheduler_core.explain import explain, result_to_json

    cluster = load_cluster(json.dumps({"apiVersion": "v1", "kind": "List", "items": [*nodes, *pods]}), "cluster")
    profile = default_profile(get_version(version, gates))
    return result_to_json(explain(cluster, load_pod(json.dumps(pod), "pod"), profile, seed=0))


def _node(name: str, cpu: str = "4", memory: str = "8Gi", **status: object) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}, **status},
    }


def _pod(name: str, cpu: str = "0", memory: str = "0", node: str = "", **spec: object) -> dict:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v != "0"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": name},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": requests}}],
            **spec,
        },
        "status": {"phase": "Running" if node else "Pending"},
    }


def test_balanced_allocation_scores_the_change_from_v136() -> None:
    """kubernetes/kubernetes#135573: 50 + (50 + balance with the pod − balance without) / 2, with
    balance = int((1 − |f_cpu − f_mem| / 2) · 100). Nodes 4 cpu / 8Gi, the pod asks 2 cpu.
    n-empty: without (0, 0) → 100, with (.5, 0) → 75: 50 + 25 / 2 = 62.
    n-cpu (2 cpu used): without (.5, 0) → 75, with (1, 0) → 50: 50 + 25 / 2 = 62.
    n-fit (4Gi used): without (0, .5) → 75, with (.5, .5) → 100: 50 + 75 / 2 = 87 (Go truncates)."""
    nodes = [_node("n-empty"), _node("n-cpu"), _node("n-fit")]
    pods = [_pod("a", cpu="2", node="n-cpu"), _pod("b", memory="4Gi", node="n-fit")]
    pod = _pod("p", cpu="2")
    old = _cycle("1.35", nodes, pods, pod)["nodes"]
    new = _cycle("1.36", nodes, pods, pod)["nodes"]
    balanced = "NodeResourcesBalancedAllocation"
    # v1.35: (.5, 0) → 75; n-cpu (1, 0) → 50; n-fit (.5, .5) → 100
    assert {n: old[n]["scores"][balanced]["normalized"] for n in old} == {"n-empty": 75, "n-cpu": 50, "n-fit": 100}
    assert {n: new[n]["scores"][balanced]["normalized"] for n in new} == {"n-empty": 62, "n-cpu": 62, "n-fit": 87}


def test_node_declared_features_from_v136() -> None:
    """KEP-5328: hostNetwork with hostUsers false needs UserNamespacesHostNetworkSupport (v1.36's
    registry); the plugin is in the default profile from v1.36, its reason a constant there."""
    nodes = [_node("plain"), _node("declared", declaredFeatures=["UserNamespacesHostNetworkSupport"])]
    pod = _pod("p", cpu="1", hostNetwork=True, hostUsers=False)
    v36 = _cycle("1.36", nodes, [], pod)
    assert v36["nodes"]["plain"]["filter"] == {
        "plugin": "NodeDeclaredFeatures",
        "code": "UnschedulableAndUnresolvable",
        "reasons": ["node(s) didn't match Pod's required features"],
    }
    assert v36["selectedNode"] == "declared"
    assert _cycle("1.34", nodes, [], pod)["nodes"]["plain"]["feasible"]  # no such plugin in v1.34
    # v1.35: the gate is off by default; on, its registry lacks this feature but has RestartAllContainers
    rule = {"name": "c", "image": "busybox", "restartPolicyRules": [{"action": "RestartAllContainers"}]}
    restart = {**_pod("r"), "spec": {"containers": [rule]}}
    v35 = _cycle("1.35", nodes, [], restart, gates="NodeDeclaredFeatures=true")
    assert v35["nodes"]["plain"]["filter"]["reasons"] == [
        "node declared features check failed - unsatisfied requirements: RestartAllContainersOnContainerExits"
    ]
    assert _cycle("1.35", nodes, [], restart)["nodes"]["plain"]["feasible"]
    assert _cycle("1.35", nodes, [], pod, gates="NodeDeclaredFeatures=true")["nodes"]["plain"]["feasible"]


@pytest.mark.parametrize(
    ("operator", "toleration", "taint", "tolerated"),
    [
        ("Gt", "5", "7", True),  # taint 7 > toleration 5
        ("Gt", "7", "7", False),  # strict
        ("Lt", "10", "3", True),
        ("Lt", "10", "-3", True),
        ("Lt", "10", "010", False),  # not a canonical decimal integer: not tolerated
        ("Gt", "5", "9223372036854775808", False),  # over int64
    ],
)
def test_comparison_operators_behind_their_gate(operator: str, toleration: str, taint: str, tolerated: bool) -> None:
    """KEP-5471 (#134665, v1.35 alpha, off by default): Lt/Gt compare the taint's value with the
    toleration's as int64s; with the gate off they tolerate nothing."""
    nodes = [{**_node("n"), "spec": {"taints": [{"key": "tier", "value": taint, "effect": "NoSchedule"}]}}]
    pod = _pod("p", tolerations=[{"key": "tier", "operator": operator, "value": toleration, "effect": "NoSchedule"}])
    on = _cycle("1.35", nodes, [], pod, gates="TaintTolerationComparisonOperators=true")
    assert on["nodes"]["n"]["feasible"] is tolerated
    assert not _cycle("1.35", nodes, [], pod)["nodes"]["n"]["feasible"]


def test_volume_binding_scores_storage_capacity_in_v137() -> None:
    """KEP-4049 (StorageCapacityScoring, on in v1.37): a claim to provision is scored by the
    CSIStorageCapacity holding it, default shape 100 − utilization. 50Gi of 100Gi on n1 → 50;
    of 400Gi on n2 → 12% → 88. v1.36 (gate off): VolumeBinding's PreScore Skips."""
    objects = [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": {"name": "csi.example"},
            "spec": {"storageCapacity": True},
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "fast"},
            "provisioner": "csi.example",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": "default"},
            "spec": {
                "storageClassName": "fast",
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "50Gi"}},
            },
            "status": {"phase": "Pending"},
        },
    ]
    for node, size in (("n1", "100Gi"), ("n2", "400Gi")):
        objects.append(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "CSIStorageCapacity",
                "metadata": {"name": f"cap-{node}", "namespace": "kube-system"},
                "storageClassName": "fast",
                "capacity": size,
                "nodeTopology": {"matchLabels": {"kubernetes.io/hostname": node}},
            }
        )
    pod = _pod("p", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}])
    nodes = [_node("n1"), _node("n2")]
    v37 = _cycle("1.37", nodes, objects, pod)
    assert {n: v37["nodes"][n]["scores"]["VolumeBinding"]["normalized"] for n in ("n1", "n2")} == {"n1": 50, "n2": 88}
    assert "VolumeBinding" not in v37["skippedScorePlugins"]
    assert v37["selectedNode"] == "n2"
    assert "VolumeBinding" in _cycle("1.36", nodes, objects, pod)["skippedScorePlugins"]


@pytest.mark.parametrize(
    ("kubelets", "version", "why"),
    [
        (
            ["v1.35.2-eks-1", "v1.34.0", "v1.35.1"],
            "1.35",
            "the nodes run kubelet v1.35 (2 nodes), v1.34 (1 node); no kubelet",
        ),
        (["v1.29.0"], "1.34", "the nodes run kubelet v1.29 (1 node), older than v1.34, the oldest modelled"),
        (["v1.40.1"], "1.37", "the nodes run kubelet v1.40 (1 node), newer than v1.37, the newest modelled"),
    ],
)
def test_the_kubelets_suggest_the_version(kubelets: list[str], version: str, why: str) -> None:
    """The version skew policy: no kubelet is newer than its API server, so the newest kubelet's minor
    is the control plane's lower bound."""
    from scheduler_core.versions.suggest import suggest_version

    suggestion = suggest_version(kubelets)
    assert suggestion is not None and suggestion.version == version and suggestion.why.startswith(why)
    assert suggest_version(["", "unknown"]) is None


@pytest.mark.parametrize(
    ("server", "version", "why"),
    [
        ("v1.36.1", "1.36", "the dump's `kubectl version` reports the API server at v1.36.1 (its nodes run kubelet"),
        ("v1.35.0", "1.35", "the dump's `kubectl version` reports the API server at v1.35.0"),
        ("v1.31.4", "1.34", "the dump's `kubectl version` reports the API server at v1.31.4, older than v1.34"),
        ("v1.41.0", "1.37", "the dump's `kubectl version` reports the API server at v1.41.0, newer than v1.37"),
    ],
)
def test_the_dumps_api_server_names_the_version(server: str, version: str, why: str) -> None:
    """A `kubectl version` document names the control plane exactly: it wins over the kubelets."""
    from scheduler_core.versions.suggest import suggest_version

    suggestion = suggest_version(["v1.35.2"], server)
    assert suggestion is not None and (suggestion.version, suggestion.server) == (version, server)
    assert suggestion.why.startswith(why)
    assert suggestion.to_json()["server"] == server


def test_the_cli_reads_a_kubectl_version_document(tmp_path: Path) -> None:
    """`kubectl version -o yaml` as the first document of a YAML dump: kept out of the objects, named
    in the note, and answered as with --version."""
    from scheduler_core.api.loading import load_cluster_file

    dump = tmp_path / "dump.yaml"
    dump.write_text(
        "clientVersion: {gitVersion: v1.32.4}\nserverVersion: {gitVersion: v1.35.2, major: '1', minor: '35'}\n"
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}, nodeInfo: {kubeletVersion: v1.35.2}}\n"
    )
    cluster = load_cluster_file(str(dump))
    assert (cluster.server_version, [n.name for n in cluster.nodes]) == ("v1.35.2", ["n1"])
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "scheduler_core", "explain", "--cluster", str(dump), "--pod", str(pod)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        f"note: {dump}: the dump's `kubectl version` reports the API server at v1.35.2: answering as v1.37 "
        "(the default); --version 1.35 answers as the snapshot's"
    ) in proc.stderr


def test_compare_names_only_the_changes_behind_a_difference() -> None:
    """A message that differs because only v1.36 runs NodeDeclaredFeatures is caused by that plugin's
    changes, not by every change to a filter plugin both versions run (TaintToleration's here)."""
    from scheduler_core.versions.compare import compare_answers

    def answer(declared: bool) -> dict[str, Any]:
        plugins = ["NodeUnschedulable", "TaintToleration", *(["NodeDeclaredFeatures"] if declared else [])]
        rejected = {"plugin": "NodeDeclaredFeatures", "reasons": ["node(s) lack features"], "code": "Unschedulable"}
        return {
            "nodes": {
                "n1": {
                    "filter": rejected if declared else None,
                    "filters": [{"plugin": p} for p in plugins],
                    "scores": {},
                }
            },
            "message": "0/1 nodes are available: 1 node(s) lack features." if declared else None,
            "selectedNode": None if declared else "n1",
        }

    differences = compare_answers(answer(False), answer(True), get_version("1.34"), get_version("1.36"))
    causes = {d.what: {c.key for c in d.causes} for d in differences}
    declared = {"node-declared-features", "node-declared-features-constant-reason"}
    assert causes["plugins"] == declared
    assert causes["message"] == declared and causes["placement"] == declared  # not taint-reason-constant
