"""`python -m scheduler_core explain`: bad input exits 2 with one line on stderr, never a traceback.

The line names the file and the line (and column for YAML syntax) or the field path, e.g.
`pod.yaml:10: spec.containers[0].resources.requests.cpu: "1x" is not a valid quantity`.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from scheduler_core.__main__ import main

REPO = Path(__file__).resolve().parent.parent

CLUSTER = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: big
  status:
    allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
- apiVersion: v1
  kind: Node
  metadata:
    name: small
  status:
    allocatable: {cpu: "2", memory: 8Gi, pods: "110"}
"""

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: c
    image: nginx
    resources:
      requests:
        cpu: "1"
"""


def billion_laughs() -> str:
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return "\n".join(lines) + "\n"


def explain(tmp_path: Path, pod: str | bytes | None, *extra: str, cluster: str = CLUSTER) -> list[str]:
    (tmp_path / "cluster.yaml").write_text(cluster)
    args = ["explain", "--cluster", str(tmp_path / "cluster.yaml"), "--pod", str(tmp_path / "pod.yaml"), *extra]
    if isinstance(pod, bytes):
        (tmp_path / "pod.yaml").write_bytes(pod)
    elif pod is not None:
        (tmp_path / "pod.yaml").write_text(pod)
    return args


def one_error_line(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err
    assert lines[0].startswith("error: ")
    return lines[0].removeprefix("error: ")


POD_ERRORS = [
    pytest.param(POD.replace('cpu: "1"', "cpu: [1"), r"pod\.yaml:12:1: expected .*", id="YAML syntax error"),
    pytest.param(
        POD.replace("  name: web\n", "  name: web\n  name: api\n"),
        r"pod\.yaml:5:3: duplicate key 'name'$",
        id="duplicate keys",
    ),
    pytest.param(
        POD.replace("kind: Pod", "kind: Deployment"),
        r'pod\.yaml:2: kind: unsupported kind "Deployment" \(expected Pod\)$',
        id="wrong kind",
    ),
    pytest.param(
        POD.replace('cpu: "1"', 'cpu: "1x"'),
        r'pod\.yaml:11: spec\.containers\[0\]\.resources\.requests\.cpu: "1x" is not a valid quantity$',
        id="invalid quantity",
    ),
    pytest.param(
        b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: \xc3\x28\n",
        r"pod\.yaml:4:9: not valid UTF-8 \(byte 43\)$",
        id="invalid UTF-8",
    ),
    pytest.param(billion_laughs(), r"pod\.yaml:6:\d+: excessive aliasing", id="alias bomb"),
    pytest.param(
        "spec: " + "{a: " * 300 + "1" + "}" * 300 + "\n",
        r"pod\.yaml:1:\d+: nesting deeper than 100 levels$",
        id="deep nesting",
    ),
    pytest.param(
        POD
        + textwrap.indent(
            "affinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n"
            "      nodeSelectorTerms:\n      - matchExpressions:\n        - {key: zone, operator: Near}\n",
            "  ",
        ),
        r'pod\.yaml:17: spec\.affinity\..*\.matchExpressions\[0\]\.operator: Unsupported value: "Near": supported ',
        id="unsupported operator value",
    ),
    pytest.param(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  nodeName: big\n",
        r"pod\.yaml:5: spec\.containers: Required value$",
        id="missing containers",
    ),
    pytest.param(
        POD.replace("spec:\n", "spec:\n  priorityClassName: gold\n"),
        r'pod\.yaml:6: spec\.priorityClassName: pods "web" is forbidden: no PriorityClass with name gold was found$',
        id="unknown PriorityClass",
    ),
    pytest.param(POD + "---\n" + POD, r"pod\.yaml: expected exactly one Pod, found 2 documents$", id="two pods"),
    pytest.param("", r"pod\.yaml: expected exactly one Pod, found 0 documents$", id="empty file"),
    pytest.param("apiVersion: v1\nkind: Pod\x00\n", r"pod\.yaml:2:10: unacceptable character #x0000", id="NUL byte"),
    pytest.param(
        POD.replace("spec:\n", "spec:\n  priority: " + "9" * 5000 + "\n"),
        r"pod\.yaml:6:13: integer with more than 4000 digits$",
        id="huge integer",
    ),
]


@pytest.mark.parametrize(("pod", "pattern"), POD_ERRORS)
def test_bad_pod(tmp_path: Path, capsys: pytest.CaptureFixture[str], pod: str | bytes, pattern: str) -> None:
    line = one_error_line(capsys, explain(tmp_path, pod))
    assert line.startswith(str(tmp_path) + "/")
    assert re.search(pattern, line), line


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = one_error_line(capsys, explain(tmp_path, None))
    assert line == f"{tmp_path}/pod.yaml: no such file"


def test_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pod.yaml").mkdir()
    line = one_error_line(capsys, explain(tmp_path, None))
    assert line == f"{tmp_path}/pod.yaml: is a directory"


def test_bad_cluster_item(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cluster = CLUSTER.replace('cpu: "2"', "cpu: two")
    line = one_error_line(capsys, explain(tmp_path, POD, cluster=cluster))
    assert line == f'{tmp_path}/cluster.yaml:15: items[1].status.allocatable.cpu: "two" is not a valid quantity'


def test_bad_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "sched.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- plugins:\n    score:\n      enabled:\n      - name: NodePortz\n"
    )
    line = one_error_line(capsys, explain(tmp_path, POD, "--profile", str(tmp_path / "sched.yaml")))
    assert (
        line == f'{tmp_path}/sched.yaml:7: profiles[0].plugins.score.enabled[0]: ScorePlugin "NodePortz" does not exist'
    )


def test_profile_follows_the_pods_scheduler_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "sched.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n- schedulerName: packer\n  pluginConfig:\n  - name: NodeResourcesFit\n"
        "    args: {scoringStrategy: {type: MostAllocated}}\n"
    )
    cluster = CLUSTER.replace('cpu: "2"', 'cpu: "4"')
    busy = "- apiVersion: v1\n  kind: Pod\n  metadata: {name: busy}\n  spec:\n    nodeName: small\n"
    busy += '    containers: [{name: c, resources: {requests: {cpu: "2"}}}]\n'
    profile = ["--profile", str(tmp_path / "sched.yaml"), "-o", "json"]
    chosen = {}
    for scheduler in ("default-scheduler", "packer"):
        pod = POD.replace("spec:\n", f"spec:\n  schedulerName: {scheduler}\n")
        assert main(explain(tmp_path, pod, *profile, cluster=cluster + busy)) == 0
        chosen[scheduler] = json.loads(capsys.readouterr().out)["selectedNode"]
    assert chosen == {"default-scheduler": "big", "packer": "small"}
    pod = POD.replace("spec:\n", "spec:\n  schedulerName: other\n")
    line = one_error_line(capsys, explain(tmp_path, pod, *profile))
    assert line == f"{tmp_path}/sched.yaml:3: profiles: no profile with schedulerName 'other'"


# --- inputs that load ------------------------------------------------------------------------------


def test_text_output_is_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*explain(tmp_path, POD), "-o", "text", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["Normal", "Scheduled", "default-scheduler", "Successfully", "assigned",
                                           "default/web", "to", "big"]  # fmt: skip
    rows: dict[str, list[str]] = {}
    for line in out.splitlines():  # the first table (Filter) has the verdicts
        if line.split()[:1] in (["big"], ["small"]):
            rows.setdefault(line.split()[0], line.split())
    assert rows["big"][1] == "SELECTED" and rows["small"][1] == "feasible"
    assert "NODE" in out and "TOTAL" in out


def test_multi_document_cluster_and_unknown_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stream = (
        "apiVersion: v1\nkind: Node\nmetadata: {name: big}\nstatus:\n  allocatable: {cpu: '4', pods: '110'}\n"
        "  someFutureStatus: {x: 1}\n---\n---\napiVersion: v1\nkind: Node\nmetadata: {name: small}\n"
        "status:\n  allocatable: {cpu: '2', pods: '110'}\n"
    )
    pod = POD.replace("kind: Pod\n", "kind: Pod\nunknownTopLevel: true\n")
    assert main([*explain(tmp_path, pod, cluster=stream), "-o", "json", "--seed", "0"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["scheduled"] is True
    assert sorted(result["nodes"]) == ["big", "small"]


def test_unschedulable_pod_prints_the_failed_scheduling_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pod = POD.replace('cpu: "1"', 'cpu: "5"').replace("spec:\n", "spec:\n  priority: 10\n")
    assert main([*explain(tmp_path, pod), "-o", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["scheduled"] is False
    assert result["message"] == (
        "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_subprocess_exit_code_and_single_stderr_line(tmp_path: Path) -> None:
    args = explain(tmp_path, POD.replace('cpu: "1"', 'cpu: "1x"'))
    proc = subprocess.run(
        [sys.executable, "-m", "scheduler_core", *args], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (
        f'error: {tmp_path}/pod.yaml:11: spec.containers[0].resources.requests.cpu: "1x" is not a valid quantity\n'
    )


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_endless_file_is_cut_at_the_size_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = explain(tmp_path, POD)
    args[args.index("--pod") + 1] = "/dev/zero"
    assert one_error_line(capsys, args) == "/dev/zero: larger than 16 MiB"
