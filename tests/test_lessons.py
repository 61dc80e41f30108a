"""Every lesson plays to the end state its `expect` block describes (clusterviz/lessons/*.yaml).

Each lesson runs in a fresh cluster: load_lesson, reconcile, then play_step + reconcile per step
(checking the step's own `expect`, and letting the step's `wait` seconds pass on a fake clock for the
NoExecute taint manager), then `check_expectations` must report nothing. Expected scheduling
messages are upstream v1.34's exact text: FitError.Error() plus the PostFilter reasons of
DynamicResources ("no new claims to deallocate") and DefaultPreemption ("preemption: ...").
"""

from __future__ import annotations

import math
import re
import time
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from clusterviz import lessons, services, store
from clusterviz.controllers import kubelet, taint_manager
from clusterviz.controllers.runner import reconcile, step_once
from clusterviz.lessons import (
    all_lessons,
    check,
    check_expectations,
    get_lesson,
    load_lesson,
    play_step,
)
from clusterviz.models import Cluster, SchedulingCycle
from scheduler_core.api.loading import InputError

REQUIRED = (
    "demo",
    "nodename",
    "nodeselector",
    "node-affinity-required",
    "node-affinity-preferred",
    "node-affinity-operators",
    "pod-affinity",
    "pod-anti-affinity",
    "taints-noschedule",
    "taints-prefernoschedule",
    "taints-noexecute",
    "insufficient-resources",
    "host-port-conflict",
    "topology-spread",
    "preemption",
)


