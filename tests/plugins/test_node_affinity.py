"""NodeAffinity (with nodeSelector and addedAffinity), transcribed from upstream v1.34 unit tests.

Upstream: pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go (TestNodeAffinity,
TestNodeAffinityPriority); matching rules from k8s.io/component-helpers/scheduling/corev1/nodeaffinity
and k8s.io/apimachinery/pkg/labels (NewRequirement, Requirement.Matches). Rows marked "(source)" are
read from that source rather than copied from a test table.

Every case runs a full default-profile cycle, so the status checked is the one upstream records for
the node (the first failing Filter plugin, or the PreFilterResult's "didn't satisfy" status).
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.api.loading import InputError
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.framework.profile import Profile
from scheduler_core.framework.status import Code
from scheduler_core.plugins.registry import new_framework
from scheduler_core.schedule_one import Scheduler, ScheduleResult
from tests.helpers import filter_status, node, pod, schedule, scores, table

NA = "NodeAffinity"
UU = "UnschedulableAndUnresolvable"
ERR_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_CONFLICT = "pod affinity terms conflict"
NOT_IN_RESULT = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
FAIL_POD = (NA, UU, [ERR_POD])
# Nodes left out by a PreFilterResult share one status made by findNodesThatFitPod, with no plugin set.
NOT_IN = ("", UU, [NOT_IN_RESULT])


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    requirement: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        requirement["values"] = list(values)
    return requirement


def name_in(*names: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": "In", "values": list(names)}


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    """An affinity whose required node selector has these terms."""
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def preferred(*terms: tuple[int, list[dict[str, Any]]]) -> dict[str, Any]:
    """Preferred terms as (weight, matchExpressions)."""
    return [{"weight": w, "preference": {"matchExpressions": exprs}} for w, exprs in terms]


def skipped(result: ScheduleResult, plugin: str) -> bool:
    """Whether `plugin`'s PreFilter returned Skip (its Filter did not run)."""
    assert result.filter is not None
    return result.filter.verdicts[result.filter.plugins.index(plugin)] is None


def run(nodes: list, incoming, args: dict[str, Any] | None = None) -> ScheduleResult:  # type: ignore[no-untyped-def]
    """One cycle, with NodeAffinity args (addedAffinity) when given."""
    profile = Profile(plugin_args={NA: args}) if args else None
    return Scheduler(new_framework(profile), seed=0).schedule_pod(table(nodes), PodInfo.of(incoming))


# --- Filter on one node: node_affinity_test.go TestNodeAffinity -----------------------------------------

