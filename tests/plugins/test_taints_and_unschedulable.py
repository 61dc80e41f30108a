"""TaintToleration, NodeUnschedulable, NodeName and SchedulingGates, transcribed from upstream v1.34 unit tests.

Upstream: pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go (TestTaintTolerationFilter,
TestTaintTolerationScore; the v1.34.0 reason text `node(s) had untolerated taint {key: value}`),
nodeunschedulable/node_unschedulable_test.go (TestNodeUnschedulable), nodename/node_name_test.go
(TestNodeName), schedulinggates/scheduling_gates_test.go. Rows marked "(source)" follow
k8s.io/api/core/v1 toleration.go `ToleratesTaint` and the plugin sources rather than a test table.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.api.loading import ClusterObjects
from scheduler_core.explain import explain, result_to_json
from scheduler_core.framework.status import Code
from tests.helpers import filter_status, node, pod, schedule, scores

TT = "TaintToleration"
UU = "UnschedulableAndUnresolvable"


def taint(key: str, value: str, effect: str) -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect}


def untolerated(key: str, value: str) -> tuple[str, str, list[str]]:
    return (TT, UU, [f"node(s) had untolerated taint {{{key}: {value}}}"])


# --- TaintToleration Filter: TestTaintTolerationFilter ------------------------------------------------

# (id, pod tolerations, node taints, recorded status or None)
FILTER = [
    (
        "A pod having no tolerations can't be scheduled onto a node with nonempty taints",
        [],
        [taint("dedicated", "user1", "NoSchedule")],
        untolerated("dedicated", "user1"),
    ),
    (
        "A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
        [{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}],
        [taint("dedicated", "user1", "NoSchedule")],
        None,
    ),
    (
        "A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
        [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}],
        [taint("dedicated", "user1", "NoSchedule")],
        untolerated("dedicated", "user1"),
    ),
    (
        "toleration uses operator Exists that tolerates the taints on the node",
        [{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}],
        [taint("foo", "bar", "NoSchedule")],
        None,
    ),
    (
        "multiple tolerations, multiple taints, all tolerated",
        [
            {"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"},
            {"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
        ],
        [taint("dedicated", "user2", "NoSchedule"), taint("foo", "bar", "NoSchedule")],
        None,
    ),
    (
        "keys and values match but (non-empty) effect doesn't",
        [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}],
        [taint("foo", "bar", "NoSchedule")],
        untolerated("foo", "bar"),
    ),
    (
        "keys and values match, toleration effect empty, taint NoSchedule",
        [{"key": "foo", "operator": "Equal", "value": "bar"}],
        [taint("foo", "bar", "NoSchedule")],
        None,
    ),
    (
        "key and value don't match but the taint is PreferNoSchedule",
        [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}],
        [taint("dedicated", "user1", "PreferNoSchedule")],
        None,
    ),
    ("no toleration, taint is PreferNoSchedule", [], [taint("dedicated", "user1", "PreferNoSchedule")], None),
    # (source) rows.
    (
        "(source) the first untolerated taint in node order is reported",
        [{"key": "a", "operator": "Exists"}],
        [taint("a", "1", "NoSchedule"), taint("b", "2", "NoExecute"), taint("c", "3", "NoSchedule")],
        untolerated("b", "2"),
    ),
    (
        "(source) PreferNoSchedule taints are passed over when finding the first",
        [],
        [taint("p", "1", "PreferNoSchedule"), taint("n", "2", "NoSchedule")],
        untolerated("n", "2"),
    ),
    ("(source) an empty taint value prints as {key: }", [], [taint("gpu", "", "NoSchedule")], untolerated("gpu", "")),
    (
        "(source) empty key with Exists tolerates every taint",
        [{"operator": "Exists"}],
        [taint("a", "1", "NoSchedule"), taint("b", "", "NoExecute")],
        None,
    ),
    (
        "(source) empty key with Exists and effect NoSchedule leaves NoExecute untolerated",
        [{"operator": "Exists", "effect": "NoSchedule"}],
        [taint("a", "1", "NoSchedule"), taint("b", "2", "NoExecute")],
        untolerated("b", "2"),
    ),
    (
        "(source) key Exists without effect tolerates NoExecute",
        [{"key": "b", "operator": "Exists"}],
        [taint("b", "2", "NoExecute")],
        None,
    ),
    (
        "(source) Equal with an empty value tolerates a taint without value",
        [{"key": "gpu", "operator": "Equal", "effect": "NoSchedule"}],
        [taint("gpu", "", "NoSchedule")],
        None,
    ),
    (
        "(source) Equal with an empty value does not tolerate a taint with a value",
        [{"key": "gpu", "operator": "Equal", "effect": "NoSchedule"}],
        [taint("gpu", "true", "NoSchedule")],
        untolerated("gpu", "true"),
    ),
    (
        "(source) tolerationSeconds plays no part in scheduling",
        [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0}],
        [taint("k", "v", "NoExecute")],
        None,
    ),
    (
        "(source) the key must match exactly",
        [{"key": "Dedicated", "operator": "Exists"}],
        [taint("dedicated", "x", "NoSchedule")],
        untolerated("dedicated", "x"),
    ),
]


@pytest.mark.parametrize(
    ("tolerations", "taints", "want"),
    [pytest.param(*row[1:], id=row[0]) for row in FILTER],
)
def test_taint_toleration_filter(tolerations: list[dict[str, Any]], taints: list[dict[str, str]], want: object) -> None:
    result = schedule([node("nodeA", taints=taints)], pod("pod1", tolerations=tolerations))
    assert filter_status(result, "nodeA") == want
    assert result.scheduled == (want is None)


def test_untolerated_taint_reasons_are_counted_per_taint() -> None:
    """Different first-untolerated taints give different reasons in the FitError message."""
    nodes = [
        node("n1", taints=[taint("a", "1", "NoSchedule")]),
        node("n2", taints=[taint("a", "1", "NoSchedule")]),
        node("n3", taints=[taint("b", "", "NoExecute")]),
    ]
    result = schedule(nodes, pod())
    assert result.message.startswith(
        "0/3 nodes are available: 1 node(s) had untolerated taint {b: }, 2 node(s) had untolerated taint {a: 1}."
    )


# --- TaintToleration Score: TestTaintTolerationScore --------------------------------------------------

# (id, pod tolerations, {node: taints}, normalized scores)
SCORE = [
    (
        "node with taints tolerated by the pod gets a higher score",
        [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}],
        {"nodeA": [taint("foo", "bar", "PreferNoSchedule")], "nodeB": [taint("foo", "blah", "PreferNoSchedule")]},
        {"nodeA": 100, "nodeB": 0},
    ),
    (
        "nodes whose taints are all tolerated get the same score, however many",
        [
            {"key": "cpu-type", "operator": "Equal", "value": "arm64", "effect": "PreferNoSchedule"},
            {"key": "disk-type", "operator": "Equal", "value": "ssd", "effect": "PreferNoSchedule"},
        ],
        {
            "nodeA": [],
            "nodeB": [taint("cpu-type", "arm64", "PreferNoSchedule")],
            "nodeC": [taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")],
        },
        {"nodeA": 100, "nodeB": 100, "nodeC": 100},
    ),
    (
        "the more intolerable taints a node has, the lower score it gets",
        [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}],
        {
            "nodeA": [],
            "nodeB": [taint("cpu-type", "arm64", "PreferNoSchedule")],
            "nodeC": [taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")],
        },
        {"nodeA": 100, "nodeB": 50, "nodeC": 0},
    ),
    (
        "only taints and tolerations with effect PreferNoSchedule are checked",
        [
            {"key": "cpu-type", "operator": "Equal", "value": "arm64", "effect": "NoSchedule"},
            {"key": "disk-type", "operator": "Equal", "value": "ssd", "effect": "NoSchedule"},
        ],
        {
            "nodeA": [],
            "nodeB": [taint("cpu-type", "arm64", "NoSchedule")],
            "nodeC": [taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")],
        },
        {"nodeA": 100, "nodeB": 100, "nodeC": 0},
    ),
    (
        "Default behaviour No taints and tolerations, lands on node with no taints",
        [],
        {"nodeA": [], "nodeB": [taint("cpu-type", "arm64", "PreferNoSchedule")]},
        {"nodeA": 100, "nodeB": 0},
    ),
    (
        "(source) a toleration with an empty effect counts for scoring",
        [{"key": "cpu-type", "operator": "Exists"}],
        {"nodeA": [taint("cpu-type", "arm64", "PreferNoSchedule")], "nodeB": [taint("x", "y", "PreferNoSchedule")]},
        {"nodeA": 100, "nodeB": 0},
    ),
    (
        "(source) no PreferNoSchedule taint anywhere: every node 100",
        [],
        {"nodeA": [], "nodeB": []},
        {"nodeA": 100, "nodeB": 100},
    ),
]


@pytest.mark.parametrize(
    ("tolerations", "nodes", "want"),
    [pytest.param(*row[1:], id=row[0]) for row in SCORE],
)
def test_taint_toleration_score(
    tolerations: list[dict[str, Any]], nodes: dict[str, list[dict[str, str]]], want: dict[str, int]
) -> None:
    result = schedule([node(n, taints=t) for n, t in nodes.items()], pod("pod1", tolerations=tolerations))
    assert scores(result, TT) == want


# --- NodeUnschedulable: TestNodeUnschedulable -------------------------------------------------------------

UNSCHEDULABLE = ("NodeUnschedulable", UU, ["node(s) were unschedulable"])

# (id, pod tolerations, node unschedulable, recorded status or None)
CORDON = [
    ("Does not schedule pod to unschedulable node", [], True, UNSCHEDULABLE),
    ("Schedule pod to normal node", [], False, None),
    (
        "Schedule pod with toleration to unschedulable node",
        [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}],
        True,
        None,
    ),
    ("(source) empty key Exists tolerates a cordon", [{"operator": "Exists"}], True, None),
    (
        "(source) key Exists without effect tolerates a cordon",
        [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}],
        True,
        None,
    ),
    (
        "(source) a NoExecute toleration does not tolerate a cordon",
        [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoExecute"}],
        True,
        UNSCHEDULABLE,
    ),
    (
        "(source) Equal with a value does not tolerate the value-less taint",
        [{"key": "node.kubernetes.io/unschedulable", "operator": "Equal", "value": "true"}],
        True,
        UNSCHEDULABLE,
    ),
]


@pytest.mark.parametrize(
    ("tolerations", "cordoned", "want"),
    [pytest.param(*row[1:], id=row[0]) for row in CORDON],
)
def test_node_unschedulable(tolerations: list[dict[str, Any]], cordoned: bool, want: object) -> None:
    result = schedule([node("n1", unschedulable=cordoned)], pod(tolerations=tolerations))
    assert filter_status(result, "n1") == want


def test_cordon_is_reported_before_taints() -> None:
    """NodeUnschedulable runs first in Filter order, so a cordoned and tainted node reports the cordon."""
    cordoned = node("n1", unschedulable=True, taints=[taint("node.kubernetes.io/unschedulable", "", "NoSchedule")])
    result = schedule([cordoned], pod())
    assert filter_status(result, "n1") == UNSCHEDULABLE


def test_tolerated_cordon_still_meets_the_unschedulable_taint() -> None:
    """Tolerating the cordon via the unschedulable taint toleration also passes TaintToleration."""
    cordoned = node("n1", unschedulable=True, taints=[taint("node.kubernetes.io/unschedulable", "", "NoSchedule")])
    tolerations = [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]
    result = schedule([cordoned], pod(tolerations=tolerations))
    assert filter_status(result, "n1") is None
    assert result.selected_node == "n1"


# --- NodeName: node_name_test.go TestNodeName -------------------------------------------------------------

NODE_NAME_MISMATCH = ("NodeName", UU, ["node(s) didn't match the requested node name"])


@pytest.mark.parametrize(
    ("node_name", "want"),
    [
        pytest.param("", {"foo": None, "bar": None}, id="no host specified"),
        pytest.param("foo", {"foo": None, "bar": NODE_NAME_MISMATCH}, id="host matches"),
        pytest.param("ghost", {"foo": NODE_NAME_MISMATCH, "bar": NODE_NAME_MISMATCH}, id="host doesn't match"),
    ],
)
def test_node_name(node_name: str, want: dict[str, object]) -> None:
    result = schedule([node("foo"), node("bar")], pod("p", nodeName=node_name))
    assert {n: filter_status(result, n) for n in want} == want


# --- SchedulingGates (PreEnqueue) --------------------------------------------------------------------------


def test_gated_pod_never_runs_a_cycle() -> None:
    """scheduling_gates.go PreEnqueue: `waiting for scheduling gates: [a b]` (Go %v of the names)."""
    gated = pod(schedulingGates=[{"name": "a"}, {"name": "b"}])
    explanation = explain(ClusterObjects(nodes=[node("n1")]), gated)
    assert explanation.result is None
    status = explanation.gated
    assert status is not None
    assert (status.plugin, status.code, status.message()) == (
        "SchedulingGates",
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "waiting for scheduling gates: [a b]",
    )
    data = result_to_json(explanation)
    assert data["scheduled"] is False
    assert data["message"] == "waiting for scheduling gates: [a b]"
    assert data["preEnqueue"] == {
        "plugin": "SchedulingGates",
        "code": "UnschedulableAndUnresolvable",
        "reasons": ["waiting for scheduling gates: [a b]"],
    }


def test_ungated_pod_runs_a_cycle() -> None:
    explanation = explain(ClusterObjects(nodes=[node("n1")]), pod(schedulingGates=[]))
    assert explanation.gated is None
    assert explanation.result is not None and explanation.result.selected_node == "n1"
