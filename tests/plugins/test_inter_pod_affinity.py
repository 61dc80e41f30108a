"""InterPodAffinity through the full default pipeline, transcribed from upstream v1.34 unit tests.

Conventions (tests/conformance/README.md): the empty namespace is `default` (also inside a term's
`namespaces` list); node names keep the test's spelling; nodes get the default allocatable. Rows adjusted
to be valid API input (an empty topologyKey, an upper-case namespace name) say so; the adjustment cannot
change the outcome.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from scheduler_core.api.loading import ClusterObjects
from scheduler_core.api.objects import Namespace, Node, Pod
from scheduler_core.explain import build_table
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.framework.profile import Profile
from scheduler_core.plugins.registry import new_framework
from scheduler_core.schedule_one import Scheduler, ScheduleResult
from tests.helpers import filter_status, node, pod, scores

IPA = "InterPodAffinity"
OK = None
AFF = (IPA, "UnschedulableAndUnresolvable", ["node(s) didn't match pod affinity rules"])
ANTI = (IPA, "Unschedulable", ["node(s) didn't match pod anti-affinity rules"])
EXIST = (IPA, "Unschedulable", ["node(s) didn't satisfy existing pods anti-affinity rules"])

# upstream scoring_test.go `namespaces`, also used by filtering_test.go
NAMESPACES = [
    Namespace.model_validate({"metadata": {"name": name, "labels": {"team": team}}})
    for name, team in [
        ("subteam1.team1", "team1"),
        ("subteam2.team1", "team1"),
        ("subteam1.team2", "team2"),
        ("subteam2.team2", "team2"),
    ]
]


def e(key: str, op: str, *values: str) -> dict[str, Any]:
    """One matchExpressions requirement."""
    return {"key": key, "operator": op, **({"values": list(values)} if values else {})}


def term(
    *exprs: dict[str, Any],
    topo: str = "region",
    namespaces: list[str] | None = None,
    ns_selector: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A PodAffinityTerm whose labelSelector ANDs `exprs`."""
    t: dict[str, Any] = {"labelSelector": {"matchExpressions": list(exprs)}, "topologyKey": topo}
    if namespaces is not None:
        t["namespaces"] = namespaces
    if ns_selector is not None:
        t["namespaceSelector"] = ns_selector
    return t


def w(weight: int, t: dict[str, Any]) -> dict[str, Any]:
    return {"weight": weight, "podAffinityTerm": t}


def aff(
    req: list[dict[str, Any]] = (),  # type: ignore[assignment]
    anti: list[dict[str, Any]] = (),  # type: ignore[assignment]
    pref: list[dict[str, Any]] = (),  # type: ignore[assignment]
    pref_anti: list[dict[str, Any]] = (),  # type: ignore[assignment]
) -> dict[str, Any]:
    """spec.affinity with required/preferred pod (anti-)affinity terms."""
    out: dict[str, Any] = {}
    if req or pref:
        out["podAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": list(req),
            "preferredDuringSchedulingIgnoredDuringExecution": list(pref),
        }
    if anti or pref_anti:
        out["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": list(anti),
            "preferredDuringSchedulingIgnoredDuringExecution": list(pref_anti),
        }
    return out


def ip(
    labels: dict[str, str] | None = None,
    on: str = "",
    ns: str = "default",
    affinity: dict[str, Any] | None = None,
) -> Pod:
    """A pod: bound (named e<n>) when `on` names a node, else the incoming pod "p"."""
    spec = {"affinity": affinity} if affinity else {}
    return pod(f"e{next(_SEQ)}" if on else "p", ns, labels, node_name=on, **spec)


_SEQ = itertools.count()


def run(nodes: list[Node], incoming: Pod, pods: list[Pod] = (), args: dict[str, Any] | None = None) -> ScheduleResult:  # type: ignore[assignment]
    """One default-profile cycle with the upstream test namespaces (and optional InterPodAffinity args)."""
    t = build_table(ClusterObjects(nodes=list(nodes), pods=list(pods), namespaces=NAMESPACES))
    profile = Profile(plugin_args={IPA: args}) if args is not None else None
    return Scheduler(new_framework(profile), seed=0).schedule_pod(t, PodInfo.of(incoming))


# --- Filter: one node -------------------------------------------------------------------------------
# pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go: TestRequiredAffinitySingleNode
SVC = {"service": "securityscan"}  # podLabel
SEC = {"security": "S1"}  # podLabel2
NODE1 = [node("node1", {"region": "r1", "zone": "z11"})]
TEAM1 = {"matchExpressions": [e("team", "In", "team1")]}
IN_SCAN = e("service", "In", "securityscan", "value2")
IN_AV = e("service", "In", "antivirusscan", "value2")

