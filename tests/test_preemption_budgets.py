"""Preemption with PodDisruptionBudgets, nominated pods, candidate limits and its explanation.

Rows transcribed from upstream v1.34 pkg/scheduler/framework/plugins/defaultpreemption/
default_preemption_test.go `TestDryRunPreemption` (named by their upstream `name`), run through
full default-profile cycles; derived rows say so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from scheduler_core.__main__ import main
from scheduler_core.api.policy import PodDisruptionBudget
from scheduler_core.bench import run_preemption
from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.diagnosis import Diagnosis
from scheduler_core.framework.events import PREEMPTION_EVALUATED, Event
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.framework.profile import profile_from_config
from scheduler_core.framework.status import Code, Status
from scheduler_core.plugins.default_preemption.pdb import Budgets, split_by_pdb_violation
from scheduler_core.plugins.default_preemption.plugin import TIE
from scheduler_core.plugins.registry import new_framework
from scheduler_core.schedule_one import Scheduler, ScheduleResult
from tests.helpers import node, pod, table

MID, HIGH, VERY_HIGH = 100, 1000, 10000
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
VERY_LARGE_NODE = {**VERY_LARGE, "pods": "32"}  # st.MakeNode().Capacity(veryLargeRes)
FOO = {"app": "foo"}


def pdb(allowed: int, disrupted: tuple[str, ...] = (), selector: dict[str, Any] | None = None) -> PodDisruptionBudget:
    return PodDisruptionBudget.model_validate(
        {
            "metadata": {"name": "pdb", "namespace": "default"},
            "spec": {"selector": {"matchLabels": FOO} if selector is None else selector},
            "status": {
                "disruptionsAllowed": allowed,
                "disruptedPods": {name: "2025-01-01T00:00:00Z" for name in disrupted},
            },
        }
    )


def bound(name: str, on: str, priority: int, requests: dict[str, str], labels: dict[str, str] | None = None):
    return pod(name, labels=labels, requests=requests, node_name=on, priority=priority)


class FixedOffset:
    """A random source whose `randrange` returns a set offset (upstream's tests pin theirs with
    rand.Seed(4), which gives offset 4 for 5 nodes)."""

    def __init__(self, offset: int) -> None:
        self.offset = offset

    def randrange(self, n: int) -> int:
        return self.offset % n


def run(
    nodes: list[str],
    incoming: Any,
    pods: list[Any],
    pdbs: list[PodDisruptionBudget] = (),  # type: ignore[assignment]
    args: dict[str, int] | None = None,
    offset: int | None = None,
) -> tuple[ScheduleResult, dict[str, Any]]:
    profile = None
    if args is not None:
        profile = profile_from_config(
            {
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"pluginConfig": [{"name": "DefaultPreemption", "args": args}]}],
            }
        )
    scheduler = Scheduler(new_framework(profile), seed=0)
    if offset is not None:
        scheduler.framework.rng = FixedOffset(offset)  # type: ignore[assignment]
    events: list[Event] = []
    scheduler.subscribe(events.append)
    snapshot = table([node(n, labels={"hostname": n}, allocatable=VERY_LARGE_NODE) for n in nodes], pods)
    snapshot.pdbs = list(pdbs)
    result = scheduler.schedule_pod(snapshot, PodInfo.of(incoming))
    evaluated = [e.to_dict(snapshot.names) for e in events if e.type == PREEMPTION_EVALUATED]
    return result, evaluated[0] if evaluated else {}


def candidates_of(evaluated: dict[str, Any]) -> dict[str, tuple[set[str], int]]:
    return {
        c["node"]: ({v["pod"].split("/", 1)[1] for v in c["victims"]}, c["pdbViolations"])
        for c in evaluated["candidates"]
    }


# --- TestDryRunPreemption: PodDisruptionBudgets --------------------------------------------

PDB_ROWS = [
    pytest.param(
        [bound("p1.1", "node1", MID, MEDIUM, FOO), bound("p1.2", "node1", MID, MEDIUM, FOO)],
        [pdb(1)],
        {"node1": ({"p1.1", "p1.2"}, 1)},
        id="preemption with violation of same pdb",
    ),
    pytest.param(
        [bound("p1.1", "node1", MID, MEDIUM, FOO), bound("p1.2", "node1", MID, MEDIUM, FOO)],
        [pdb(1, ("p2",))],
        {"node1": ({"p1.1", "p1.2"}, 1)},
        id="preemption with violation of the pdb with pod whose eviction was processed, "
        "the victim doesn't belong to DisruptedPods",
    ),
    pytest.param(
        [bound("p1.1", "node1", MID, MEDIUM, FOO), bound("p1.2", "node1", MID, MEDIUM, FOO)],
        [pdb(1, ("p1.2",))],
        {"node1": ({"p1.1", "p1.2"}, 0)},
        id="preemption with violation of the pdb with pod whose eviction was processed, "
        "the victim belongs to DisruptedPods",
    ),
    pytest.param(
        [
            bound("p1.1", "node1", MID, MEDIUM, FOO),
            bound("p1.2", "node1", MID, MEDIUM, FOO),
            bound("p1.3", "node1", MID, MEDIUM, FOO),
        ],
        [pdb(1, ("p1.3",))],
        {"node1": ({"p1.1", "p1.2", "p1.3"}, 1)},
        id="preemption with violation of the pdb with pod whose eviction was processed, "
        "the victim which belongs to DisruptedPods is treated as 'nonViolating'",
    ),
]


@pytest.mark.parametrize(("pods", "pdbs", "expected"), PDB_ROWS)
def test_dry_run_with_pdbs(pods: list[Any], pdbs: list[PodDisruptionBudget], expected: dict[str, Any]) -> None:
    # Upstream's victims carry no startTime (time.Now() each call), so their order is not pinned: compare sets.
    result, evaluated = run(["node1"], pod("p", priority=HIGH, requests=VERY_LARGE), pods, pdbs)
    assert candidates_of(evaluated) == expected
    assert result.nominated_node == "node1"


def test_violating_victims_are_reprieved_first_and_reported_most_important_first() -> None:
    """Derived from SelectVictimsOnNode: 'guarded' (PDB, allowed 0) is reprieved before the more
    important 'plain', so 'plain' is the victim; the victims come back sorted by importance."""
    pods = [
        bound("guarded", "node1", 0, {"cpu": "250m"}, FOO),
        bound("plain", "node1", 50, {"cpu": "250m"}, {"app": "bar"}),
    ]
    result, evaluated = run(["node1"], pod("p", priority=MID, requests={"cpu": "250m"}), pods, [pdb(0)])
    assert [v.name for v in result.post_filter_result.detail["victims"]] == ["plain"]
    assert evaluated["candidates"][0]["pdbViolations"] == 0
    assert evaluated["candidates"][0]["reprieved"] == [{"pod": "default/guarded", "priority": 0, "pdbProtected": True}]
    two_victims = [*pods, bound("filler", "node1", 10, {"cpu": "250m"}, FOO)]
    result, evaluated = run(["node1"], pod("p", priority=MID, requests={"cpu": "250m"}), two_victims, [pdb(0)])
    # filler (10) and guarded (0) both violate (allowed 0); filler, the more important violating pod,
    # is reprieved first and fits, so guarded and then the non-violating plain (50) are the victims.
    victims = evaluated["candidates"][0]["victims"]
    assert [v["pod"] for v in victims] == ["default/plain", "default/guarded"]
    assert [v["pdbViolating"] for v in victims] == [False, True]


def test_pdb_matching_rules() -> None:
    """filterPodsWithPDBViolation: other namespaces, unlabeled pods, nil and empty selectors never match;
    every matching budget is decremented; disruptedPods are not counted."""
    labeled = PodInfo.of(pod("a", labels=FOO))
    unlabeled = PodInfo.of(pod("b"))
    other_ns = PodInfo.of(pod("c", namespace="other", labels=FOO))
    nil_selector = PodDisruptionBudget.model_validate({"metadata": {"name": "n", "namespace": "default"}})
    cases = [
        ([pdb(0)], [labeled, unlabeled, other_ns], ["a"]),
        ([nil_selector], [labeled], []),
        ([pdb(0, selector={})], [labeled], []),
        ([pdb(0, selector={"matchExpressions": [{"key": "app", "operator": "In", "values": []}]})], [labeled], []),
        ([pdb(1), pdb(0)], [labeled], ["a"]),
        ([pdb(0, ("a",))], [labeled], []),
    ]
    for budgets, pods, violating in cases:
        bad, good = split_by_pdb_violation(pods, Budgets.of(budgets))
        assert [p.name for p in bad] == violating
        assert len(bad) + len(good) == len(pods)


def test_fewest_pdb_violations_is_the_first_criterion() -> None:
    """pickOneNodeForPreemption: node1's only victim is the least important but violates a budget."""
    pods = [bound("p1", "node1", 0, LARGE, FOO), bound("p2", "node2", MID, LARGE)]
    result, evaluated = run(["node1", "node2"], pod("p", priority=HIGH, requests=LARGE), pods, [pdb(0)])
    assert result.nominated_node == "node2"
    by_node = {c["node"]: c for c in evaluated["candidates"]}
    assert by_node["node1"]["eliminatedBy"] == "fewest PDB violations"
    assert by_node["node2"]["chosen"] and by_node["node2"]["eliminatedBy"] is None


