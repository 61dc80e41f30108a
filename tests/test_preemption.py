"""DefaultPreemption and the FailedScheduling message, through full default-profile cycles.

Upstream: pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go
(TestPostFilter, TestDryRunPreemption, TestSelectBestCandidate — the successor of the older
TestPickOneNodeForPreemption), framework/preemption/preemption.go (Preempt, pickOneNodeForPreemption),
framework/types.go (FitError.Error), schedule_one.go (truncateMessage), dynamicresources.go (PostFilter).
Upstream feeds PostFilter a hand-made NodeToStatus; here the statuses come from the real filters, so
rows whose statuses cannot arise in a v1.34 cycle are adapted (noted per row).
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.api.objects import Node, Pod, PodCondition
from scheduler_core.framework.diagnosis import fit_error_message, truncate_event_message
from scheduler_core.framework.events import PREEMPTION_EVALUATED, Event
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.framework.status import Code
from scheduler_core.plugins.registry import new_framework
from scheduler_core.schedule_one import Scheduler, ScheduleResult
from tests.helpers import filter_status, node, pod, schedule, table

# default_preemption_test.go: negPriority, lowPriority, midPriority, highPriority, veryHighPriority
NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
# st.MakeNode().Capacity(res) also sets pods: 32.
VERY_LARGE_NODE = {**VERY_LARGE, "pods": "32"}
ONE_POD = {"cpu": "32", "memory": "64Gi", "pods": "1"}  # onePodRes
NODE_RES = {"cpu": "200m", "memory": "400", "pods": "32"}  # nodeRes

DRA = "no new claims to deallocate"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"


def running(
    name: str,
    on: str,
    priority: int,
    requests: dict[str, Any] | None = None,
    start: int | None = None,
    **spec: Any,
) -> Pod:
    """A pod bound to `on`; `start` is its status.startTime in seconds after the epoch."""
    p = pod(name, requests=requests, node_name=on, priority=priority, **spec)
    if start is not None:
        p.status.start_time = f"1970-01-01T00:00:{start:02d}Z"
    return p


def cycle(nodes: list[Node], incoming: Pod, pods: list[Pod]) -> tuple[ScheduleResult, dict[str, Any] | None]:
    """One cycle; also returns the data of the preemption.evaluated event (None if preemption did not run)."""
    scheduler = Scheduler(new_framework(), seed=0)
    events: list[Event] = []
    scheduler.subscribe(events.append)
    result = scheduler.schedule_pod(table(nodes, pods), PodInfo.of(incoming))
    evaluated = [e.to_dict(result.table.names) for e in events if e.type == PREEMPTION_EVALUATED]
    return result, evaluated[0] if evaluated else None


def victims_of(result: ScheduleResult) -> list[str]:
    assert result.post_filter_result is not None
    return [v.name for v in result.post_filter_result.detail["victims"]]


# --- TestPostFilter ---------------------------------------------------------------------------
# default_preemption_test.go TestPostFilter. Messages are the whole FailedScheduling text: the
# filter histogram, then DynamicResources' "no new claims to deallocate", then "preemption: ...".

TAINT = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}

POST_FILTER_CASES = [
    pytest.param(
        [node("node1", allocatable=ONE_POD)],
        pod("p", priority=HIGH),
        [running("p1", "node1", LOW)],
        "node1",
        "0/1 nodes are available: 1 Too many pods.",
        id="pod with higher priority can be made schedulable",
    ),
    pytest.param(
        [node("node1", allocatable=ONE_POD)],
        pod("p"),
        [running("p1", "node1", LOW)],
        "",
        f"0/1 nodes are available: 1 Too many pods. {DRA}, preemption: 0/1 nodes are available: 1 {NO_VICTIMS}.",
        id="pod with tied priority is still unschedulable",
    ),
    pytest.param(
        [node("node1", allocatable=ONE_POD)],
        pod("p", priority=HIGH, nodeSelector={"zone": "a"}),
        [running("p1", "node1", LOW)],
        "",
        "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. "
        f"{DRA}, preemption: 0/1 nodes are available: 1 {NOT_HELPFUL}.",
        id="preemption should respect filteredNodesStatuses",
    ),
    pytest.param(
        [node("node1", allocatable=ONE_POD), node("node2", allocatable=ONE_POD)],
        pod("p", priority=MID),
        [running("p1", "node1", HIGH), running("p2", "node2", LOW)],
        "node2",
        "0/2 nodes are available: 2 Too many pods.",
        id="pod can be made schedulable on one node",
    ),
    pytest.param(
        # PDBs of the upstream row left out (not modelled); the answer does not depend on them.
        [node("node1", allocatable=ONE_POD), node("node2", allocatable=ONE_POD)],
        pod("p", priority=VERY_HIGH),
        [running("p1", "node1", HIGH), running("p2", "node1", LOW), running("p3", "node2", MID)],
        "node2",
        "0/2 nodes are available: 2 Too many pods.",
        id="pod can be made schedulable on minHighestPriority node",
    ),
    pytest.param(
        # Adapted: upstream's 300m request on a 200m node is UnschedulableAndUnresolvable in v1.34
        # (PR #131345), so the remaining cpu shortage comes from an equal-priority pod instead.
        [node("node1", allocatable=ONE_POD), node("node2", allocatable=NODE_RES), node("node3", allocatable=ONE_POD)],
        pod("p", priority=HIGH, requests={"cpu": "100m"}),
        [
            running("p1", "node1", HIGH),
            running("p2", "node2", LOW),
            running("p2h", "node2", HIGH, {"cpu": "200m"}),
            running("p3", "node3", HIGH),
        ],
        "",
        "0/3 nodes are available: 1 Insufficient cpu, 2 Too many pods. "
        f"{DRA}, preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 {NO_VICTIMS}.",
        id="no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
    ),
    pytest.param(
        # Adapted as above; node3/node4 are UnschedulableAndUnresolvable through an untolerated taint.
        [
            node("node1", allocatable=NODE_RES),
            node("node2", allocatable=NODE_RES),
            node("node3", allocatable=NODE_RES, taints=[TAINT]),
            node("node4", allocatable=NODE_RES, taints=[TAINT]),
        ],
        pod("p", priority=HIGH, requests={"cpu": "100m"}),
        [
            running("p1", "node1", LOW),
            running("p1h", "node1", HIGH, {"cpu": "200m"}),
            running("p2", "node2", LOW),
            running("p2h", "node2", HIGH, {"cpu": "200m"}),
        ],
        "",
        "0/4 nodes are available: 2 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: infra}. "
        f"{DRA}, preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 {NOT_HELPFUL}.",
        id="no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes don't "
        "have enough CPU resource",
    ),
    pytest.param(
        # Upstream's row hands PostFilter an Unschedulable status; in a real v1.34 cycle a request above
        # the node's total allocatable is UnschedulableAndUnresolvable (errata 1), so preemption is not helpful.
        [node("node1", allocatable=NODE_RES), node("node2", allocatable=NODE_RES)],
        pod("p", priority=HIGH, requests=LARGE),
        [running("p1", "node1", LOW), running("p2", "node2", LOW)],
        "",
        f"0/2 nodes are available: 2 Insufficient cpu. {DRA}, preemption: 0/2 nodes are available: 2 {NOT_HELPFUL}.",
        id="no candidate nodes found, no enough resource after removing low priority pods",
    ),
]


@pytest.mark.parametrize(("nodes", "incoming", "pods", "nominated", "message"), POST_FILTER_CASES)
def test_post_filter(nodes: list[Node], incoming: Pod, pods: list[Pod], nominated: str, message: str) -> None:
    result = schedule(nodes, incoming, pods)
    assert not result.scheduled
    assert result.message == message
    assert result.nominated_node == nominated
    assert result.post_filter_status is not None
    if nominated:
        # Success: PostFilterMsg is empty, so the message has no PostFilter part at all.
        assert result.post_filter_status.code == Code.SUCCESS
        assert "preemption" not in result.message and DRA not in result.message
    else:
        assert result.post_filter_status.code == Code.UNSCHEDULABLE
        assert result.post_filter_result is not None  # NewPostFilterResultWithNominatedNode(""): clears the NNN


def test_successful_preemption_lists_the_victims_and_leaves_the_snapshot_unchanged() -> None:
    """The nominated node's victims are reported; the dry run does not alter the table."""
    nodes = [node("node1", allocatable=ONE_POD), node("node2", allocatable=ONE_POD)]
    pods = [running("p1", "node1", HIGH), running("p2", "node2", LOW)]
    snapshot = table(nodes, pods)
    before = [[p.name for p in on_node] for on_node in snapshot.pods]
    scheduler = Scheduler(new_framework(), seed=0)
    result = scheduler.schedule_pod(snapshot, PodInfo.of(pod("p", priority=MID)))
    assert result.nominated_node == "node2"
    assert victims_of(result) == ["p2"]
    assert [[p.name for p in on_node] for on_node in snapshot.pods] == before
    again = scheduler.schedule_pod(snapshot, PodInfo.of(pod("p", priority=MID)))
    assert again.nominated_node == "node2"
    assert again.message == result.message == "0/2 nodes are available: 2 Too many pods."