class FakeClock:
    """The clock of the taint manager, the kubelet and the store's timestamps: real time plus the
    seconds "waited"."""

    def __init__(self) -> None:
        self.offset = 0.0

    def time(self) -> float:
        return time.time() + self.offset

    def rfc3339(self) -> str:
        return datetime.fromtimestamp(self.time(), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(taint_manager, "time", SimpleNamespace(time=fake.time))
    monkeypatch.setattr(kubelet, "time", SimpleNamespace(time=fake.time))
    monkeypatch.setattr(store, "now_rfc3339", fake.rfc3339)
    return fake


def start(name: str) -> Cluster:
    cluster = services.create_cluster(f"lesson-{name}")
    load_lesson(cluster, name)
    reconcile(cluster)
    return cluster


def watch(cluster: Cluster, clock: FakeClock, seconds: float) -> None:
    """Let `seconds` pass second by second, the control loops acting as each deadline falls due (as
    the class watching `kubectl get pods -w` sees it)."""
    for _ in range(math.ceil(seconds)):
        clock.offset += 1
        reconcile(cluster)


def play(name: str, clock: FakeClock, steps: int | None = None) -> tuple[Cluster, list[tuple[int, list[str]]]]:
    """Run a lesson (or its first `steps` steps); returns the cluster and the failed step expectations."""
    cluster = start(name)
    failures: list[tuple[int, list[str]]] = []
    plan = list(zip(lessons.step_expectations(name), lessons.step_waits(name), strict=True))
    for index, (expect, wait) in enumerate(plan[:steps], start=1):
        assert play_step(cluster) is not None
        reconcile(cluster)
        watch(cluster, clock, wait)
        problems = check(cluster, expect)
        if problems:
            failures.append((index, problems))
    if steps is None:
        assert play_step(cluster) is None
    cluster.refresh_from_db()
    return cluster, failures


# --- the library itself -------------------------------------------------------------------------------


def test_every_required_lesson_exists() -> None:
    assert set(REQUIRED) <= set(all_lessons())


def _command_for(action: dict[str, Any]) -> str:
    """The kubectl command line (a regex) that an action stands for."""
    kind = action["action"]
    if kind == "create":
        return r"kubectl (apply|create) -f \S+\.yaml"
    if kind == "delete":
        return rf"kubectl delete {action['kind'].lower()} {action['name']}"
    if kind == "label":
        value = "-" if action.get("value") is None else f"={action['value']}"
        overwrite = "( --overwrite)?" if action.get("overwrite", True) else ""
        return rf"kubectl label nodes {action['node']} {action['key']}{value}{overwrite}"
    if kind == "taint":
        value = f"={action['value']}" if action.get("value") else ""
        effect = action.get("effect", "NoSchedule")
        if action.get("remove"):
            return rf"kubectl taint node {action['node']} {action['key']}:{effect}-"
        return rf"kubectl taint node {action['node']} {action['key']}{value}:{effect}"
    if kind in ("cordon", "uncordon"):
        return rf"kubectl {kind} {action['node']}"
    if kind == "scale":
        return rf"kubectl scale deployment {action['name']} --replicas={action['replicas']}"
    raise AssertionError(f"unexpected action {kind}")


@pytest.mark.parametrize("name", sorted(all_lessons()))
def test_steps_say_something_and_run_the_command_they_show(name: str) -> None:
    """Each step narrates, and its `do` is exactly what its kubectl command does."""
    lesson = all_lessons()[name]
    assert lesson.title and lesson.summary and lesson.expect
    waits = lessons.step_waits(name)
    for step, wait in zip(lesson.steps, waits, strict=True):
        assert step.say.strip(), step
        if step.action is None:
            # a step without an action only lets time pass, while the class watches
            assert wait > 0 and re.fullmatch(r"kubectl (get|describe) .+", step.command), step
        else:
            assert re.fullmatch(_command_for(step.action), step.command), (step.command, step.action)


def test_seed_names_are_used() -> None:
    """The lessons speak the seed notes' language: node01/node02, qqq, kgc, myapp, soscscs/myapp:v1."""
    text = "".join(path.read_text() for path in lessons.LESSONS_DIR.glob("*.yaml"))
    for word in ("node01", "node02", "qqq=1", "kgc=a", "myapp", "soscscs/myapp:v1", "qqq=value1:NoSchedule"):
        assert word in text, word


def test_step_tables_follow_the_steps() -> None:
    for name, lesson in all_lessons().items():
        assert len(lessons.step_expectations(name)) == len(lesson.steps)
        assert len(lessons.step_waits(name)) == len(lesson.steps)
    assert lessons.step_waits("taints-noexecute")[1] == 65
    with pytest.raises(InputError, match='lesson "nope" not found'):
        lessons.step_expectations("nope")
    with pytest.raises(InputError, match='lesson "nope" not found'):
        get_lesson("nope")


# --- every lesson, played ------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(all_lessons()))
def test_lesson_reaches_its_end_state(name: str, clock: FakeClock) -> None:
    cluster, failures = play(name, clock)
    assert failures == []
    assert check_expectations(cluster, all_lessons()[name]) == []
    assert cluster.lesson == name and cluster.lesson_step == len(all_lessons()[name].steps)


@pytest.mark.django_db
def test_preemption_nominates_the_node_of_its_victim(clock: FakeClock) -> None:
    """Between the failed cycle and the bind, myapp-vip carries status.nominatedNodeName; the victim
    on that node is Terminating (DisruptionTarget, Preempted), then stopped (Killing) and gone."""
    cluster, failures = play("preemption", clock, steps=2)
    assert failures == []
    replicas = {body["metadata"]["name"]: body["spec"]["nodeName"] for body in store.list_objects(cluster, "Pod")}
    assert sorted(replicas.values()) == ["node01", "node02"]
    play_step(cluster)
    for _ in range(20):
        step_once(cluster)
        vip = store.get(cluster, "Pod", "default", "myapp-vip")
        if vip.get("status", {}).get("nominatedNodeName"):
            break
    else:
        pytest.fail("myapp-vip was never nominated")
    nominated = vip["status"]["nominatedNodeName"]
    (victim,) = [name for name, node in replicas.items() if node == nominated]
    during = {
        "pods": {
            "default/myapp-vip": {
                "pending": True,
                "nominatedNode": nominated,
                "reason": "Unschedulable",
                "message": "0/2 nodes are available: 2 Insufficient cpu.",
            }
        },
        "events": [
            {
                "object": f"default/{victim}",
                "reason": "Preempted",
                "message": f"Preempted by pod {vip['metadata']['uid']} on node {nominated}",
            }
        ],
    }
    assert check(cluster, during) == []
    body = store.get(cluster, "Pod", "default", victim)
    assert body["metadata"].get("deletionTimestamp")
    disruption = [c["reason"] for c in body["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert disruption == ["PreemptionByScheduler"]

    reconcile(cluster)
    after = {
        "pods": {"default/myapp-vip": {"node": nominated, "phase": "Running", "nominatedNode": None}},
        "absent_pods": [f"default/{victim}"],
        "events": [
            {
                "object": "default/myapp-vip",
                "reason": "Scheduled",
                "message": f"Successfully assigned default/myapp-vip to {nominated}",
            },
            {"object": f"default/{victim}", "reason": "Killing", "message": "Stopping container myapp"},
        ],
    }
    assert check(cluster, after) == []


@pytest.mark.django_db
@pytest.mark.parametrize("waited, gone", [(0, False), (55, False), (65, True)], ids=["now", "55s", "65s"])
def test_noexecute_toleration_seconds(clock: FakeClock, waited: float, gone: bool) -> None:
    """myapp03 tolerates qqq=value1:NoExecute for 60s: it stays until then, and is evicted after."""
    cluster, failures = play("taints-noexecute", clock, steps=1)
    assert failures == []
    clock.offset = waited
    reconcile(cluster)
    expect: dict[str, Any] = {"pods": {"default/myapp02": {"node": "node01", "phase": "Running"}}}
    if gone:
        expect["absent_pods"] = ["default/myapp03"]
    else:
        expect["pods"]["default/myapp03"] = {"node": "node01", "phase": "Running"}
        expect["no_events"] = [{"object": "default/myapp03", "reason": "TaintManagerEviction"}]
    assert check(cluster, expect) == []


# --- check_expectations can fail ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_unfinished_lesson_does_not_match_its_end_state(clock: FakeClock) -> None:
    """nodeselector stopped after creating pod-example (before node02 gets kgc=a)."""
    cluster, failures = play("nodeselector", clock, steps=3)
    assert failures == []
    assert check_expectations(cluster, get_lesson("nodeselector")) == [
        "pod default/pod-example: on node None, expected 'node02'",
        "pod default/pod-example: phase 'Pending', expected 'Running'",
        "pod default/pod-qqq: not found",
        "event {'object': 'default/pod-example', 'reason': 'Scheduled', 'message': 'Successfully assigned "
        "default/pod-example to node02'}: not recorded (Scheduled events of default/pod-example: [])",
        "event {'object': 'default/pod-qqq', 'reason': 'Scheduled', 'message': 'Successfully assigned "
        "default/pod-qqq to node01'}: not recorded (Scheduled events of default/pod-qqq: [])",
    ]


# (claim, the one problem check() must report), one claim per expectation key and field
MISMATCHES = [
    pytest.param(
        {"pods": {"default/pod-kgc": {"node": "node01"}}},
        "pod default/pod-kgc: on node 'node02', expected 'node01'",
        id="node",
    ),
    pytest.param(
        {"pods": {"default/pod-kgc": {"node": ["node01", "node03"]}}},
        "pod default/pod-kgc: on node 'node02', expected 'node01' or 'node03'",
        id="node-list",
    ),
    pytest.param(
        {"pods": {"default/pod-kgc": {"phase": "Pending"}}},
        "pod default/pod-kgc: phase 'Running', expected 'Pending'",
        id="phase",
    ),
    pytest.param(
        {"pods": {"default/pod-kgc": {"pending": True}}},
        "pod default/pod-kgc: bound to node02, expected the opposite",
        id="pending",
    ),
    pytest.param(
        {"pods": {"default/pod-kgc": {"message": "0/3 nodes are available"}}},
        "pod default/pod-kgc: PodScheduled message None, expected '0/3 nodes are available'",
        id="message",
    ),
    pytest.param(
        {"pods": {"default/pod-kgc": {"reason": "Unschedulable"}}},
        "pod default/pod-kgc: PodScheduled reason None, expected 'Unschedulable'",
        id="reason",
    ),
    pytest.param(
        {"pods": {"default/pod-kgc": {"nominatedNode": "node02"}}},
        "pod default/pod-kgc: nominatedNodeName None, expected 'node02'",
        id="nominated",
    ),
    pytest.param({"pods": {"default/nope": {}}}, "pod default/nope: not found", id="missing-pod"),
    pytest.param({"pods": {"kube-system/myapp-*": {}}}, "pod kube-system/myapp-*: not found", id="glob-no-match"),
    pytest.param(
        {"pods": {"default/pod-kgc": {"nodes": "node02"}}},
        "pod default/pod-kgc: unknown expectation(s) ['nodes']",
        id="unknown-pod-field",
    ),
    pytest.param(
        {"absent_pods": ["default/pod-kgc"]}, "pod default/pod-kgc: still exists, expected it gone", id="absent"
    ),
    pytest.param(
        {"events": [{"object": "default/pod-kgc", "reason": "Scheduled", "count": 2}]},
        "event {'object': 'default/pod-kgc', 'reason': 'Scheduled', 'count': 2}: not recorded (Scheduled events "
        "of default/pod-kgc: ['Successfully assigned default/pod-kgc to node02 (x1, Normal)'])",
        id="event-count",
    ),
    pytest.param(
        {"events": [{"object": "default/pod-kgc", "reason": "Started", "message": "Started container nginx"}]},
        "event {'object': 'default/pod-kgc', 'reason': 'Started', 'message': 'Started container nginx'}: not "
        "recorded (Started events of default/pod-kgc: ['Started container myapp (x1, Normal)'])",
        id="event-message",
    ),
    pytest.param(
        {"events": [{"object": "default/pod-kgc", "reason": "Pulled", "message_glob": "Container image * present*"}]},
        "event {'object': 'default/pod-kgc', 'reason': 'Pulled', 'message_glob': 'Container image * present*'}: "
        'not recorded (Pulled events of default/pod-kgc: [\'Successfully pulled image "soscscs/myapp:v1" in '
        "1.204s (1.204s including waiting) (x1, Normal)'])",
        id="event-glob",
    ),
    pytest.param(
        {"events": [{"object": "default/pod-kgc", "reason": "Scheduled", "type": "Warning"}]},
        "event {'object': 'default/pod-kgc', 'reason': 'Scheduled', 'type': 'Warning'}: not recorded (Scheduled "
        "events of default/pod-kgc: ['Successfully assigned default/pod-kgc to node02 (x1, Normal)'])",
        id="event-type",
    ),
    pytest.param(
        {"events": [{"object": "default/nope", "reason": "Scheduled"}]},
        "event {'object': 'default/nope', 'reason': 'Scheduled'}: not recorded (Scheduled events of default/nope: [])",
        id="event-of-missing-object",
    ),
    pytest.param(
        {"events": [{"object": "default/pod-kgc", "reasons": "Scheduled"}]},
        "event {'object': 'default/pod-kgc', 'reasons': 'Scheduled'}: unknown field(s) ['reasons']",
        id="unknown-event-field",
    ),
    pytest.param(
        {"no_events": [{"object": "default/pod-*", "reason": "Scheduled"}]},
        "event Scheduled of default/pod-*: recorded ('Successfully assigned default/pod-kgc to node02')",
        id="no-events",
    ),
    pytest.param(
        {"deployments": {"default/myapp": {"readyReplicas": 2}}},
        "deployment default/myapp: status.readyReplicas 3, expected 2",
        id="deployment",
    ),
    pytest.param({"deployments": {"default/other": {}}}, "deployment default/other: not found", id="no-deployment"),
    pytest.param({"running_on": {"node01": 1}}, "node node01: 0 Running pod(s), expected 1", id="running-on"),
    pytest.param({"pending_count": 1}, "0 unscheduled pod(s) [], expected 1", id="pending-count"),
    pytest.param({"podz": {}}, "unknown expectation 'podz'", id="unknown-key"),
]


@pytest.mark.django_db
def test_check_reports_each_mismatch(clock: FakeClock) -> None:
    """The demo's end state (pod-kgc on node02; myapp's 3 replicas on node02/node03) against wrong claims."""
    cluster, _ = play("demo", clock)
    assert check_expectations(cluster, get_lesson("demo")) == []
    got = {case.id: check(cluster, case.values[0]) for case in MISMATCHES}
    assert got == {case.id: [case.values[1]] for case in MISMATCHES}


@pytest.mark.django_db
def test_check_a_glob_holds_every_match_to_the_claim(clock: FakeClock) -> None:
    """default/myapp-* matches the 3 replicas; none is on node01, so each is reported."""
    cluster, _ = play("demo", clock)
    problems = check(cluster, {"pods": {"default/myapp-*": {"node": "node01", "phase": "Running"}}})
    assert len(problems) == 3
    for problem in problems:
        assert re.fullmatch(
            r"pod default/myapp-[a-z0-9]{10}-[a-z0-9]{5}: on node 'node0[23]', expected 'node01'", problem
        )
    assert check(cluster, {"pods": {"default/myapp-*": {"node": ["node02", "node03"], "phase": "Running"}}}) == []


# --- predictions: asked before the step, answered by the scheduler without a coin toss ----------------

PREDICTING = sorted(name for name, lesson in all_lessons().items() if any(s.predict for s in lesson.steps))


def _binding_tie(cluster: Cluster, pod: str) -> list[int]:
    """The nodes (as indices) that shared the top score in the cycle that bound `pod`."""
    cycle = SchedulingCycle.objects.filter(cluster=cluster, pod=pod, scheduled=True).order_by("-number").first()
    assert cycle is not None, f"{pod}: bound without a scheduling cycle"
    (selected,) = [event for event in cycle.events if event.get("type") == "host.selected"]
    tied = selected["tiedTop"]
    return list(tied["$nodes"] if isinstance(tied, dict) else tied)


def test_every_lesson_asks_a_prediction() -> None:
    assert sorted(all_lessons()) == PREDICTING


@pytest.mark.django_db
@pytest.mark.parametrize("name", PREDICTING)
def test_predictions_have_one_answer(name: str, clock: FakeClock) -> None:
    """Before a predicting step its pod does not exist yet (or waits, unbound); after it, the pod is
    bound to the node its step's `expect` names — chosen by a unique top score, never a random
    tie-break, or by its own spec.nodeName — or it is Pending, as recorded."""
    cluster = start(name)
    answers = []
    for index, step in enumerate(get_lesson(name).steps, start=1):
        predict = step.predict
        if predict is not None:
            namespace, _, pod_name = predict.pod.partition("/")
            try:
                before = store.get(cluster, "Pod", namespace, pod_name)
            except store.NotFound:
                before = None
            assert before is None or not before["spec"].get("nodeName"), f"step {index}: {predict.pod} already bound"
        assert play_step(cluster) is not None
        reconcile(cluster)
        watch(cluster, clock, step.wait)
        assert check(cluster, step.expect) == [], index
        if predict is None:
            continue
        body = store.get(cluster, "Pod", namespace, pod_name)
        node = body["spec"].get("nodeName") or None
        want = step.expect["pods"][predict.pod]
        if node is None:
            assert want.get("pending") is True and body["status"]["phase"] == "Pending"
            assert lessons._scheduled_condition(body).get("reason") == "Unschedulable"
        elif SchedulingCycle.objects.filter(cluster=cluster, pod=predict.pod, scheduled=True).exists():
            assert len(_binding_tie(cluster, predict.pod)) == 1, f"step {index}: {predict.pod} won a tie-break"
        else:  # spec.nodeName: the scheduler never saw it
            assert check(cluster, {"no_events": [{"object": predict.pod, "reason": "Scheduled"}]}) == []
        answers.append(f"step {index} ({predict.ask}): {predict.pod} -> {node or 'Pending'}")
    print(f"{name}:", "; ".join(answers))