# --- TestDryRunPreemption: DefaultPreemptionArgs and the offset -------------------------------

LARGE_ROW = [bound(f"p{k}", f"node{k}", MID, LARGE) for k in range(1, 6)]
FIVE = [f"node{k}" for k in range(1, 6)]


def test_all_nodes_are_possible_candidates_but_args_limit_to_2() -> None:
    """'all nodes are possible candidates, but DefaultPreemptionArgs limits to 2': offset 4 → node5, node1."""
    args = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1}
    _, evaluated = run(FIVE, pod("p", priority=HIGH, requests=LARGE), LARGE_ROW, args=args, offset=4)
    assert set(candidates_of(evaluated)) == {"node5", "node1"}
    assert sorted(evaluated["notEvaluated"]) == ["node2", "node3", "node4"]
    assert evaluated["numCandidates"] == 2


def test_some_nodes_are_not_possible_candidates() -> None:
    """'some nodes are not possible candidates, DefaultPreemptionArgs limits to 2'."""
    pods = [bound(f"p{k}", f"node{k}", VERY_HIGH if k in (2, 5) else MID, LARGE) for k in range(1, 6)]
    args = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1}
    _, evaluated = run(FIVE, pod("p", priority=HIGH, requests=LARGE), pods, args=args, offset=4)
    assert set(candidates_of(evaluated)) == {"node1", "node3"}