# --- TestDryRunPreemption: which pods become victims ------------------------------------------
# default_preemption_test.go TestDryRunPreemption; nodes have Capacity(veryLargeRes). Victims are listed
# in MoreImportantPod order (highest priority first, then earlier start); upstream's test sorts them by name.

DRY_RUN_CASES = [
    pytest.param(
        ["node1", "node2"],
        pod("p", priority=HIGH, requests=LARGE),
        [running("p1", "node1", MID, LARGE), running("p2", "node2", MID, LARGE)],
        {"node1": ["p1"], "node2": ["p2"]},
        id="a pod that fits on both nodes when lower priority pods are preempted",
    ),
    pytest.param(
        ["node1", "node2"],
        pod("p", priority=LOW, requests=LARGE),
        [running("p1", "node1", MID, LARGE), running("p2", "node2", MID, LARGE)],
        {},
        id="a pod that would fit on the nodes, but other pods running are higher priority, no preemption would happen",
    ),
    pytest.param(
        ["node1", "node2"],
        pod("p", priority=HIGH, requests=LARGE),
        [
            running("p1.1", "node1", LOW, SMALL),
            running("p1.2", "node1", MID, LARGE),
            running("p2", "node2", MID, LARGE),
        ],
        {"node1": ["p1.2"], "node2": ["p2"]},
        id="medium priority pod is preempted, but lower priority one stays as it is small",
    ),
    pytest.param(
        ["node1", "node2"],
        pod("p", priority=HIGH, requests=LARGE),
        [
            running("p1.1", "node1", MID, SMALL),
            running("p1.2", "node1", LOW, SMALL),
            running("p1.3", "node1", MID, MEDIUM),
            running("p1.4", "node1", HIGH, SMALL),
            running("p2", "node2", HIGH, LARGE),
        ],
        {"node1": ["p1.3", "p1.2"]},
        id="mixed priority pods are preempted",
    ),
    pytest.param(
        ["node1", "node2"],
        pod("p", priority=HIGH, requests=LARGE),
        [
            running("p1.1", "node1", LOW, SMALL, start=5),
            running("p1.2", "node1", LOW, SMALL, start=4),
            running("p1.3", "node1", MID, MEDIUM, start=3),
            running("p1.4", "node1", HIGH, SMALL, start=2),
            running("p2", "node2", HIGH, LARGE, start=1),
        ],
        {"node1": ["p1.3", "p1.1"]},
        id="mixed priority pods are preempted, pick later StartTime one when priorities are equal",
    ),
    pytest.param(
        ["node1", "node2"],
        pod("p", labels={"foo": ""}, priority=HIGH, requests=SMALL),
        [
            running(
                "p1.1",
                "node1",
                LOW,
                SMALL,
                affinity={
                    "podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
                                "topologyKey": "hostname",
                            }
                        ]
                    }
                },
            ),
            running("p1.2", "node1", MID, SMALL),
            running("p1.3", "node1", HIGH, SMALL),
            # Adapted: upstream dry-runs node2 directly; in a cycle node2 must fail to be evaluated, so
            # its high-priority pod fills it (upstream: SMALL).
            running("p2", "node2", HIGH, VERY_LARGE),
        ],
        {"node1": ["p1.1"]},
        id="pod with anti-affinity is preempted",
    ),
    pytest.param(
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        pod(
            "p",
            labels={"foo": ""},
            priority=HIGH,
            topologySpreadConstraints=[
                {
                    "maxSkew": 1,
                    "topologyKey": key,
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
                }
                for key in ("zone", "hostname")
            ],
        ),
        [
            running("pod-a1", "node-a", MID, labels={"foo": ""}),
            running("pod-a2", "node-a", LOW, labels={"foo": ""}),
            running("pod-b1", "node-b", LOW, labels={"foo": ""}),
            running("pod-x1", "node-x", HIGH, labels={"foo": ""}),
            running("pod-x2", "node-x", HIGH, labels={"foo": ""}),
        ],
        {"node-a": ["pod-a2"], "node-b": ["pod-b1"]},
        id="preemption to resolve pod topology spread filter failure",
    ),
]


