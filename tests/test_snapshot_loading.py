"""Snapshots at real scale: `kubectl get … -A -o json|yaml` dumps as users have them.

The dumps come from `scheduler_core.synthetic` (nodes with 20–40 images, pods with managedFields,
status and owner references, workload and storage objects). Errors of big inputs are located at
line (and column for syntax), parse and validation alike; unread kinds are skipped and counted.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scheduler_core.__main__ import main
from scheduler_core.api.limits import MAX_OBJECT_BYTES, MAX_YAML_NODES
from scheduler_core.api.loading import InputError, load_cluster, load_cluster_file, load_yaml_documents
from scheduler_core.synthetic import SnapshotSpec, dump_json, dump_yaml, generate_objects, pending_pod

REPO = Path(__file__).resolve().parent.parent


def dump(spec: SnapshotSpec, output: str) -> str:
    out = io.StringIO()
    (dump_json if output == "json" else dump_yaml)(generate_objects(spec), out)
    return out.getvalue()


@pytest.fixture(scope="module")
def issue_dump() -> dict[str, str]:
    """The 100-node / 500-pod cluster of the issue, in both formats."""
    spec = SnapshotSpec(nodes=100, pods=500, seed=7)
    return {"json": dump(spec, "json"), "yaml": dump(spec, "yaml")}


def error_of(text: str | bytes, source: str = "c.json", **kwargs: int) -> str:
    with pytest.raises(InputError) as caught:
        load_cluster(text, source, **kwargs)
    message = str(caught.value)
    assert "\n" not in message
    return message


def line_of(text: str, needle: str, start: int = 0) -> int:
    return text.count("\n", 0, text.index(needle, start)) + 1


# --- what loads --------------------------------------------------------------------------------------


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_the_issues_100_node_dump_loads(issue_dump: dict[str, str], output: str) -> None:
    text = issue_dump[output]
    assert len(text) > 4_000_000  # over the 100,000-node limit of whole streams the issue met
    cluster = load_cluster(text, f"c.{output}")
    assert (len(cluster.nodes), len(cluster.pods)) == (100, 500)
    assert {ns.metadata.name for ns in cluster.namespaces} >= {"default", "kube-system"}
    assert {pc.metadata.name for pc in cluster.priority_classes} >= {"default-priority", "batch-low"}
    assert {w.kind for w in cluster.workloads} == {
        "ReplicaSet",
        "Deployment",
        "Service",
        "StatefulSet",
        "DaemonSet",
        "Job",
    }
    assert len(cluster.csi_nodes) == 100 and cluster.claims and cluster.volumes and cluster.storage_classes
    assert cluster.pdbs
    # kinds the scheduler does not read are counted in one notice, never an error
    assert set(cluster.skipped) == {"ConfigMap"} and cluster.skipped["ConfigMap"] > 0
    notice = cluster.skipped_notice()
    assert notice and notice.startswith("skipped ") and f"ConfigMap ({cluster.skipped['ConfigMap']})" in notice


def test_json_and_yaml_give_the_same_objects(issue_dump: dict[str, str]) -> None:
    from_json = load_cluster(issue_dump["json"], "c.json")
    from_yaml = load_cluster(issue_dump["yaml"], "c.yaml")
    buckets = ("nodes", "pods", "namespaces", "priority_classes", "workloads", "claims", "volumes", "csi_nodes", "pdbs")
    for bucket in buckets:
        left = [o.to_dict() for o in getattr(from_json, bucket)]
        right = [o.to_dict() for o in getattr(from_yaml, bucket)]
        assert left == right, bucket
    assert from_json.skipped == from_yaml.skipped


def test_unread_fields_are_dropped_and_read_ones_kept(issue_dump: dict[str, str]) -> None:
    cluster = load_cluster(issue_dump["json"], "c.json")
    raw = next(o for o in json.loads(issue_dump["json"])["items"] if o["kind"] == "Pod" and o["spec"].get("nodeName"))
    pod = next(p for p in cluster.pods if p.metadata.name == raw["metadata"]["name"])
    assert "managedFields" not in (pod.metadata.model_extra or {})
    assert set(pod.metadata.annotations) <= {"kubectl.kubernetes.io/restartedAt"}
    assert set(pod.status.model_dump(by_alias=True, exclude_none=True)) <= {
        "phase",
        "startTime",
        "conditions",
        "resourceClaimStatuses",
    }
    assert [c.type for c in pod.status.conditions] == ["PodScheduled"]
    assert [sorted(v.model_dump(exclude_none=True)) for v in pod.spec.volumes] == [["name"]]  # projected: dropped
    assert "env" not in (pod.spec.containers[0].model_extra or {})
    # what the scheduler reads survives
    assert pod.spec.node_name == raw["spec"]["nodeName"]
    assert pod.metadata.owner_references[0].kind == raw["metadata"]["ownerReferences"][0]["kind"]
    requests = raw["spec"]["containers"][0]["resources"]["requests"]
    assert {k: q.text for k, q in pod.spec.containers[0].resources.requests.items()}["cpu"] == requests["cpu"]
    assert pod.spec.tolerations and pod.status.phase == "Running" and pod.status.start_time
    node = cluster.nodes[0]
    assert 20 <= len(node.status.images) <= 40
    assert "kubernetes.io/hostname" in node.metadata.labels and node.status.allocatable["cpu"]
    # of nodeInfo, only the kubelet's version is kept (it suggests the snapshot's version)
    assert node.status.model_extra["nodeInfo"] == {"kubeletVersion": "v1.34.0-eks-4096722"}


def test_a_generated_1000_node_dump_loads_and_explains(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(dump(SnapshotSpec(nodes=1000, pods=2000), "json"))
    (tmp_path / "pod.json").write_text(json.dumps(pending_pod()))
    assert main(["explain", "--cluster", str(path), "--pod", str(tmp_path / "pod.json"), "-o", "json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["scheduled"] is True and len(result["nodes"]) == 1000
    # the skipped kinds and the kubelets' version: notes on stderr, never an error
    note, version = captured.err.splitlines()
    assert note.startswith(f"note: {path}: skipped ") and "kinds the scheduler does not read" in note
    assert version == (
        f"note: {path}: the nodes run kubelet v1.34 (1000 nodes); no kubelet is newer than its control plane, "
        "so the scheduler is at least v1.34: answering as v1.37 (the default); --version 1.34 answers as the "
        "snapshot's"
    )


def test_generator_is_deterministic_by_seed() -> None:
    first = dump(SnapshotSpec(nodes=5, pods=20, seed=3), "json")
    assert first == dump(SnapshotSpec(nodes=5, pods=20, seed=3), "json")
    assert first != dump(SnapshotSpec(nodes=5, pods=20, seed=4), "json")
    names = [o["metadata"]["name"] for o in json.loads(first)["items"] if o["kind"] == "Node"]
    assert all(re.fullmatch(r"ip-10-\d+-\d+-\d+\.ec2\.internal", name) for name in names)


def test_generate_command(tmp_path: Path) -> None:
    args = [sys.executable, "-m", "scheduler_core", "generate", "--nodes", "3", "--pods", "40", "--seed", "1"]
    out = subprocess.run([*args, "-o", "yaml"], cwd=REPO, capture_output=True, text=True, timeout=120, check=True)
    documents = yaml.safe_load(out.stdout)
    assert documents["kind"] == "List"
    kinds = [item["kind"] for item in documents["items"]]
    assert kinds.count("Node") == 3 and kinds.count("Pod") == 40
    assert {"PersistentVolumeClaim", "StorageClass", "CSINode", "PodDisruptionBudget", "Namespace"} <= set(kinds)


def test_typed_list_and_concatenated_json() -> None:
    typed = '{"apiVersion": "v1", "items": [{"metadata": {"name": "n1"}}], "kind": "NodeList", "metadata": {}}'
    assert [n.name for n in load_cluster(typed, "nodes.json").nodes] == ["n1"]
    pod = '{"kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [{"name": "c"}]}}'
    both = load_cluster(pod + "\n" + '{"kind": "Node", "metadata": {"name": "n"}}\n', "c.json")
    assert ([p.key for p in both.pods], [n.name for n in both.nodes]) == (["default/a"], ["n"])
    # YAML's flow style starts like JSON: read as YAML
    assert [n.name for n in load_cluster("{kind: Node, metadata: {name: n}}", "c.yaml").nodes] == ["n"]


def test_a_list_of_more_than_max_yaml_nodes_loads_item_by_item() -> None:
    """The node limit is per object: a List whose items together exceed it is fine."""
    per_item = MAX_YAML_NODES // 2
    labels = "".join(f"    l{i}: v\n" for i in range(per_item // 2 - 10))  # ~2 nodes a label
    item = "- kind: Namespace\n  metadata:\n    name: ns{k}\n    labels:\n" + labels
    text = "kind: List\nitems:\n" + "".join(item.replace("{k}", str(k)) for k in range(3))
    assert len(load_cluster(text, "c.yaml").namespaces) == 3
    assert len(load_yaml_documents(text, "c.yaml")[0].data["items"]) == 3


# --- located errors ----------------------------------------------------------------------------------


def test_truncated_dumps(issue_dump: dict[str, str]) -> None:
    text = issue_dump["json"]
    half = text[: len(text) // 2]
    last_line = half.rstrip().count("\n") + 1
    expected = rf"c\.json:{last_line}:\d+: unexpected end of input \(a truncated or half-written file\?\)"
    assert re.fullmatch(expected, error_of(half))
    cut = issue_dump["yaml"][: len(issue_dump["yaml"]) // 3].rsplit("\n", 1)[0] + "\n"  # at a line's end: valid YAML
    assert error_of(cut, "c.yaml") == (
        f"c.yaml:{cut.count(chr(10))}: kind: Required value (items without `kind: List`: a truncated file?)"
    )
    yaml_half = issue_dump["yaml"][: len(issue_dump["yaml"]) // 2]
    message = error_of(yaml_half.rsplit("\n", 1)[0] + '\n    name: "unterminated', "c.yaml")
    assert re.match(rf"c\.yaml:{yaml_half.count(chr(10)) + 1}:\d+: ", message), message


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_validation_errors_name_the_line_in_a_big_dump(issue_dump: dict[str, str], output: str) -> None:
    text = issue_dump[output]
    pods = text.index("kind: Pod" if output == "yaml" else '"kind": "Pod"')
    for _ in range(200):  # the 200th pod or so, deep in the file
        pods = text.index("kind: Pod" if output == "yaml" else '"kind": "Pod"', pods + 1)
    needle = "cpu: " if output == "yaml" else '"cpu": '
    spec = text.index("\n  spec:\n" if output == "yaml" else '"spec": {', pods)  # past the managedFields
    at = text.index(needle, text.index("requests", spec))
    end = text.index("\n", at)
    broken = text[:at] + needle + ('"lots"' if output == "json" else "lots") + text[end:]
    if output == "json" and text[end - 1] == ",":
        broken = text[:at] + needle + '"lots",' + text[end:]
    message = error_of(broken, f"c.{output}")
    path = r"items\[\d+\]\.spec\.containers\[0\]\.resources\.requests\.cpu"
    expected = rf'^c\.{output}:{line_of(text, needle, at)}: {path}: "lots" is not a valid quantity$'
    assert re.match(expected, message), message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            '{"kind": "List", "items": [\n  {"kind": "Node" "x": 1}]}',
            r"^c\.json:2:19: Expecting ',' delimiter$",
            id="syntax",
        ),
        pytest.param(
            '{"kind": "List", "items": [\n{"kind": "Node", "metadata": {"name": "n"},\n "spec": {"taints": "none"}}]}',
            r'^c\.json:3: items\[0\]\.spec\.taints: Invalid value: "none": must be a list$',
            id="wrong type",
        ),
        pytest.param(
            '{"kind": "List", "items": [\n{"kind": "Pod", "metadata": {"name": "a"},\n'
            ' "spec": {"priority": "high", "containers": [{"name": "c"}]}}]}',
            r'^c\.json:3: items\[0\]\.spec\.priority: Invalid value: "high": must be an integer$',
            id="priority not a number",
        ),
        pytest.param(
            b'{"kind": "Node",\n "metadata": {"name": "n\xff"}}',
            r"^c\.json:2:25: not valid UTF-8 \(byte 41\)$",
            id="UTF-8",
        ),
        pytest.param(
            '{"kind": "List", "items": [{"kind": "Namespace", "metadata": {"name": "a"}},\n 5]}',
            r"^c\.json:2: items\[1\]: expected a Kubernetes object",
            id="item not an object",
        ),
        pytest.param(
            '{"kind": "Pod", "items": []}', r"^c\.json:1: items: a Pod has no items", id="items of a non-list"
        ),
        pytest.param(
            '{"kind": "Node", "metadata": {"name": "n"}, "x": ' + "[" * 5000 + "]" * 5000 + "}",
            r"^c\.json:1:50: nesting too deep$",
            id="deep nesting",
        ),
        pytest.param(
            "kind: List\nitems:\n- kind: Node\n  metadata: {name: n}\n- kind: Node\n  metadata: {name: m, name: o}\n",
            r"^c\.json:6:23: duplicate key 'name'$",
            id="YAML duplicate key in an item",
        ),
        pytest.param(
            "kind: List\nitems:\n- kind: Namespace\n  metadata: {name: a}\n- kind: Namespace\n  metadata:\n"
            "    labels: [" + ", ".join(["x"] * MAX_YAML_NODES) + "]\n",
            rf"^c\.json:7:\d+: more than {MAX_YAML_NODES} YAML nodes",
            id="YAML object of too many nodes",
        ),
    ],
)
def test_located_errors(text: str | bytes, expected: str) -> None:
    message = error_of(text)
    assert re.search(expected, message), message


def test_the_size_limit_is_the_callers() -> None:
    text = '{"kind": "Node", "metadata": {"name": "n"}}' + " " * 2000
    assert error_of(text, max_bytes=1000) == "c.json: larger than 1000 bytes"
    assert load_cluster(text, "c.json", max_bytes=4000).nodes[0].name == "n"
    stream = io.BytesIO(text.encode())
    assert [n.name for n in load_cluster(stream, "c.json").nodes] == ["n"]


def test_an_object_over_the_object_limit_is_refused_where_it_starts() -> None:
    big = '{"kind": "Namespace", "metadata": {"name": "a"}, "x": "' + "a" * MAX_OBJECT_BYTES + '"}'
    text = '{"kind": "List", "items": [\n  {"kind": "Namespace", "metadata": {"name": "b"}},\n  ' + big + "]}"
    assert error_of(text, max_bytes=2 * MAX_OBJECT_BYTES) == "c.json:3:3: object larger than 8 MiB"


def test_bench_snapshot_command_prints_figures(tmp_path: Path) -> None:
    args = ["bench-snapshot", "--nodes", "3", "--pods-per-node", "2", "--formats", "json", "--dir", str(tmp_path)]
    proc = subprocess.run(
        [sys.executable, "-m", "scheduler_core", *args], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    header, row = proc.stdout.splitlines()
    assert header.split()[:3] == ["NODES", "PODS", "FORMAT"] and "PEAK" in header
    assert row.split()[:3] == ["3", "6", "json"]
    assert (tmp_path / "snapshot-3n-6p.json").exists()


def test_cluster_from_a_pipe(tmp_path: Path) -> None:
    (tmp_path / "pod.json").write_text(json.dumps(pending_pod()))
    args = ["explain", "--cluster", "/dev/stdin", "--pod", str(tmp_path / "pod.json"), "-o", "json"]
    proc = subprocess.run(
        [sys.executable, "-m", "scheduler_core", *args],
        cwd=REPO,
        input=dump(SnapshotSpec(nodes=4, pods=12), "yaml"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["nodes"]) == 4
    assert proc.stderr.startswith("note: /dev/stdin: skipped ")


def test_missing_cluster_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=rf"^{tmp_path}/nope\.json: no such file$"):
        load_cluster_file(str(tmp_path / "nope.json"))


TRICKY_YAML = """\
kind: List
items:
- kind: Node
  metadata:
    managedFields:
    - manager: &who kubelet
      fieldsV1: &fields {f:metadata: {f:labels: {}}}
    name: n1
    labels: &labels {a: "1", who: *who}
  extra: {flag: yes, count: 0x10, none: ~, when: 2024-01-01T00:00:00Z, seen: *fields, text: !!str 5}
  status:
    allocatable: {cpu: !!str 4, pods: 110}
    conditions: [{type: Ready, status: "True"}]