# (id, pod spec, node labels, node name, recorded status or None when the node fits)
FILTER_ONE_NODE = [
    ("missing labels", {"nodeSelector": {"foo": "bar"}}, {}, "node1", FAIL_POD),
    ("same labels", {"nodeSelector": {"foo": "bar"}}, {"foo": "bar"}, "node1", None),
    ("node labels are superset", {"nodeSelector": {"foo": "bar"}}, {"foo": "bar", "baz": "blah"}, "node1", None),
    ("node labels are subset", {"nodeSelector": {"foo": "bar", "baz": "blah"}}, {"foo": "bar"}, "node1", FAIL_POD),
    (
        "matchExpressions In matches",
        {"affinity": required({"matchExpressions": [expr("foo", "In", "bar", "value2")]})},
        {"foo": "bar"},
        "node1",
        None,
    ),
    (
        "matchExpressions Gt matches (leading zeros)",
        {"affinity": required({"matchExpressions": [expr("kernel-version", "Gt", "0204")]})},
        {"kernel-version": "0206"},
        "node1",
        None,
    ),
    (
        "matchExpressions NotIn matches",
        {"affinity": required({"matchExpressions": [expr("mem-type", "NotIn", "DDR", "DDR2")]})},
        {"mem-type": "DDR3"},
        "node1",
        None,
    ),
    (
        "matchExpressions Exists matches",
        {"affinity": required({"matchExpressions": [expr("GPU", "Exists")]})},
        {"GPU": "NVIDIA-GRID-K1"},
        "node1",
        None,
    ),
    (
        "affinity that doesn't match node's labels",
        {"affinity": required({"matchExpressions": [expr("foo", "In", "value1", "value2")]})},
        {"foo": "bar"},
        "node1",
        FAIL_POD,
    ),
    (
        "empty MatchExpressions matches no objects",
        {"affinity": required({"matchExpressions": []})},
        {"foo": "bar"},
        "node1",
        FAIL_POD,
    ),
    (
        "multiple matchExpressions ANDed that match",
        {"affinity": required({"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]})},
        {"GPU": "NVIDIA-GRID-K1"},
        "node1",
        None,
    ),
    (
        "multiple matchExpressions ANDed that don't match",
        {"affinity": required({"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")]})},
        {"GPU": "NVIDIA-GRID-K1"},
        "node1",
        FAIL_POD,
    ),
    (
        "multiple NodeSelectorTerms ORed",
        {
            "affinity": required(
                {"matchExpressions": [expr("foo", "In", "bar", "value2")]},
                {"matchExpressions": [expr("diffkey", "In", "wrong", "value2")]},
            )
        },
        {"foo": "bar"},
        "node1",
        None,
    ),
    (
        "Affinity and NodeSelector both satisfied",
        {"nodeSelector": {"foo": "bar"}, "affinity": required({"matchExpressions": [expr("foo", "Exists")]})},
        {"foo": "bar"},
        "node1",
        None,
    ),
    (
        "Affinity matches but NodeSelector not satisfied",
        {"nodeSelector": {"foo": "bar"}, "affinity": required({"matchExpressions": [expr("foo", "Exists")]})},
        {"foo": "barrrrrr"},
        "node1",
        FAIL_POD,
    ),
    (
        "invalid value in Affinity term",
        {"affinity": required({"matchExpressions": [expr("foo", "NotIn", "invalid value: ___@#$%^")]})},
        {"foo": "bar"},
        "node1",
        FAIL_POD,
    ),
    (
        "matchFields In matches the existing node",
        {"affinity": required({"matchFields": [name_in("node1")]})},
        {},
        "node1",
        None,
    ),
    (
        # Upstream's Filter alone says ErrReasonPod; in a cycle the node is outside the PreFilterResult.
        "matchFields In does not match the existing node",
        {"affinity": required({"matchFields": [name_in("node1")]})},
        {},
        "node2",
        NOT_IN,
    ),
    (
        "two terms: matchFields does not match, but matchExpressions matches",
        {
            "affinity": required(
                {"matchFields": [name_in("node1"), name_in("node2")]},
                {"matchExpressions": [expr("foo", "In", "bar")]},
            )
        },
        {"foo": "bar"},
        "node2",
        None,
    ),
    (
        "one term: matchFields does not match, but matchExpressions matches",
        {"affinity": required({"matchFields": [name_in("node1")], "matchExpressions": [expr("foo", "In", "bar")]})},
        {"foo": "bar"},
        "node2",
        NOT_IN,
    ),
    (
        "one term: both matchFields and matchExpressions match",
        {"affinity": required({"matchFields": [name_in("node1")], "matchExpressions": [expr("foo", "In", "bar")]})},
        {"foo": "bar"},
        "node1",
        None,
    ),
    (
        "two terms: both matchFields and matchExpressions do not match",
        {
            "affinity": required(
                {"matchFields": [name_in("node1")]},
                {"matchExpressions": [expr("foo", "In", "not-match-to-bar")]},
            )
        },
        {"foo": "bar"},
        "node2",
        FAIL_POD,
    ),
    (
        "two terms of node.Name affinity",
        {"affinity": required({"matchFields": [name_in("node1")]}, {"matchFields": [name_in("node2")]})},
        {},
        "node2",
        None,
    ),
    # (source) rows: labels.NewRequirement / Requirement.Matches / NewLazyErrorNodeSelector.
    (
        "(source) Lt matches",
        {"affinity": required({"matchExpressions": [expr("rank", "Lt", "10")]})},
        {"rank": "9"},
        "node1",
        None,
    ),
    (
        "(source) Gt is strict",
        {"affinity": required({"matchExpressions": [expr("rank", "Gt", "10")]})},
        {"rank": "10"},
        "node1",
        FAIL_POD,
    ),
    (
        "(source) Gt with a node label that is not an integer",
        {"affinity": required({"matchExpressions": [expr("rank", "Gt", "1")]})},
        {"rank": "abc"},
        "node1",
        FAIL_POD,
    ),
    (
        "(source) Gt with a requirement value that is not an integer",
        {"affinity": required({"matchExpressions": [expr("rank", "Gt", "one")]})},
        {"rank": "5"},
        "node1",
        FAIL_POD,
    ),
    (
        "(source) Gt with two values",
        {"affinity": required({"matchExpressions": [expr("rank", "Gt", "1", "2")]})},
        {"rank": "5"},
        "node1",
        FAIL_POD,
    ),
    (
        "(source) Gt with a negative value, not a valid label value",
        {"affinity": required({"matchExpressions": [expr("rank", "Gt", "-1")]})},
        {"rank": "5"},
        "node1",
        FAIL_POD,
    ),
    (
        "(source) Lt with a node label that overflows int64",
        {"affinity": required({"matchExpressions": [expr("rank", "Lt", "10")]})},
        {"rank": "-9223372036854775809"},
        "node1",
        FAIL_POD,
    ),
    (
        "(source) NotIn matches a node without the key",
        {"affinity": required({"matchExpressions": [expr("mem-type", "NotIn", "DDR")]})},
        {},
        "node1",
        None,
    ),
    (
        "(source) DoesNotExist",
        {"affinity": required({"matchExpressions": [expr("GPU", "DoesNotExist")]})},
        {"GPU": "yes"},
        "node1",
        FAIL_POD,
    ),
    (
        "(source) Exists with a value does not parse",
        {"affinity": required({"matchExpressions": [expr("GPU", "Exists", "yes")]})},
        {"GPU": "yes"},
        "node1",
        FAIL_POD,
    ),
    (
        "(source) In without values does not parse",
        {"affinity": required({"matchExpressions": [expr("GPU", "In")]})},
        {"GPU": ""},
        "node1",
        FAIL_POD,
    ),
    (
        "(source) invalid label key does not parse",
        {"affinity": required({"matchExpressions": [expr("bad key", "DoesNotExist")]})},
        {},
        "node1",
        FAIL_POD,
    ),
    (
        "(source) prefixed label key parses",
        {"affinity": required({"matchExpressions": [expr("topology.kubernetes.io/zone", "In", "a")]})},
        {"topology.kubernetes.io/zone": "a"},
        "node1",
        None,
    ),
    (
        "(source) a term that does not parse is dropped; another term still matches",
        {
            "affinity": required(
                {"matchExpressions": [expr("foo", "NotIn", "invalid value")]},
                {"matchExpressions": [expr("foo", "In", "bar")]},
            )
        },
        {"foo": "bar"},
        "node1",
        None,
    ),
    (
        "(source) a term is all-or-nothing: one bad requirement voids it",
        {"affinity": required({"matchExpressions": [expr("foo", "In", "bar"), expr("x", "Gt", "nan")]})},
        {"foo": "bar", "x": "1"},
        "node1",
        FAIL_POD,
    ),
    ("(source) required with no terms matches nothing", {"affinity": required()}, {"foo": "bar"}, "node1", FAIL_POD),
    (
        "(source) matchFields NotIn",
        {"affinity": required({"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node1"]}]})},
        {},
        "node1",
        FAIL_POD,
    ),
]