SINGLE = [
    pytest.param(
        ip(),
        [],
        OK,
        id="A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
    ),
    pytest.param(
        ip(SEC, affinity=aff(req=[term(IN_SCAN)])),
        [ip(SVC, "node1")],
        OK,
        id=(
            "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that "
            "matches the existing pod"
        ),
    ),
    pytest.param(
        ip(SEC, affinity=aff(req=[term(e("service", "NotIn", "securityscan3", "value3"))])),
        [ip(SVC, "node1")],
        OK,
        id=(
            "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in "
            "operator in labelSelector that matches the existing pod"
        ),
    ),
    # Adjusted: topologyKey "" -> "region", namespace "DiffNameSpace" -> "diffnamespace" (no pod matches either way).
    pytest.param(
        ip(SEC, affinity=aff(req=[term(IN_SCAN, namespaces=["diffnamespace"])])),
        [ip(SVC, "node1", ns="ns")],
        AFF,
        id="Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
    ),
    # Adjusted: topologyKey "" -> "region" (the selector matches neither the existing nor the incoming pod).
    pytest.param(
        ip(SVC, affinity=aff(req=[term(IN_AV)])),
        [ip(SVC, "node1")],
        AFF,
        id="Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
    ),
    pytest.param(
        ip(
            SEC,
            affinity=aff(
                req=[
                    term(e("service", "Exists"), e("wrongkey", "DoesNotExist")),
                    term(e("service", "In", "securityscan"), e("service", "NotIn", "WrongValue")),
                ]
            ),
        ),
        [ip(SVC, "node1")],
        OK,
        id=(
            "satisfies the PodAffinity with different label Operators in multiple "
            "RequiredDuringSchedulingIgnoredDuringExecution"
        ),
    ),
    pytest.param(
        ip(
            SEC,
            affinity=aff(
                req=[
                    term(e("service", "Exists"), e("wrongkey", "DoesNotExist")),
                    term(e("service", "In", "securityscan2"), e("service", "NotIn", "WrongValue")),
                ]
            ),
        ),
        [ip(SVC, "node1")],
        AFF,
        id=(
            "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the "
            "node because one of the matchExpression item don't match"
        ),
    ),
    pytest.param(
        ip(SEC, affinity=aff(req=[term(IN_SCAN)], anti=[term(IN_AV, topo="node")])),
        [ip(SVC, "node1")],
        OK,
        id="satisfies the PodAffinity and PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        ip(SEC, affinity=aff(req=[term(IN_SCAN)], anti=[term(IN_AV, topo="node")])),
        [ip(SVC, "node1", affinity=aff(anti=[term(IN_AV, topo="node")]))],
        OK,
        id="satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        ip(SEC, affinity=aff(req=[term(IN_SCAN)], anti=[term(IN_SCAN, topo="zone")])),
        [ip(SVC, "node1")],
        ANTI,
        id="satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        ip(SVC, affinity=aff(req=[term(IN_SCAN)], anti=[term(IN_AV, topo="node")])),
        [ip(SVC, "node1", affinity=aff(anti=[term(IN_SCAN, topo="zone")]))],
        EXIST,
        id=(
            "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the "
            "existing pod"
        ),
    ),
    pytest.param(
        ip(SVC),
        [ip(SVC, "node1", affinity=aff(anti=[term(IN_SCAN, topo="zone")]))],
        EXIST,
        id=(
            "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
            "doesn't satisfy PodAntiAffinity symmetry with the existing pod"
        ),
    ),
    pytest.param(
        ip(SVC),
        [ip(SVC, "node1", affinity=aff(anti=[term(e("service", "NotIn", "securityscan", "value2"), topo="zone")]))],
        OK,
        id=(
            "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
            "satisfy PodAntiAffinity symmetry with the existing pod"
        ),
    ),
    pytest.param(
        ip(SVC, affinity=aff(anti=[term(e("service", "Exists")), term(e("security", "Exists"))])),
        [ip(SEC, "node1", affinity=aff(anti=[term(e("security", "Exists"), topo="zone")]))],
        ANTI,
        id=(
            "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with "
            "incoming pod"
        ),
    ),
    pytest.param(
        ip(
            SVC,
            affinity=aff(anti=[term(e("service", "Exists"), topo="zone"), term(e("security", "Exists"), topo="zone")]),
        ),
        [ip(SEC, "node1", affinity=aff(anti=[term(e("security", "Exists"), topo="zone")]))],
        ANTI,
        id=(
            "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on "
            "AffinityTerms"
        ),
    ),
    pytest.param(
        ip(SEC, affinity=aff(anti=[term(e("security", "Exists"), topo="zone")])),
        [
            ip(
                SVC,
                "node1",
                affinity=aff(
                    anti=[term(e("service", "Exists"), topo="zone"), term(e("security", "Exists"), topo="zone")]
                ),
            )
        ],
        EXIST,
        id=(
            "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on "
            "AffinityTerms"
        ),
    ),
    pytest.param(
        ip(
            {"abc": "", "xyz": ""},
            affinity=aff(anti=[term(e("abc", "Exists"), topo="zone"), term(e("def", "Exists"), topo="zone")]),
        ),
        [
            ip(
                {"def": "", "xyz": ""},
                "node1",
                affinity=aff(anti=[term(e("abc", "Exists"), topo="zone"), term(e("def", "Exists"), topo="zone")]),
            )
        ],
        ANTI,
        id=(
            "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on "
            "AffinityTerms"
        ),
    ),
    pytest.param(
        ip(
            {"def": "", "xyz": ""},
            affinity=aff(anti=[term(e("abc", "Exists"), topo="zone"), term(e("def", "Exists"), topo="zone")]),
        ),
        [
            ip(
                {"abc": "", "xyz": ""},
                "node1",
                affinity=aff(anti=[term(e("abc", "Exists"), topo="zone"), term(e("def", "Exists"), topo="zone")]),
            )
        ],
        ANTI,
        id=(
            "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on "
            "AffinityTerms"
        ),
    ),
    pytest.param(
        ip(SEC, affinity=aff(req=[term(IN_SCAN, ns_selector=TEAM1)])),
        [ip(SVC, "node1", ns="subteam1.team1")],
        OK,
        id="affinity with NamespaceSelector",
    ),
    pytest.param(
        ip(SEC, affinity=aff(req=[term(IN_SCAN, ns_selector=TEAM1)])),
        [ip(SVC, "node1", ns="subteam1.team2")],
        AFF,
        id="affinity with non-matching NamespaceSelector",
    ),
    pytest.param(
        ip(SEC, ns="subteam1.team1", affinity=aff(anti=[term(IN_SCAN, topo="zone", ns_selector=TEAM1)])),
        [ip(SVC, "node1", ns="subteam2.team1")],
        ANTI,
        id="anti-affinity with matching NamespaceSelector",
    ),
    pytest.param(
        ip(SEC, ns="subteam1.team1", affinity=aff(anti=[term(IN_SCAN, topo="zone", ns_selector={})])),
        [ip(SVC, "node1", ns="subteam2.team1")],
        ANTI,
        id="anti-affinity with matching all NamespaceSelector",
    ),
    pytest.param(
        ip(SEC, ns="subteam1.team1", affinity=aff(anti=[term(IN_SCAN, topo="zone", ns_selector=TEAM1)])),
        [ip(SVC, "node1", ns="subteam1.team2")],
        OK,
        id="anti-affinity with non-matching NamespaceSelector",
    ),
]