def test_looks_past_num_candidates_until_a_non_violating_node_is_found() -> None:
    """'preemption looks past numCandidates until a non-PDB violating node is found'."""
    pods = [bound(f"p{k}", f"node{k}", MID, LARGE, FOO if k in (1, 2, 5) else None) for k in range(1, 6)]
    args = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2}
    result, evaluated = run(FIVE, pod("p", priority=HIGH, requests=LARGE), pods, [pdb(0)], args=args, offset=4)
    assert candidates_of(evaluated) == {"node1": ({"p1"}, 1), "node3": ({"p3"}, 0), "node5": ({"p5"}, 1)}
    # candidateList holds numCandidates (2) violating ones: node2's is dropped, node4 never tried.
    assert evaluated["dropped"] == ["node2"] and evaluated["notEvaluated"] == ["node4"]
    assert result.nominated_node == "node3"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"minCandidateNodesPercentage": 101}, "not in valid range [0, 100]"),
        ({"minCandidateNodesAbsolute": -1}, "not in valid range [0, inf)"),
        ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}, "cannot be zero"),
    ],
)
def test_preemption_args_are_validated(args: dict[str, int], message: str) -> None:
    from scheduler_core.api.loading import InputError

    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        profile_from_config(
            {
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"pluginConfig": [{"name": "DefaultPreemption", "args": args}]}],
            }
        )


