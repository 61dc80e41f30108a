"""NodeResourcesFit: Filter verdicts and the LeastAllocated / MostAllocated / RequestedToCapacityRatio scores."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from scheduler_core.api.loading import admit_pod
from scheduler_core.api.objects import Node, Pod
from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.framework.profile import profile_from_config
from scheduler_core.plugins.node_resources import fit as fit_plugin
from scheduler_core.plugins.registry import new_framework
from scheduler_core.schedule_one import Scheduler, ScheduleResult
from tests.helpers import filter_status, node, scores, table

FIT = "NodeResourcesFit"
U = "Unschedulable"
UU = "UnschedulableAndUnresolvable"
_names = itertools.count()


def res(cpu_m: int = 0, mem: int = 0, **scalars: int) -> dict[str, str]:
    """Requests like upstream's framework.Resource (cpu in millicores); scalar keys use '__' for '/'."""
    out = {"cpu": f"{cpu_m}m", "memory": str(mem)}
    out.update({k.replace("__", "/"): str(v) for k, v in scalars.items()})
    return out


def mkpod(
    containers: list[dict[str, Any] | None] | None = None,
    init: list[dict[str, Any]] | None = None,
    sidecars: list[dict[str, Any]] | None = None,
    node_name: str = "",
    **spec: Any,
) -> Pod:
    """A pod with one container per requests dict (None = no requests), then init containers."""

    def container(requests: dict[str, Any] | None, **extra: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"name": f"c{next(_names)}", "image": "x", **extra}
        if requests is not None:
            body["resources"] = {"requests": requests}
        return body

    inits = [container(r, restartPolicy="Always") for r in sidecars or []] + [container(r) for r in init or []]
    p = Pod.model_validate(
        {
            "metadata": {"name": f"p{next(_names)}", "namespace": "default"},
            "spec": {
                "containers": [container(r) for r in (containers if containers is not None else [None])],
                "initContainers": inits,
                "nodeName": node_name,
                **spec,
            },
            "status": {"phase": "Running" if node_name else "Pending"},
        }
    )
    admit_pod(p, {}, {})
    return p


def run(
    nodes: list[Node], incoming: Pod, pods: list[Pod] = (), fit_args: dict[str, Any] | None = None
) -> ScheduleResult:  # type: ignore[assignment]
    """One cycle with the default profile, NodeResourcesFit configured with `fit_args`."""
    config: dict[str, Any] = {"kind": "KubeSchedulerConfiguration", "profiles": [{}]}
    if fit_args is not None:
        config["profiles"][0]["pluginConfig"] = [{"name": FIT, "args": fit_args}]
    scheduler = Scheduler(new_framework(profile_from_config(config)), seed=0)
    return scheduler.schedule_pod(table(nodes, list(pods)), PodInfo.of(incoming))


# --- Filter ----------------------------------------------------------------------------------
# Upstream: pkg/scheduler/framework/plugins/noderesources/fit_test.go TestEnoughRequests (node:
# cpu 10m, memory 20, pods 32, example.com/aaa 5, ephemeral-storage 20, hugepages-2Mi 5; one existing
# pod holding `existing`). v1.34 (PR #131345): a request above the node's *total* allocatable is
# UnschedulableAndUnresolvable.
ENOUGH_NODE = {
    "cpu": "10m",
    "memory": "20",
    "pods": "32",
    "example.com/aaa": "5",
    "ephemeral-storage": "20",
    "hugepages-2Mi": "5",
}
A, B = "example.com__aaa", "example.com__bbb"
KIO_A, KIO_B = "kubernetes.io__something", "subdomain.kubernetes.io__something"
HP = "hugepages-2Mi"