@pytest.mark.parametrize(("incoming", "pods", "expect"), SINGLE)
def test_filter_single_node(incoming: Pod, pods: list[Pod], expect: tuple[str, str, list[str]] | None) -> None:
    assert filter_status(run(NODE1, incoming, pods), "node1") == expect


def test_filter_pod_matching_only_its_own_label() -> None:
    """TestRequiredAffinitySingleNode "pod matches its own Label in PodAffinity and that matches the existing
    pod Labels". The existing pod sits on node2, which the unit test never created; here node2 exists without
    labels. NotIn securityscan matches neither pod, so no pod matches and the pod isn't the first of its group:
    node1 fails; node2 also lacks the topology key."""
    nodes = [*NODE1, node("node2")]
    result = run(
        nodes, ip(SVC, affinity=aff(req=[term(e("service", "NotIn", "securityscan", "value2"))])), [ip(SVC, "node2")]
    )
    assert filter_status(result, "node1") == AFF
    assert filter_status(result, "node2") == AFF


def _terminating(p: Pod) -> Pod:
    p.metadata.deletion_timestamp = "2025-01-01T00:00:00Z"
    return p


# --- Filter: several nodes ---------------------------------------------------------------------------
# filtering_test.go: TestRequiredAffinityMultipleNodes
CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}


def rzh(name: str, region: str, zone: str) -> Node:
    return node(name, {"region": region, "zone": zone, "hostname": name})


AB_SAME_ZONE = [rzh("nodeA", "r1", "z1"), rzh("nodeB", "r1", "z1")]
AB = [rzh("nodeA", "r1", "z1"), rzh("nodeB", "r1", "z2")]
EX_FOO = e("foo", "Exists")
EX_BAR = e("bar", "Exists")

