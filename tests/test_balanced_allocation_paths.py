"""NodeResourcesBalancedAllocation scores a few nodes with Python floats and many with numpy
(balanced_allocation.SCALAR_NODES): both give the same score on every node, under the formula up to
v1.35 and the change in balance from v1.36 (kubernetes/kubernetes#135573)."""

from __future__ import annotations

import random

import pytest

from scheduler_core.plugins.node_resources import balanced_allocation
from tests.test_versions import _cycle, _node, _pod

BALANCED = "NodeResourcesBalancedAllocation"
CPUS = ["16", "7500m", "64", "12", "33"]
MEMORIES = ["64Gi", "33333Mi", "48Gi", "123456789012", "1Ti"]


def _scores(version: str, nodes: list[dict], pods: list[dict], pod: dict) -> dict[str, int]:
    answer = _cycle(version, nodes, pods, pod)["nodes"]
    return {name: node["scores"][BALANCED]["normalized"] for name, node in answer.items() if BALANCED in node["scores"]}


@pytest.mark.parametrize("version", ["1.35", "1.36"])
@pytest.mark.parametrize("seed", range(12))
def test_few_and_many_nodes_score_alike(version: str, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    nodes = [_node(f"n{i}", rng.choice(CPUS), rng.choice(MEMORIES)) for i in range(rng.randint(2, 7))]
    pods = [
        _pod(
            f"p{i}",
            rng.choice(["0", "100m", "1", "2500m"]),
            rng.choice(["0", "100Mi", "1Gi", "5Gi"]),
            node["metadata"]["name"],
        )
        for i, node in enumerate(rng.choices(nodes, k=rng.randint(0, 8)))
    ]
    pod = _pod("new", rng.choice(["100m", "1", "3"]), rng.choice(["0", "256Mi", "2Gi", "9Gi"]))
    few = _scores(version, nodes, pods, pod)
    monkeypatch.setattr(balanced_allocation, "SCALAR_NODES", 0)  # numpy for any number of nodes
    assert _scores(version, nodes, pods, pod) == few
    assert len(few) == len(nodes)  # every node fits the pod, and two or more are scored