@pytest.mark.parametrize(
    ("spec", "labels", "node_name", "want"),
    [pytest.param(*row[1:], id=row[0]) for row in FILTER_ONE_NODE],
)
def test_filter_one_node(spec: dict[str, Any], labels: dict[str, str], node_name: str, want: object) -> None:
    result = schedule([node(node_name, labels=labels)], pod(**spec))
    assert filter_status(result, node_name) == want
    assert result.scheduled == (want is None)


# PreFilter Skip: node_affinity_test.go "Pod with no Affinity", "Pod with Affinity but nil NodeSelector".
@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({}, id="Pod with no Affinity will schedule onto a node"),
        pytest.param({"affinity": {"nodeAffinity": {}}}, id="Pod with Affinity but nil NodeSelector"),
        pytest.param(
            {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred((1, []))}}},
            id="(source) preferred terms only",
        ),
    ],
)
def test_pre_filter_skip(spec: dict[str, Any]) -> None:
    result = schedule([node("node1", labels={"foo": "bar"})], pod(**spec))
    assert skipped(result, NA)
    assert result.selected_node == "node1"


def test_pre_filter_runs_with_node_selector() -> None:
    result = schedule([node("node1", labels={"foo": "bar"})], pod(nodeSelector={"foo": "bar"}))
    assert not skipped(result, NA)
    assert result.selected_node == "node1"


# --- PreFilterResult across several nodes ------------------------------------------------------------------