def upstream_nodes(names: list[str]) -> list[Node]:
    """`node/zone` names become hostname and zone labels, as in TestDryRunPreemption."""
    out = []
    for spec in names:
        parts = spec.split("/")
        labels = dict(zip(("hostname", "zone", "region"), parts, strict=False))
        out.append(node(parts[0], labels=labels, allocatable=VERY_LARGE_NODE))
    return out


@pytest.mark.parametrize(("nodes", "incoming", "pods", "candidates"), DRY_RUN_CASES)
def test_dry_run_victims(nodes: list[str], incoming: Pod, pods: list[Pod], candidates: dict[str, list[str]]) -> None:
    result, evaluated = cycle(upstream_nodes(nodes), incoming, pods)
    assert evaluated is not None
    got = {c["node"]: [v["pod"].split("/", 1)[1] for v in c["victims"]] for c in evaluated["candidates"]}
    assert got == candidates
    if candidates:
        assert result.nominated_node in candidates
        assert victims_of(result) == candidates[result.nominated_node]
    else:
        assert result.nominated_node == ""


# --- TestSelectBestCandidate / TestPickOneNodeForPreemption ----------------------------------
# pickOneNodeForPreemption: fewest PDB violations (always 0 here), lowest highest-priority victim,
# smallest sum of (priority + MaxInt32 + 1), fewest victims, latest earliest-start of the top victims.