# --- nominated pods in the dry run ----------------------------------------------------------


def nominated_pod(name: str, priority: int, requests: dict[str, str], node_name: str) -> Any:
    p = pod(name, requests=requests, priority=priority)
    p.status.nominated_node_name = node_name
    return p


def test_equal_priority_nominated_pod_takes_its_room_in_the_dry_run() -> None:
    """RunFilterPluginsWithNominatedPods in SelectVictimsOnNode: with the nominated 300m counted,
    both running pods must go; without it one would do."""
    pods = [
        bound("a", "node1", 0, {"cpu": "100m"}),
        bound("b", "node1", 0, {"cpu": "100m"}),
        nominated_pod("n", HIGH, {"cpu": "300m"}, "node1"),
    ]
    result, _ = run(["node1"], pod("p", priority=HIGH, requests={"cpu": "200m"}), pods)
    assert result.nominated_node == "node1"
    assert {v.name for v in result.post_filter_result.detail["victims"]} == {"a", "b"}


def test_lower_priority_nominated_pod_is_ignored() -> None:
    pods = [
        bound("a", "node1", 0, {"cpu": "100m"}),
        bound("b", "node1", 0, {"cpu": "100m"}),
        nominated_pod("n", MID, {"cpu": "300m"}, "node1"),
    ]
    result, _ = run(["node1"], pod("p", priority=HIGH, requests={"cpu": "400m"}), pods)
    assert [v.name for v in result.post_filter_result.detail["victims"]] == ["b"]  # 'a' is reprieved


def test_nominated_pod_that_fills_the_node_makes_it_no_candidate() -> None:
    pods = [bound("a", "node1", 0, {"cpu": "100m"}), nominated_pod("n", HIGH, {"cpu": "400m"}, "node1")]
    result, evaluated = run(["node1"], pod("p", priority=HIGH, requests={"cpu": "200m"}), pods)
    assert result.nominated_node == ""
    assert evaluated["candidates"] == []
    assert evaluated["statuses"]["node1"]["reasons"] == ["Insufficient cpu"]
    assert result.message.endswith("preemption: 0/1 nodes are available: 1 Insufficient cpu.")


# --- a candidate without victims, cross-node plugins, the table left unchanged ---------------


def test_a_candidate_without_victims_is_dropped_not_an_index_error() -> None:
    """DryRunPreemption: SelectVictimsOnNode succeeding with no victims is an error for that node.
    Fed a NodeToStatus that says Unschedulable where the pod fits (as upstream's tests feed one)."""
    framework = new_framework()
    snapshot = table([node("node1", allocatable=VERY_LARGE_NODE)], [bound("low", "node1", 0, {"cpu": "100m"})])
    incoming = PodInfo.of(pod("p", priority=HIGH, requests={"cpu": "100m"}))
    state = CycleState()
    framework.run_pre_filter_plugins(state, incoming, snapshot, quiet=True)
    diagnosis = Diagnosis(num_nodes=1, node_statuses={0: Status(Code.UNSCHEDULABLE, ("Insufficient cpu",))})
    plugin = framework.plugin("DefaultPreemption")
    outcome, status = plugin.post_filter(state, incoming, snapshot, diagnosis)
    assert outcome is None
    assert status.code == Code.ERROR
    assert status.message() == 'preemption: expected at least one victim pod on node "node1"'


