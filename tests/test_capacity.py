"""Capacity queries (scheduler_core/capacity): `fit`, `drain` and `add` give the answers one-pod-at-a-time
explains give, and the hand-worked answers of kubectl drain's filters and the PodDisruptionBudgets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scheduler_core.__main__ import main
from scheduler_core.api.errors import InputError
from scheduler_core.api.objects import OwnerReference, Pod, Workload
from scheduler_core.api.policy import PodDisruptionBudget
from scheduler_core.api.workloads import WorkloadIndex
from scheduler_core.capacity import (
    DrainOptions,
    NodeChoice,
    add_nodes,
    drain,
    fit,
    pending_pods,
    pod_template,
    workload_template,
)
from scheduler_core.capacity.drain import replacement_of
from scheduler_core.capacity.nodes import cordon
from scheduler_core.explain import explain_on
from scheduler_core.framework.node_table import NodeTable
from scheduler_core.framework.pod_info import PodInfo

from .helpers import node, pod, table

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def zoned_nodes(cpu: str = "2", count: int = 4) -> list[Any]:
    return [
        node(f"n{k}", {ZONE: "ab"[k % 2], HOST: f"n{k}"}, allocatable={"cpu": cpu, "memory": "8Gi", "pods": "110"})
        for k in range(count)
    ]


def owned(p: Pod, kind: str = "ReplicaSet", name: str = "web-5d8f") -> Pod:
    """`p` with a controller (what recreates it once evicted)."""
    p.metadata.owner_references = [OwnerReference(api_version="apps/v1", kind=kind, name=name, controller=True)]
    return p


def explained_node_choices(shadow: NodeTable, info: PodInfo) -> tuple[set[str], str, Any]:
    """What one explain says of `info` on `shadow`: the tied top nodes, the message, the result."""
    explanation = explain_on(shadow, info.pod)
    result = explanation.result
    assert result is not None
    return {shadow.names[int(i)] for i in result.tied_top}, result.message, result


# --- fit ---------------------------------------------------------------------------------------------


def test_fit_counts_what_fits_and_names_why_the_next_does_not() -> None:
    nodes = zoned_nodes(cpu="2", count=3)
    template = pod_template(pod("probe", requests={"cpu": "500m"}))
    report = fit(table(nodes), template)
    assert report.count == 12  # 3 nodes × 2 cpu / 500m
    assert report.per_node() == {"n0": 4, "n1": 4, "n2": 4}
    assert report.stopped is not None and not report.stopped.scheduled
    assert report.stopped.message.startswith("0/3 nodes are available: 3 Insufficient cpu.")
    assert report.before["cpu"] == {"requested": 0, "allocatable": 6000}
    assert report.after["cpu"] == {"requested": 6000, "allocatable": 6000}


@pytest.mark.parametrize("constraint", ["spread", "anti-affinity"])
def test_fit_places_each_copy_where_a_one_pod_explain_would(constraint: str) -> None:
    """Every copy lands on one of the nodes an explain of it (with the copies before it bound) ties
    at the top, and the copy that does not fit has the explain's FailedScheduling message."""
    nodes = zoned_nodes(cpu="3", count=4)
    labels = {"app": "web"}
    spec: dict[str, Any] = {}
    if constraint == "spread":
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": labels},
            }
        ]
    else:
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": HOST, "labelSelector": {"matchLabels": labels}}
                ]
            }
        }
    existing = [pod("old-0", labels=labels, requests={"cpu": "1"}, node_name="n0")]
    template = pod_template(pod("web", labels=labels, requests={"cpu": "1"}, **spec))
    report = fit(table(nodes, existing), template)
    shadow = table(nodes, existing)
    for k, placement in enumerate(report.placed):
        copy = template.copy(k)
        tied, message, _ = explained_node_choices(shadow, copy)
        assert placement.node in tied, (k, placement.node, tied)
        assert placement.message == f"Successfully assigned default/{copy.name} to {placement.node}"
        shadow.add_pod(copy, shadow.index[placement.node])
    assert report.stopped is not None
    _, message, _ = explained_node_choices(shadow, template.copy(report.count))
    assert report.stopped.message == message
    if constraint == "anti-affinity":  # one per node, the node with the old pod excluded
        assert report.count == 3 and "n0" not in report.per_node()