SELECT_CASES = [
    pytest.param(
        ["node1", "node2"],
        HIGH,
        LARGE,
        [running("p1", "node1", MID, LARGE, start=0), running("p2", "node2", MID, LARGE, start=0)],
        {"node1", "node2"},
        id="a pod that fits on both nodes when lower priority pods are preempted",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        HIGH,
        VERY_LARGE,
        [
            running("p1.1", "node1", MID, MEDIUM, start=0),
            running("p1.2", "node1", MID, LARGE, start=0),
            running("p2.1", "node2", MID, MEDIUM, start=0),
            running("p2.2", "node2", LOW, MEDIUM, start=0),
            running("p3.1", "node3", LOW, MEDIUM, start=0),
            running("p3.2", "node3", LOW, MEDIUM, start=0),
        ],
        {"node3"},
        id="node with min highest priority pod is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        HIGH,
        VERY_LARGE,
        [
            running("p1.1", "node1", MID, MEDIUM, start=0),
            running("p1.2", "node1", MID, LARGE, start=0),
            running("p2.1", "node2", MID, LARGE, start=0),
            running("p2.2", "node2", LOW, MEDIUM, start=0),
            running("p3.1", "node3", MID, MEDIUM, start=0),
            running("p3.2", "node3", MID, MEDIUM, start=0),
        ],
        {"node2"},
        id="when highest priorities are the same, minimum sum of priorities is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        HIGH,
        VERY_LARGE,
        [
            running("p1.1", "node1", MID, SMALL, start=0),
            running("p1.2", "node1", NEG, SMALL, start=0),
            running("p1.3", "node1", MID, SMALL, start=0),
            running("p1.4", "node1", NEG, SMALL, start=0),
            running("p2.1", "node2", MID, LARGE, start=0),
            running("p2.2", "node2", NEG, MEDIUM, start=0),
            running("p3.1", "node3", MID, MEDIUM, start=0),
            running("p3.2", "node3", NEG, SMALL, start=0),
            running("p3.3", "node3", LOW, SMALL, start=0),
        ],
        {"node2"},
        id="when highest priority and sum are the same, minimum number of pods is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        HIGH,
        VERY_LARGE,
        [
            running("p1.1", "node1", MID, SMALL, start=0),
            running("p1.2", "node1", NEG, SMALL, start=0),
            running("p1.3", "node1", NEG, SMALL, start=0),
            running("p2.1", "node2", MID, LARGE, start=0),
            running("p2.2", "node2", NEG, MEDIUM, start=0),
            running("p3.1", "node3", MID, MEDIUM, start=0),
            running("p3.2", "node3", NEG, SMALL, start=0),
            running("p3.3", "node3", LOW, SMALL, start=0),
        ],
        {"node2"},
        id="sum of adjusted priorities is considered",
    ),
    pytest.param(
        ["node1", "node2", "node3", "node4"],
        VERY_HIGH,
        VERY_LARGE,
        [
            running("p1.1", "node1", MID, SMALL, start=0),
            running("p1.2", "node1", LOW, SMALL, start=0),
            running("p1.3", "node1", LOW, SMALL, start=0),
            running("p2.1", "node2", HIGH, LARGE, start=0),
            running("p3.1", "node3", MID, MEDIUM, start=0),
            running("p3.2", "node3", LOW, SMALL, start=0),
            running("p3.3", "node3", LOW, SMALL, start=0),
            running("p3.4", "node3", LOW, MEDIUM, start=0),
            running("p4.1", "node4", MID, MEDIUM, start=0),
            running("p4.2", "node4", MID, SMALL, start=0),
            running("p4.3", "node4", MID, SMALL, start=0),
            running("p4.4", "node4", NEG, SMALL, start=0),
        ],
        {"node1"},
        id="non-overlapping lowest high priority, sum priorities, and number of pods",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        HIGH,
        VERY_LARGE,
        [
            running("p1.1", "node1", MID, MEDIUM, start=2),
            running("p1.2", "node1", MID, MEDIUM, start=2),
            running("p2.1", "node2", MID, MEDIUM, start=3),
            running("p2.2", "node2", MID, MEDIUM, start=3),
            running("p3.1", "node3", MID, MEDIUM, start=1),
            running("p3.2", "node3", MID, MEDIUM, start=1),
        ],
        {"node2"},
        id="same priority, same number of victims, different start time for each node's pod",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        HIGH,
        VERY_LARGE,
        [
            running("p1.1", "node1", MID, MEDIUM, start=4),
            running("p1.2", "node1", MID, MEDIUM, start=2),
            running("p2.1", "node2", MID, MEDIUM, start=5),
            running("p2.2", "node2", MID, MEDIUM, start=1),
            running("p3.1", "node3", MID, MEDIUM, start=3),
            running("p3.2", "node3", MID, MEDIUM, start=6),
        ],
        {"node3"},
        id="same priority, same number of victims, different start time for all pods",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        HIGH,
        VERY_LARGE,
        [
            running("p1.1", "node1", LOW, MEDIUM, start=4),
            running("p1.2", "node1", MID, MEDIUM, start=2),
            running("p2.1", "node2", MID, MEDIUM, start=6),
            running("p2.2", "node2", LOW, MEDIUM, start=1),
            running("p3.1", "node3", LOW, MEDIUM, start=3),
            running("p3.2", "node3", MID, MEDIUM, start=5),
        ],
        {"node2"},
        id="different priority, same number of victims, different start time for all pods",
    ),
    pytest.param(
        # Not upstream: GetPodStartTime is time.Now() for a pod without startTime, the latest possible.
        ["node1", "node2"],
        HIGH,
        LARGE,
        [running("p1", "node1", MID, LARGE, start=9), running("p2", "node2", MID, LARGE)],
        {"node2"},
        id="a victim without startTime counts as started now (latest)",
    ),
]


