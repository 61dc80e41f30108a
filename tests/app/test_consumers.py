"""The cluster stream (clusterviz/consumers.py) over channels' WebsocketCommunicator.

The ClusterRunner of a cluster runs in the test's own event loop (the consumer starts it with
ensure_runner), so the scheduler and kubelet really act, and their writes come back as watch messages.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from clusterviz import services
from clusterviz.models import Change, Cluster, KubeObject, SchedulingCycle

from .conftest import Message, StreamClient, node_yaml, pod_yaml

pytestmark = pytest.mark.django_db(transaction=True)

FULL_PATH = ["kube-apiserver", "etcd", "kube-apiserver"]


def watches(messages: list[Message]) -> list[Message]:
    return [m for m in messages if m["type"] == "watch"]


def summary(message: Message) -> tuple[Any, ...]:
    """(event, kind, name, component) of a watch message; for an Event also its reason."""
    obj = message["object"]
    if message["kind"] == "Event":
        return (message["event"], "Event", obj["reason"], message["component"])
    return (message["event"], message["kind"], obj["metadata"]["name"], message["component"])


async def rv_of(slug: str) -> int:
    return (await Cluster.objects.aget(slug=slug)).resource_version


async def open_stream(make_cluster: Any, ws_connect: Any, objects: str = "", pace: str = "instant") -> StreamClient:
    await sync_to_async(make_cluster)("c1", objects, pace)
    client = await ws_connect("c1")
    snapshot = await client.recv()
    assert snapshot["type"] == "snapshot"
    return client


async def test_unknown_cluster_closes_with_4404(ws_connect: Any) -> None:
    assert await ws_connect("no-such-cluster", expect_close=True) == (False, 4404)


async def test_connection_without_origin_is_refused(make_cluster: Any, ws_connect: Any) -> None:
    from clusterviz.asgi import application

    await sync_to_async(make_cluster)("c1")
    communicator = WebsocketCommunicator(application, "/ws/clusters/c1/")
    connected, _ = await communicator.connect()
    assert connected is False


async def test_snapshot_on_connect(make_cluster: Any, ws_connect: Any) -> None:
    await sync_to_async(make_cluster)("c1", node_yaml("n1") + "---\n" + node_yaml("n2"))
    client = await ws_connect("c1")
    snapshot = await client.recv()
    assert snapshot["type"] == "snapshot"
    assert snapshot["resourceVersion"] == "2" == str(await rv_of("c1"))
    assert snapshot["cluster"]["slug"] == "c1"
    assert snapshot["cluster"]["pace"] == "instant"
    assert [n["metadata"]["name"] for n in snapshot["objects"]["Node"]] == ["n1", "n2"]
    assert [n["metadata"]["resourceVersion"] for n in snapshot["objects"]["Node"]] == ["1", "2"]
    assert await client.nothing(), "an idle cluster streams nothing after the snapshot"


async def test_create_pod_gives_result_then_the_whole_watch_chain(make_cluster: Any, ws_connect: Any) -> None:
    client = await open_stream(make_cluster, ws_connect, node_yaml("n1"))
    rv0 = await rv_of("c1")
    action_id = await client.send({"action": "create", "yaml": pod_yaml("p1"), "id": "create-1"})
    assert action_id == "create-1"
    messages = await client.until(lambda m: m.get("type") == "watch" and m["object"].get("reason") == "Started")
    assert await client.nothing(0.3), "nothing after the pod is Running"

    assert messages[0] == {"type": "result", "id": "create-1", "created": ["Pod/p1"]}
    kinds = [m["type"] for m in messages]
    assert kinds.count("scheduler.cycle") == 1
    assert [summary(m) for m in watches(messages)] == [
        ("ADDED", "Pod", "p1", "browser"),
        ("MODIFIED", "Pod", "p1", "default-scheduler"),  # the binding
        ("ADDED", "Event", "Scheduled", "default-scheduler"),
        ("MODIFIED", "Pod", "p1", "kubelet"),  # ContainerCreating
        ("ADDED", "Event", "Pulling", "kubelet"),
        ("ADDED", "Event", "Pulled", "kubelet"),
        ("MODIFIED", "Pod", "p1", "kubelet"),  # Running
        ("ADDED", "Event", "Created", "kubelet"),
        ("ADDED", "Event", "Started", "kubelet"),
    ]
    # Every write is one watch message, in resourceVersion order, with no gap.
    rvs = [int(m["resourceVersion"]) for m in watches(messages)]
    assert rvs == list(range(rv0 + 1, rv0 + 10))
    assert rvs[-1] == await rv_of("c1")

    added, bound = watches(messages)[0], watches(messages)[1]
    assert added["path"] == ["browser", *FULL_PATH, "scheduler", "kubelet", "controller-manager"]
    assert added["object"]["status"]["phase"] == "Pending"
    assert "nodeName" not in added["object"]["spec"]

    # The scheduling cycle streams before the binding it leads to.
    cycle = next(m for m in messages if m["type"] == "scheduler.cycle")
    assert messages.index(cycle) < messages.index(bound)
    assert cycle["pod"] == "default/p1"
    assert cycle["scheduled"] is True
    assert cycle["node"] == "n1"
    assert cycle["message"] == "Successfully assigned default/p1 to n1"
    assert cycle["path"] == ["kube-apiserver", "scheduler"]
    assert cycle["events"][0]["type"] == "cycle.started"
    assert cycle["events"][-1]["type"] == "cycle.finished"
    assert {"type": "host.selected", "node": "n1"}.items() <= cycle["events"][-2].items()
    stored = await SchedulingCycle.objects.aget(cluster__slug="c1", number=cycle["cycle"])
    assert stored.events == cycle["events"]

    assert bound["object"]["spec"]["nodeName"] == "n1"
    assert bound["object"]["status"]["conditions"][0]["type"] == "PodScheduled"
    assert bound["object"]["status"]["conditions"][0]["status"] == "True"
    scheduled_event = watches(messages)[2]["object"]
    assert scheduled_event["message"] == "Successfully assigned default/p1 to n1"
    assert scheduled_event["involvedObject"]["name"] == "p1"
    running = watches(messages)[6]["object"]
    assert running["status"]["phase"] == "Running"
    assert all(c["ready"] for c in running["status"]["containerStatuses"])

    pod = await KubeObject.objects.aget(cluster__slug="c1", kind="Pod", name="p1")
    assert pod.body == running


async def test_unschedulable_pod_streams_failed_scheduling(make_cluster: Any, ws_connect: Any) -> None:
    client = await open_stream(make_cluster, ws_connect, node_yaml("n1", cpu="1"))
    await client.send({"action": "create", "yaml": pod_yaml("big", cpu="2")})
    messages = await client.until(lambda m: m.get("type") == "watch" and m["kind"] == "Event")
    cycle = next(m for m in messages if m["type"] == "scheduler.cycle")
    assert cycle["scheduled"] is False
    assert cycle["node"] is None
    assert cycle["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert cycle["message"].endswith("preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")
    failed = watches(messages)[-1]["object"]
    assert (failed["type"], failed["reason"]) == ("Warning", "FailedScheduling")
    condition = watches(messages)[-2]["object"]["status"]["conditions"][0]
    assert (condition["type"], condition["status"], condition["reason"]) == ("PodScheduled", "False", "Unschedulable")
    assert await client.nothing(0.4), "a parked pod is not retried until something changes"


BAD_ACTIONS = [
    pytest.param(
        {"action": "create", "yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: [oops\n"},
        "Invalid",
        "yaml:4:1: ",
        id="yaml-syntax-error",
    ),
    pytest.param(
        {"action": "create", "yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: 7}\n"},
        "Invalid",
        "yaml:4: spec.containers",
        id="yaml-schema-error-with-line",
    ),
    pytest.param({"action": "frobnicate"}, "Invalid", "action: unknown action 'frobnicate'", id="unknown-action"),
    pytest.param({"yaml": "x"}, "Invalid", "action: unknown action None", id="no-action"),
    pytest.param(
        {"action": "label", "node": "n1", "key": "bad key!", "value": "v"},
        "Invalid",
        'metadata.labels: Invalid value: "bad key!"',
        id="invalid-label-key",
    ),
    pytest.param(
        {"action": "label", "node": "n1", "key": "ok", "value": "-bad-"},
        "Invalid",
        'metadata.labels: Invalid value: "-bad-"',
        id="invalid-label-value",
    ),
    pytest.param(
        {"action": "label", "node": "nope", "key": "a", "value": "b"},
        "NotFound",
        'nodes "nope" not found',
        id="no-node",
    ),
    pytest.param({"action": "create"}, "Invalid", "yaml: Field required", id="missing-field"),
    pytest.param(
        {"action": "create", "yaml": node_yaml("n1")}, "AlreadyExists", 'nodes "n1" already exists', id="exists"
    ),
    pytest.param(
        {"action": "create", "yaml": pod_yaml("ok") + "---\n" + pod_yaml("Bad_Name")},
        "Invalid",
        'metadata.name: Invalid value: "Bad_Name"',
        id="second-object-invalid-nothing-created",
    ),
    pytest.param(
        {"action": "step", "steps": 0}, "Invalid", "steps: Input should be greater than or equal to 1", id="step-0"
    ),
    pytest.param(
        {"action": "pace", "pace": "fast"}, "Invalid", "pace: Input should be 'instant', 'slow' or 'paused'", id="pace"
    ),
    pytest.param(["not", "an", "object"], "Invalid", "action: expected a JSON object", id="not-an-object"),
]


@pytest.mark.parametrize(("action", "reason", "message"), BAD_ACTIONS)
async def test_bad_action_gives_error_and_changes_nothing(
    make_cluster: Any, ws_connect: Any, action: Any, reason: str, message: str
) -> None:
    client = await open_stream(make_cluster, ws_connect, node_yaml("n1"))
    rv0 = await rv_of("c1")
    if isinstance(action, dict):
        action = {**action, "id": 42}
    await client.communicator.send_json_to(action)
    error = await client.recv()
    assert error["type"] == "error"
    assert error["id"] == (42 if isinstance(action, dict) else None)
    assert error["reason"] == reason
    assert message in error["message"], error["message"]
    assert await client.nothing(0.15)
    assert await rv_of("c1") == rv0
    assert await KubeObject.objects.filter(cluster__slug="c1", kind="Pod").acount() == 0
    assert (await Cluster.objects.aget(slug="c1")).pace == "instant"


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        ({"text_data": "{not json"}, "invalid JSON at line 1 column 2: Expecting property name"),
        ({"bytes_data": b"\x00\x01"}, "expected a JSON text frame"),
    ],
    ids=["invalid-json", "binary-frame"],
)
async def test_bad_frame_gives_error_and_keeps_the_connection(
    make_cluster: Any, ws_connect: Any, frame: dict[str, Any], message: str
) -> None:
    client = await open_stream(make_cluster, ws_connect, node_yaml("n1"))
    await client.communicator.send_to(**frame)
    error = await client.recv()
    assert (error["type"], error["id"], error["reason"]) == ("error", None, "Invalid")
    assert message in error["message"]
    # The connection still works.
    await client.send({"action": "label", "node": "n1", "key": "a", "value": "b", "id": "after"})
    assert (await client.recv()) == {"type": "result", "id": "after", "labelled": "n1"}


async def test_two_clients_both_receive_a_change(make_cluster: Any, ws_connect: Any) -> None:
    first = await open_stream(make_cluster, ws_connect, node_yaml("n1"))
    second = await ws_connect("c1")
    assert (await second.recv())["type"] == "snapshot"
    await first.send({"action": "label", "node": "n1", "key": "zone", "value": "a", "id": "l1"})
    assert await first.recv() == {"type": "result", "id": "l1", "labelled": "n1"}
    seen_first, seen_second = await first.recv(), await second.recv()
    assert seen_first == seen_second
    assert summary(seen_first) == ("MODIFIED", "Node", "n1", "browser")
    assert seen_first["object"]["metadata"]["labels"]["zone"] == "a"
    assert await second.nothing(0.2), "the result goes to the sender only"


async def test_explain_is_a_what_if(make_cluster: Any, ws_connect: Any) -> None:
    client = await open_stream(make_cluster, ws_connect, node_yaml("n1", cpu="1") + "---\n" + node_yaml("n2"))
    rv0 = await rv_of("c1")
    await client.send({"action": "explain", "yaml": pod_yaml("what-if", cpu="1500m"), "id": "x"})
    result = await client.recv()
    assert (result["type"], result["id"]) == ("result", "x")
    explanation = result["explanation"]
    assert explanation["pod"] == "default/what-if"
    assert explanation["scheduled"] is True
    assert explanation["selectedNode"] == "n2"
    assert explanation["events"][0]["type"] == "cycle.started"
    assert await client.nothing(0.3)
    assert await rv_of("c1") == rv0
    assert not await KubeObject.objects.filter(cluster__slug="c1", kind="Pod").aexists()
    assert not await SchedulingCycle.objects.filter(cluster__slug="c1").aexists()


async def _create_pods(slug: str, names: list[str]) -> None:
    cluster = await Cluster.objects.aget(slug=slug)
    for name in names:
        await sync_to_async(services.create_from_yaml)(cluster, pod_yaml(name), "kubectl")


async def test_resume_delivers_exactly_the_changes_after_n_then_live_ones(make_cluster: Any, ws_connect: Any) -> None:
    await sync_to_async(make_cluster)("c1", node_yaml("n1"), "paused")
    await _create_pods("c1", ["p1", "p2", "p3"])  # rv 2, 3, 4
    client = await ws_connect("c1", "resourceVersion=2")
    assert await client.recv() == {"type": "resumed", "from": "2", "count": 2}
    backlog = [await client.recv(), await client.recv()]
    assert [(m["resourceVersion"], summary(m)) for m in backlog] == [
        ("3", ("ADDED", "Pod", "p2", "kubectl")),
        ("4", ("ADDED", "Pod", "p3", "kubectl")),
    ]
    assert backlog[0]["path"][:2] == ["kubectl", "kube-apiserver"]
    assert await client.nothing(0.2)
    await _create_pods("c1", ["p4"])
    live = await client.recv()
    assert (live["resourceVersion"], summary(live)) == ("5", ("ADDED", "Pod", "p4", "kubectl"))
    assert await client.nothing(0.2)


async def test_resume_while_writes_race_has_no_gap_and_no_duplicate(make_cluster: Any, ws_connect: Any) -> None:
    await sync_to_async(make_cluster)("c1", node_yaml("n1"), "paused")
    await _create_pods("c1", [f"a{i}" for i in range(5)])  # rv 2..6
    names = [f"b{i}" for i in range(30)]
    writer = asyncio.create_task(_create_pods("c1", names))
    await asyncio.sleep(0)
    client = await ws_connect("c1", "resourceVersion=3")
    await writer
    final = await rv_of("c1")
    assert final == 36
    messages = await client.until(lambda m: m.get("resourceVersion") == str(final), timeout=10)
    assert messages[0]["type"] == "resumed"
    assert 3 <= messages[0]["count"] < final - 3, "part of the writes came from the log, part live"
    rvs = [int(m["resourceVersion"]) for m in watches(messages)]
    assert rvs == list(range(4, final + 1)), "every change after 3 exactly once, in order"
    assert await client.nothing(0.2)


@pytest.mark.parametrize("query", ["resourceVersion=99", "resourceVersion=abc", "resourceVersion=-1"])
async def test_resume_from_an_unknown_version_falls_back_to_a_snapshot(
    make_cluster: Any, ws_connect: Any, query: str
) -> None:
    await sync_to_async(make_cluster)("c1", node_yaml("n1"))
    client = await ws_connect("c1", query)
    message = await client.recv()
    assert (message["type"], message["resourceVersion"]) == ("snapshot", "1")


async def test_resume_beyond_the_pruned_log_falls_back_to_a_snapshot(make_cluster: Any, ws_connect: Any) -> None:
    await sync_to_async(make_cluster)("c1", node_yaml("n1") + "---\n" + node_yaml("n2") + "---\n" + node_yaml("n3"))
    await Change.objects.filter(cluster__slug="c1", resource_version__lte=2).adelete()
    client = await ws_connect("c1", "resourceVersion=1")
    message = await client.recv()
    assert (message["type"], message["resourceVersion"]) == ("snapshot", "3")
    # From 2 on the log still reaches: a resume.
    resumed = await ws_connect("c1", "resourceVersion=2")
    assert await resumed.recv() == {"type": "resumed", "from": "2", "count": 1}


async def test_paused_does_nothing_until_step_then_one_controller_action_per_step(
    make_cluster: Any, ws_connect: Any
) -> None:
    client = await open_stream(make_cluster, ws_connect, node_yaml("n1"))
    await client.send({"action": "pace", "pace": "paused", "id": "p"})
    assert await client.recv() == {"type": "result", "id": "p", "pace": "paused", "delayMs": 800}
    updated = await client.recv()
    assert updated["type"] == "cluster.updated"
    assert updated["cluster"]["pace"] == "paused"

    await client.send({"action": "create", "yaml": pod_yaml("p1"), "id": "c"})
    assert (await client.recv())["type"] == "result"
    assert summary(await client.recv()) == ("ADDED", "Pod", "p1", "browser")
    assert await client.nothing(0.5), "paused: the scheduler must not act"
    assert (await KubeObject.objects.aget(kind="Pod", name="p1")).node_name == ""

    async def step() -> list[Message]:
        await client.send({"action": "step", "id": "s"})
        assert await client.recv() == {"type": "result", "id": "s", "steps": 1}
        messages = await client.until(lambda m: m.get("type") == "control.stepped")
        assert await client.nothing(0.25), "one controller action per step"
        return messages

    first = await step()
    assert first[-1] == {"type": "control.stepped", "controller": "scheduler", "idle": False}
    assert [m["type"] for m in first[:-1]] == ["scheduler.cycle", "watch", "watch"]
    assert [summary(m) for m in watches(first)] == [
        ("MODIFIED", "Pod", "p1", "default-scheduler"),
        ("ADDED", "Event", "Scheduled", "default-scheduler"),
    ]
    second = await step()
    assert second[-1]["controller"] == "kubelet"
    assert [summary(m) for m in watches(second)] == [
        ("MODIFIED", "Pod", "p1", "kubelet"),
        ("ADDED", "Event", "Pulling", "kubelet"),
        ("ADDED", "Event", "Pulled", "kubelet"),
    ]
    third = await step()
    assert third[-1]["controller"] == "kubelet"
    assert watches(third)[0]["object"]["status"]["phase"] == "Running"
    idle = await step()
    assert idle == [{"type": "control.stepped", "controller": None, "idle": True}]

    # Back to instant: pending work runs at once.
    await client.send({"action": "create", "yaml": pod_yaml("p2")})
    await client.until(lambda m: m.get("type") == "watch" and summary(m) == ("ADDED", "Pod", "p2", "browser"))
    assert await client.nothing(0.3)
    await client.send({"action": "pace", "pace": "instant"})
    await client.until(lambda m: m.get("type") == "watch" and m["object"].get("reason") == "Started")


async def test_step_of_several(make_cluster: Any, ws_connect: Any) -> None:
    client = await open_stream(make_cluster, ws_connect, node_yaml("n1"), pace="paused")
    await client.send({"action": "create", "yaml": pod_yaml("p1")})
    await client.until(lambda m: m.get("type") == "watch")
    await client.send({"action": "step", "steps": 3})
    messages = await client.quiet(idle=0.5)
    stepped = [m["controller"] for m in messages if m["type"] == "control.stepped"]
    assert stepped == ["scheduler", "kubelet", "kubelet"]
    assert (await KubeObject.objects.aget(kind="Pod", name="p1")).body["status"]["phase"] == "Running"


async def test_slow_pace_spaces_controller_actions(make_cluster: Any, ws_connect: Any, settings: Any) -> None:
    settings.CLUSTERVIZ_SLOW_PULL_SECONDS = 1.0  # the paced image pull (kubelet.py), short for the test
    client = await open_stream(make_cluster, ws_connect, node_yaml("n1"))
    await client.send({"action": "pace", "pace": "slow", "delayMs": 250, "id": "p"})
    assert await client.recv() == {"type": "result", "id": "p", "pace": "slow", "delayMs": 250}
    assert (await client.recv())["cluster"]["paceDelayMs"] == 250
    loop = asyncio.get_running_loop()
    await client.send({"action": "create", "yaml": pod_yaml("p1")})
    arrivals: list[tuple[float, str]] = []
    while len(arrivals) < 3:
        message = await client.recv(timeout=3)
        if message["type"] == "control.stepped":
            arrivals.append((loop.time(), message["controller"]))
    assert [name for _, name in arrivals] == ["scheduler", "kubelet", "kubelet"]
    gaps = [later - earlier for (earlier, _), (later, _) in itertools.pairwise(arrivals)]
    assert all(gap >= 0.22 for gap in gaps), gaps
    assert gaps[0] < 1.5, gaps
    assert gaps[1] < 2.5, gaps  # the pull: 1 s after the pod's startTime (whole seconds)
    assert await client.quiet(idle=0.6) == [], "nothing after the pod runs (no idle announcement when slow)"


async def _next_eviction(client: StreamClient, within: float = 10.0) -> Message:
    """The first `eviction.scheduled` the client receives (other messages are passed over)."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        left = deadline - asyncio.get_running_loop().time()
        message = await client.recv(timeout=max(left, 0.01))
        if message["type"] == "eviction.scheduled":
            return message


async def test_a_late_client_hears_of_evictions_announced_before_it_came(make_cluster: Any, ws_connect: Any) -> None:
    """A pod tolerating a NoExecute taint for 600 s is counted down on every board, also on one
    opened after the taint manager announced the eviction (it is told on connect)."""
    node = node_yaml("n1").replace(
        "metadata:", "spec: {taints: [{key: maintenance, value: 'true', effect: NoExecute}]}\nmetadata:"
    )
    pod = pod_yaml("web").replace(
        "spec:\n",
        "spec:\n  nodeName: n1\n  tolerations: [{key: maintenance, operator: Exists, effect: NoExecute, "
        "tolerationSeconds: 600}]\n",
    )
    first = await open_stream(make_cluster, ws_connect, node + "---\n" + pod)
    announced = await _next_eviction(first)
    assert (announced["pod"], announced["node"]) == ("default/web", "n1")
    late = await ws_connect("c1")
    assert (await late.recv())["type"] == "snapshot"
    told = await _next_eviction(late, within=3.0)
    assert (told["pod"], told["node"]) == ("default/web", "n1")
    assert 590 < told["seconds"] <= 600