def test_fit_stops_at_the_limit() -> None:
    report = fit(table(zoned_nodes()), pod_template(pod("p", requests={"cpu": "100m"})), limit=5)
    assert report.count == 5 and report.stopped is None and report.to_json()["limitReached"]


def test_a_deployment_template_is_its_newest_replica_set_and_a_statefulset_continues_its_ordinals() -> None:
    template_spec = {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "250m"}}}]}

    def workload(kind: str, name: str, **extra: Any) -> Workload:
        meta: dict[str, Any] = {"name": name, "namespace": "shop"}
        meta.update(extra.pop("meta", {}))
        return Workload.model_validate({"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": extra})

    rs_meta = {"ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "controller": True}]}
    workloads = [
        workload("Deployment", "web", template={"metadata": {"labels": {"app": "web"}}, "spec": template_spec}),
        workload(
            "ReplicaSet",
            "web-old",
            meta={**rs_meta, "annotations": {"deployment.kubernetes.io/revision": "1"}},
            template={"metadata": {"labels": {"app": "web", "pod-template-hash": "old"}}, "spec": template_spec},
        ),
        workload(
            "ReplicaSet",
            "web-new",
            meta={**rs_meta, "annotations": {"deployment.kubernetes.io/revision": "2"}},
            template={"metadata": {"labels": {"app": "web", "pod-template-hash": "new"}}, "spec": template_spec},
        ),
        workload(
            "StatefulSet", "db", replicas=3, template={"metadata": {"labels": {"app": "db"}}, "spec": template_spec}
        ),
    ]
    web = workload_template("deploy/web", "shop", workloads, {}, {})
    first = web.copy(0).pod
    assert first.metadata.owner_references[0].name == "web-new"
    assert first.metadata.labels["pod-template-hash"] == "new"
    assert first.metadata.name == "web-new-fit-1" and web.source == "Deployment shop/web"
    db = workload_template("statefulset/db", "shop", workloads, {}, {})
    assert [db.copy(k).pod.metadata.name for k in range(2)] == ["db-3", "db-4"]
    with pytest.raises(InputError, match=r'deployments\.apps "nope" not found in namespace "shop"'):
        workload_template("deployment/nope", "shop", workloads, {}, {})
    with pytest.raises(InputError, match="expected deployment/NAME"):
        workload_template("service/web", "shop", workloads, {}, {})


# --- drain -------------------------------------------------------------------------------------------


def budget(name: str, labels: dict[str, str], min_available: int, healthy: int, allowed: int) -> PodDisruptionBudget:
    return PodDisruptionBudget.model_validate(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"minAvailable": min_available, "selector": {"matchLabels": labels}},
            "status": {
                "observedGeneration": 1,
                "currentHealthy": healthy,
                "desiredHealthy": min_available,
                "disruptionsAllowed": allowed,
                "expectedPods": healthy,
            },
        }
    )


def web_pods(nodes: list[str]) -> list[Pod]:
    return [
        owned(pod(f"web-{k}", labels={"app": "web"}, requests={"cpu": "1"}, node_name=name))
        for k, name in enumerate(nodes)
    ]


def test_drain_retries_what_the_budget_refused_once_a_replacement_is_healthy() -> None:
    """minAvailable 2 of 3, one disruption allowed: the first web pod on n0 goes, its replacement lands,
    the budget allows the second on the next round."""
    nodes = zoned_nodes(cpu="4", count=3)
    t = table(nodes, web_pods(["n0", "n0", "n1"]))
    t.pdbs = [budget("web", {"app": "web"}, 2, 3, 1)]
    report = drain(t, NodeChoice(("n0",)), WorkloadIndex([]))
    assert report.rounds == 2 and not report.refused
    assert sorted(p.pod for p in report.placements) == ["default/web-0", "default/web-1"]
    assert all(p.scheduled and p.node != "n0" and p.origin == "n0" for p in report.placements)
    assert report.after["drained"]["pods"]["requested"] == 0


