"""Upstream plugin test rows for what changed after v1.34, each run under the release that has it.

TaintToleration: `pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go` at
kubernetes/kubernetes@04c0d74f (after v1.35.0): TestTaintTolerationScore,
TestTaintTolerationFilter and TestTaintTolerationFilterWithFeatureGate, the rows of the
TaintTolerationComparisonOperators gate (KEP-5471, alpha in v1.35, off by default) and of the
constant reason (#134740, v1.35). One row's answer is newer than every supported release: "Pod with
Gt toleration cannot be scheduled on node with non-numeric taint value" expects the parse error as
the node's reason, from a `ToleratesTaint` that returns its error; k8s.io/api's `core/v1/toleration.go`
at v0.35.0, v0.36.0 and v0.37.0-beta.0 still logs it and tolerates nothing, so through v1.37 the
reason is the constant one (the row is kept with that answer, marked).
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.framework.profile import default_profile
from scheduler_core.plugins.registry import new_framework
from scheduler_core.schedule_one import Scheduler, ScheduleResult
from scheduler_core.versions import get_version
from tests.helpers import filter_status, node, pod, scores, table

GATE = "TaintTolerationComparisonOperators"
UNTOLERATED = ("TaintToleration", "UnschedulableAndUnresolvable", ["node(s) had untolerated taint(s)"])
SLA = "node.kubernetes.io/sla"
PRIORITY = "node.example.com/priority-level"


def _run(nodes: list[Any], incoming: Any, gate: bool, version: str = "1.35") -> ScheduleResult:
    profile = default_profile(get_version(version, f"{GATE}={str(gate).lower()}"))
    return Scheduler(new_framework(profile), seed=0).schedule_pod(table(nodes), PodInfo.of(incoming))


def _toleration(key: str, operator: str, value: str, effect: str) -> dict[str, str]:
    return {"key": key, "operator": operator, "value": value, "effect": effect}


def _tainted(name: str, *taints: tuple[str, str, str]) -> Any:
    return node(name, taints=[{"key": k, "value": v, "effect": e} for k, v, e in taints])


# TestTaintTolerationScore: (name, toleration, {node: taint value or None}, expected scores)
SCORE_ROWS = [
    (
        "Numeric Gt operator: pod with Gt toleration prefers nodes with matching SLA taint",
        ("Gt", "950"),
        {"nodeA": "800", "nodeB": "999"},
        {"nodeA": 0, "nodeB": 100},
    ),
    (
        "Numeric Lt operator: pod with Lt toleration prefers nodes with matching SLA taint",
        ("Lt", "800"),
        {"nodeA": "950", "nodeB": "700"},
        {"nodeA": 0, "nodeB": 100},
    ),
    (
        "Score ignores parse errors from numeric PreferNoSchedule taint value",
        ("Gt", "950"),
        {"nodeA": None, "nodeB": "high"},
        {"nodeA": 100, "nodeB": 0},
    ),
]


@pytest.mark.parametrize(("toleration", "taints", "expected"), [pytest.param(*r[1:], id=r[0]) for r in SCORE_ROWS])
def test_taint_toleration_score(toleration: tuple[str, str], taints: dict[str, str | None], expected: dict) -> None:
    operator, value = toleration
    nodes = [_tainted(n, (SLA, v, "PreferNoSchedule")) if v is not None else node(n) for n, v in taints.items()]
    incoming = pod("pod1", tolerations=[_toleration(SLA, operator, value, "PreferNoSchedule")])
    assert scores(_run(nodes, incoming, gate=True), "TaintToleration") == expected


# TestTaintTolerationFilter (gate on) and TestTaintTolerationFilterWithFeatureGate:
# (name, tolerations, taints of nodeA, gate, fits)
FILTER_ROWS = [
    (
        "Pod with Gt toleration cannot be scheduled on node when taint value is lower than threshold",
        [(PRIORITY, "Gt", "950")],
        [(PRIORITY, "800")],
        True,
        False,
    ),
    (
        "Pod with Gt toleration can be scheduled on node when taint value is higher than threshold",
        [(SLA, "Gt", "750")],
        [(SLA, "950")],
        True,
        True,
    ),
    (
        "Pod with Lt toleration cannot be scheduled on node when taint value is higher than threshold",
        [(PRIORITY, "Lt", "800")],
        [(PRIORITY, "950")],
        True,
        False,
    ),
    (
        "Pod with Lt toleration can be scheduled on node when taint value is lower than threshold",
        [(SLA, "Lt", "950")],
        [(SLA, "800")],
        True,
        True,
    ),
    (
        "Pod with Gt toleration cannot be scheduled when feature gate is disabled",
        [(SLA, "Gt", "750")],
        [(SLA, "950")],
        False,
        False,
    ),
    (
        "Pod with Lt toleration cannot be scheduled when feature gate is disabled",
        [(SLA, "Lt", "950")],
        [(SLA, "800")],
        False,
        False,
    ),
    (
        "Pod with mixed tolerations (Equal and Gt) when feature gate is disabled - only Equal is honored",
        [("dedicated", "Equal", "user1"), (SLA, "Gt", "750")],
        [("dedicated", "user1")],
        False,
        True,
    ),
    (
        "Pod with mixed tolerations, Gt toleration needed but filtered out when feature gate is disabled",
        [("dedicated", "Equal", "user1"), (SLA, "Gt", "750")],
        [("dedicated", "user1"), (SLA, "950")],
        False,
        False,
    ),
    (
        "(v1.35-v1.37 answer) Pod with Gt toleration cannot be scheduled on node with non-numeric taint value",
        [(SLA, "Gt", "950")],
        [(SLA, "high")],
        True,
        False,
    ),
    (
        "A pod having no tolerations can't be scheduled onto a node with nonempty taints",
        [],
        [("dedicated", "user1")],
        False,
        False,
    ),
]


@pytest.mark.parametrize(
    ("tolerations", "taints", "gate", "fits"), [pytest.param(*r[1:], id=r[0]) for r in FILTER_ROWS]
)
@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
def test_taint_toleration_filter(
    tolerations: list[tuple[str, str, str]], taints: list[tuple[str, str]], gate: bool, fits: bool, version: str
) -> None:
    nodes = [_tainted("nodeA", *((k, v, "NoSchedule") for k, v in taints))]
    incoming = pod("pod1", tolerations=[_toleration(k, op, v, "NoSchedule") for k, op, v in tolerations])
    result = _run(nodes, incoming, gate, version)
    assert filter_status(result, "nodeA") == (None if fits else UNTOLERATED)