def test_inter_pod_anti_affinity_victim_is_removed_through_remove_pod() -> None:
    """Derived: the incoming pod's required anti-affinity is violated only by a lower-priority pod;
    InterPodAffinity's RemovePod lets the dry run see the node freed (PreFilter is not re-run)."""
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "hostname"}
            ]
        }
    }
    pods = [bound("x", "node1", 0, {"cpu": "10m"}, {"app": "x"}), bound("y", "node1", 0, {"cpu": "10m"})]
    result, _ = run(["node1"], pod("p", priority=HIGH, requests={"cpu": "10m"}, affinity=anti), pods)
    assert result.nominated_node == "node1"
    assert [v.name for v in result.post_filter_result.detail["victims"]] == ["x"]


def test_dry_run_leaves_the_table_as_it_was() -> None:
    pods = [bound(f"p{k}", f"node{k % 3}", k % 2, {"cpu": "150m"}, FOO) for k in range(9)]
    snapshot = table([node(f"node{k}", allocatable=VERY_LARGE_NODE) for k in range(3)], pods)
    snapshot.pdbs = [pdb(1)]
    before = (
        snapshot.pod_count.copy(),
        {r: c.copy() for r, c in snapshot.requested.items()},
        [[p.name for p in on] for on in snapshot.pods],
        {k: g.counts.copy() for k, g in snapshot.groups.items()},
    )
    result = Scheduler(new_framework(), seed=0).schedule_pod(
        snapshot, PodInfo.of(pod("p", priority=HIGH, requests={"cpu": "300m"}))
    )
    assert result.nominated_node
    assert np.array_equal(snapshot.pod_count, before[0])
    assert all(np.array_equal(snapshot.requested[r], c) for r, c in before[1].items())
    assert [[p.name for p in on] for on in snapshot.pods] == before[2]
    assert all(np.array_equal(snapshot.groups[k].counts, c) for k, c in before[3].items())


# --- the explanation -------------------------------------------------------------------------


