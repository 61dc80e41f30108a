"""Every lesson plays to the end state its `expect` block describes (clusterviz/lessons/*.yaml).

Each lesson runs in a fresh cluster: load_lesson, reconcile, then play_step + reconcile per step
(checking the step's own `expect`, and letting the step's `wait` seconds pass second by second on a
fake clock that drives the kubelet, the NoExecute taint manager and the store's timestamps), then
`check_expectations` must report nothing. A step's `predict` must have one answer: its pod bound by
a unique top score (or its own spec.nodeName), or left Pending as its step records. Expected scheduling
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
    "node-affinity-preferred-operators",
    "pod-affinity",
    "pod-affinity-preferred",
    "pod-anti-affinity",
    "taints-noschedule",
    "taints-prefernoschedule",
    "taints-noexecute",
    "insufficient-resources",
    "host-port-conflict",
    "topology-spread",
    "preemption",
    "pod-phases",
    "scoring",
)


# The audit: every experiment of the seed notes (/work/shared/seeds), the lesson that replays it, and
# what that lesson's file must hold for it (fields, operators, effects, commands and outcomes).
SEED_EXPERIMENTS = {
    "nodeName (Deployment and Pod), no Scheduled event": (
        "nodename",
        ("nodeName: node01", "replicas: 3", "kubectl create -f nodename-test.yaml", "reason: Scheduled"),
    ),
    "node labels, --overwrite, nodeSelector": (
        "nodeselector",
        ("kubectl label nodes node01 qqq=1", "kubectl label nodes node02 kgc=a --overwrite", "nodeSelector:"),
    ),
    "nodeSelector node=node01, kubectl get pod -w": (
        "pod-phases",
        ("kubectl label nodes node01 node=node01", "node: node01", "kubectl get pod -w"),
    ),
    "node affinity, hard": ("node-affinity-required", ("requiredDuringSchedulingIgnoredDuringExecution",)),
    "node affinity, soft; hard and soft together": (
        "node-affinity-preferred",
        ("preferredDuringSchedulingIgnoredDuringExecution", "requiredDuringSchedulingIgnoredDuringExecution"),
    ),
    "node affinity, hard, each operator": (
        "node-affinity-operators",
        ("required", *(f"operator: {op}\n" for op in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"))),
    ),
    "node affinity, soft, each operator": (
        "node-affinity-preferred-operators",
        ("preferred", *(f"operator: {op}\n" for op in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"))),
    ),
    "pod affinity, required, topologyKey": (
        "pod-affinity",
        ("podAffinity:", "requiredDuringScheduling", "topologyKey: kubernetes.io/hostname", "topologyKey: kgc"),
    ),
    "pod affinity, preferred": ("pod-affinity-preferred", ("podAffinity:", "preferredDuringScheduling", "weight:")),
    "pod anti-affinity, required and preferred": (
        "pod-anti-affinity",
        ("podAntiAffinity:", "requiredDuringScheduling", "preferredDuringScheduling", "topologyKey: kgc"),
    ),
    "taint NoSchedule: set, describe, remove; both nodes tainted; toleration Equal": (
        "taints-noschedule",
        (
            "kubectl taint node node01 qqq=value1:NoSchedule",
            "kubectl taint node node01 qqq:NoSchedule-",
            "kubectl describe node",
            "operator: Equal",
            "had untolerated taint",
        ),
    ),
    "taint PreferNoSchedule": ("taints-prefernoschedule", ("effect: PreferNoSchedule",)),
    "taint NoExecute evicts; tolerations Exists, Equal, tolerationSeconds": (
        "taints-noexecute",
        ("effect: NoExecute", "operator: Exists", "operator: Equal", "tolerationSeconds: 60", "TaintManagerEviction"),
    ),
    "pod phases": (
        "pod-phases",
        (
            "status: ContainerCreating",
            "phase: Running",
            "phase: Succeeded",
            "status: Completed",
            "status: Terminating",
            "pending: true",
        ),
    ),
    "priorities LeastRequested, BalancedResourceAllocation, ImageLocality": (
        "scoring",
        ("NodeResourcesFit", "NodeResourcesBalancedAllocation", "ImageLocality", "images:", "sizeBytes:"),
    ),
    "predicate PodFitsResources": ("insufficient-resources", ("Insufficient cpu",)),
    "predicate PodFitsHostPorts": ("host-port-conflict", ("hostPort: 80", "didn't have free ports")),
}


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


def _pod_or_none(cluster: Cluster, key: str) -> dict[str, Any] | None:
    namespace, _, name = key.partition("/")
    try:
        return store.get(cluster, "Pod", namespace, name)
    except store.NotFound:
        return None


def _binding_tie(cluster: Cluster, pod: str) -> list[int]:
    """The nodes (as indices) that shared the top score in the cycle that bound `pod`."""
    cycle = SchedulingCycle.objects.filter(cluster=cluster, pod=pod, scheduled=True).order_by("-number").first()
    assert cycle is not None, f"{pod}: bound without a scheduling cycle"
    (selected,) = [event for event in cycle.events if event.get("type") == "host.selected"]
    tied = selected["tiedTop"]
    return list(tied["$nodes"] if isinstance(tied, dict) else tied)


def _answer(cluster: Cluster, predict: lessons.Predict, want: dict[str, Any]) -> tuple[str, list[str]]:
    """The answer to a prediction once its step ran (a node or "Pending"), and why it would be
    ambiguous: a pod bound by a random tie-break among nodes sharing the top score, or left Pending
    for some other reason than the scheduler finding no node."""
    body = _pod_or_none(cluster, predict.pod)
    if body is None:
        return "gone", [f"{predict.pod}: gone after its step"]
    node = body["spec"].get("nodeName")
    problems = []
    if not node:
        reason = lessons._scheduled_condition(body).get("reason")
        if want.get("pending") is not True or reason != "Unschedulable":
            problems.append(f"{predict.pod}: unbound ({reason}), recorded as {want}")
        return "Pending", problems
    if SchedulingCycle.objects.filter(cluster=cluster, pod=predict.pod, scheduled=True).exists():
        tied = _binding_tie(cluster, predict.pod)
        if len(tied) != 1:
            problems.append(f"{predict.pod}: {node} won a tie-break among {len(tied)} nodes")
    else:  # its own spec.nodeName: the scheduler never saw it
        problems.extend(check(cluster, {"no_events": [{"object": predict.pod, "reason": "Scheduled"}]}))
    return node, problems


def play(name: str, clock: FakeClock, steps: int | None = None) -> tuple[Cluster, list[tuple[int, list[str]]]]:
    """Run a lesson (or its first `steps` steps); returns the cluster and the failed step
    expectations. A predicting step's pod must not be bound before the step, and its outcome after
    the step must have one answer (printed: `lesson step N (ask): pod -> node or Pending`)."""
    cluster = start(name)
    failures: list[tuple[int, list[str]]] = []
    for index, step in enumerate(get_lesson(name).steps[:steps], start=1):
        problems = []
        if step.predict is not None:
            before = _pod_or_none(cluster, step.predict.pod)
            if before is not None and before["spec"].get("nodeName"):
                problems.append(f"{step.predict.pod}: bound before the step that asks where it goes")
        assert play_step(cluster) is not None
        reconcile(cluster)
        watch(cluster, clock, step.wait)
        problems.extend(check(cluster, step.expect))
        if step.predict is not None:
            answer, ambiguous = _answer(cluster, step.predict, step.expect["pods"][step.predict.pod])
            problems.extend(ambiguous)
            print(f"{name} step {index} ({step.predict.ask}): {step.predict.pod} -> {answer}")
        if problems:
            failures.append((index, problems))
    if steps is None:
        assert play_step(cluster) is None
    cluster.refresh_from_db()
    return cluster, failures


# --- the library itself -------------------------------------------------------------------------------


def test_every_required_lesson_exists() -> None:
    assert set(REQUIRED) <= set(all_lessons())


@pytest.mark.parametrize("experiment", sorted(SEED_EXPERIMENTS))
def test_every_seed_experiment_has_its_lesson(experiment: str) -> None:
    name, needs = SEED_EXPERIMENTS[experiment]
    text = (lessons.LESSONS_DIR / f"{name}.yaml").read_text()
    assert [need for need in needs if need not in text] == []


def test_every_lesson_asks_a_prediction() -> None:
    assert [name for name, lesson in all_lessons().items() if not any(s.predict for s in lesson.steps)] == []


def _command_for(action: dict[str, Any]) -> str:
    """The kubectl command line (a regex) that an action stands for."""
    kind = action["action"]
    if kind == "create":
        return r"kubectl (apply|create) -f \S+\.yaml"
    if kind == "version":  # the cluster upgraded (or downgraded) to another release
        return rf"kubeadm upgrade apply v{re.escape(action['version'])}\.0"
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


# --- the lesson format: a bad lesson file is refused with its line and field ----------------------------

GOOD = """\
name: t
title: A lesson
steps:
- say: Label node01.
  after: node01 carries kgc=a.
  command: kubectl label nodes node01 kgc=a
  do: {action: label, node: node01, key: kgc, value: a}