def test_drain_reports_the_eviction_the_budget_still_refuses() -> None:
    """No room elsewhere: the first replacement stays Pending, so the budget (2 healthy needed, 2 left)
    refuses the second eviction with the eviction API's message."""
    nodes = zoned_nodes(cpu="2", count=2)
    filler = [owned(pod("big", requests={"cpu": "2"}, node_name="n1"), name="big-rs")]
    t = table(nodes, [*web_pods(["n0", "n0"]), *filler])
    t.pdbs = [budget("web", {"app": "web"}, 1, 2, 1)]
    report = drain(t, NodeChoice(("n0",)), WorkloadIndex([]))
    assert [p.pod for p in report.pending] == ["default/web-0"]
    assert report.pending[0].message.startswith(
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable."
    )
    assert [(r.pod, r.node, r.message) for r in report.refused] == [
        (
            "default/web-1",
            "n0",
            "Cannot evict pod as it would violate the pod's disruption budget. "
            "The disruption budget web needs 1 healthy pods and has 1 currently",
        )
    ]
    # the pending pod is explained as a one-pod explain explains it on the drained cluster
    _, message, _ = explained_node_choices(t, replacement_of(PodInfo.of(web_pods(["n0"])[0])))  # type: ignore[arg-type]
    assert report.pending[0].message == message


def test_two_budgets_over_one_pod_refuse_its_eviction() -> None:
    nodes = zoned_nodes(count=2)
    t = table(nodes, web_pods(["n0"]))
    t.pdbs = [budget("a", {"app": "web"}, 0, 1, 1), budget("b", {"app": "web"}, 0, 1, 1)]
    report = drain(t, NodeChoice(("n0",)), WorkloadIndex([]))
    assert report.refused[0].message == (
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    )


def _drain_filter_cluster() -> tuple[NodeTable, WorkloadIndex]:
    ds = owned(pod("agent", namespace="kube-system", node_name="n0"), kind="DaemonSet", name="agent")
    bare = pod("bare", node_name="n0")
    scratch = owned(pod("scratch", node_name="n0", volumes=[{"name": "tmp", "emptyDir": {}}]), name="scratch-rs")
    mirror = pod("etcd", namespace="kube-system", node_name="n0")
    mirror.metadata.annotations = {"kubernetes.io/config.mirror": "abc"}
    done = pod("job-done", node_name="n0")
    done.status.phase = "Succeeded"
    agents = Workload.model_validate(
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "kube-system"}}
    )
    return table(zoned_nodes(count=2), [ds, bare, scratch, mirror, done]), WorkloadIndex([agents])


def test_drain_refuses_a_node_as_kubectl_does_without_its_flags() -> None:
    t, workloads = _drain_filter_cluster()
    report = drain(t, NodeChoice(("n0",)), workloads)
    assert report.not_drained == {
        "n0": "[cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): kube-system/agent, "
        "cannot delete Pods that declare no controller (use --force to override): default/bare, "
        "cannot delete Pods with local storage (use --delete-emptydir-data to override): default/scratch]"
    }
    assert report.evicted == 0 and t.unschedulable[t.index["n0"]]  # cordoned all the same


def test_drain_with_kubectls_flags_deletes_what_they_allow() -> None:
    t, workloads = _drain_filter_cluster()
    report = drain(
        t, NodeChoice(("n0",)), workloads, DrainOptions(ignore_daemonsets=True, force=True, delete_emptydir_data=True)
    )
    assert not report.not_drained
    # the local-storage warning is dropped by the filter after it, as upstream's chain drops it
    assert report.warnings == {
        "n0": "deleting Pods that declare no controller: default/bare; "
        "ignoring DaemonSet-managed Pods: kube-system/agent"
    }
    assert sorted((d.pod, d.message) for d in report.deleted) == [
        ("default/bare", "no controller recreates it"),
    ]  # (the finished pod is not in the scheduler's snapshot at all)
    assert [p.pod for p in report.placements] == ["default/scratch"] and report.placements[0].node == "n1"
    assert sorted(p.key for p in t.pods[t.index["n0"]]) == ["kube-system/agent", "kube-system/etcd"]