@pytest.mark.parametrize(("nodes", "priority", "requests", "pods", "expected"), SELECT_CASES)
def test_select_best_candidate(
    nodes: list[str], priority: int, requests: dict[str, str], pods: list[Pod], expected: set[str]
) -> None:
    for seed in range(3):  # the choice must not depend on the tie-break seed
        result = Scheduler(new_framework(), seed=seed).schedule_pod(
            table(upstream_nodes(nodes), pods), PodInfo.of(pod("p", priority=priority, requests=requests))
        )
        assert result.nominated_node in expected
        assert result.post_filter_status is not None and result.post_filter_status.code == Code.SUCCESS


def test_victims_are_reported_most_important_first() -> None:
    """SelectVictimsOnNode returns victims in MoreImportantPod order (priority, then earlier start)."""
    pods = [
        running("late-low", "node1", LOW, SMALL, start=7),
        running("mid", "node1", MID, SMALL, start=9),
        running("early-low", "node1", LOW, SMALL, start=1),
        running("high", "node1", HIGH, SMALL, start=0),
    ]
    result = schedule(upstream_nodes(["node1"]), pod("p", priority=VERY_HIGH, requests=VERY_LARGE), pods)
    assert result.nominated_node == "node1"
    assert victims_of(result) == ["high", "mid", "early-low", "late-low"]