MULTI = [
    pytest.param(
        [node("node1", CHINA), node("node2", CHINA_AZ1), node("node3", INDIA)],
        ip(affinity=aff(req=[term(e("foo", "In", "bar"))])),
        [ip({"foo": "bar"}, "node1")],
        {"node1": OK, "node2": OK, "node3": AFF},
        id=(
            "A pod can be scheduled onto all the nodes that have the same topology key & label value with one of "
            "them has an existing pod that matches the affinity rules"
        ),
    ),
    pytest.param(
        [node("nodeA", {"zone": "az1", "hostname": "h1"}), node("nodeB", {"zone": "az2", "hostname": "h2"})],
        ip(
            {"foo": "bar", "service": "securityscan"},
            affinity=aff(
                req=[term(e("foo", "In", "bar"), topo="zone"), term(e("service", "In", "securityscan"), topo="zone")]
            ),
        ),
        [ip({"foo": "bar"}, "nodeA")],
        {"nodeA": OK, "nodeB": OK},
        id="The first pod of the collection should not be blocked from being scheduled onto any node",
    ),
    pytest.param(
        [node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}), node("nodeB", {"zoneLabel": "az2", "hostname": "h2"})],
        ip(
            {"foo": "bar", "service": "securityscan"},
            affinity=aff(
                req=[term(e("foo", "In", "bar"), topo="zone"), term(e("service", "In", "securityscan"), topo="zone")]
            ),
        ),
        [ip({"foo": "bar"}, "nodeA")],
        {"nodeA": AFF, "nodeB": AFF},
        id="The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
    ),
    pytest.param(
        [node("nodeA", {"region": "r1", "hostname": "nodeA"}), node("nodeB", {"region": "r1", "hostname": "nodeB"})],
        ip(affinity=aff(anti=[term(e("foo", "In", "abc"))])),
        [ip({"foo": "abc"}, "nodeA")],
        {"nodeA": ANTI, "nodeB": ANTI},
        id=(
            "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter"
            " pod affinity rule"
        ),
    ),
    pytest.param(
        [rzh("nodeA", "r1", "z1"), rzh("nodeB", "r1", "z2")],
        ip(affinity=aff(anti=[term(e("foo", "In", "abc")), term(e("service", "In", "securityscan"), topo="zone")])),
        [ip({"foo": "abc", "service": "securityscan"}, "nodeA")],
        {"nodeA": ANTI, "nodeB": ANTI},
        id="This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod",
    ),
    pytest.param(
        [node("nodeA", CHINA), node("nodeB", CHINA_AZ1), node("nodeC", INDIA)],
        ip(affinity=aff(anti=[term(e("foo", "In", "abc"))])),
        [ip({"foo": "abc"}, "nodeA")],
        {"nodeA": ANTI, "nodeB": ANTI, "nodeC": OK},
        id="The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
    ),
    # Adjusted: namespaces NS1/NS2 -> ns1/ns2 (valid names).
    pytest.param(
        [node("nodeA", CHINA), node("nodeB", CHINA_AZ1), node("nodeC", INDIA)],
        ip({"foo": "123"}, ns="ns1", affinity=aff(anti=[term(e("foo", "In", "bar"))])),
        [
            ip({"foo": "bar"}, "nodeA", ns="ns1"),
            ip(None, "nodeC", ns="ns2", affinity=aff(anti=[term(e("foo", "In", "123"))])),
        ],
        {"nodeA": ANTI, "nodeB": ANTI, "nodeC": OK},
        id="NodeC has an existing pod that match the inter pod affinity rule but in different namespace",
    ),
    pytest.param(
        AB_SAME_ZONE,
        ip({"foo": ""}),
        [ip(None, "nodeA", affinity=aff(anti=[term(EX_FOO, topo="invalid-node-label")]))],
        {"nodeA": OK, "nodeB": OK},
        id=(
            "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, "
            "labelSelector of the term is firstly checked, and then topologyKey of the term is also checked"
        ),
    ),
    # Adjusted: the unit test's incoming pod had spec.nodeName nodeA (an artifact: it would make this a NodeName case).
    pytest.param(
        AB_SAME_ZONE,
        ip(affinity=aff(anti=[term(EX_FOO, topo="invalid-node-label")])),
        [ip({"foo": ""}, "nodeA")],
        {"nodeA": OK, "nodeB": OK},
        id="Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
    ),
    pytest.param(
        AB,
        ip({"foo": "", "bar": ""}),
        [
            ip(None, "nodeA", affinity=aff(anti=[term(EX_FOO, topo="zone")])),
            ip(None, "nodeA", affinity=aff(anti=[term(EX_BAR)])),
        ],
        {"nodeA": EXIST, "nodeB": EXIST},
        id=(
            "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each "
            "existingPod's terms on all nodes"
        ),
    ),
    pytest.param(
        AB,
        ip(affinity=aff(anti=[term(EX_FOO, topo="zone"), term(EX_BAR)])),
        [ip({"foo": ""}, "nodeA"), ip({"bar": ""}, "nodeB")],
        {"nodeA": ANTI, "nodeB": ANTI},
        id=(
            "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates "
            "one anti-affinity rule of existingPod"
        ),
    ),
    pytest.param(
        AB,
        ip({"foo": "", "bar": ""}),
        [ip(None, "nodeA", affinity=aff(anti=[term(EX_FOO, topo="invalid-node-label"), term(EX_BAR, topo="zone")]))],
        {"nodeA": EXIST, "nodeB": OK},
        id=(
            "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match - case when one "
            "term has invalid topologyKey"
        ),
    ),
    pytest.param(
        AB,
        ip(affinity=aff(anti=[term(EX_FOO, topo="invalid-node-label"), term(EX_BAR, topo="zone")])),
        [ip({"foo": "", "bar": ""}, "nodeA")],
        {"nodeA": ANTI, "nodeB": OK},
        id=(
            "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match - case when one "
            "term has invalid topologyKey"
        ),
    ),
    pytest.param(
        AB,
        ip({"foo": "", "bar": ""}),
        [ip(None, "nodeA", affinity=aff(anti=[term(EX_FOO), term(EX_BAR, topo="zone")]))],
        {"nodeA": EXIST, "nodeB": EXIST},
        id=(
            "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match - case when all "
            "terms have valid topologyKey"
        ),
    ),
    pytest.param(
        AB,
        ip(affinity=aff(anti=[term(EX_FOO), term(EX_BAR, topo="zone")])),
        [ip({"foo": "", "bar": ""}, "nodeA")],
        {"nodeA": ANTI, "nodeB": ANTI},
        id=(
            "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match - case when all "
            "terms have valid topologyKey"
        ),
    ),
    pytest.param(
        [*AB, rzh("nodeC", "r1", "z3")],
        ip({"foo": "", "bar": ""}),
        [
            ip(None, "nodeA", affinity=aff(anti=[term(EX_FOO, topo="zone"), term(e("labelA", "Exists"), topo="zone")])),
            ip(None, "nodeB", affinity=aff(anti=[term(EX_BAR, topo="zone"), term(e("labelB", "Exists"), topo="zone")])),
        ],
        {"nodeA": EXIST, "nodeB": EXIST, "nodeC": OK},
        id=(
            "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term "
            "matches incoming pod, so incoming pod can only be scheduled to nodeC"
        ),
    ),
    pytest.param(
        AB_SAME_ZONE,
        ip(affinity=aff(req=[term(EX_FOO), term(EX_BAR, topo="zone")])),
        [ip({"foo": "", "bar": ""}, "nodeA")],
        {"nodeA": OK, "nodeB": OK},
        id=(
            "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all "
            "topologyKeys match"
        ),
    ),
    pytest.param(
        AB,
        ip(affinity=aff(req=[term(EX_FOO), term(EX_BAR, topo="zone")])),
        [ip({"foo": ""}, "nodeA"), ip({"bar": ""}, "nodeB")],
        {"nodeA": AFF, "nodeB": AFF},
        id="Test incoming pod's affinity: the match logic should be satisfied on the same pod",
    ),
    # Derived (filtering.go PreFilter: existing pods' required anti-affinity terms are matched against the
    # incoming pod with its Namespace's labels): the term selects team1 namespaces.
    pytest.param(
        AB,
        ip({"foo": ""}, ns="subteam1.team1"),
        [ip(None, "nodeA", ns="subteam2.team2", affinity=aff(anti=[term(EX_FOO, topo="zone", ns_selector=TEAM1)]))],
        {"nodeA": EXIST, "nodeB": OK},
        id="derived/existing pod's anti-affinity namespaceSelector selects the incoming pod's namespace",
    ),
    pytest.param(
        AB,
        ip({"foo": ""}, ns="subteam1.team2"),
        [ip(None, "nodeA", ns="subteam2.team2", affinity=aff(anti=[term(EX_FOO, topo="zone", ns_selector=TEAM1)]))],
        {"nodeA": OK, "nodeB": OK},
        id="derived/existing pod's anti-affinity namespaceSelector doesn't select the incoming pod's namespace",
    ),
    # Derived (filtering.go Filter checks affinity, then anti-affinity, then existing anti-affinity): nodeA
    # fails all three and reports the affinity failure; nodeB (other zone, no bar pod) fails only affinity.
    pytest.param(
        AB,
        ip({"me": ""}, affinity=aff(req=[term(EX_FOO)], anti=[term(EX_BAR, topo="zone")])),
        [ip({"bar": ""}, "nodeA", affinity=aff(anti=[term(e("me", "Exists"), topo="zone")]))],
        {"nodeA": AFF, "nodeB": AFF},
        id="derived/affinity failure is reported before anti-affinity failures",
    ),
    pytest.param(
        AB,
        ip({"me": ""}, affinity=aff(anti=[term(EX_BAR, topo="zone")])),
        [ip({"bar": ""}, "nodeA", affinity=aff(anti=[term(e("me", "Exists"), topo="zone")]))],
        {"nodeA": ANTI, "nodeB": OK},
        id="derived/incoming anti-affinity failure is reported before existing pods' anti-affinity",
    ),
    # Derived (filtering.go getIncomingAffinityAntiAffinityCounts walks nodeInfo.GetPods(), terminating ones
    # included; unlike PodTopologySpread there is no deletionTimestamp check).
    pytest.param(
        AB,
        ip(affinity=aff(anti=[term(EX_FOO, topo="zone")])),
        [_terminating(ip({"foo": ""}, "nodeA"))],
        {"nodeA": ANTI, "nodeB": OK},
        id="derived/terminating pods still count for anti-affinity",
    ),
]