def test_explain_names_every_candidate_with_its_victims(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = [
        node("n1", allocatable=VERY_LARGE_NODE).to_dict(),
        node("n2", allocatable=VERY_LARGE_NODE).to_dict(),
        node("n3", allocatable=VERY_LARGE_NODE, taints=[{"key": "k", "effect": "NoSchedule"}]).to_dict(),
        bound("a", "n1", 0, LARGE, FOO).to_dict(),
        bound("b", "n2", 0, LARGE).to_dict(),
        bound("c", "n2", 0, {"cpu": "10m"}).to_dict(),
        pdb(0).to_dict(),
    ]
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(pod("p", priority=HIGH, requests=LARGE).to_dict()))
    argv = ["explain", "--cluster", str(tmp_path / "cluster.yaml"), "--pod", str(tmp_path / "pod.yaml")]
    assert main([*argv, "-o", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["nominatedNode"] == "n2"
    preemption = data["preemption"]
    assert sorted(preemption["candidates"], key=lambda c: c["node"]) == [
        {
            "node": "n1",
            "victims": [{"pod": "default/a", "priority": 0, "pdbViolating": True}],
            "reprieved": [],
            "pdbViolations": 1,
            "chosen": False,
            "eliminatedBy": "fewest PDB violations",
        },
        {
            "node": "n2",
            "victims": [{"pod": "default/b", "priority": 0, "pdbViolating": False}],
            "reprieved": [{"pod": "default/c", "priority": 0, "pdbProtected": False}],
            "pdbViolations": 0,
            "chosen": True,
            "eliminatedBy": None,
        },
    ]
    assert [c["node"] for c in preemption["candidates"]] == ["n2", "n1"]  # non-violating ones first
    assert preemption["notHelpful"] == ["n3"]
    assert main([*argv, "-o", "text"]) == 0
    text = capsys.readouterr().out
    assert "n2: CHOSEN; victims: default/b (priority 0)" in text
    assert (
        "n1: not chosen: fewest PDB violations; victims: default/a (priority 0, violates a PodDisruptionBudget)" in text
    )
    assert "not tried (preemption cannot help): n3" in text
    assert "    reprieved (the pod fits with them): default/c" in text


def test_tie_after_every_criterion_is_named() -> None:
    pods = [bound("p1", "node1", MID, LARGE), bound("p2", "node2", MID, LARGE)]
    _, evaluated = run(["node1", "node2"], pod("p", priority=HIGH, requests=LARGE), pods)
    assert sorted(c["eliminatedBy"] or "" for c in evaluated["candidates"]) == ["", TIE]


def test_preemption_bench_reports_its_figures() -> None:
    report = run_preemption(30, repeats=1)
    assert report["victims"] == 3 and report["nominatedNode"].startswith("node-")
    assert report["cycleMs"] >= report["postFilterMs"] > 0


# --- nominated pods in Filter: AddPod on a clone of the cycle state ----------------------------


def _anti(app: str) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "hostname"}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def test_nominated_pod_counts_for_the_incoming_pods_anti_affinity() -> None:
    """addGENominatedPods → InterPodAffinity.AddPod: the nominated app=x pod makes node1 violate the
    incoming pod's anti-affinity, so node1 fails and node2 is chosen."""
    pods = [nominated_pod("n", HIGH, {"cpu": "10m"}, "node1")]
    pods[0].metadata.labels = {"app": "x"}
    result, _ = run(["node1", "node2"], pod("p", priority=HIGH, affinity=_anti("x")), pods)
    assert result.selected_node == "node2"
    status = result.diagnosis.status_of(result.table.index["node1"])
    assert (status.plugin, status.reasons) == ("InterPodAffinity", ("node(s) didn't match pod anti-affinity rules",))


def test_plugins_skipped_at_pre_filter_stay_skipped_with_nominated_pods() -> None:
    """RunFilterPluginsWithNominatedPods reuses the cycle state: InterPodAffinity skipped at PreFilter
    (no pod with anti-affinity is bound) does not see a nominated pod's anti-affinity."""
    pods = [nominated_pod("n", HIGH, {"cpu": "10m"}, "node1")]
    pods[0].spec.affinity = pod("tmp", affinity=_anti("y")).spec.affinity
    scheduler = Scheduler(new_framework(), seed=0)
    snapshot = table([node(n, labels={"hostname": n}) for n in ("node1", "node2")], pods)
    snapshot.nominated = {0: [PodInfo.of(pods[0])]}
    result = scheduler.schedule_pod(snapshot, PodInfo.of(pod("p", labels={"app": "y"}, priority=HIGH)))
    assert result.diagnosis.status_of(0) is None and result.diagnosis.status_of(1) is None


# --- the lockstep dry run equals a per-node dry run that re-runs PreFilter -----------------------


def _reference_select(framework: Any, incoming: PodInfo, snapshot: Any, i: int) -> tuple[list[str], Code]:
    """SelectVictimsOnNode the slow way: node i alone, PreFilter re-run on the changed table for
    every check (no PDBs, no nominated pods). Returns (victims, code of the failure or Success)."""

    def fits() -> Status:
        state = CycleState()
        status = framework.run_pre_filter_plugins(state, incoming, snapshot, quiet=True)[1]
        if not status.is_success():
            return status
        first_fail, verdicts = framework.filter_columns(state, incoming, snapshot)
        return framework.status_at(first_fail, verdicts, i)

    potential = [p for p in snapshot.pods[i] if p.priority < incoming.priority]
    if not potential:
        return [], Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    for victim in potential:
        snapshot.remove_pod(victim, i)
    victims: list[str] = []
    try:
        status = fits()
        if not status.is_success():
            return [], status.code
        from scheduler_core.plugins.default_preemption.dry_run import more_important_first

        for candidate in more_important_first(potential):
            snapshot.add_pod(candidate, i)
            if not fits().is_success():
                snapshot.remove_pod(candidate, i)
                victims.append(candidate.name)
    finally:
        present = {id(p) for p in snapshot.pods[i]}
        for victim in potential:
            if id(victim) not in present:
                snapshot.add_pod(victim, i)
    return sorted(victims), Code.SUCCESS


def _random_case(rng: Any) -> tuple[list[Any], list[Any], Any]:
    zones = ["z1", "z2", "z3"]
    nodes = [
        node(f"n{k}", labels={"hostname": f"n{k}", "zone": zones[k % 3]}, allocatable={"cpu": "1", "pods": "10"})
        for k in range(6)
    ]
    pods = []
    for k in range(14):
        spec: dict[str, Any] = {}
        if rng.random() < 0.2:
            spec["affinity"] = _anti(rng.choice(["a", "b"]))
        pods.append(
            pod(
                f"p{k}",
                labels={"app": rng.choice(["a", "b"])},
                requests={"cpu": rng.choice(["100m", "200m", "300m"])},
                node_name=f"n{rng.randrange(6)}",
                priority=rng.choice([0, 50, 200]),
                **spec,
            )
        )
    kind = rng.choice(["spread", "anti", "affinity", "mixed"])
    spec = {}
    if kind in ("spread", "mixed"):
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": rng.choice([1, 2]),
                "topologyKey": rng.choice(["zone", "hostname"]),
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "a"}},
            }
        ]
    if kind in ("anti", "mixed"):
        spec["affinity"] = _anti("b")
    if kind == "affinity":
        term = {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "zone"}
        spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    incoming = pod("in", labels={"app": "a"}, requests={"cpu": rng.choice(["300m", "600m"])}, priority=100, **spec)
    return nodes, pods, incoming