- say: Create pod-kgc.
  after: pod-kgc went to node01, the only node with kgc=a.
  command: kubectl apply -f pod-kgc.yaml
  predict:
    question: Which node?
    pod: default/pod-kgc
    ask: node
  do:
    action: create
    yaml: |
      apiVersion: v1
      kind: Pod
      metadata: {name: pod-kgc}
      spec:
        nodeSelector: {kgc: a}
        containers: [{name: myapp, image: "soscscs/myapp:v1"}]
  expect:
    pods:
      default/pod-kgc: {node: node01}
expect:
  pods:
    default/pod-kgc: {node: node01}
"""

BAD = [
    pytest.param(
        ("    ask: node\n", "    ask: where\n"),
        't.yaml:14: steps[1].predict.ask: Unsupported value: "where": supported values: "node", "schedules"',
        id="ask",
    ),
    pytest.param(
        ("    pod: default/pod-kgc\n", "    pod: default/pod-other\n"),
        't.yaml:13: steps[1].predict.pod: "default/pod-other" is not created by this step (it creates Pod '
        "default/pod-kgc)",
        id="not-created",
    ),
    pytest.param(
        ("    pod: default/pod-kgc\n", "    pod: pod-kgc\n"),
        't.yaml:13: steps[1].predict.pod: Invalid value: "pod-kgc": must be <namespace>/<name>, e.g. '
        "default/pod-example",
        id="not-namespaced",
    ),
    pytest.param(
        ("    question: Which node?\n", ""),
        "t.yaml:11: steps[1].predict.question: Required value",
        id="no-question",
    ),
    pytest.param(
        ("    ask: node\n", "    ask: node\n    answer: node01\n"),
        "t.yaml:15: steps[1].predict.answer: Extra inputs are not permitted",
        id="extra-field",
    ),
    pytest.param(
        ("      default/pod-kgc: {node: node01}\nexpect:", "      default/pod-kgc: {phase: Running}\nexpect:"),
        't.yaml:11: steps[1].predict: the answer is not recorded: the step\'s expect needs pods: "default/pod-kgc": '
        "{node: <one node>} or {pending: true}",
        id="answer-not-recorded",
    ),
    pytest.param(
        (
            "  do: {action: label, node: node01, key: kgc, value: a}\n",
            "  do: {action: label, node: node01, key: kgc, value: a}\n  predict: {question: Where?, pod: "
            "default/pod-kgc, ask: node}\n",
        ),
        't.yaml:8: steps[0].predict.pod: "default/pod-kgc" does not exist before this step (neither in `objects` '
        "nor created by an earlier step)",
        id="not-there-yet",
    ),
    pytest.param(
        ("  do: {action: label, node: node01, key: kgc, value: a}\n", "  do: {action: lable, node: node01}\n"),
        "t.yaml:7: steps[0].do.action: unknown action 'lable'",
        id="unknown-action",
    ),
    pytest.param(
        ("- say: Label node01.\n", "- say: Label node01.\n  sya: Label node01.\n"),
        "t.yaml:5: steps[0].sya: Extra inputs are not permitted",
        id="unknown-step-field",
    ),
    pytest.param(
        ("expect:\n  pods:\n    default/pod-kgc: {node: node01}\n", "expect:\n  podz: {}\n"),
        "t.yaml:28: expect.podz: unknown expectation (known: pods, absent_pods, events, no_events, deployments, "
        "running_on, pending_count)",
        id="unknown-expectation",
    ),
    pytest.param(
        ("  after: node01 carries kgc=a.\n", ""),
        "t.yaml:4: steps[0].after: Required value",
        id="no-after",
    ),
    pytest.param(
        ("- say: Create pod-kgc.\n", "- say: Create pod-kgc; it goes to node01.\n"),
        "t.yaml:8: steps[1].say: gives the answer away: it names node01, where default/pod-kgc goes, before the class "
        "answers (say it in `after`, which is shown after the reveal)",
        id="spoiler",
    ),
    pytest.param(
        ("title: A lesson\n", "title: A lesson\nsummary: |\n  one\n  two\n"),
        "t.yaml:3: summary: ",
        id="summary-two-lines",
    ),
    pytest.param(
        ("title: A lesson\n", "title: A lesson\ntopic: taint\n"),
        't.yaml:3: topic: Unsupported value: "taint": supported values: list-watch, predicates-priorities, '
        "nodename-nodeselector, node-affinity, pod-affinity, taints-tolerations, pod-phases, kubectl, devices",
        id="unknown-topic",
    ),
    pytest.param(
        ("steps:\n", "steps: oops\nx:\n"),
        't.yaml:3: steps: Invalid value: "oops": must be a list',
        id="steps-not-a-list",
    ),
]


def test_every_built_in_lesson_has_a_topic_of_the_notes() -> None:
    for lesson in lessons.all_lessons().values():
        assert lesson.topic in lessons.TOPICS, lesson.name


def test_a_good_lesson_parses_and_carries_its_prediction() -> None:
    lesson = lessons.parse_lesson(GOOD, "t.yaml")
    assert lesson.steps[1].instruction() == {
        "say": "Create pod-kgc.",
        "command": "kubectl apply -f pod-kgc.yaml",
        "predict": {"question": "Which node?", "pod": "default/pod-kgc", "ask": "node"},
    }
    assert lesson.steps[1].after == "pod-kgc went to node01, the only node with kgc=a."
    assert "predict" not in lesson.steps[0].instruction()
    # The catalog's entry names the lesson and counts its steps: no step's text.
    assert lesson.to_dict() == {
        "name": "t",
        "topic": "",
        "title": "A lesson",
        "summary": "",
        "pace": None,
        "steps": 2,
        "questions": 1,
    }


@pytest.mark.parametrize("edit, error", BAD)
def test_a_bad_lesson_is_refused_at_its_line(edit: tuple[str, str], error: str) -> None:
    old, new = edit
    assert old in GOOD
    with pytest.raises(InputError) as caught:
        lessons.parse_lesson(GOOD.replace(old, new, 1), "t.yaml")
    assert str(caught.value).startswith(error), str(caught.value)


@pytest.mark.django_db
def test_api_lessons_is_a_catalog_without_any_step_text(client: Any) -> None:
    """The catalog names each lesson and counts its steps and questions; no step's text leaves the
    server here (`lesson_view` sends a cluster's steps, as far as each viewer may see them)."""
    response = client.get("/api/lessons")
    catalog = {lesson["name"]: lesson for lesson in response.json()["lessons"]}
    assert catalog["nodeselector"] == {
        "name": "nodeselector",
        "topic": "nodename-nodeselector",
        "title": all_lessons()["nodeselector"].title,
        "summary": all_lessons()["nodeselector"].summary,
        "pace": None,
        "steps": 5,
        "questions": 1,
    }
    text = response.content.decode()
    for lesson in all_lessons().values():
        for step in lesson.steps:
            assert step.after not in text and step.say not in text


# A `say` is read before its step runs: it tells what to do, never what will happen.
SPOILERS = re.compile(
    r"\b(goes|went|go) to\b|\blands? on\b|\b(wins?|won)\b|\bstays? Pending\b|\bso (it|both|the pod)\b"
    r"|\b(is|are|was|were|gets?|got) (scheduled|bound|evicted|rejected)\b|\b(passes|fails)\b",
    re.IGNORECASE,
)


@pytest.mark.parametrize("name", sorted(all_lessons()))
def test_no_step_says_what_will_happen(name: str) -> None:
    for number, step in enumerate(all_lessons()[name].steps, start=1):
        assert not SPOILERS.search(step.say), (number, step.say)
        assert step.after and step.after != step.say, number


def test_summaries_are_one_line_for_the_catalog() -> None:
    for lesson in all_lessons().values():
        assert lesson.summary and "\n" not in lesson.summary and len(lesson.summary) <= 200, lesson.name


@pytest.mark.django_db
def test_a_tie_broken_at_random_is_no_answer(clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two identical empty nodes: the pod's node is a coin toss, which the lesson test refuses."""
    node = (
        "apiVersion: v1\nkind: Node\nmetadata: {{name: {0}, labels: {{kubernetes.io/hostname: {0}}}}}\n"
        'status: {{allocatable: {{cpu: "2", memory: 4Gi, pods: "110"}}}}\n'
    )
    text = GOOD.replace(
        "title: A lesson\n",
        "title: A coin toss\nobjects: |\n"
        + "".join(
            "  " + line + "\n" for line in (node.format("node01") + "---\n" + node.format("node02")).splitlines()
        ),
    ).replace(
        "kgc=a\n  do: {action: label, node: node01, key: kgc, value: a}",
        "kgc=a\n  do: {action: label, node: node02, key: kgc, value: a}",
    )
    text = text.replace("        nodeSelector: {kgc: a}\n", "")
    coin = lessons.parse_lesson(text, "t.yaml")
    known = dict(all_lessons())
    monkeypatch.setattr(lessons, "all_lessons", lambda: {**known, "t": coin})
    _, failures = play("t", clock)
    assert len(failures) == 1 and failures[0][0] == 2
    assert any(re.fullmatch(r"default/pod-kgc: node0[12] won a tie-break among 2 nodes", p) for p in failures[0][1])