ENOUGH = [
    # (id, pod kwargs, existing requests, fit args, expected (code, reasons) or None)
    ("no resources requested always fits", {}, res(10, 20), None, None),
    (
        "too many resources fails",
        {"containers": [res(1, 1)]},
        res(10, 20),
        None,
        (U, ["Insufficient cpu", "Insufficient memory"]),
    ),
    (
        "too many resources fails due to init container cpu",
        {"containers": [res(1, 1)], "init": [res(3, 1)]},
        res(8, 19),
        None,
        (U, ["Insufficient cpu"]),
    ),
    (
        "too many resources fails due to highest init container cpu",
        {"containers": [res(1, 1)], "init": [res(3, 1), res(2, 1)]},
        res(8, 19),
        None,
        (U, ["Insufficient cpu"]),
    ),
    (
        "too many resources fails due to init container memory",
        {"containers": [res(1, 1)], "init": [res(1, 3)]},
        res(9, 19),
        None,
        (U, ["Insufficient memory"]),
    ),
    (
        "too many resources fails due to highest init container memory",
        {"containers": [res(1, 1)], "init": [res(1, 3), res(1, 2)]},
        res(9, 19),
        None,
        (U, ["Insufficient memory"]),
    ),
    (
        "init container fits because it's the max, not sum, of containers and init containers",
        {"containers": [res(1, 1)], "init": [res(1, 1)]},
        res(9, 19),
        None,
        None,
    ),
    (
        "multiple init containers fit because it's the max, not sum, of containers and init containers",
        {"containers": [res(1, 1)], "init": [res(1, 1), res(1, 1)]},
        res(9, 19),
        None,
        None,
    ),
    ("both resources fit", {"containers": [res(1, 1)]}, res(5, 5), None, None),
    ("one resource memory fits", {"containers": [res(2, 1)]}, res(9, 5), None, (U, ["Insufficient cpu"])),
    ("one resource cpu fits", {"containers": [res(1, 2)]}, res(5, 19), None, (U, ["Insufficient memory"])),
    ("equal edge case", {"containers": [res(5, 1)]}, res(5, 19), None, None),
    ("equal edge case for init container", {"containers": [res(4, 1)], "init": [res(5, 1)]}, res(5, 19), None, None),
    ("extended resource fits", {"containers": [{A.replace("__", "/"): "1"}]}, {}, None, None),
    (
        "extended resource fits for init container",
        {"containers": [None], "init": [{"example.com/aaa": "1"}]},
        {},
        None,
        None,
    ),
    (
        "extended resource capacity enforced",
        {"containers": [res(1, 1, **{A: 10})]},
        res(0, 0, **{A: 0}),
        None,
        (UU, ["Insufficient example.com/aaa"]),
    ),
    (
        "extended resource capacity enforced for init container",
        {"containers": [None], "init": [res(1, 1, **{A: 10})]},
        res(0, 0, **{A: 0}),
        None,
        (UU, ["Insufficient example.com/aaa"]),
    ),
    (
        "extended resource allocatable enforced",
        {"containers": [res(1, 1, **{A: 1})]},
        res(0, 0, **{A: 5}),
        None,
        (U, ["Insufficient example.com/aaa"]),
    ),
    (
        "extended resource allocatable enforced for init container",
        {"containers": [None], "init": [res(1, 1, **{A: 1})]},
        res(0, 0, **{A: 5}),
        None,
        (U, ["Insufficient example.com/aaa"]),
    ),
    (
        "extended resource allocatable enforced for multiple containers",
        {"containers": [res(1, 1, **{A: 3}), res(1, 1, **{A: 3})]},
        res(0, 0, **{A: 2}),
        None,
        (UU, ["Insufficient example.com/aaa"]),
    ),
    (
        "extended resource allocatable admits multiple init containers",
        {"containers": [None], "init": [res(1, 1, **{A: 3}), res(1, 1, **{A: 3})]},
        res(0, 0, **{A: 2}),
        None,
        None,
    ),
    (
        "extended resource allocatable enforced for multiple init containers",
        {"containers": [None], "init": [res(1, 1, **{A: 6}), res(1, 1, **{A: 3})]},
        res(0, 0, **{A: 2}),
        None,
        (UU, ["Insufficient example.com/aaa"]),
    ),
    (
        "extended resource allocatable enforced for unknown resource",
        {"containers": [res(1, 1, **{B: 1})]},
        res(0, 0),
        None,
        (UU, ["Insufficient example.com/bbb"]),
    ),
    (
        "extended resource allocatable enforced for unknown resource for init container",
        {"containers": [None], "init": [res(1, 1, **{B: 1})]},
        res(0, 0),
        None,
        (UU, ["Insufficient example.com/bbb"]),
    ),
    (
        "kubernetes.io resource capacity enforced",
        {"containers": [res(1, 1, **{KIO_A: 10})]},
        res(0, 0),
        None,
        (UU, ["Insufficient kubernetes.io/something"]),
    ),
    (
        "kubernetes.io resource capacity enforced for init container",
        {"containers": [None], "init": [res(1, 1, **{KIO_B: 10})]},
        res(0, 0),
        None,
        (UU, ["Insufficient subdomain.kubernetes.io/something"]),
    ),
    (
        "hugepages resource capacity enforced",
        {"containers": [res(1, 1, **{HP: 10})]},
        res(0, 0, **{HP: 0}),
        None,
        (UU, ["Insufficient hugepages-2Mi"]),
    ),
    (
        "hugepages resource capacity enforced for init container",
        {"containers": [None], "init": [res(1, 1, **{HP: 10})]},
        res(0, 0, **{HP: 0}),
        None,
        (UU, ["Insufficient hugepages-2Mi"]),
    ),
    (
        "hugepages resource allocatable enforced for multiple containers",
        {"containers": [res(1, 1, **{HP: 3}), res(1, 1, **{HP: 3})]},
        res(0, 0, **{HP: 2}),
        None,
        (UU, ["Insufficient hugepages-2Mi"]),
    ),
    (
        "skip checking ignored extended resource",
        {"containers": [res(1, 1, **{B: 1})]},
        res(0, 0),
        {"ignoredResources": ["example.com/bbb"]},
        None,
    ),
    (
        "resources + pod overhead fits",
        {"containers": [res(1, 1)], "overhead": {"cpu": "3m", "memory": "13"}},
        res(5, 5),
        None,
        None,
    ),
    (
        "requests + overhead does not fit for memory",
        {"containers": [res(1, 1)], "overhead": {"cpu": "1m", "memory": "15"}},
        res(5, 5),
        None,
        (U, ["Insufficient memory"]),
    ),
    (
        "skip checking ignored extended resource via resource groups",
        {"containers": [res(1, 1, **{B: 1, KIO_A: 1})]},
        res(0, 0),
        {"ignoredResourceGroups": ["example.com"]},
        (UU, ["Insufficient kubernetes.io/something"]),
    ),
    (
        "skip checking extended resource request with quantity zero via resource groups",
        {"containers": [res(1, 1, **{A: 0})]},
        res(0, 0, **{A: 6}),
        None,
        None,
    ),
    (
        "both pod-level and container-level resources fit",
        {"containers": [res(1, 1)], "resources": {"requests": {"cpu": "1m", "memory": "2"}}},
        res(5, 5),
        None,
        None,
    ),
    (
        "pod-level cpu resource not fit",
        {"containers": [res(1, 1)], "resources": {"requests": {"cpu": "7m", "memory": "2"}}},
        res(5, 5),
        None,
        (U, ["Insufficient cpu"]),
    ),
    (
        "pod-level memory resource not fit",
        {"containers": [res(1, 1)], "resources": {"requests": {"cpu": "3m", "memory": "2"}}},
        res(5, 19),
        None,
        (U, ["Insufficient memory"]),
    ),
    (
        "one pod-level cpu resource fits and all init and non-init containers resources fit",
        {"containers": [res(1, 1)], "init": [res(1, 1)], "resources": {"requests": {"cpu": "3m", "memory": "2"}}},
        res(5, 19),
        None,
        (U, ["Insufficient memory"]),
    ),
    # Not upstream rows; from fit.go fitsRequest (v1.34): ignoredResources / ignoredResourceGroups are
    # consulted only for extended resources (v1helper.IsExtendedResourceName).
    (
        "ignoredResources does not apply to hugepages",
        {"containers": [res(1, 1, **{HP: 10})]},
        res(0, 0),
        {"ignoredResources": ["hugepages-2Mi"]},
        (UU, ["Insufficient hugepages-2Mi"]),
    ),
    (
        "ignoredResourceGroups does not apply to kubernetes.io names",
        {"containers": [res(1, 1, **{KIO_A: 1})]},
        res(0, 0),
        {"ignoredResourceGroups": ["kubernetes.io"]},
        (UU, ["Insufficient kubernetes.io/something"]),
    ),
    (
        "ignored resource group skips every resource of the group",
        {"containers": [res(1, 1, **{A: 10, B: 1})]},
        res(0, 0),
        {"ignoredResourceGroups": ["example.com"]},
        None,
    ),
    (
        "reasons in order cpu memory ephemeral-storage then scalars",
        {"containers": [{"cpu": "6m", "memory": "6", "ephemeral-storage": "21", "example.com/aaa": "6"}]},
        res(5, 15),
        None,
        (
            UU,
            [
                "Insufficient cpu",
                "Insufficient memory",
                "Insufficient ephemeral-storage",
                "Insufficient example.com/aaa",
            ],
        ),
    ),
]


