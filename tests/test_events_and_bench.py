"""The event stream of a cycle, the nominated-pod rule, and the bench command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scheduler_core.__main__ import main
from scheduler_core.framework.events import EVENT_TYPES, Event
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.plugins.registry import new_framework
from scheduler_core.schedule_one import Scheduler
from tests.helpers import filter_status, node, pod, schedule, table


def _cycle_events(nodes, incoming, pods=()):  # type: ignore[no-untyped-def]
    scheduler = Scheduler(new_framework(), seed=1)
    events: list[Event] = []
    scheduler.subscribe(events.append)
    t = table(nodes, list(pods))
    result = scheduler.schedule_pod(t, PodInfo.of(incoming))
    return result, [e.to_dict(t.names) for e in events]


def test_events_are_ordered_typed_and_json() -> None:
    nodes = [node("n1"), node("n2", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]), node("n3")]
    result, events = _cycle_events(nodes, pod(requests={"cpu": "1"}))
    json.dumps(events)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert {e["cycle"] for e in events} == {1}
    assert all(e["type"] in EVENT_TYPES for e in events)
    assert events[0]["type"] == "cycle.started" and events[-1]["type"] == "cycle.finished"
    phases = [e["point"] for e in events if e["type"] == "phase.started"]
    assert phases == ["PreFilter", "Filter", "PreScore", "Score", "NormalizeScore"]
    taint = next(e for e in events if e.get("plugin") == "TaintToleration" and e.get("point") == "Filter")
    assert taint["verdicts"]["n2"] == {
        "code": "UnschedulableAndUnresolvable",
        "reasons": ["node(s) had untolerated taint {k: v}"],
    }
    assert taint["verdicts"]["n1"] == {"code": "Success", "reasons": []}
    normalized = [e for e in events if e["type"] == "scores.normalized"]
    assert {e["plugin"] for e in normalized} >= {"TaintToleration", "NodeResourcesFit"}
    fit = next(e for e in normalized if e["plugin"] == "NodeResourcesFit")
    assert set(fit["normalized"]) == {"n1", "n3"}
    assert fit["weighted"] == {k: v * fit["weight"] for k, v in fit["normalized"].items()}
    selected = next(e for e in events if e["type"] == "host.selected")
    assert selected["node"] == result.selected_node
    assert sorted(selected["tiedTop"]) == ["n1", "n3"]
    assert events[-1]["message"] == f"Successfully assigned default/p to {result.selected_node}"


def test_filter_events_carry_the_detail_a_fix_needs_and_the_recorded_plugin() -> None:
    """What the browser folds Why Pending from: no scheduling rule is left for it to re-derive."""
    nodes = [
        node("n1", labels={"disk": "ssd"}, taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
        node("n2", allocatable={"cpu": "2", "memory": "4Gi", "pods": "10"}),
        node("n3", labels={"disk": "ssd"}, allocatable={"cpu": "1", "memory": "4Gi", "pods": "10"}),
    ]
    sidecar = pod(
        "busy",
        requests={"cpu": "500m"},
        node_name="n3",
        initContainers=[
            {"name": "side", "image": "x", "restartPolicy": "Always", "resources": {"requests": {"cpu": "250m"}}}
        ],
    )
    _, events = _cycle_events(nodes, pod(requests={"cpu": "1"}, nodeSelector={"disk": "ssd", "zone": "a"}), [sidecar])
    by_plugin = {e["plugin"]: e for e in events if e["type"] == "plugin.evaluated" and e["point"] == "Filter"}
    assert by_plugin["TaintToleration"]["detail"] == {
        "taints": {"node(s) had untolerated taint {k: v}": {"key": "k", "value": "v", "effect": "NoSchedule"}}
    }
    assert by_plugin["NodeAffinity"]["detail"] == {
        "missingLabels": [
            {"key": "disk", "value": "ssd", "nodes": ["n2"]},
            {"key": "zone", "value": "a", "nodes": ["n1", "n2", "n3"]},
        ]
    }
    # The sidecar counts: 500m + 250m used on n3 (the core's PodInfo.requests, not a re-derivation).
    assert by_plugin["NodeResourcesFit"]["detail"] == {
        "cpu": {
            "request": 1000,
            "used": {"n1": 0, "n2": 0, "n3": 750},
            "allocatable": {"n1": 32000, "n2": 2000, "n3": 1000},
        }
    }
    assert "detail" not in by_plugin["NodeUnschedulable"]
    finished = next(e for e in events if e["type"] == "filter.finished")
    assert finished["rejectedBy"] == {"n1": "TaintToleration", "n2": "NodeAffinity", "n3": "NodeAffinity"}
    assert finished["feasible"] == 0
    assert [e["type"] for e in events].index("filter.finished") > max(events.index(e) for e in by_plugin.values())


def test_failed_cycle_reports_postfilter_and_message() -> None:
    _, events = _cycle_events(
        [node("n1", allocatable={"cpu": "1", "memory": "1Gi", "pods": "10"})], pod(requests={"cpu": "2"})
    )
    types = [e["type"] for e in events]
    assert "preemption.evaluated" in types
    finished = events[-1]
    assert finished["scheduled"] is False
    assert finished["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_nominated_pod_of_higher_priority_holds_its_node() -> None:
    small = {"cpu": "1", "memory": "4Gi", "pods": "10"}
    nominated = pod("high", requests={"cpu": "800m"}, priority=100)
    nominated.status.nominated_node_name = "n1"
    incoming = pod("low", requests={"cpu": "500m"}, priority=0)
    result = schedule([node("n1", allocatable=small), node("n2", allocatable=small)], incoming, [nominated])
    assert filter_status(result, "n1") == ("NodeResourcesFit", "Unschedulable", ["Insufficient cpu"])
    assert result.selected_node == "n2"
    # A pod of higher priority than the nominated one ignores the nomination.
    urgent = pod("urgent", requests={"cpu": "500m"}, priority=1000)
    result = schedule([node("n1", allocatable=small)], urgent, [nominated])
    assert result.selected_node == "n1"


def test_bench_reports_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workload = tmp_path / "w.yaml"
    workload.write_text(
        """
name: Tiny
reference: {upstreamThresholdPodsPerSecond: 1}
ops:
- opcode: createNodes
  count: 20
  nodeTemplate:
    metadata: {generateName: n-}
    status: {allocatable: {cpu: "1", memory: 1Gi, pods: "110"}}
  labelNodes: {key: zone, values: [a, b]}
- opcode: createPods
  count: 30
  namespace: ns
  podTemplate:
    metadata: {generateName: p-}
    spec: {containers: [{name: c, image: pause, resources: {requests: {cpu: 600m}}}]}
  collectMetrics: true
"""
    )
    assert main(["bench", "--workload", str(workload), "-o", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["nodes"] == 20
    assert report["measuredPods"] == 30
    assert report["scheduled"] == 20 and report["unschedulable"] == 10
    assert report["podsPerSecond"] > 0 and report["seconds"] > 0
    assert report["events"] > 30 * 10