def test_an_evicted_pod_preempts_a_lower_priority_pod_elsewhere() -> None:
    nodes = zoned_nodes(cpu="2", count=2)
    important = owned(pod("important", requests={"cpu": "2"}, node_name="n0", priority=1000), name="imp-rs")
    low = owned(pod("low", requests={"cpu": "2"}, node_name="n1", priority=0), name="low-rs")
    report = drain(table(nodes, [important, low]), NodeChoice(("n0",)), WorkloadIndex([]))
    placed = {p.pod: p for p in report.placements}
    assert placed["default/important"].node == "n1" and placed["default/important"].preempted == ["default/low"]
    assert report.preempted == [{"pod": "default/low", "node": "n1", "by": "default/important"}]
    assert not placed["default/low"].scheduled  # its replacement finds no room


def test_drain_chooses_nodes_by_zone_and_selector_and_names_what_matches_nothing() -> None:
    t = table(zoned_nodes(count=4))
    assert drain(t, NodeChoice(zone="a"), WorkloadIndex([])).nodes == ["n0", "n2"]
    assert drain(table(zoned_nodes(count=4)), NodeChoice(selector=f"{ZONE} in (b)"), WorkloadIndex([])).nodes == [
        "n1",
        "n3",
    ]
    with pytest.raises(InputError, match="no node matches zone z"):
        drain(table(zoned_nodes()), NodeChoice(zone="z"), WorkloadIndex([]))
    with pytest.raises(InputError, match="nodes not found: n9"):
        drain(table(zoned_nodes()), NodeChoice(("n9",)), WorkloadIndex([]))


# --- add ---------------------------------------------------------------------------------------------