@pytest.mark.parametrize(
    ("pod_kwargs", "existing", "args", "want"), [e[1:] for e in ENOUGH], ids=[e[0] for e in ENOUGH]
)
def test_enough_requests(
    pod_kwargs: dict[str, Any],
    existing: dict[str, str],
    args: dict[str, Any] | None,
    want: tuple[str, list[str]] | None,
) -> None:
    n = node("n1", allocatable=ENOUGH_NODE)
    other = mkpod([existing], node_name="n1")
    result = run([n], mkpod(**pod_kwargs), [other], fit_args=args)
    got = filter_status(result, "n1")
    if want is None:
        assert got is None
        assert result.scheduled
    else:
        assert got == (FIT, want[0], want[1])


# fit_test.go TestNotEnoughRequests: node cpu 10m, memory 20, pods 1, one pod already there.
# "Too many pods" alone is never unresolvable.
NOT_ENOUGH = [
    ("even without specified resources, predicate fails when there's no space for additional pod", {}, res(10, 20)),
    (
        "even if both resources fit, predicate fails when there's no space for additional pod",
        {"containers": [res(1, 1)]},
        res(5, 5),
    ),
    (
        "even for equal edge case, predicate fails when there's no space for additional pod",
        {"containers": [res(5, 1)]},
        res(5, 19),
    ),
    (
        "even for equal edge case, predicate fails when there's no space for additional pod due to init container",
        {"containers": [res(5, 1)], "init": [res(5, 1)]},
        res(5, 19),
    ),
]


