"""NodeTable.memo: per-node columns kept across cycles equal a fresh evaluation after any sequence
of changes (pods bound and removed, preemption's column shifts, nodes updated, inserted, removed),
for NodeResourcesFit's Filter and scores, BalancedAllocation's scores and pods matching a selector."""

from __future__ import annotations

import random

import numpy as np
import pytest

from scheduler_core.api.objects import LabelSelector
from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.node_table import NodeTable, PodColumns
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.framework.selectors import compile_label_selector
from scheduler_core.plugins.node_resources import balanced_allocation, fit
from scheduler_core.plugins.registry import new_framework

from .helpers import node, pod

# the reference version's framework: what the plugins read their version from
HANDLE = new_framework()

CPUS = ["0", "1", "2", "4"]
MEMORIES = ["0", "1Gi", "4Gi"]


def _node(rng: random.Random, name: str):  # type: ignore[no-untyped-def]
    allocatable = {"cpu": rng.choice(CPUS), "memory": rng.choice(MEMORIES), "pods": str(rng.choice([1, 3, 110]))}
    if rng.random() < 0.3:
        allocatable["example.com/gpu"] = str(rng.randint(0, 2))
    return node(name, allocatable=allocatable)


def _pod(rng: random.Random, name: str) -> PodInfo:
    requests = {}
    if rng.random() < 0.8:
        requests["cpu"] = rng.choice(["100m", "1", "3"])
    if rng.random() < 0.8:
        requests["memory"] = rng.choice(["100Mi", "1Gi", "3Gi"])
    if rng.random() < 0.2:
        requests["example.com/gpu"] = "1"
    return PodInfo.of(pod(name, labels={"app": rng.choice(["a", "b"])}, requests=requests or None))


def _verdicts(result):  # type: ignore[no-untyped-def]
    return result.codes.tolist(), [(reason, mask.tolist()) for reason, mask in result.reasons]


def _fresh(table: NodeTable) -> NodeTable:
    fresh = NodeTable.build(list(table.nodes))
    for i, pods in enumerate(table.pods):
        for info in pods:
            fresh.add_pod(info, i)
    return fresh


@pytest.mark.parametrize("seed", range(12))
def test_memo_columns_equal_a_fresh_table(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [_node(rng, f"n{i}") for i in range(rng.randint(8, 40))]
    table = NodeTable.build(nodes)
    fit_plugin = fit.new({}, HANDLE)
    most = fit.new({"scoringStrategy": {"type": "MostAllocated"}}, HANDLE)
    balanced = balanced_allocation.new({}, HANDLE)
    incoming = [_pod(rng, f"in{k}") for k in range(4)]  # few request shapes: memos are reused
    placed: list[tuple[PodInfo, int]] = []
    shifted: PodColumns | None = None
    for step in range(60):
        roll = rng.random()
        if roll < 0.45 or not placed:
            info = _pod(rng, f"p{step}")
            i = rng.randrange(table.n)
            table.add_pod(info, i)
            placed.append((info, i))
        elif roll < 0.65:
            info, i = placed.pop(rng.randrange(len(placed)))
            table.remove_pod(info, i)
        elif roll < 0.75 and shifted is None:
            # preemption's dry run: some pods' columns taken off their nodes
            chosen = rng.sample(placed, k=min(len(placed), 3))
            shifted = PodColumns.of(chosen)
            table.shift(shifted, np.arange(len(chosen)), -1)
        elif roll < 0.8 and shifted is not None:
            table.shift(shifted, np.arange(len(shifted.pods)), +1)
            shifted = None
        elif roll < 0.88:
            i = rng.randrange(table.n)
            table.update_node(i, _node(rng, table.names[i]))
        elif roll < 0.94 and shifted is None:
            at = rng.randrange(table.n + 1)
            table.insert_node(at, _node(rng, f"x{step}"))
            placed = [(info, j + (j >= at)) for info, j in placed]
        elif shifted is None and table.n > 2:
            i = rng.randrange(table.n)
            placed = [(info, j - (j > i)) for info, j in placed if j != i]
            table.remove_node(i)
        if shifted is not None:
            continue  # the fresh table below would hold the shifted pods
        fresh = _fresh(table)
        every = table.every_node
        selector = compile_label_selector(LabelSelector.model_validate({"matchLabels": {"app": "a"}}))
        assert table.count_matching(selector, "default").tolist() == fresh.count_matching(selector, "default").tolist()
        for info in incoming:
            state = CycleState()
            for plugin in (fit_plugin, most):
                assert _verdicts(plugin.filter(state, info, table)) == _verdicts(plugin.filter(state, info, fresh))
                assert (
                    plugin.score(state, info, table, every).tolist() == plugin.score(state, info, fresh, every).tolist()
                )
            got = balanced.score(state, info, table, every)
            assert got.tolist() == balanced.score(state, info, fresh, every).tolist()
            some = np.flatnonzero(np.arange(table.n) % 2 == 0)
            assert (
                fit_plugin.score(state, info, table, some).tolist()
                == fit_plugin.score(state, info, fresh, some).tolist()
            )


def test_a_kept_score_is_not_changed_by_later_cycles() -> None:
    table = NodeTable.build([node("a"), node("b")])
    info = PodInfo.of(pod("p", requests={"cpu": "1"}))
    plugin = fit.new({}, HANDLE)
    kept = plugin.score(CycleState(), info, table, table.every_node)
    before = kept.tolist()
    table.add_pod(PodInfo.of(pod("q", requests={"cpu": "8"})), 0)
    after = plugin.score(CycleState(), info, table, table.every_node)
    assert kept.tolist() == before
    assert after.tolist() != before