def test_added_nodes_take_the_pending_pods_that_need_their_shape() -> None:
    gpu = node(
        "gpu-0",
        {"pool": "gpu", HOST: "gpu-0"},
        allocatable={"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "1"},
    )
    waiting = [pod(f"train-{k}", requests={"nvidia.com/gpu": "1"}, nodeSelector={"pool": "gpu"}) for k in range(3)]
    busy = pod("train-old", requests={"nvidia.com/gpu": "1"}, node_name="gpu-0")
    t = table([*zoned_nodes(), gpu], [busy])
    baseline = table([*zoned_nodes(), gpu], [busy])
    report = add_nodes(t, gpu, "node gpu-0", 2, pending_pods(waiting, "default-scheduler"), baseline=baseline)
    assert report.added == ["gpu-0-new-1", "gpu-0-new-2"]
    assert sorted(p.node or "" for p in report.scheduled) == ["gpu-0-new-1", "gpu-0-new-2"]
    (left,) = [p for p in report.placements if not p.scheduled]
    assert left.message.startswith("0/7 nodes are available: 3 Insufficient nvidia.com/gpu, 4 node(s) didn't match")
    assert report.anyway == set() and len(report.thanks_to_new_nodes) == 2  # none schedules without them
    assert report.to_json()["scheduleAnyway"] == 0
    new = t.nodes[t.index["gpu-0-new-1"]]
    assert new.metadata.labels[HOST] == "gpu-0-new-1" and not new.status.images


# --- the command line --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("capacity") / "cluster.json"
    with path.open("w") as out, pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdout", out)
        assert main(["generate", "--nodes", "60", "--pods", "600", "--seed", "3"]) == 0
    return path


def _json_of(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_the_cli_answers_the_three_queries_on_a_generated_cluster(
    generated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(generated.read_text())
    deployment = next(i for i in data["items"] if i["kind"] == "Deployment")
    name, namespace = deployment["metadata"]["name"], deployment["metadata"]["namespace"]
    fitted = _json_of(
        capsys, ["fit", "--cluster", str(generated), "--workload", f"deployment/{name}", "-n", namespace, "-o", "json"]
    )
    assert fitted["fits"] > 0 and sum(fitted["perNode"].values()) == fitted["fits"]
    assert fitted["next"]["message"].startswith("0/60 nodes are available:")
    drained = _json_of(
        capsys, ["drain", "--cluster", str(generated), "--zone", "us-east-1b", "--ignore-daemonsets", "-o", "json"]
    )
    assert drained["evicted"] == drained["rescheduled"] + drained["pending"] + len(drained["deleted"])
    assert (
        drained["allocation"]["after"]["drained"]["pods"]["requested"]
        < drained["allocation"]["before"]["drained"]["pods"]["requested"]
    )
    node_name = next(i["metadata"]["name"] for i in data["items"] if i["kind"] == "Node")
    added = _json_of(capsys, ["add", "--cluster", str(generated), "--like", node_name, "--count", "3", "-o", "json"])
    assert added["added"] == [f"{node_name}-new-{k}" for k in (1, 2, 3)]
    assert main(["fit", "--cluster", str(generated), "--workload", f"deployment/{name}", "-n", namespace]) == 0
    text = capsys.readouterr().out
    assert f"fit: Deployment {namespace}/{name}" in text and "stays Pending:" in text


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["fit", "--workload", "deployment/nope"], 'error: deployments.apps "nope" not found in namespace "default"'),
        (["fit"], "error: fit: give exactly one of --pod FILE and --workload KIND/NAME"),
        (["drain", "--zone", "mars"], "error: no node matches zone mars"),
        (["drain", "-l", "a in (b"], "error: --selector: unable to parse requirement: found 'a in (b' in \"a in (b\""),
        (["drain"], "error: no nodes chosen: name them, or give --selector, --zone or --instance-type"),
        (["add", "--like", "nope"], 'error: nodes "nope" not found'),
    ],
)
def test_the_cli_names_bad_input_and_exits_2(
    generated: Path, capsys: pytest.CaptureFixture[str], argv: list[str], error: str
) -> None:
    assert main([*argv[:1], "--cluster", str(generated), *argv[1:]]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == error


def test_drain_places_each_evicted_pod_where_a_one_pod_explain_would() -> None:
    """No budgets: kubectl evicts the node's pods, then each replacement (by priority) lands on one of
    the nodes an explain of it ties at the top on the cordoned cluster with the replacements before
    it bound, and one that does not fit carries the explain's message."""
    nodes = zoned_nodes(cpu="3", count=4)
    labels = {"app": "web"}
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": labels},
        }
    ]
    on_n0 = [
        owned(
            pod(
                f"web-{k}",
                labels=labels,
                requests={"cpu": "1"},
                node_name="n0",
                priority=k,
                topologySpreadConstraints=spread,
            )
        )
        for k in range(3)
    ]
    others = [owned(pod("filler", requests={"cpu": "2"}, node_name="n1"), name="filler-rs")]
    report = drain(table(nodes, [*on_n0, *others]), NodeChoice(("n0",)), WorkloadIndex([]))
    assert [p.pod for p in report.placements] == ["default/web-2", "default/web-1", "default/web-0"]  # by priority
    shadow = table(nodes, [*on_n0, *others])
    cordon(shadow, shadow.index["n0"])
    for info in list(shadow.pods[shadow.index["n0"]]):
        shadow.remove_pod(info, shadow.index["n0"])
    by_name = {f"default/{p.metadata.name}": p for p in on_n0}
    for placement in report.placements:
        replacement = replacement_of(PodInfo.of(by_name[placement.pod]))
        assert replacement is not None
        tied, message, result = explained_node_choices(shadow, replacement)
        if placement.scheduled:
            assert placement.node in tied, (placement.pod, placement.node, tied)
            shadow.add_pod(replacement, shadow.index[placement.node])
        else:
            assert result.selected is None and placement.message == message
    assert all(p.scheduled for p in report.placements) and not report.preempted
