"""PodTopologySpread through the full default pipeline, transcribed from upstream v1.34 unit tests.

Conventions (tests/conformance/README.md): the empty namespace is `default`; where a unit test ran the
plugin alone and the full pipeline gives another first failing plugin (NodeAffinity, TaintToleration),
the full-pipeline outcome is asserted and the row says so; "failedNodes" of score tests carry an
untolerated `test/unavailable=true:NoSchedule` taint, so they are infeasible but their pods still count.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.api.objects import Node, OwnerReference, Pod
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.plugins.registry import new_framework
from scheduler_core.schedule_one import Scheduler, ScheduleResult
from tests.helpers import filter_status, node, pod, schedule, scores, table

PTS = "PodTopologySpread"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
NOT_MATCH = "node(s) didn't match pod topology spread constraints"
LABEL_MISSING = NOT_MATCH + " (missing required label)"
# upstream `taints` in filtering_test.go: node.kubernetes.io/unschedulable:NoSchedule
UNSCHED_TAINT = [{"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}]
FAILED_TAINT = [{"key": "test/unavailable", "value": "true", "effect": "NoSchedule"}]

# Expected filter outcome shorthands.
OK = None
SKEW = (PTS, "Unschedulable", [NOT_MATCH])
LABEL = (PTS, "UnschedulableAndUnresolvable", [LABEL_MISSING])
NA = ("NodeAffinity", "UnschedulableAndUnresolvable", ["node(s) didn't match Pod's node affinity/selector"])
TT = (
    "TaintToleration",
    "UnschedulableAndUnresolvable",
    ["node(s) had untolerated taint {node.kubernetes.io/unschedulable: }"],
)


def sc(
    max_skew: int,
    key: str,
    selector: dict[str, Any] | None,
    when: str = "DoNotSchedule",
    min_domains: int | None = None,
    affinity_policy: str | None = None,
    taints_policy: str | None = None,
    match_label_keys: list[str] | None = None,
) -> dict[str, Any]:
    """One topologySpreadConstraint (st.MakePod().SpreadConstraint argument order)."""
    c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    if selector is not None:
        c["labelSelector"] = selector
    if min_domains is not None:
        c["minDomains"] = min_domains
    if affinity_policy is not None:
        c["nodeAffinityPolicy"] = affinity_policy
    if taints_policy is not None:
        c["nodeTaintsPolicy"] = taints_policy
    if match_label_keys is not None:
        c["matchLabelKeys"] = match_label_keys
    return c


def incoming(labels: list[str], *constraints: dict[str, Any], **spec: Any) -> Pod:
    """The pod to schedule: labels are keys with value "" (as `.Label("foo", "")`)."""
    return pod("p", labels={k: "" for k in labels}, topologySpreadConstraints=list(constraints), **spec)


def on(node_name: str, *labels: str, ns: str = "default", terminating: bool = False, n: int = 1) -> list[Pod]:
    """`n` bound pods on `node_name` with the given label keys (value "")."""
    out = []
    for i in range(n):
        p = pod(f"p-{node_name}-{'-'.join(labels)}-{ns}-{i}", ns, {k: "" for k in labels}, node_name=node_name)
        if terminating:
            p.metadata.deletion_timestamp = "2025-01-01T00:00:00Z"
        out.append(p)
    return out


def zn(name: str, zone: str | None, taints: list[dict[str, Any]] | None = None, **extra: str) -> Node:
    """A node with labels zone=<zone> (if given) and node=<name>, as in filtering_test.go."""
    labels = {"node": name, **extra}
    if zone is not None:
        labels["zone"] = zone
    return node(name, labels, taints=taints)


def four(**extra_per_node: dict[str, str]) -> list[Node]:
    """node-a/b in zone1, node-x/y in zone2."""
    return [zn(n, z, **extra_per_node.get(n.replace("-", "_"), {})) for n, z in FOUR]


FOUR = [("node-a", "zone1"), ("node-b", "zone1"), ("node-x", "zone2"), ("node-y", "zone2")]
SPREAD_2_1_0_3 = on("node-a", "foo", n=2) + on("node-b", "foo") + on("node-y", "foo", n=3)


def _check_filters(result: ScheduleResult, expect: dict[str, tuple[str, str, list[str]] | None]) -> None:
    got = {name: filter_status(result, name) for name in expect}
    assert got == expect


# --- Filter ---------------------------------------------------------------------------------------
# pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go: TestSingleConstraint, TestMultipleConstraints
FILTER_ROWS = [
    pytest.param(
        four(),
        [],
        incoming(["foo"], sc(1, "zone", FOO)),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="single/no existing pods",
    ),
    pytest.param(
        four(),
        [],
        incoming(["foo"], sc(1, "zone", BAR)),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="single/no existing pods, incoming pod doesn't match itself",
    ),
    pytest.param(
        four(),
        on("node-a", "foo", ns="ns1") + on("node-a", "foo", ns="ns2") + on("node-x", "foo") + on("node-y", "foo"),
        incoming(["foo"], sc(1, "zone", FOO)),
        {"node-a": OK, "node-b": OK, "node-x": SKEW, "node-y": SKEW},
        id="single/existing pods in a different namespace do not count",
    ),
    pytest.param(
        four(),
        on("node-x", "foo") + on("node-y", "foo"),
        incoming(["foo"], sc(1, "zone", None)),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="single/existing pods do not match null selector",
    ),
    pytest.param(
        four(),
        SPREAD_2_1_0_3,
        incoming(["foo"], sc(1, "zone", FOO)),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="single/pods spread across zones as 3/3, all nodes fit",
    ),
    pytest.param(
        [
            zn("node-a", "zone1"),
            node("node-b", {"zon": "zone1", "node": "node-b"}),
            zn("node-x", "zone2"),
            zn("node-y", "zone2"),
        ],
        on("node-a", "foo") + on("node-b", "foo") + on("node-x", "foo") + on("node-y", "foo"),
        incoming(["foo"], sc(1, "zone", FOO)),
        {"node-a": OK, "node-b": LABEL, "node-x": SKEW, "node-y": SKEW},
        id="single/pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
    ),
    pytest.param(
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        [],
        incoming(["foo"], sc(1, "rack", FOO)),
        {"node-a": LABEL, "node-x": LABEL},
        id="single/pod cannot be scheduled as all nodes don't have label 'rack'",
    ),
    pytest.param(
        four(),
        SPREAD_2_1_0_3,
        incoming(["foo"], sc(1, "node", FOO)),
        {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": SKEW},
        id="single/pods spread across nodes as 2/1/0/3, only node-x fits",
    ),
    pytest.param(
        four(),
        SPREAD_2_1_0_3,
        incoming(["foo"], sc(2, "node", FOO)),
        {"node-a": SKEW, "node-b": OK, "node-x": OK, "node-y": SKEW},
        id="single/pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
    ),
    pytest.param(
        four(),
        SPREAD_2_1_0_3,
        incoming(["bar"], sc(1, "node", FOO)),
        {"node-a": SKEW, "node-b": OK, "node-x": OK, "node-y": SKEW},
        id="single/pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
    ),
    # Full pipeline: node-b and node-x fail NodeAffinity ("in real case, it's false").
    pytest.param(
        four(),
        SPREAD_2_1_0_3,
        incoming(
            ["foo"],
            sc(1, "node", FOO),
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "node", "operator": "In", "values": ["node-a", "node-y"]}]}
                        ]
                    }
                }
            },
        ),
        {"node-a": OK, "node-b": NA, "node-x": NA, "node-y": SKEW},
        id="single/incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
    ),
    pytest.param(
        [zn("node-a", None), zn("node-b", None)],
        on("node-a", "foo", terminating=True) + on("node-b", "foo"),
        incoming(["foo"], sc(1, "node", FOO)),
        {"node-a": OK, "node-b": SKEW},
        id="single/terminating Pods should be excluded",
    ),
    # Full pipeline: node-b fails NodeAffinity ("in real case, it's Unschedulable").
    pytest.param(
        four(),
        on("node-b", "foo", n=2) + on("node-y", "foo"),
        incoming(
            ["foo"],
            sc(1, "zone", FOO),
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "node", "operator": "NotIn", "values": ["node-b"]}]}
                        ]
                    }
                }
            },
        ),
        {"node-a": OK, "node-b": NA, "node-x": SKEW, "node-y": SKEW},
        id="single/incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
    ),
    pytest.param(
        [zn("node-a", None), zn("node-b", None), zn("node-c", None)],
        on("node-a", "foo", n=2) + on("node-b", "foo", n=2) + on("node-c", "foo"),
        incoming(["foo"], sc(2, "node", FOO, min_domains=4)),
        {"node-a": SKEW, "node-b": SKEW, "node-c": OK},
        id="single/pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains",
    ),
    pytest.param(
        [zn("node-a", None), zn("node-b", None), zn("node-c", None)],
        on("node-a", "foo", n=2) + on("node-b", "foo", n=2) + on("node-c", "foo"),
        incoming(["foo"], sc(2, "node", FOO, min_domains=2)),
        {"node-a": OK, "node-b": OK, "node-c": OK},
        id="single/pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains",
    ),
    pytest.param(
        four(),
        on("node-a", "foo") + on("node-b", "foo") + on("node-y", "foo"),
        incoming(["foo"], sc(2, "zone", FOO, min_domains=3)),
        {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": OK},
        id="single/pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains",
    ),
    pytest.param(
        four(),
        on("node-a", "foo") + on("node-b", "foo") + on("node-y", "foo"),
        incoming(["foo"], sc(2, "zone", FOO, min_domains=1)),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="single/pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains",
    ),
    # Full pipeline: node-y (no foo label) fails NodeAffinity under both policies.
    pytest.param(
        [zn("node-a", None, foo=""), zn("node-b", None, foo=""), zn("node-x", None, foo=""), zn("node-y", None)],
        on("node-a", "foo") + on("node-b", "foo") + on("node-y", "foo"),
        incoming(["foo"], sc(1, "node", FOO), nodeSelector={"foo": ""}),
        {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": NA},
        id="single/NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        [zn("node-a", None, foo=""), zn("node-b", None, foo=""), zn("node-x", None, foo=""), zn("node-y", None)],
        on("node-a", "foo") + on("node-b", "foo") + on("node-y", "foo"),
        incoming(["foo"], sc(1, "node", FOO, affinity_policy="Ignore"), nodeSelector={"foo": ""}),
        {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": NA},
        id="single/NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        [zn("node-a", None, foo=""), zn("node-b", None, foo=""), zn("node-x", None, foo=""), zn("node-y", None)],
        on("node-a", "foo") + on("node-b", "foo") + on("node-y", "foo"),
        incoming(
            ["foo"],
            sc(1, "node", FOO),
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In", "values": [""]}]}]
                    }
                }
            },
        ),
        {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": NA},
        id="single/NodeAffinityPolicy honored with nodeAffinity",
    ),
    # Full pipeline: node-y (tainted) fails TaintToleration under both policies.
    pytest.param(
        [
            zn("node-a", None, foo=""),
            zn("node-b", None, foo=""),
            zn("node-x", None, foo=""),
            zn("node-y", None, UNSCHED_TAINT),
        ],
        on("node-a", "foo") + on("node-b", "foo") + on("node-y", "foo"),
        incoming(["foo"], sc(1, "node", FOO, taints_policy="Honor")),
        {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": TT},
        id="single/NodeTaintsPolicy honored",
    ),
    pytest.param(
        [
            zn("node-a", None, foo=""),
            zn("node-b", None, foo=""),
            zn("node-x", None, foo=""),
            zn("node-y", None, UNSCHED_TAINT),
        ],
        on("node-a", "foo") + on("node-b", "foo") + on("node-y", "foo"),
        incoming(["foo"], sc(1, "node", FOO)),
        {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": TT},
        id="single/NodeTaintsPolicy ignored",
    ),
    # Derived (filtering.go calPreFilterState + matchNodeInclusionPolicies): the excluded node holds the
    # domain with the fewest pods, so the policy decides the global minimum. Honor: min over a,b = 1 ->
    # skew 1+1-1 = 1 fits; Ignore: node-y's 0 counts -> skew 1+1-0 = 2 > 1.
    pytest.param(
        [zn("node-a", None, foo=""), zn("node-b", None, foo=""), zn("node-y", None)],
        on("node-a", "foo") + on("node-b", "foo"),
        incoming(["foo"], sc(1, "node", FOO), nodeSelector={"foo": ""}),
        {"node-a": OK, "node-b": OK, "node-y": NA},
        id="derived/NodeAffinityPolicy Honor leaves the empty unmatched node out of the minimum",
    ),
    pytest.param(
        [zn("node-a", None, foo=""), zn("node-b", None, foo=""), zn("node-y", None)],
        on("node-a", "foo") + on("node-b", "foo"),
        incoming(["foo"], sc(1, "node", FOO, affinity_policy="Ignore"), nodeSelector={"foo": ""}),
        {"node-a": SKEW, "node-b": SKEW, "node-y": NA},
        id="derived/NodeAffinityPolicy Ignore counts the empty unmatched node in the minimum",
    ),
    pytest.param(
        [zn("node-a", None), zn("node-b", None), zn("node-y", None, UNSCHED_TAINT)],
        on("node-a", "foo") + on("node-b", "foo"),
        incoming(["foo"], sc(1, "node", FOO, taints_policy="Honor")),
        {"node-a": OK, "node-b": OK, "node-y": TT},
        id="derived/NodeTaintsPolicy Honor leaves the empty tainted node out of the minimum",
    ),
    pytest.param(
        [zn("node-a", None), zn("node-b", None), zn("node-y", None, UNSCHED_TAINT)],
        on("node-a", "foo") + on("node-b", "foo"),
        incoming(["foo"], sc(1, "node", FOO)),
        {"node-a": SKEW, "node-b": SKEW, "node-y": TT},
        id="derived/NodeTaintsPolicy Ignore (default) counts the empty tainted node in the minimum",
    ),
    # Derived (common.go filterTopologySpreadConstraints): matchLabelKeys ANDs version=v2 into the selector,
    # so only node-b's v2 pod counts: 0/1/0 -> node-b skews. Without the merge 2/1/0 would reject a and b.
    pytest.param(
        [zn("node-a", None), zn("node-b", None), zn("node-x", None)],
        [pod(f"v1-{i}", labels={"foo": "", "version": "v1"}, node_name="node-a") for i in range(2)]
        + [pod("v2-0", labels={"foo": "", "version": "v2"}, node_name="node-b")],
        pod(
            "p",
            labels={"foo": "", "version": "v2"},
            topologySpreadConstraints=[sc(1, "node", FOO, match_label_keys=["version"])],
        ),
        {"node-a": OK, "node-b": SKEW, "node-x": OK},
        id="derived/matchLabelKeys merged with the pod's label value",
    ),
    # Derived (common.go countPodsMatchSelector returns 0 for an empty selector; selfMatch is 1):
    # skew = 0 + 1 - 0 = 1 everywhere, so 2/1/0/3 filters nothing.
    pytest.param(
        four(),
        SPREAD_2_1_0_3,
        incoming(["foo"], sc(1, "node", {})),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="derived/empty selector counts no pods",
    ),
    # TestMultipleConstraints
    pytest.param(
        four(),
        SPREAD_2_1_0_3,
        incoming(["foo"], sc(1, "zone", FOO), sc(1, "node", FOO)),
        {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": SKEW},
        id="multi/two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
    ),
    pytest.param(
        four(),
        SPREAD_2_1_0_3 + on("node-y", "foo"),
        incoming(["foo"], sc(1, "zone", FOO), sc(1, "node", FOO)),
        {"node-a": SKEW, "node-b": SKEW, "node-x": SKEW, "node-y": SKEW},
        id="multi/two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
    ),
    pytest.param(
        four(),
        on("node-a", "foo") + on("node-y", "bar"),
        incoming(["foo", "bar"], sc(1, "zone", FOO), sc(1, "node", BAR)),
        {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": SKEW},
        id="multi/Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
    ),
    pytest.param(
        four(),
        on("node-a", "foo") + on("node-x", "bar") + on("node-y", "bar"),
        incoming(["foo", "bar"], sc(1, "zone", FOO), sc(1, "node", BAR)),
        {"node-a": SKEW, "node-b": SKEW, "node-x": SKEW, "node-y": SKEW},
        id="multi/Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
    ),
    pytest.param(
        four(),
        on("node-a", "foo")
        + on("node-a", "foo", "bar")
        + on("node-y", "foo")
        + on("node-y", "foo", "bar")
        + on("node-y", "foo", n=2)[1:],
        incoming(["foo", "bar"], sc(1, "zone", FOO), sc(1, "node", BAR)),
        {"node-a": SKEW, "node-b": OK, "node-x": SKEW, "node-y": SKEW},
        id="multi/Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
    ),
    pytest.param(
        four(),
        on("node-a", "foo") + on("node-x", "bar") + on("node-y", "bar"),
        incoming(["bar"], sc(1, "zone", FOO), sc(1, "node", BAR)),
        {"node-a": OK, "node-b": OK, "node-x": SKEW, "node-y": SKEW},
        id="multi/Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
    ),
    pytest.param(
        [zn("node-a", "zone1"), zn("node-b", "zone1"), node("node-x", {"zone": "zone2"}), zn("node-y", "zone2")],
        on("node-a", "foo") + on("node-y", "foo"),
        incoming(["foo"], sc(1, "zone", FOO), sc(1, "node", FOO)),
        {"node-a": SKEW, "node-b": OK, "node-x": LABEL, "node-y": SKEW},
        id="multi/two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
    ),
    # Full pipeline: node-y lacks foo and fails NodeAffinity first.
    pytest.param(
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1", foo=""),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2"),
        ],
        on("node-a", "foo") + on("node-b", "foo") + on("node-y", "foo"),
        incoming(["foo"], sc(1, "zone", FOO), sc(1, "node", FOO, affinity_policy="Ignore"), nodeSelector={"foo": ""}),
        {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": NA},
        id="multi/two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
    ),
    # Full pipeline: node-y is tainted and fails TaintToleration first.
    pytest.param(
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1", foo=""),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2", UNSCHED_TAINT),
        ],
        on("node-a", "foo") + on("node-b", "foo") + on("node-y", "foo"),
        incoming(["foo"], sc(1, "zone", FOO, taints_policy="Honor"), sc(1, "node", FOO)),
        {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": TT},
        id="multi/two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
    ),
    # Full pipeline: node-b (no foo) fails NodeAffinity, node-y (tainted) TaintToleration; unit test had b Success.
    pytest.param(
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1"),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2", UNSCHED_TAINT, foo=""),
        ],
        on("node-a", "foo") + on("node-b", "foo") + on("node-y", "foo"),
        incoming(["foo"], sc(1, "zone", FOO), sc(1, "node", FOO), nodeSelector={"foo": ""}),
        {"node-a": SKEW, "node-b": NA, "node-x": OK, "node-y": TT},
        id="multi/two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
    ),
    pytest.param(
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1"),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2", UNSCHED_TAINT, foo=""),
        ],
        on("node-a", "foo") + on("node-b", "foo") + on("node-y", "foo"),
        incoming(
            ["foo"],
            sc(1, "zone", FOO, taints_policy="Honor"),
            sc(1, "node", FOO, affinity_policy="Ignore"),
            nodeSelector={"foo": ""},
        ),
        {"node-a": SKEW, "node-b": NA, "node-x": OK, "node-y": TT},
        id="multi/two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
    ),
    pytest.param(
        four(),
        on("node-a", "foo", "bar")
        + on("node-a", "foo")
        + on("node-b", "foo", "bar")
        + on("node-y", "foo")
        + [
            pod("p-y2", labels={"foo": "", "bar": ""}, node_name="node-y"),
            pod("p-y3", labels={"foo": ""}, node_name="node-y"),
        ],
        incoming(["foo", "bar"], sc(1, "zone", BAR), sc(1, "zone", FOO)),
        {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": OK},
        id="multi/two Constraints on zone, spreads = [3/3, 2/1]",
    ),
    pytest.param(
        four(),
        on("node-a", "foo", "bar")
        + on("node-a", "foo")
        + on("node-b", "foo", "bar")
        + on("node-y", "foo")
        + [pod("p-y2", labels={"foo": "", "bar": ""}, node_name="node-y")]
        + [pod(f"p-y{i}", labels={"foo": ""}, node_name="node-y") for i in (3, 4)],
        incoming(["foo", "bar"], sc(1, "zone", BAR), sc(1, "zone", FOO)),
        {"node-a": SKEW, "node-b": SKEW, "node-x": SKEW, "node-y": SKEW},
        id="multi/two Constraints on zone, spreads = [3/4, 2/1]",
    ),
]


@pytest.mark.parametrize(("nodes", "pods", "p", "expect"), FILTER_ROWS)
def test_filter(nodes: list[Node], pods: list[Pod], p: Pod, expect: dict[str, Any]) -> None:
    _check_filters(schedule(nodes, p, pods), expect)


def test_system_defaults_never_filter() -> None:
    """The System defaults are all ScheduleAnyway: PreFilter skips, even for a ReplicaSet pod."""
    nodes = [node("node-a", {HOSTNAME: "node-a"}), node("node-b", {HOSTNAME: "node-b"})]
    result = _with_replicaset(nodes, on("node-a", "foo", n=5), _rs_pod())
    assert filter_status(result, "node-a") is None
    assert filter_status(result, "node-b") is None


# --- Score ----------------------------------------------------------------------------------------


def hn(name: str, failed: bool = False, **labels: str) -> Node:
    """A node with kubernetes.io/hostname=<name>; `failed` marks an upstream "failedNodes" entry."""
    return node(name, {HOSTNAME: name, **labels}, taints=FAILED_TAINT if failed else None)


def hz(name: str, zone: str, failed: bool = False) -> Node:
    return hn(name, failed, zone=zone)


ABCD = ["node-a", "node-b", "node-c", "node-d"]
SPREAD_4_3_2_1 = on("node-a", "foo", n=4) + on("node-b", "foo", n=3) + on("node-c", "foo", n=2) + on("node-d", "foo")
SPREAD_2_1_0_3_D = on("node-a", "foo", n=2) + on("node-b", "foo") + on("node-d", "foo", n=3)
SPREAD_4_2_1_3 = on("node-a", "foo", n=4) + on("node-b", "foo", n=2) + on("node-x", "foo") + on("node-y", "foo", n=3)
DIFF_SELECTORS = on("node-a", "foo") + on("node-b", "foo", "bar") + on("node-y", "foo") + on("node-y", "bar")


def _soft(*args: Any, **kwargs: Any) -> dict[str, Any]:
    return sc(*args, when="ScheduleAnyway", **kwargs)  # type: ignore[misc]


# pkg/scheduler/framework/plugins/podtopologyspread/scoring_test.go: TestPodTopologySpreadScore
SCORE_ROWS = [
    pytest.param(
        [hn("node-a"), hn("node-b")],
        [],
        incoming(["foo"], _soft(1, HOSTNAME, FOO)),
        {"node-a": 100, "node-b": 100},
        id="one constraint on node, no existing pods",
    ),
    pytest.param(
        [hn("node-a"), hn("node-b")],
        on("node-a", "foo") + on("node-b", "foo"),
        incoming(["foo"], _soft(1, HOSTNAME, FOO)),
        {"node-a": 100, "node-b": 100},
        id="one constraint on node, all nodes have the same number of matching pods",
    ),
    pytest.param(
        [hn(n) for n in ABCD],
        SPREAD_2_1_0_3_D,
        incoming(["foo"], _soft(1, HOSTNAME, FOO)),
        {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0},
        id="one constraint on node, all 4 nodes are candidates",
    ),
    pytest.param(
        [hn(n) for n in ABCD],
        SPREAD_2_1_0_3_D,
        incoming(["foo"], _soft(1, HOSTNAME, None)),
        {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
        id="one constraint on node, null selector",
    ),
    pytest.param(
        [hn(n) for n in ABCD],
        SPREAD_2_1_0_3_D,
        incoming(["foo"], _soft(2, HOSTNAME, FOO)),
        {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16},
        id="one constraint on node, all 4 nodes are candidates, maxSkew=2",
    ),
    pytest.param(
        [hn(n) for n in ABCD],
        SPREAD_4_3_2_1,
        incoming(["foo"], _soft(3, HOSTNAME, FOO)),
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
        id="one constraint on node, all 4 nodes are candidates, maxSkew=3",
    ),
    pytest.param(
        [hn("node-a"), hn("node-b"), hn("node-x"), hn("node-y", failed=True)],
        SPREAD_4_2_1_3,
        incoming(["foo"], _soft(1, HOSTNAME, FOO)),
        {"node-a": 33, "node-b": 83, "node-x": 100},
        id="one constraint on node, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        [hn("node-a"), node("node-b", {"n": "node-b"}), hn("node-x"), hn("node-y", failed=True)],
        SPREAD_4_2_1_3,
        incoming(["foo"], _soft(1, HOSTNAME, FOO)),
        {"node-a": 16, "node-b": 0, "node-x": 100},
        id="one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
    ),
    pytest.param(
        [hz("node-a", "zone1"), hz("node-b", "zone1"), hz("node-x", "zone2"), hz("node-y", "zone2", failed=True)],
        SPREAD_4_2_1_3,
        incoming(["foo"], _soft(1, "zone", FOO)),
        {"node-a": 75, "node-b": 75, "node-x": 100},
        id="one constraint on zone, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        [
            hz("node-a", "zone1"),
            hz("node-b", "zone1", failed=True),
            hz("node-x", "zone2"),
            hz("node-y", "zone2", failed=True),
        ],
        on("node-a", "foo", n=2) + on("node-b", "foo") + on("node-x", "foo", n=2) + on("node-y", "foo", n=4),
        incoming(["foo"], _soft(1, "zone", FOO), _soft(1, HOSTNAME, FOO)),
        {"node-a": 100, "node-x": 63},
        id="two Constraints on zone and node, 2 out of 4 nodes are candidates",
    ),
    pytest.param(
        [
            node("node-a", {"zone": "zone1"}),
            node("node-b", {"zone": "zone1"}, taints=FAILED_TAINT),
            node("node-x", {"zone": "zone2"}),
            node("node-y", {"zone": "zone2"}, taints=FAILED_TAINT),
        ],
        on("node-a", "foo", "bar")
        + on("node-a", "foo")
        + on("node-b", "foo", "bar")
        + on("node-y", "foo")
        + [
            pod("p-y2", labels={"foo": "", "bar": ""}, node_name="node-y"),
            pod("p-y3", labels={"foo": ""}, node_name="node-y"),
        ],
        incoming(["foo", "bar"], _soft(1, "zone", FOO), _soft(1, "zone", BAR)),
        {"node-a": 85, "node-x": 100},
        id="two Constraints on zone, 2 out of 4 nodes are candidates",
    ),
    pytest.param(
        [hz("node-a", "zone1"), hz("node-b", "zone1"), hz("node-x", "zone2"), hz("node-y", "zone2")],
        DIFF_SELECTORS,
        incoming(["foo", "bar"], _soft(1, "zone", FOO), _soft(1, HOSTNAME, BAR)),
        {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60},
        id="two Constraints on zone and node, with different labelSelectors",
    ),
    pytest.param(
        [hz("node-a", "zone1"), hz("node-b", "zone1"), hz("node-x", "zone2"), hz("node-y", "zone2")],
        on("node-b", "bar") + on("node-x", "foo") + on("node-y", "foo", "bar"),
        incoming(["foo", "bar"], _soft(1, "zone", FOO), _soft(1, HOSTNAME, BAR)),
        {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0},
        id="two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
    ),
    pytest.param(
        [hz("node-a", "zone1"), hz("node-b", "zone1"), hz("node-x", "zone2"), hz("node-y", "zone2", failed=True)],
        DIFF_SELECTORS,
        incoming(["foo", "bar"], _soft(1, "zone", FOO), _soft(1, HOSTNAME, BAR)),
        {"node-a": 50, "node-b": 25, "node-x": 100},
        id="two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        [hn("node-a"), hn("node-b")],
        on("node-a", "foo", ns="ns1") + on("node-a", "foo") + on("node-b", "foo", n=2),
        incoming(["foo"], _soft(1, HOSTNAME, FOO)),
        {"node-a": 100, "node-b": 33},
        id="existing pods in a different namespace do not count",
    ),
    pytest.param(
        [hn("node-a"), hn("node-b")],
        on("node-a", "foo", terminating=True) + on("node-b", "foo"),
        incoming(["foo"], _soft(1, HOSTNAME, FOO)),
        {"node-a": 100, "node-b": 0},
        id="terminating Pods should be excluded",
    ),
    # Artificial upstream row (API validation rejects minDomains with ScheduleAnyway); the plugin ignores it.
    pytest.param(
        [zn("node-a", None), zn("node-b", None), zn("node-c", None)],
        on("node-a", "foo", n=2) + on("node-b", "foo", n=2) + on("node-c", "foo"),
        incoming(["foo"], _soft(2, "node", FOO, min_domains=10)),
        {"node-a": 75, "node-b": 75, "node-c": 100},
        id="minDomains has no effect when ScheduleAnyway",
    ),
    # Full pipeline: node-c (no foo) fails NodeAffinity; over a, b (2/1 on key "node", size 2, ln 4):
    # raw round(2*1.386)=3, round(1.386)=1 -> 100*(3+1-3)/3 = 33, 100. Same under Ignore, since node-c's
    # value is not among the scored nodes. (Unit test, with node-c feasible: 0/33/100 and 66/100/100.)
    pytest.param(
        [zn("node-a", None, foo=""), zn("node-b", None, foo=""), zn("node-c", None)],
        on("node-a", "foo", n=2) + on("node-b", "foo") + on("node-c", "foo"),
        incoming(["foo"], _soft(1, "node", FOO), nodeSelector={"foo": ""}),
        {"node-a": 33, "node-b": 100},
        id="NodeAffinityPolicy honoed with labelSelectors",
    ),
    pytest.param(
        [zn("node-a", None, foo=""), zn("node-b", None, foo=""), zn("node-c", None)],
        on("node-a", "foo", n=2) + on("node-b", "foo") + on("node-c", "foo"),
        incoming(["foo"], _soft(1, "node", FOO, affinity_policy="Ignore"), nodeSelector={"foo": ""}),
        {"node-a": 33, "node-b": 100},
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    # Full pipeline: node-c (tainted) fails TaintToleration; same arithmetic as above.
    pytest.param(
        [zn("node-a", None), zn("node-b", None), zn("node-c", None, UNSCHED_TAINT)],
        on("node-a", "foo", n=2) + on("node-b", "foo") + on("node-c", "foo"),
        incoming(["foo"], _soft(1, "node", FOO, taints_policy="Honor")),
        {"node-a": 33, "node-b": 100},
        id="NodeTaintsPolicy honored",
    ),
    # Derived (scoring.go initPreScoreState/PreScore): node-c shares zone2 with feasible node-b but does
    # not match the nodeSelector. Honor: zone1=1, zone2=0 -> raw 1, 0 -> 0, 100. Ignore: zone2 = 2 ->
    # raw round(1.386)=1, round(2.773)=3 -> 100*(3+1-1)/3 = 100, 100*(3+1-3)/3 = 33.
    pytest.param(
        [
            node("node-a", {"zone": "zone1", "foo": ""}),
            node("node-b", {"zone": "zone2", "foo": ""}),
            node("node-c", {"zone": "zone2"}),
        ],
        on("node-a", "foo") + on("node-c", "foo", n=2),
        incoming(["foo"], _soft(1, "zone", FOO), nodeSelector={"foo": ""}),
        {"node-a": 0, "node-b": 100},
        id="derived/NodeAffinityPolicy Honor drops an unmatched node's pods from its zone",
    ),
    pytest.param(
        [
            node("node-a", {"zone": "zone1", "foo": ""}),
            node("node-b", {"zone": "zone2", "foo": ""}),
            node("node-c", {"zone": "zone2"}),
        ],
        on("node-a", "foo") + on("node-c", "foo", n=2),
        incoming(["foo"], _soft(1, "zone", FOO, affinity_policy="Ignore"), nodeSelector={"foo": ""}),
        {"node-a": 100, "node-b": 33},
        id="derived/NodeAffinityPolicy Ignore keeps an unmatched node's pods in its zone",
    ),
    # Upstream ran this with the MatchLabelKeysInPodTopologySpread gate off (60/20/60/100). The gate is on
    # in v1.34, so baz="" is ANDed into both selectors; no existing pod has baz: all raw 0 -> all 100.
    pytest.param(
        [hz("node-a", "zone1"), hz("node-b", "zone1"), hz("node-c", "zone2"), hz("node-d", "zone2")],
        on("node-a", "foo") + on("node-b", "foo", "bar") + on("node-c", "foo") + on("node-c", "bar"),
        incoming(
            ["foo", "bar", "baz"],
            _soft(1, "zone", FOO, match_label_keys=["baz"]),
            _soft(1, HOSTNAME, BAR, match_label_keys=["baz"]),
        ),
        {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
        id="matchLabelKeys ignored when feature gate disabled (gate on in v1.34)",
    ),
    pytest.param(
        [hz("node-a", "zone1"), hz("node-b", "zone1"), hz("node-c", "zone2"), hz("node-d", "zone2")],
        on("node-a", "foo") + on("node-b", "foo", "bar") + on("node-c", "foo") + on("node-c", "bar"),
        incoming(
            ["foo", "bar"],
            _soft(1, "zone", {}, match_label_keys=["foo"]),
            _soft(1, HOSTNAME, {}, match_label_keys=["bar"]),
        ),
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
    ),
    pytest.param(
        [hz("node-a", "zone1"), hz("node-b", "zone1"), hz("node-c", "zone2"), hz("node-d", "zone2")],
        on("node-a", "foo")
        + on("node-b", "foo", "bar", "baz")
        + on("node-c", "foo")
        + on("node-c", "bar")
        + on("node-c", "bar", "baz"),
        incoming(["foo", "bar", "baz"], _soft(1, "zone", FOO), _soft(1, HOSTNAME, BAR, match_label_keys=["baz"])),
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
    ),
]


@pytest.mark.parametrize(("nodes", "pods", "p", "expect"), SCORE_ROWS)
def test_score(nodes: list[Node], pods: list[Pod], p: Pod, expect: dict[str, int]) -> None:
    result = schedule(nodes, p, pods)
    assert PTS not in result.skipped_score_plugins
    assert scores(result, PTS) == expect


def test_score_single_candidate_is_not_scored() -> None:
    """scoring_test.go "one constraint on node, only one node is candidate": upstream scores it 100 when the
    plugin runs alone; the full pipeline selects the only feasible node without running Score."""
    nodes = [hn("node-a"), hn("node-b", failed=True)]
    pods = on("node-a", "foo", n=2) + on("node-b", "foo")
    result = schedule(nodes, incoming(["foo"], _soft(1, HOSTNAME, FOO)), pods)
    assert result.table.names[result.selected] == "node-a"
    assert result.scores == []


# --- System default constraints -------------------------------------------------------------------


def _rs_pod(owner: str = "rs1", labels: dict[str, str] | None = None, **spec: Any) -> Pod:
    """A pod controlled by ReplicaSet `owner` (ownerReferences, controller: true)."""
    p = pod("p", labels=labels or {"foo": "tar", "baz": "sup"}, **spec)
    p.metadata.owner_references = [
        OwnerReference.model_validate(
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "uid": "u1", "controller": True}
        )
    ]
    return p


def _with_replicaset(
    nodes: list[Node], pods: list[Pod], p: Pod, rs_selector: dict[str, Any] | None = None
) -> ScheduleResult:
    t = table(nodes, pods)
    t.controllers[("apps/v1", "ReplicaSet", "default", "rs1")] = rs_selector or FOO
    return Scheduler(new_framework(), seed=0).schedule_pod(t, PodInfo.of(p))


def test_system_defaults_replicaset() -> None:
    """Derived from scoring_test.go TestPreScoreStateEmptyNodes "system default constraints and a replicaset"
    (nodes, pod and ReplicaSet as there; existing pods added: 2 on node-a, 1 on node-c).

    Constraints: hostname maxSkew 3 (size 4, ln 6 = 1.792) and zone maxSkew 5 (values mars and "" -> size 2,
    ln 4 = 1.386; requireAllTopologies is false, so zoneless nodes are scored, but get no zone term).
    zone counts: mars = 2, "" = 1.  raw a = 2*1.792+2 + 2*1.386+4 = 12.36 -> 12; b = 2 + 6.77 -> 9;
    c = 1.792+2 -> 4; d = 2.  normalized 100*(12+2-raw)/12: 16, 41, 83, 100.
    """
    nodes = [
        node("node-a", {HOSTNAME: "node-a", ZONE: "mars"}),
        node("node-b", {HOSTNAME: "node-b", ZONE: "mars"}),
        node("node-c", {HOSTNAME: "node-c"}),
        node("node-d", {HOSTNAME: "node-d"}),
    ]
    pods = [pod(f"e{i}", labels={"foo": "x"}, node_name=n) for i, n in enumerate(["node-a", "node-a", "node-c"])]
    result = _with_replicaset(nodes, pods, _rs_pod())
    assert PTS not in result.skipped_score_plugins
    assert scores(result, PTS) == {"node-a": 16, "node-b": 41, "node-c": 83, "node-d": 100}


def test_system_defaults_service() -> None:
    """scoring_test.go "system defaulting, nodes don't have zone, pods match service": 44/66/77/100."""
    nodes = [hn(n) for n in ABCD]
    t = table(nodes, SPREAD_4_3_2_1)
    t.services.append(("default", {"foo": ""}))
    result = Scheduler(new_framework(), seed=0).schedule_pod(t, PodInfo.of(pod("p", labels={"foo": ""})))
    assert scores(result, PTS) == {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}


@pytest.mark.parametrize(
    "p",
    [
        pytest.param(pod("p", labels={"foo": "tar"}), id="bare pod: no Service, no controller"),
        pytest.param(
            _rs_pod("rs2", {"foo": "bar", "baz": "sup"}), id="TestPreScoreSkip/a replicaset that doesn't match"
        ),
    ],
)
def test_system_defaults_skip(p: Pod) -> None:
    """helper.DefaultSelector is empty -> buildDefaultConstraints gives none -> PreScore returns Skip."""
    nodes = [hn(n) for n in ABCD]
    result = _with_replicaset(nodes, SPREAD_4_3_2_1, p)
    assert PTS in result.skipped_score_plugins
    assert scores(result, PTS) == {}


def test_pod_constraints_override_defaults() -> None:
    """TestPreScoreStateEmptyNodes "default constraints and a replicaset, but pod has constraints": only the
    pod's own ScheduleAnyway constraint (planet, baz=sup) scores; the ReplicaSet's foo pods don't count.
    planet values mars, venus (size 2, ln 4): mars has 1 baz=sup pod -> raw round(1.386 + 1) = 2, venus 1;
    normalized 100*(2+1-raw)/2 = 50, 100."""
    nodes = [node("node-a", {"planet": "mars"}), node("node-b", {"planet": "venus"})]
    pods = [*on("node-b", "foo", n=3), pod("s", labels={"baz": "sup"}, node_name="node-a")]
    p = _rs_pod(
        labels={"foo": "bar", "baz": "sup"},
        topologySpreadConstraints=[_soft(2, "planet", {"matchLabels": {"baz": "sup"}})],
    )
    result = _with_replicaset(nodes, pods, p)
    assert scores(result, PTS) == {"node-a": 50, "node-b": 100}


def test_system_defaults_empty_zone_value_shares_the_zoneless_bucket() -> None:
    """Derived (scoring.go initPreScoreState/PreScore key counts by `node.Labels[key]`, which is "" both for a
    node without the zone label and for one labelled zone=""): with System defaults (requireAllTopologies
    false) both fall in one "" domain. Zone values {"", mars} -> size 2 (ln 4); "" holds node-b's 2 pods.
    Hostname: 3 nodes (ln 5).  raw a = 2 + (2*1.386+4) = 8.77 -> 9 (a has the key, value "");
    b = 2*1.609+2 = 5.22 -> 5 (no zone key: no zone term); c = 2 + 4 = 6.  100*(9+5-raw)/9: 55, 100, 88."""
    nodes = [
        node("node-a", {HOSTNAME: "node-a", ZONE: ""}),
        node("node-b", {HOSTNAME: "node-b"}),
        node("node-c", {HOSTNAME: "node-c", ZONE: "mars"}),
    ]
    pods = [pod(f"e{i}", labels={"foo": "x"}, node_name="node-b") for i in range(2)]
    result = _with_replicaset(nodes, pods, _rs_pod())
    assert scores(result, PTS) == {"node-a": 55, "node-b": 100, "node-c": 88}