@pytest.mark.parametrize(("nodes", "incoming", "pods", "expect"), MULTI)
def test_filter_multiple_nodes(nodes: list[Node], incoming: Pod, pods: list[Pod], expect: dict[str, Any]) -> None:
    result = run(nodes, incoming, pods)
    assert {name: filter_status(result, name) for name in expect} == expect


# --- Score -------------------------------------------------------------------------------------------
# scoring_test.go: TestPreferredAffinity
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}
TEAM1_OR_SUBTEAM22 = {"namespaces": ["subteam2.team2"], "ns_selector": TEAM1}
STAY_S1 = aff(pref=[w(5, term(e("security", "In", "S1")))])
STAY_S2 = aff(pref=[w(6, term(e("security", "In", "S2")))])
AFFINITY3 = aff(
    pref=[
        w(8, term(e("security", "NotIn", "S1"), e("security", "In", "S2"))),
        w(2, term(e("security", "Exists"), e("wrongkey", "DoesNotExist"))),
    ]
)
HARD = aff(
    req=[term(e("security", "In", "S1", "value2")), term(e("security", "Exists"), e("wrongkey", "DoesNotExist"))]
)
AWAY_S1_AZ = aff(pref_anti=[w(5, term(e("security", "In", "S1"), topo="az"))])
AWAY_S2_AZ = aff(pref_anti=[w(5, term(e("security", "In", "S2"), topo="az"))])
STAY_S1_AWAY_S2 = aff(
    pref=[w(8, term(e("security", "In", "S1")))], pref_anti=[w(5, term(e("security", "In", "S2"), topo="az"))]
)
AFF_NS_SEL = aff(pref=[w(5, term(e("security", "In", "S1"), **TEAM1_OR_SUBTEAM22))])
ANTI_NS_SEL = aff(pref_anti=[w(5, term(e("security", "In", "S1"), **TEAM1_OR_SUBTEAM22))])