- kind: Node
  metadata:
    <<: [{name: ignored, labels: {z: q}}, {name: n2, annotations: {k: v}}]
    labels:
      <<: *labels
      a: "2"
- apiVersion: v1
  kind: Secret
  data: {password: c2VjcmV0}
- kind: Pod
  metadata: {name: p, namespace: team}
  spec:
    nodeName: n1
    containers:
    - name: c
      env: [{name: A, value: b}]
      resources: {requests: {cpu: 100m}}
"""


def test_streamed_yaml_equals_the_documents_path() -> None:
    """Item by item, without nodes where it can: the same objects as the whole-document reading."""
    streamed = load_cluster(TRICKY_YAML, "c.yaml")
    whole = load_cluster(load_yaml_documents(TRICKY_YAML, "c.yaml"), "c.yaml")
    for bucket in ("nodes", "pods"):
        assert [o.to_dict() for o in getattr(streamed, bucket)] == [o.to_dict() for o in getattr(whole, bucket)]
    n1, n2 = streamed.nodes
    assert n1.metadata.labels == {"a": "1", "who": "kubelet"}
    assert n1.model_extra == {
        "extra": {"flag": True, "count": 16, "none": None, "when": "2024-01-01T00:00:00Z",
                  "seen": {"f:metadata": {"f:labels": {}}}, "text": "5"}
    }  # fmt: skip
    assert n1.status.allocatable["cpu"].text == "4" and streamed.pods[0].spec.containers[0].model_extra == {}
    assert n2.metadata.name == "n2" and n2.metadata.annotations == {"k": "v"}
    assert n2.metadata.labels["a"] == "2" and n2.metadata.labels["who"] == "kubelet"
    assert streamed.skipped == {"Secret": 1} == whole.skipped