@pytest.mark.parametrize(("pod_kwargs", "existing"), [e[1:] for e in NOT_ENOUGH], ids=[e[0] for e in NOT_ENOUGH])
def test_not_enough_pods(pod_kwargs: dict[str, Any], existing: dict[str, str]) -> None:
    n = node("n1", allocatable={"cpu": "10m", "memory": "20", "pods": "1"})
    result = run([n], mkpod(**pod_kwargs), [mkpod([existing], node_name="n1")])
    assert filter_status(result, "n1") == (FIT, U, ["Too many pods"])


# Combinations with "Too many pods" (fit.go Filter: the status is unresolvable iff any entry is).
@pytest.mark.parametrize(
    ("request_", "want"),
    [
        pytest.param(res(6, 1), (U, ["Too many pods", "Insufficient cpu"]), id="too-many-pods+insufficient-cpu"),
        pytest.param(res(11, 1), (UU, ["Too many pods", "Insufficient cpu"]), id="too-many-pods+cpu-above-total"),
    ],
)
def test_too_many_pods_with_resources(request_: dict[str, str], want: tuple[str, list[str]]) -> None:
    n = node("n1", allocatable={"cpu": "10m", "memory": "20", "pods": "1"})
    result = run([n], mkpod([request_]), [mkpod([res(5, 5)], node_name="n1")])
    assert filter_status(result, "n1") == (FIT, *want)


# fit_test.go TestStorageRequests (same node as TestEnoughRequests).
STORAGE = [
    ("empty storage requested, and pod fits", {"containers": [res(1, 1)]}, res(2, 10), None),
    (
        "storage ephemeral local storage request exceeds allocatable",
        {"containers": [{"ephemeral-storage": "25"}]},
        res(2, 2),
        (UU, ["Insufficient ephemeral-storage"]),
    ),
    (
        "ephemeral local storage is sufficient",
        {"containers": [{"ephemeral-storage": "5"}]},
        {**res(2, 2), "ephemeral-storage": "10"},
        None,
    ),
    ("pod fits", {"containers": [{"ephemeral-storage": "10"}]}, res(2, 2), None),
    (
        "ephemeral storage above free space only",
        {"containers": [{"ephemeral-storage": "11"}]},
        {**res(2, 2), "ephemeral-storage": "10"},
        (U, ["Insufficient ephemeral-storage"]),
    ),
]


@pytest.mark.parametrize(("pod_kwargs", "existing", "want"), [e[1:] for e in STORAGE], ids=[e[0] for e in STORAGE])
def test_storage_requests(
    pod_kwargs: dict[str, Any], existing: dict[str, str], want: tuple[str, list[str]] | None
) -> None:
    n = node("n1", allocatable=ENOUGH_NODE)
    result = run([n], mkpod(**pod_kwargs), [mkpod([existing], node_name="n1")])
    got = filter_status(result, "n1")
    assert got == (None if want is None else (FIT, *want))


# fit_test.go TestRestartableInitContainers (SidecarContainers is GA): node cpu 2m, pods 1, empty.
@pytest.mark.parametrize(
    ("sidecar_cpu", "want"),
    [
        pytest.param(
            "1m", None, id="allow pod if the total requested resources do not exceed the node's allocatable resources"
        ),
        pytest.param(
            "2m",
            (FIT, UU, ["Insufficient cpu"]),
            id="not allow pod if the total requested resources do exceed the node's allocatable resources",
        ),
    ],
)
def test_restartable_init_containers(sidecar_cpu: str, want: tuple[str, str, list[str]] | None) -> None:
    n = node("n1", allocatable={"cpu": "2m", "memory": "0", "pods": "1"})
    result = run([n], mkpod([{"cpu": "1m"}], sidecars=[{"cpu": sidecar_cpu}]))
    assert filter_status(result, "n1") == want