# (id, pod spec, {node: labels}, {node: recorded status}, selected node)
MULTI_NODE = [
    (
        "matchFields In: only node1 is filtered, the rest are outside the PreFilterResult",
        {"affinity": required({"matchFields": [name_in("node1")]})},
        {"node1": {}, "node2": {}, "node3": {}},
        {"node1": None, "node2": NOT_IN, "node3": NOT_IN},
        "node1",
    ),
    (
        "one term: matchFields does not match, but matchExpressions matches",
        {"affinity": required({"matchFields": [name_in("node1")], "matchExpressions": [expr("foo", "In", "bar")]})},
        {"node1": {}, "node2": {"foo": "bar"}},
        {"node1": FAIL_POD, "node2": NOT_IN},
        None,
    ),
    (
        "two terms: matchFields does not match, but matchExpressions matches (no PreFilterResult)",
        {
            "affinity": required(
                {"matchFields": [name_in("node1")]},
                {"matchExpressions": [expr("foo", "In", "bar")]},
            )
        },
        {"node1": {}, "node2": {"foo": "bar"}, "node3": {}},
        {"node1": None, "node2": None, "node3": FAIL_POD},
        None,
    ),
    (
        "two terms of node.Name affinity: the union",
        {"affinity": required({"matchFields": [name_in("node1")]}, {"matchFields": [name_in("node2")]})},
        {"node1": {}, "node2": {}, "node3": {}},
        {"node1": None, "node2": None, "node3": NOT_IN},
        None,
    ),
    (
        "(source) PreFilterResult naming only a node that does not exist",
        {"affinity": required({"matchFields": [name_in("ghost")]})},
        {"node1": {}, "node2": {}},
        {"node1": NOT_IN, "node2": NOT_IN},
        None,
    ),
    (
        "(source) In with values [a, b] in one requirement: intersection per term",
        {"affinity": required({"matchFields": [name_in("node1", "node2"), name_in("node2", "node3")]})},
        {"node1": {}, "node2": {}, "node3": {}},
        {"node1": NOT_IN, "node2": FAIL_POD, "node3": NOT_IN},
        None,
    ),
]


@pytest.mark.parametrize(
    ("spec", "nodes", "want", "selected"),
    [pytest.param(*row[1:], id=row[0]) for row in MULTI_NODE],
)
def test_pre_filter_result(
    spec: dict[str, Any], nodes: dict[str, dict[str, str]], want: dict[str, object], selected: str | None
) -> None:
    result = schedule([node(n, labels=labels) for n, labels in nodes.items()], pod(**spec))
    assert {n: filter_status(result, n) for n in nodes} == want
    if selected is not None:
        assert result.selected_node == selected
    if all(w is not None for w in want.values()):
        assert not result.scheduled


def test_not_in_result_message() -> None:
    """FitError counts nodes outside the PreFilterResult under the "didn't satisfy" reason."""
    spec = {"affinity": required({"matchFields": [name_in("node1")], "matchExpressions": [expr("foo", "In", "x")]})}
    result = schedule([node("node1"), node("node2"), node("node3")], pod(**spec))
    assert result.message.startswith(
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )


def test_conflicting_match_fields_fail_pre_filter() -> None:
    """node_affinity_test.go "Pod with two conflicting mach field requirements"."""
    spec = {"affinity": required({"matchFields": [name_in("node1"), name_in("node2")]})}
    result = schedule([node("node1"), node("node2", labels={"foo": "bar"})], pod(**spec))
    status = result.pre_filter_status
    assert status is not None
    assert (status.plugin, status.code, status.reasons) == (NA, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_CONFLICT,))
    assert filter_status(result, "node2") == (NA, UU, [ERR_CONFLICT])
    assert not result.scheduled
    assert result.message.startswith("0/2 nodes are available: pod affinity terms conflict.")


# --- addedAffinity (NodeAffinityArgs) --------------------------------------------------------------------

ADDED_NODE2 = {
    "addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchFields": [name_in("node2")]}]}
    }
}
ADDED_ZONE_BAR = {
    "addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [expr("zone", "In", "bar")]}]
        }
    }
}

ADDED_FILTER = [
    (
        "Matches added affinity and Pod's node affinity",
        {"affinity": required({"matchExpressions": [expr("zone", "In", "foo")]})},
        ADDED_NODE2,
        None,
    ),
    (
        "Matches added affinity but not Pod's node affinity",
        {"affinity": required({"matchExpressions": [expr("zone", "In", "bar")]})},
        ADDED_NODE2,
        FAIL_POD,
    ),
    ("Doesn't match added affinity", {}, ADDED_ZONE_BAR, (NA, UU, [ERR_ENFORCED])),
    (
        "(source) added affinity is checked first",
        {"nodeSelector": {"missing": "label"}},
        ADDED_ZONE_BAR,
        (NA, UU, [ERR_ENFORCED]),
    ),
]


