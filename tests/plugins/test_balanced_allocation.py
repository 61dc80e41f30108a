"""NodeResourcesBalancedAllocation scores, and its PreScore Skip for pods requesting nothing."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from scheduler_core.api.loading import admit_pod
from scheduler_core.api.objects import Pod
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.framework.profile import Profile
from scheduler_core.plugins.registry import new_framework
from scheduler_core.schedule_one import Scheduler, ScheduleResult
from tests.helpers import node, scores, table

BA = "NodeResourcesBalancedAllocation"
GPU = "nvidia.com/gpu"
_names = itertools.count()


def mkpod(containers: list[dict[str, str] | None], node_name: str = "") -> Pod:
    """One container per requests dict (None = no requests)."""
    specs = []
    for requests in containers:
        body: dict[str, Any] = {"name": f"c{next(_names)}", "image": "x"}
        if requests is not None:
            body["resources"] = {"requests": requests}
        specs.append(body)
    p = Pod.model_validate(
        {
            "metadata": {"name": f"p{next(_names)}", "namespace": "default"},
            "spec": {"containers": specs, "nodeName": node_name},
            "status": {"phase": "Running" if node_name else "Pending"},
        }
    )
    admit_pod(p, {}, {})
    return p


def make_node(name: str, milli_cpu: int, memory: int, gpu: int | None = None) -> Any:
    """balanced_allocation_test.go makeNode: allocatable cpu (millicores), memory, extended resources."""
    allocatable = {"cpu": f"{milli_cpu}m", "memory": str(memory), "pods": "110"}
    if gpu is not None:
        allocatable[GPU] = str(gpu)
    return node(name, allocatable=allocatable)


def run(nodes: list[Any], incoming: Pod, pods: list[Pod], resources: list[dict[str, Any]] | None) -> ScheduleResult:
    # The args go to the plugin as upstream's tests hand them to New: a config file's validation
    # (weights must be 1) is not the plugin's (tests/test_profile_validation.py covers it).
    profile = Profile(plugin_args={BA: {"resources": resources}} if resources is not None else {})
    scheduler = Scheduler(new_framework(profile), seed=0)
    return scheduler.schedule_pod(table(nodes, pods), PodInfo.of(incoming))


# The pod specs of balanced_allocation_test.go TestNodeResourcesBalancedAllocation.
CPU_ONLY = [{"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"}]
CPU_AND_MEMORY = [{"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}]
CPU_MEMORY_GPU = [{"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", GPU: "3"}]
DEFAULT = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
WITH_GPU = [*DEFAULT, {"name": GPU, "weight": 1}]

# Upstream rows (id = upstream name): (pod containers, nodes, existing (node, containers), args, want).
CASES = [
    (
        "nothing scheduled, resources requested, differently sized nodes",
        CPU_AND_MEMORY,
        [("node1", 4000, 10000, None), ("node2", 6000, 10000, None)],
        [],
        DEFAULT,
        {"node1": 87, "node2": 100},  # std (0.75 - 0.5) / 2 = 0.125
    ),
    (
        "resources requested, pods scheduled with resources",
        CPU_AND_MEMORY,
        [("node1", 10000, 20000, None), ("node2", 10000, 20000, None)],
        [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)],
        DEFAULT,
        {"node1": 82, "node2": 95},
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        CPU_AND_MEMORY,
        [("node1", 10000, 20000, None), ("node2", 10000, 50000, None)],
        [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)],
        DEFAULT,
        {"node1": 82, "node2": 80},
    ),
    (
        "requested resources at node capacity",
        CPU_ONLY,
        [("node1", 6000, 10000, None), ("node2", 6000, 10000, None)],
        [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)],
        DEFAULT,
        {"node1": 50, "node2": 75},
    ),
    (
        "include scalar resource on a node for balanced resource allocation",
        [{"memory": "0", GPU: "1"}],
        [("node1", 3500, 40000, 8), ("node2", 3500, 40000, 8)],
        [("node2", CPU_AND_MEMORY), ("node1", CPU_MEMORY_GPU)],
        WITH_GPU,
        {"node1": 70, "node2": 65},  # three fractions: population std
    ),
    (
        "node without the scalar resource should skip the scalar resource",
        CPU_AND_MEMORY,
        [("node1", 3500, 40000, 8), ("node2", 3500, 40000, None)],
        [],
        WITH_GPU,
        {"node1": 63, "node2": 63},
    ),
    # Not upstream rows. Weights do not enter the formula (balanced_allocation.go scorer).
    (
        "weights are ignored",
        CPU_AND_MEMORY,
        [("node1", 4000, 10000, None), ("node2", 6000, 10000, None)],
        [],
        [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 100}],
        {"node1": 87, "node2": 100},
    ),
    (
        "no pluginConfig uses cpu and memory",
        CPU_AND_MEMORY,
        [("node1", 4000, 10000, None), ("node2", 6000, 10000, None)],
        [],
        None,
        {"node1": 87, "node2": 100},
    ),
    (
        "actual requests, no non-zero defaults: best-effort pods on the node count 0",
        [{"cpu": "1", "memory": "1Gi"}],
        [("node1", 4000, 4 * 2**30, None), ("node2", 4000, 4 * 2**30, None)],
        [("node1", [None]), ("node1", [None])],
        DEFAULT,
        {"node1": 100, "node2": 100},  # 0.25 and 0.25 on both
    ),
    (
        "fractions are capped at 1",
        [{"cpu": "1", "memory": "0"}],  # memory 0: the Filter does not check it
        [("node1", 4000, 100, None), ("node2", 4000, 100, None)],
        [("node1", [{"memory": "500"}])],  # already above allocatable
        DEFAULT,
        # node1: cpu 0.25, memory min(500/100, 1) = 1 -> std 0.375 -> 62; node2: 0.25, 0 -> 0.125 -> 87
        {"node1": 62, "node2": 87},
    ),
]


@pytest.mark.parametrize(
    ("containers", "nodes", "pods", "resources", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_balanced_allocation(
    containers: list[dict[str, str] | None],
    nodes: list[tuple[str, int, int, int | None]],
    pods: list[tuple[str, list[dict[str, str] | None]]],
    resources: list[dict[str, Any]] | None,
    want: dict[str, int],
) -> None:
    result = run(
        [make_node(*n) for n in nodes],
        mkpod(containers),
        [mkpod(c, node_name=n) for n, c in pods],
        resources,
    )
    assert len(result.candidates) == len(nodes)
    assert BA not in result.skipped_score_plugins
    assert scores(result, BA) == want


# PreScore Skip (PR #130260, v1.33): every configured resource request is 0.
# Upstream row "nothing scheduled, nothing requested, skip in PreScore", plus variants.
SKIP_CASES = [
    pytest.param([None], DEFAULT, id="nothing scheduled, nothing requested, skip in PreScore"),
    pytest.param([{"cpu": "0", "memory": "0"}], DEFAULT, id="explicit-zero-requests"),
    pytest.param([{"ephemeral-storage": "1Gi"}], DEFAULT, id="requests-only-unconfigured-resources"),
    pytest.param([{"example.com/foo": "1"}], WITH_GPU, id="extended-resource-not-in-args"),
]


@pytest.mark.parametrize(("containers", "resources"), SKIP_CASES)
def test_skip_when_nothing_requested(containers: list[dict[str, str] | None], resources: list[dict[str, Any]]) -> None:
    nodes = [make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)]
    if any(c and "example.com/foo" in c for c in containers):
        nodes = [
            node(n, allocatable={"cpu": "4", "memory": "10000", "pods": "110", "example.com/foo": "2"})
            for n in ("node1", "node2")
        ]
    if any(c and "ephemeral-storage" in c for c in containers):
        nodes = [
            node(n, allocatable={"cpu": "4", "memory": "10000", "pods": "110", "ephemeral-storage": "10Gi"})
            for n in ("node1", "node2")
        ]
    result = run(nodes, mkpod(containers), [], resources)
    assert len(result.candidates) == 2
    assert BA in result.skipped_score_plugins
    assert scores(result, BA) == {}
    # NodeResourcesFit never skips (fit.go PreScore has no Skip).
    assert "NodeResourcesFit" not in result.skipped_score_plugins