def nodes_of(*labels: dict[str, str]) -> list[Node]:
    """node1, node2, ... with the given labels."""
    return [node(f"node{i}", lab) for i, lab in enumerate(labels, 1)]


SCORE = [
    pytest.param(
        nodes_of(CHINA, INDIA, AZ1),
        ip(S1, affinity=STAY_S1),
        [ip(S1, "node1"), ip(S2, "node2"), ip(S1, "node3")],
        [100, 0, 0],
        id="Affinity: pod that matches topology key & pods in nodes will get high score comparing to others",
    ),
    pytest.param(
        nodes_of(CHINA, CHINA_AZ1, INDIA),
        ip(affinity=STAY_S1),
        [ip(S1, "node1")],
        [100, 100, 0],
        id=(
            "All the nodes that have the same topology key & label value with one of them has an existing pod that "
            "match the affinity rules, have the same score"
        ),
    ),
    pytest.param(
        nodes_of(CHINA, INDIA, CHINA, CHINA, INDIA),
        ip(S1, affinity=STAY_S2),
        [ip(S2, "node1"), ip(S2, "node1"), ip(S2, "node2"), ip(S2, "node3"), ip(S2, "node4"), ip(S2, "node5")],
        [100, 0, 100, 100, 0],
        id=(
            "Affinity: nodes in one region has more matching pods comparing to other region, so the region which has"
            " more matches will get high score"
        ),
    ),
    pytest.param(
        nodes_of(CHINA, INDIA, AZ1),
        ip(S1, affinity=AFFINITY3),
        [ip(S1, "node1"), ip(S2, "node2"), ip(S1, "node3")],
        [20, 100, 0],
        id=(
            "Affinity: different Label operators and values for pod affinity scheduling preference, including some "
            "match failures"
        ),
    ),
    pytest.param(
        nodes_of(CHINA, INDIA, AZ1),
        ip(S2),
        [ip(S1, "node1", affinity=STAY_S1), ip(S2, "node2", affinity=STAY_S2)],
        [0, 100, 0],
        id=(
            "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity "
            "symmetry"
        ),
    ),
    pytest.param(
        nodes_of(CHINA, INDIA, AZ1),
        ip(S1, ns="subteam1.team1"),
        [ip(S1, "node1", affinity=AFF_NS_SEL), ip(S2, "node2", affinity=STAY_S2)],
        [100, 0, 0],
        id="Affinity symmetry with namespace selector",
    ),
    pytest.param(
        nodes_of(CHINA, INDIA, AZ1),
        ip(S1, ns="subteam1.team1"),
        [ip(S1, "node1", affinity=ANTI_NS_SEL), ip(S2, "node2", affinity=STAY_S2)],
        [0, 100, 100],
        id="AntiAffinity symmetry with namespace selector",
    ),
    pytest.param(
        nodes_of(CHINA, INDIA, AZ1),
        ip(S1),
        [ip(S1, "node1", affinity=HARD), ip(S2, "node2", affinity=HARD)],
        [100, 100, 0],
        id="Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
    ),
    pytest.param(
        nodes_of(AZ1, CHINA),
        ip(S1, affinity=AWAY_S1_AZ),
        [ip(S1, "node1"), ip(S2, "node2")],
        [0, 100],
        id="Anti Affinity: pod that does not match existing pods in node will get high score",
    ),
    pytest.param(
        nodes_of(AZ1, CHINA),
        ip(S1, affinity=AWAY_S1_AZ),
        [ip(S1, "node1"), ip(S1, "node2")],
        [0, 100],
        id=(
            "Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score "
            "comparing to others"
        ),
    ),
    pytest.param(
        nodes_of(AZ1, INDIA),
        ip(S1, affinity=AWAY_S1_AZ),
        [ip(S1, "node1"), ip(S1, "node1"), ip(S2, "node2")],
        [0, 100],
        id=(
            "Anti Affinity: one node has more matching pods comparing to other node, so the node which has more "
            "unmatches will get high score"
        ),
    ),
    pytest.param(
        nodes_of(AZ1, AZ2),
        ip(S2),
        [ip(S1, "node1", affinity=AWAY_S2_AZ), ip(S2, "node2", affinity=AWAY_S1_AZ)],
        [0, 100],
        id="Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
    ),
    pytest.param(
        nodes_of(CHINA, AZ1),
        ip(S1, affinity=STAY_S1_AWAY_S2),
        [ip(S1, "node1"), ip(S1, "node2")],
        [100, 0],
        id=(
            "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod"
            " affinity & anti affinity"
        ),
    ),
    pytest.param(
        nodes_of(CHINA_AZ1, INDIA, CHINA, CHINA, INDIA),
        ip(S1, affinity=STAY_S1_AWAY_S2),
        [ip(S1, n) for n in ("node1", "node1", "node2", "node3", "node3", "node4", "node5")],
        [100, 0, 100, 100, 0],
        id=(
            "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and "
            "existing pods have the same labels"
        ),
    ),
    pytest.param(
        nodes_of(CHINA, AZ1, INDIA, AZ2),
        ip(S1, affinity=STAY_S1_AWAY_S2),
        [
            ip(S1, "node1"),
            ip(S2, "node2"),
            ip(None, "node3", affinity=STAY_S1_AWAY_S2),
            ip(None, "node4", affinity=AWAY_S1_AZ),
        ],
        [100, 0, 100, 0],
        id=(
            "Affinity and Anti Affinity and symmetry: considered only "
            "preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry"
        ),
    ),
    pytest.param(
        nodes_of(CHINA, CHINA),
        ip(S1),
        [ip(S1, "node1"), ip(None, "node2", affinity=STAY_S1_AWAY_S2)],
        [0, 0],
        id="Avoid panic when partial nodes in a topology don't have pods with affinity",
    ),
    pytest.param(
        nodes_of(CHINA, INDIA),
        ip(S1, ns="subteam1.team1", affinity=AFF_NS_SEL),
        [
            ip(S1, "node1", ns="subteam1.team1"),
            ip(S1, "node1", ns="subteam1.team1"),
            ip(S1, "node1", ns="subteam1.team2"),
            ip(S1, "node2", ns="subteam2.team1"),
        ],
        [100, 0],
        id="Affinity with pods matching NamespaceSelector",
    ),
    pytest.param(
        nodes_of(CHINA, INDIA),
        ip(S1, ns="subteam1.team1", affinity=AFF_NS_SEL),
        [
            ip(S1, "node1", ns="subteam1.team1"),
            ip(S1, "node1", ns="subteam1.team1"),
            ip(S1, "node1", ns="subteam2.team2"),
            ip(S1, "node2", ns="subteam2.team1"),
        ],
        [100, 0],
        id="Affinity with pods matching both NamespaceSelector and Namespaces fields",
    ),
    pytest.param(
        nodes_of(CHINA, INDIA),
        ip(S1, ns="subteam1.team1", affinity=ANTI_NS_SEL),
        [
            ip(S1, "node1", ns="subteam1.team1"),
            ip(S1, "node1", ns="subteam1.team1"),
            ip(S1, "node1", ns="subteam1.team2"),
            ip(S1, "node2", ns="subteam2.team1"),
        ],
        [0, 100],
        id="AntiAffinity with pods matching NamespaceSelector",
    ),
    pytest.param(
        nodes_of(CHINA, INDIA),
        ip(S1, ns="subteam1.team1", affinity=ANTI_NS_SEL),
        [
            ip(S1, "node1", ns="subteam1.team1"),
            ip(S1, "node1", ns="subteam1.team1"),
            ip(S1, "node1", ns="subteam2.team2"),
            ip(S1, "node2", ns="subteam2.team1"),
        ],
        [0, 100],
        id="AntiAffinity with pods matching both NamespaceSelector and Namespaces fields",
    ),
    pytest.param(
        nodes_of(CHINA, INDIA),
        ip(S2),
        [ip(S1, "node1", affinity=STAY_S1_AWAY_S2), ip(S2, "node2", affinity=STAY_S2)],
        [0, 100],
        id="Do not ignore preferred terms of existing pods",
    ),
    # Derived (scoring.go NormalizeScore: int64(100 * (float64(s-min) / float64(max-min)))): raw 100, 29, 0.
    # Dividing first gives 100 * 0.29 = 28.999999999999996 -> 28 (multiplying first would give 29).
    pytest.param(
        nodes_of({"region": "r1"}, {"region": "r2"}, {"region": "r3"}),
        ip(affinity=aff(pref=[w(100, term(e("app", "In", "x"))), w(29, term(e("app", "In", "y")))])),
        [ip({"app": "x"}, "node1"), ip({"app": "y"}, "node2")],
        [100, 28, 0],
        id="derived/normalization divides before multiplying",
    ),
    # Derived: a node without any labels has raw 0 and still takes part in min/max (raw -5, 0, 0).
    pytest.param(
        nodes_of(AZ1, {}, AZ2),
        ip(S2, affinity=AWAY_S1_AZ),
        [ip(S1, "node1"), ip(S1, "node2")],
        [0, 100, 100],
        id="derived/node without labels scores raw 0",
    ),
]