@pytest.mark.parametrize(("spec", "args", "want"), [pytest.param(*row[1:], id=row[0]) for row in ADDED_FILTER])
def test_added_affinity_filter(spec: dict[str, Any], args: dict[str, Any], want: object) -> None:
    result = run([node("node2", labels={"zone": "foo"})], pod(**spec), args)
    assert filter_status(result, "node2") == want
    # With addedAffinity the PreFilter never skips, even for a pod without node affinity.
    assert not skipped(result, NA)


def test_added_affinity_that_does_not_parse_is_a_config_error() -> None:
    """ValidateNodeAffinityArgs: NewNodeSelector errors on a term that does not parse."""
    bad = {
        "addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expr("zone", "Gt", "high")]}]
            }
        }
    }
    with pytest.raises(InputError):
        new_framework(Profile(plugin_args={NA: bad}))


# --- Score: node_affinity_test.go TestNodeAffinityPriority ----------------------------------------------

LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}
AFFINITY1 = preferred((2, [expr("foo", "In", "bar")]))
AFFINITY2 = preferred(
    (2, [expr("foo", "In", "bar")]),
    (4, [expr("key", "In", "value")]),
    (5, [expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1")]),
)

# (id, pod preferred terms, [(node, labels)], NodeAffinity args, expected normalized scores)
SCORE = [
    (
        "no node matches preferred scheduling requirements",
        AFFINITY1,
        [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)],
        None,
        {"node1": 0, "node2": 0, "node3": 0},
    ),
    (
        "only node1 matches the preferred scheduling requirements of pod",
        AFFINITY1,
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
        None,
        {"node1": 100, "node2": 0, "node3": 0},
    ),
    (
        "all nodes match with different priorities (2, 11, 4 -> 18, 100, 36)",
        AFFINITY2,
        [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
        None,
        {"node1": 18, "node5": 100, "node2": 36},
    ),
    (
        "added affinity",
        None,
        [("node1", LABEL1), ("node2", LABEL2)],
        {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": AFFINITY1}},
        {"node1": 100, "node2": 0},
    ),
    (
        "added affinity and pod has default affinity",
        AFFINITY1,
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)],
        {
            "addedAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": preferred((3, [expr("key", "In", "value")]))
            }
        },
        {"node1": 40, "node2": 60, "node3": 100},
    ),
    (
        "(source) a preferred term with matchFields",
        [{"weight": 10, "preference": {"matchFields": [name_in("node2")]}}],
        [("node1", {}), ("node2", {})],
        None,
        {"node1": 0, "node2": 100},
    ),
    (
        "(source) an empty preferred term matches nothing",
        [{"weight": 10, "preference": {}}, *AFFINITY1],
        [("node1", LABEL1), ("node2", {})],
        None,
        {"node1": 100, "node2": 0},
    ),
]


@pytest.mark.parametrize(
    ("terms", "nodes", "args", "want"),
    [pytest.param(*row[1:], id=row[0]) for row in SCORE],
)
def test_score(
    terms: list[dict[str, Any]] | None,
    nodes: list[tuple[str, dict[str, str]]],
    args: dict[str, Any] | None,
    want: dict[str, int],
) -> None:
    spec = {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": terms}}} if terms else {}
    result = run([node(n, labels=labels) for n, labels in nodes], pod(**spec), args)
    assert scores(result, NA) == want
    assert NA not in result.skipped_score_plugins


def test_score_skipped_without_preferred_terms() -> None:
    """node_affinity_test.go "all nodes are same priority as NodeAffinity is nil": PreScore Skip."""
    result = schedule([node("node1", labels=LABEL1), node("node2", labels=LABEL2), node("node3")], pod())
    assert NA in result.skipped_score_plugins
    assert scores(result, NA) == {}


def test_preferred_term_that_does_not_parse_fails_the_cycle() -> None:
    """(source) getPodPreferredNodeAffinity -> NewPreferredSchedulingTerms error -> PreScore Error status."""
    terms = preferred((5, [expr("rank", "Gt", "high")]))
    spec = {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": terms}}}
    result = schedule([node("node1"), node("node2")], pod(**spec))
    assert not result.scheduled
    assert result.status.code == Code.ERROR
    assert result.message.startswith('running PreScore plugin "NodeAffinity": ')