@pytest.mark.parametrize("seed", range(40))
def test_lockstep_dry_run_matches_the_per_node_reference(seed: int) -> None:
    import random

    from scheduler_core.plugins.default_preemption.dry_run import select_victims

    nodes, pods, incoming_pod = _random_case(random.Random(seed))
    snapshot = table(nodes, pods)
    framework = new_framework()
    incoming = PodInfo.of(incoming_pod)
    state = CycleState()
    _, status, _ = framework.run_pre_filter_plugins(state, incoming, snapshot, quiet=True)
    if not status.is_success():
        pytest.skip("PreFilter rejected the pod")
    first_fail, _ = framework.filter_columns(state, incoming, snapshot)
    potential = [i for i in range(snapshot.n) if first_fail[i] >= 0]
    found, statuses = select_victims(framework, state, incoming, snapshot, potential, Budgets.of([]))
    for i in potential:
        victims, code = _reference_select(framework, incoming, snapshot, i)
        if i in found:
            assert (sorted(v.name for v in found[i].victims), Code.SUCCESS) == (victims, code), i
        else:
            assert statuses[i].code == code and victims == [], i


def test_nominated_pod_in_the_smallest_domain_raises_that_nodes_minimum() -> None:
    """Derived from PodTopologySpread AddPod (updateWithPod + criticalPaths.update): zones z1=1, z2=2
    matching pods; a nominated app=a pod on n0 (z1) makes z1=2, so n0's copy of the state has
    minimum 2 and skew 2+1-2 = 1 passes (the minimum before the AddPod, 1, would give 2)."""
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": "zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "a"}},
        }
    ]
    nodes = [node("n0", labels={"zone": "z1"}), node("n1", labels={"zone": "z2"})]
    pods = [
        pod("e0", labels={"app": "a"}, node_name="n0"),
        pod("e1", labels={"app": "a"}, node_name="n1"),
        pod("e2", labels={"app": "a"}, node_name="n1"),
        nominated_pod("n", HIGH, {"cpu": "10m"}, "n0"),
    ]
    pods[-1].metadata.labels = {"app": "a"}
    result = Scheduler(new_framework(), seed=0).schedule_pod(
        table(nodes, pods), PodInfo.of(pod("p", labels={"app": "a"}, priority=HIGH, topologySpreadConstraints=spread))
    )
    assert result.selected_node == "n0"
    assert result.diagnosis.status_of(1).plugin == "PodTopologySpread"