# --- PodEligibleToPreemptOthers --------------------------------------------------------------


def test_preemption_policy_never() -> None:
    """default_preemption.go PodEligibleToPreemptOthers: nil result keeps the NNN unchanged."""
    result = schedule(
        [node("node1", allocatable=ONE_POD)],
        pod("p", priority=HIGH, preemptionPolicy="Never"),
        [running("p1", "node1", LOW)],
    )
    assert result.message == (
        f"0/1 nodes are available: 1 Too many pods. {DRA}, preemption: not eligible due to preemptionPolicy=Never."
    )
    assert result.post_filter_result is None
    assert result.post_filter_status is not None
    assert result.post_filter_status.code == Code.UNSCHEDULABLE
    assert result.post_filter_status.plugin == "DynamicResources"  # the first Unschedulable PostFilter plugin


def terminating_by_preemption(p: Pod, reason: str = "PreemptionByScheduler") -> Pod:
    p.metadata.deletion_timestamp = "2025-01-01T00:00:00Z"
    p.status.conditions = [PodCondition(type="DisruptionTarget", status="True", reason=reason)]
    return p


def nominated(p: Pod, node_name: str) -> Pod:
    p.status.nominated_node_name = node_name
    return p


def test_terminating_victim_on_the_nominated_node_blocks_preemption() -> None:
    result = schedule(
        [node("node1", allocatable=ONE_POD)],
        nominated(pod("p", priority=HIGH), "node1"),
        [terminating_by_preemption(running("old", "node1", LOW))],
    )
    assert result.message == (
        f"0/1 nodes are available: 1 Too many pods. {DRA}, "
        "preemption: not eligible due to a terminating pod on the nominated node."
    )
    assert result.post_filter_result is None  # NNN left unchanged


@pytest.mark.parametrize(
    "victim",
    [
        pytest.param(terminating_by_preemption(running("old", "node1", HIGH)), id="terminating pod not preemptable"),
        pytest.param(
            terminating_by_preemption(running("old", "node1", LOW), reason="EvictionByEvictionAPI"),
            id="terminating for another reason",
        ),
        pytest.param(running("old", "node1", LOW), id="not terminating"),
    ],
)
def test_only_a_lower_priority_pod_terminating_by_preemption_blocks(victim: Pod) -> None:
    result = schedule([node("node1", allocatable=ONE_POD)], nominated(pod("p", priority=HIGH), "node1"), [victim])
    assert "not eligible" not in result.message
    if victim.spec.priority == LOW:
        assert result.nominated_node == "node1"
    else:
        assert result.message.endswith(f"preemption: 0/1 nodes are available: 1 {NO_VICTIMS}.")


def test_unresolvable_nominated_node_keeps_the_pod_eligible() -> None:
    """A nominated node whose status is UnschedulableAndUnresolvable does not block preemption."""
    nodes = [node("node1", allocatable=ONE_POD, taints=[TAINT]), node("node2", allocatable=ONE_POD)]
    pods = [terminating_by_preemption(running("old", "node1", LOW)), running("p2", "node2", LOW)]
    result = schedule(nodes, nominated(pod("p", priority=HIGH), "node1"), pods)
    assert filter_status(result, "node1") == (
        "TaintToleration",
        "UnschedulableAndUnresolvable",
        ["node(s) had untolerated taint {dedicated: infra}"],
    )
    assert result.nominated_node == "node2"
    assert victims_of(result) == ["p2"]


# --- PreFilter rejections and DynamicResources' PostFilter ------------------------------------

CONFLICT = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": ["node1"]},
                        {"key": "metadata.name", "operator": "In", "values": ["node2"]},
                    ]
                }
            ]
        }
    }
}


def test_unresolvable_pre_filter_rejection_gives_dra_not_found() -> None:
    """RunPreFilterPlugins stops before DynamicResources, whose PostFilter then fails reading its
    state (Error "not found"); RunPostFilterPlugins returns at once and DefaultPreemption never runs."""
    result, evaluated = cycle(
        [node("node1", allocatable=ONE_POD)], pod("p", priority=HIGH, affinity=CONFLICT), [running("p1", "node1", LOW)]
    )
    assert result.message == "0/1 nodes are available: pod affinity terms conflict. not found"
    assert evaluated is None
    assert result.post_filter_status is not None
    assert (result.post_filter_status.code, result.post_filter_status.plugin) == (Code.ERROR, "DynamicResources")
    assert result.post_filter_result is None
    assert result.pre_filter_status is not None
    assert result.pre_filter_status.plugin == "NodeAffinity"
    assert result.status.code == Code.UNSCHEDULABLE