@pytest.mark.parametrize(("nodes", "incoming", "pods", "expect"), SCORE)
def test_score(nodes: list[Node], incoming: Pod, pods: list[Pod], expect: list[int]) -> None:
    result = run(nodes, incoming, pods)
    assert IPA not in result.skipped_score_plugins
    assert scores(result, IPA) == {f"node{i}": s for i, s in enumerate(expect, 1)}


SKIPPED = [
    pytest.param(nodes_of(CHINA, INDIA, AZ1), ip(S1), [], None, id="all nodes are same priority as Affinity is nil"),
    pytest.param(
        nodes_of(CHINA, INDIA),
        ip(S2),
        [ip(S1, "node1", affinity=STAY_S1_AWAY_S2), ip(S2, "node2", affinity=STAY_S2)],
        {"ignorePreferredTermsOfExistingPods": True},
        id="Ignore preferred terms of existing pods",
    ),
    # Derived: existing pods have terms, but none matches the incoming pod -> no entry -> Skip.
    pytest.param(
        nodes_of(CHINA, INDIA),
        ip(S1),
        [ip(S2, "node1", affinity=STAY_S2)],
        None,
        id="derived/existing terms that don't match the incoming pod produce nothing",
    ),
]


@pytest.mark.parametrize(("nodes", "incoming", "pods", "args"), SKIPPED)
def test_score_skipped(nodes: list[Node], incoming: Pod, pods: list[Pod], args: dict[str, Any] | None) -> None:
    result = run(nodes, incoming, pods, args)
    assert IPA in result.skipped_score_plugins
    assert scores(result, IPA) == {}