def test_fit_verdict_per_node_and_message() -> None:
    """Three nodes, three outcomes; the FitError message counts reasons per node."""
    nodes = [
        node("small", allocatable={"cpu": "1", "memory": "1Gi", "pods": "110"}),  # 2 cpu above total
        node("busy", allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"}),  # free 1 cpu
        node("full", allocatable={"cpu": "4", "memory": "8Gi", "pods": "1"}),
    ]
    pods = [mkpod([{"cpu": "3"}], node_name="busy"), mkpod([{"cpu": "1"}], node_name="full")]
    result = run(nodes, mkpod([{"cpu": "2", "memory": "1Gi"}]), pods)
    assert filter_status(result, "small") == (FIT, UU, ["Insufficient cpu"])
    assert filter_status(result, "busy") == (FIT, U, ["Insufficient cpu"])
    assert filter_status(result, "full") == (FIT, U, ["Too many pods"])
    assert not result.scheduled
    assert result.message.startswith("0/3 nodes are available: 1 Too many pods, 2 Insufficient cpu.")


# --- Scores ----------------------------------------------------------------------------------
# Nodes as upstream's st.MakeNode().Capacity(...) (cpu in cores, memory in bytes) plus pods: 110 so
# the Filter passes; every score test has >= 2 feasible nodes.


def cap(cpu: str, memory: str, xyz: str | None = None) -> dict[str, str]:
    """Allocatable cpu / memory (+ abc.com/xyz), pods 110."""
    out = {"cpu": cpu, "memory": memory, "pods": "110"}
    if xyz is not None:
        out["abc.com/xyz"] = xyz
    return out


def fit_scores(nodes: list[Node], incoming: Pod, pods: list[Pod], strategy: dict[str, Any]) -> dict[str, int]:
    result = run(nodes, incoming, pods, fit_args={"scoringStrategy": strategy})
    assert len(result.candidates) == len(nodes)
    return scores(result, FIT)


CPU_MEM = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
EXT_SET = [*CPU_MEM, {"name": "abc.com/xyz", "weight": 1}]


def two(cpu: str = "1000", memory: str = "2000") -> dict[str, str]:
    return {"cpu": cpu, "memory": memory}


# least_allocated_test.go TestLeastAllocatedScoringStrategy. Upstream's st.MakePod().Obj() has no
# containers (so no non-zero defaults); our API requires one, so ZERO (explicit "0" cpu and memory,
# which the defaults never replace) stands in for it. `None` is a container without requests.
ZERO = [{"cpu": "0", "memory": "0"}]
LEAST = [
    (
        "nothing scheduled, nothing requested",
        ZERO,
        [("node1", cap("4000", "10000")), ("node2", cap("4000", "10000"))],
        [],
        CPU_MEM,
        {"node1": 100, "node2": 100},
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        [two("1000", "2000"), two("2000", "3000")],
        [("node1", cap("4000", "10000")), ("node2", cap("6000", "10000"))],
        [],
        CPU_MEM,
        {"node1": 37, "node2": 50},
    ),
    (
        "no resources requested, pods scheduled",
        ZERO,
        [("node1", cap("4000", "10000")), ("node2", cap("4000", "10000"))],
        [("node1", ZERO), ("node1", ZERO), ("node2", ZERO), ("node2", ZERO)],
        CPU_MEM,
        {"node1": 100, "node2": 100},
    ),
    (
        "no resources requested, pods scheduled with resources",
        ZERO,
        [("node1", cap("10000", "20000")), ("node2", cap("10000", "20000"))],
        [
            ("node1", [two("3000", "0")]),
            ("node1", [two("3000", "0")]),
            ("node2", [two("3000", "0")]),
            ("node2", [two("3000", "5000")]),
        ],
        CPU_MEM,
        {"node1": 70, "node2": 57},
    ),
    (
        "resources requested, pods scheduled with resources",
        [two("1000", "2000"), two("2000", "3000")],
        [("node1", cap("10000", "20000")), ("node2", cap("10000", "20000"))],
        [("node1", [two("3000", "0")]), ("node2", [two("3000", "5000")])],
        CPU_MEM,
        {"node1": 57, "node2": 45},
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        [two("1000", "2000"), two("2000", "3000")],
        [("node1", cap("10000", "20000")), ("node2", cap("10000", "50000"))],
        [("node1", [two("3000", "0")]), ("node2", [two("3000", "5000")])],
        CPU_MEM,
        {"node1": 57, "node2": 60},
    ),
    (
        "zero node resources, pods scheduled with resources",
        ZERO,
        [("node1", {"pods": "110"}), ("node2", {"pods": "110"})],
        [("node1", [two("3000", "0")]), ("node2", [two("3000", "5000")])],
        CPU_MEM,
        {"node1": 0, "node2": 0},
    ),
    (
        "nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
        [two("1000", "2000"), two("2000", "3000")],
        [("node1", cap("4000", "10000")), ("node2", cap("6000", "10000"))],
        [],
        [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}],
        {"node1": 41, "node2": 50},
    ),
    (
        "bypass extended resource if the pod does not request",
        [two("1000", "2000"), two("2000", "3000")],
        [("node1", cap("6000", "10000")), ("node2", cap("6000", "10000", xyz="4"))],
        [],
        EXT_SET,
        {"node1": 50, "node2": 50},
    ),
    (
        "honor extended resource if the pod requests",
        [{"cpu": "3000", "memory": "5000", "abc.com/xyz": "2"}],
        [("node1", cap("6000", "10000", xyz="4")), ("node2", cap("6000", "10000", xyz="10"))],
        [],
        EXT_SET,
        {"node1": 50, "node2": 60},
    ),
    (
        "if the node doesn't have a resource",
        [two("3000", "4000")],
        [("node1", cap("6000", "10000")), ("node2", cap("6000", "10000", xyz="4"))],
        [],
        [{"name": "abc.com/xyz", "weight": 2}, {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        {"node1": 55, "node2": 55},
    ),
    # fit_test.go TestFitScore LeastAllocated rows.
    (
        "test case for ScoringStrategy LeastAllocated",
        [two("1000", "2000")],
        [("node1", cap("4000", "10000")), ("node2", cap("6000", "10000"))],
        [("node1", [two("2000", "4000")]), ("node2", [two("1000", "2000")])],
        CPU_MEM,
        {"node1": 32, "node2": 63},
    ),
    (
        "test case for ScoringStrategy LeastAllocated with sidecar container",
        [two("1000", "2000")],
        [("node1", cap("4000", "10000")), ("node2", cap("4000", "10000"))],
        [("node1", [two("1000", "2000")], [two("1000", "2000")]), ("node2", [two("1000", "2000")])],
        CPU_MEM,
        {"node1": 32, "node2": 55},
    ),
    # Non-zero defaults (not an upstream row): a best-effort pod counts as 100m cpu and 200Mi memory
    # on both sides. node1 (1 cpu, 1Gi) holds one best-effort pod: cpu (1000-200)*100/1000 = 80,
    # memory (1Gi-400Mi)*100/1Gi = 60 -> 70. node2 empty: cpu 90, memory 80 -> 85.
    (
        "best-effort pods count the non-zero defaults",
        [None],
        [("node1", cap("1", "1Gi")), ("node2", cap("1", "1Gi"))],
        [("node1", [None])],
        CPU_MEM,
        {"node1": 70, "node2": 85},
    ),
    (
        "ephemeral-storage is scored even when not requested",
        [{"cpu": "1", "memory": "1Gi"}],
        [
            ("node1", {**cap("4", "4Gi"), "ephemeral-storage": "100"}),
            ("node2", {**cap("4", "4Gi"), "ephemeral-storage": "100"}),
        ],
        [("node1", [{"ephemeral-storage": "50"}])],
        [*CPU_MEM, {"name": "ephemeral-storage", "weight": 1}],
        # node1: cpu (4000m-1100m)*100/4000m = 72 (the existing pod counts 100m), memory
        # (4Gi-1224Mi)*100/4Gi = 70, ephemeral-storage (100-50)*100/100 = 50 -> 64; node2: 75, 75, 100 -> 83
        {"node1": 64, "node2": 83},
    ),
    (
        "resource names outside the scalar set are omitted (pods)",
        [two("1000", "2000"), two("2000", "3000")],
        [("node1", cap("4000", "10000")), ("node2", cap("6000", "10000"))],
        [],
        [*CPU_MEM, {"name": "pods", "weight": 5}],
        {"node1": 37, "node2": 50},
    ),
]


def _place(pods: list[tuple[Any, ...]]) -> list[Pod]:
    out = []
    for entry in pods:
        node_name, containers = entry[0], entry[1]
        sidecars = entry[2] if len(entry) > 2 else None
        out.append(mkpod(containers, sidecars=sidecars, node_name=node_name))
    return out


@pytest.mark.parametrize(
    ("containers", "nodes", "pods", "resources", "want"), [e[1:] for e in LEAST], ids=[e[0] for e in LEAST]
)
def test_least_allocated(
    containers: list[dict[str, str] | None],
    nodes: list[tuple[str, dict[str, str]]],
    pods: list[tuple[Any, ...]],
    resources: list[dict[str, Any]],
    want: dict[str, int],
) -> None:
    got = fit_scores(
        [node(n, allocatable=a) for n, a in nodes],
        mkpod(containers),
        _place(pods),
        {"type": "LeastAllocated", "resources": resources},
    )
    assert got == want


def test_default_strategy_is_least_allocated_cpu_memory() -> None:
    """No pluginConfig: LeastAllocated over cpu and memory, weight 1 (least_allocated_test 37/50 row)."""
    nodes = [node("node1", allocatable=cap("4000", "10000")), node("node2", allocatable=cap("6000", "10000"))]
    result = run(nodes, mkpod([two("1000", "2000"), two("2000", "3000")]))
    assert scores(result, FIT) == {"node1": 37, "node2": 50}


# most_allocated_test.go TestMostAllocatedScoringStrategy and fit_test.go TestFitScore MostAllocated rows.
MOST = [
    (
        "nothing scheduled, nothing requested",
        ZERO,
        [("node1", cap("4000", "10000")), ("node2", cap("4000", "10000"))],
        [],
        CPU_MEM,
        {"node1": 0, "node2": 0},
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        [two("1000", "2000"), two("2000", "3000")],
        [("node1", cap("4000", "10000")), ("node2", cap("6000", "10000"))],
        [],
        CPU_MEM,
        # node1: cpu 3000*100/4000 = 75, memory 50 -> 62; node2: 50, 50 -> 50
        {"node1": 62, "node2": 50},
    ),
    (
        "resources requested, pods scheduled with resources",
        [two("1000", "2000"), two("2000", "3000")],
        [("node1", cap("10000", "20000")), ("node2", cap("10000", "20000"))],
        [("node1", [two("3000", "0")]), ("node2", [two("3000", "5000")])],
        CPU_MEM,
        # node1: cpu 60, memory 25 -> 42; node2: cpu 60, memory 50 -> 55
        {"node1": 42, "node2": 55},
    ),
    (
        "resources requested with more weight on memory",
        [two("1000", "2000"), two("2000", "3000")],
        [("node1", cap("4000", "10000")), ("node2", cap("6000", "10000"))],
        [],
        [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}],
        # node1: (50*2 + 75) / 3 = 58; node2: (50*2 + 50) / 3 = 50
        {"node1": 58, "node2": 50},
    ),
    (
        "test case for ScoringStrategy MostAllocated",
        [two("1000", "2000")],
        [("node1", cap("4000", "10000")), ("node2", cap("6000", "10000"))],
        [("node1", [two("2000", "4000")]), ("node2", [two("1000", "2000")])],
        CPU_MEM,
        {"node1": 67, "node2": 36},
    ),
    (
        "test case for ScoringStrategy MostAllocated with sidecar container",
        [two("1000", "2000")],
        [("node1", cap("4000", "10000")), ("node2", cap("4000", "10000"))],
        [("node1", [two("1000", "2000")], [two("1000", "2000")]), ("node2", [two("1000", "2000")])],
        CPU_MEM,
        {"node1": 67, "node2": 45},
    ),
    (
        "bypass extended resource if the pod does not request",
        [two("1000", "2000"), two("2000", "3000")],
        [("node1", cap("6000", "10000")), ("node2", cap("6000", "10000", xyz="4"))],
        [],
        EXT_SET,
        {"node1": 50, "node2": 50},
    ),
    (
        "honor extended resource if the pod requests",
        [{"cpu": "3000", "memory": "5000", "abc.com/xyz": "2"}],
        [("node1", cap("6000", "10000", xyz="4")), ("node2", cap("6000", "10000", xyz="10"))],
        [],
        EXT_SET,
        # node1: (50 + 50 + 50) / 3 = 50; node2: (50 + 50 + 20) / 3 = 40
        {"node1": 50, "node2": 40},
    ),
]


@pytest.mark.parametrize(
    ("containers", "nodes", "pods", "resources", "want"), [e[1:] for e in MOST], ids=[e[0] for e in MOST]
)
def test_most_allocated(
    containers: list[dict[str, str] | None],
    nodes: list[tuple[str, dict[str, str]]],
    pods: list[tuple[Any, ...]],
    resources: list[dict[str, Any]],
    want: dict[str, int],
) -> None:
    got = fit_scores(
        [node(n, allocatable=a) for n, a in nodes],
        mkpod(containers),
        _place(pods),
        {"type": "MostAllocated", "resources": resources},
    )
    assert got == want


# fit_test.go TestFitScore RequestedToCapacityRatio rows and requested_to_capacity_ratio_test.go.
SHAPE_DOWN = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
SHAPE_UP = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
RTCR = [
    (
        "nothing scheduled, nothing requested (decreasing shape)",
        ZERO,
        [("node1", cap("4000", "10000")), ("node2", cap("4000", "10000"))],
        [],
        CPU_MEM,
        SHAPE_DOWN,
        {"node1": 100, "node2": 100},
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        [two("3000", "5000")],
        [("node1", cap("4000", "10000")), ("node2", cap("6000", "10000"))],
        [],
        CPU_MEM,
        SHAPE_DOWN,
        # node1: cpu util 75 -> 25, memory 50 -> 50: round(75/2) = 38; node2: 50, 50 -> 50
        {"node1": 38, "node2": 50},
    ),
    (
        "broken linear shape with a plateau; zero scores drop their weight",
        [two("1", "1000")],
        [("node1", cap("4", "10000")), ("node2", cap("10", "10000"))],
        [("node1", [two("2", "9000")])],
        CPU_MEM,
        [{"utilization": 0, "score": 0}, {"utilization": 50, "score": 0}, {"utilization": 100, "score": 10}],
        # node1: cpu util 75 -> 0 + 100*(75-50)/50 = 50, memory 100 -> 100: (50 + 100) / 2 = 75
        # node2: cpu util 10 -> 0, memory 10 -> 0: weight sum 0 -> 0
        {"node1": 75, "node2": 0},
    ),
]


@pytest.mark.parametrize(
    ("containers", "nodes", "pods", "resources", "shape", "want"), [e[1:] for e in RTCR], ids=[e[0] for e in RTCR]
)
def test_requested_to_capacity_ratio(
    containers: list[dict[str, str] | None],
    nodes: list[tuple[str, dict[str, str]]],
    pods: list[tuple[Any, ...]],
    resources: list[dict[str, Any]],
    shape: list[dict[str, int]],
    want: dict[str, int],
) -> None:
    got = fit_scores(
        [node(n, allocatable=a) for n, a in nodes],
        mkpod(containers),
        _place(pods),
        {"type": "RequestedToCapacityRatio", "resources": resources, "requestedToCapacityRatio": {"shape": shape}},
    )
    assert got == want


# fit_test.go TestFitScore RequestedToCapacityRatio rows. There the pod (3000 cpu) does not fit node1
# (4000 cpu, 2000 used): upstream calls Score directly, so these rows call the plugin's score() on
# both nodes instead of running a cycle (where node1 would be filtered out).
RTCR_DIRECT = [
    (
        "test case for ScoringStrategy RequestedToCapacityRatio case1",
        [two("3000", "5000")],
        [("node1", cap("4000", "10000")), ("node2", cap("6000", "10000"))],
        [("node1", [two("2000", "4000")]), ("node2", [two("1000", "2000")])],
        CPU_MEM,
        SHAPE_DOWN,
        {"node1": 10, "node2": 32},
    ),
    (
        "test case for ScoringStrategy RequestedToCapacityRatio case2",
        [two("3000", "5000")],
        [("node1", cap("4000", "10000")), ("node2", cap("6000", "10000"))],
        [("node1", [two("2000", "4000")]), ("node2", [two("1000", "2000")])],
        CPU_MEM,
        SHAPE_UP,
        {"node1": 95, "node2": 68},
    ),
]


@pytest.mark.parametrize(
    ("containers", "nodes", "pods", "resources", "shape", "want"),
    [e[1:] for e in RTCR_DIRECT],
    ids=[e[0] for e in RTCR_DIRECT],
)
def test_requested_to_capacity_ratio_score_direct(
    containers: list[dict[str, str] | None],
    nodes: list[tuple[str, dict[str, str]]],
    pods: list[tuple[Any, ...]],
    resources: list[dict[str, Any]],
    shape: list[dict[str, int]],
    want: dict[str, int],
) -> None:
    plugin = fit_plugin.new(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "resources": resources,
                "requestedToCapacityRatio": {"shape": shape},
            }
        },
        None,
    )
    t = table([node(n, allocatable=a) for n, a in nodes], _place(pods))
    got = plugin.score(CycleState(), PodInfo.of(mkpod(containers)), t, np.arange(t.n))
    assert dict(zip(t.names, got.tolist(), strict=True)) == want