def test_nodes_left_out_by_pre_filter_result_are_not_helpful() -> None:
    """Absent nodes share `node(s) didn't satisfy plugin(s) [NodeAffinity]` (UnschedulableAndUnresolvable)."""
    only_node1 = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node1"]}]}
                ]
            }
        }
    }
    nodes = [node(f"node{i}", allocatable=ONE_POD) for i in (1, 2, 3)]
    pods = [running(f"p{i}", f"node{i}", HIGH) for i in (1, 2, 3)]
    result = schedule(nodes, pod("p", priority=HIGH, affinity=only_node1), pods)
    assert result.message == (
        "0/3 nodes are available: 1 Too many pods, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
        f"{DRA}, preemption: 0/3 nodes are available: 1 {NO_VICTIMS}, 2 {NOT_HELPFUL}."
    )


def test_no_nodes() -> None:
    result = schedule([], pod("p", priority=HIGH))
    assert result.message == "no nodes available to schedule pods"
    assert result.status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert result.post_filter_status is None  # PostFilter does not run


# --- FitError.Error(): histogram order ---------------------------------------------------------


def test_histogram_is_sorted_as_strings() -> None:
    """types.go FitError.Error(): items "<count> <reason>" sorted with sort.Strings, so "10 ..." < "2 ..."."""
    nodes = [node(f"u{i:02d}", unschedulable=True) for i in range(10)]
    nodes += [node(f"t{i}", taints=[TAINT]) for i in range(2)]
    result = schedule(nodes, pod("p"))
    assert result.message == (
        "0/12 nodes are available: 10 node(s) were unschedulable, "
        "2 node(s) had untolerated taint {dedicated: infra}. "
        f"{DRA}, preemption: 0/12 nodes are available: 12 {NOT_HELPFUL}."
    )


@pytest.mark.parametrize(
    ("counts", "pre_filter", "post_filter", "expected"),
    [
        pytest.param(
            [("node(s) were unschedulable", 2), ("Insufficient cpu", 10), ("Insufficient memory", 3)],
            "",
            "",
            "0/15 nodes are available: 10 Insufficient cpu, 2 node(s) were unschedulable, 3 Insufficient memory.",
            id="byte order, not numeric",
        ),
        pytest.param([], "", "", "0/15 nodes are available:", id="no reasons"),
        pytest.param(
            [("Insufficient cpu", 1)],
            "pod affinity terms conflict",
            "not found",
            "0/15 nodes are available: pod affinity terms conflict. not found",
            id="a PreFilter message replaces the histogram",
        ),
        pytest.param([("Insufficient cpu", 0)], "", "x", "0/15 nodes are available: x", id="zero counts dropped"),
    ],
)
def test_fit_error_message(counts: list[tuple[str, int]], pre_filter: str, post_filter: str, expected: str) -> None:
    assert fit_error_message(15, counts, pre_filter, post_filter) == expected


# --- schedule_one.go truncateMessage -----------------------------------------------------------


@pytest.mark.parametrize(
    ("length", "expected_length", "truncated"),
    [(0, 0, False), (1023, 1023, False), (1024, 1024, False), (1025, 1024, True), (5000, 1024, True)],
)
def test_truncate_event_message(length: int, expected_length: int, truncated: bool) -> None:
    message = "".join(chr(ord("a") + i % 26) for i in range(length))
    out = truncate_event_message(message)
    assert len(out) == expected_length
    assert out == (message[:1020] + " ..." if truncated else message)


def test_long_failed_scheduling_message_is_truncated_for_the_event() -> None:
    """Many distinct taints make a message over 1024 characters; the event note is cut, the
    condition keeps the full text."""
    nodes = [
        node(f"n{i:03d}", taints=[{"key": f"team-{i:03d}", "value": "x", "effect": "NoSchedule"}]) for i in range(40)
    ]
    result = schedule(nodes, pod("p"))
    assert len(result.message) > 1024
    assert result.message.startswith("0/40 nodes are available: 1 node(s) had untolerated taint {team-000: x}, ")
    note = truncate_event_message(result.message)
    assert len(note) == 1024
    assert note == result.message[:1020] + " ..."