# scoring_test.go: TestPreferredAffinityWithHardPodAffinitySymmetricWeight
# The term's namespaces ["", "subteam2.team2"] become ["default", "subteam2.team2"] (empty namespace -> default).
HARD_SVC = aff(req=[term(e("service", "In", "S1"), namespaces=["default", "subteam2.team2"], ns_selector=TEAM1)])
HARD_NODES = nodes_of(CHINA, INDIA, AZ1)
HARD_PODS = [ip(None, "node1", affinity=HARD_SVC), ip(None, "node2", affinity=HARD_SVC)]

HARD_ROWS = [
    pytest.param("default", 1, [100, 100, 0], id="with default weight"),
    pytest.param("default", 0, None, id="with zero weight"),
    pytest.param("subteam1.team2", 1, None, id="with no matching namespace"),
    pytest.param("subteam1.team1", 1, [100, 100, 0], id="with matching NamespaceSelector"),
    pytest.param("subteam2.team2", 1, [100, 100, 0], id="with matching Namespaces"),
]


@pytest.mark.parametrize(("ns", "weight", "expect"), HARD_ROWS)
def test_hard_pod_affinity_weight(ns: str, weight: int, expect: list[int] | None) -> None:
    result = run(HARD_NODES, ip({"service": "S1"}, ns=ns), HARD_PODS, {"hardPodAffinityWeight": weight})
    if expect is None:
        assert IPA in result.skipped_score_plugins
        assert scores(result, IPA) == {}
    else:
        assert scores(result, IPA) == {f"node{i}": s for i, s in enumerate(expect, 1)}


def test_hard_pod_affinity_weight_scales_raw_score() -> None:
    """Derived (scoring.go processExistingPod: +hardPodAffinityWeight per matching required term): weight 7
    on China against a preferred weight 5 on India gives raw 7, 5, 0 -> 100, int(100 * 5/7) = 71, 0."""
    pods = [
        ip(None, "node1", affinity=HARD_SVC),
        ip(None, "node2", affinity=aff(pref=[w(5, term(e("service", "In", "S1")))])),
    ]
    result = run(HARD_NODES, ip({"service": "S1"}), pods, {"hardPodAffinityWeight": 7})
    assert scores(result, IPA) == {"node1": 100, "node2": 71, "node3": 0}
