"""A scale-up at the instant pace, as a control plane at scale does it: the ReplicaSet creates pods
in upstream's slow-start batches, the scheduler schedules many pods per step (one cycle each, the
same as one by one), the kubelets start them in batches, and the stream carries the bulk writes as
`watch.batch` messages. Outcomes, not timings (`python bench/app_scale.py scaleup` times them)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from clusterviz import cycle_traces, scheduler_cache, services, store
from clusterviz.controllers import replicaset, scheduler
from clusterviz.controllers.runner import reconcile, step_once
from clusterviz.models import Change, Cluster, SchedulingCycle
from tests.app import create, deployment_yaml, events, node_yaml, pod_yaml
from tests.app.test_scheduler_cache import assert_consistent

Obj = dict[str, Any]


def _nodes(count: int, cpu: str = "4") -> list[str]:
    zones = ("a", "b", "c")
    return [node_yaml(f"n{i:02}", cpu=cpu, labels={"topology.kubernetes.io/zone": zones[i % 3]}) for i in range(count)]


def _log(cluster: Cluster) -> list[tuple[int, str, str, str, str]]:
    return [
        (c.resource_version, c.type, c.kind, c.name, c.component)
        for c in Change.objects.filter(cluster=cluster).order_by("resource_version")
    ]


def test_slow_start_batches_double_from_one() -> None:
    assert replicaset.slow_start_batches(0) == []
    assert replicaset.slow_start_batches(1) == [1]
    assert replicaset.slow_start_batches(7) == [1, 2, 4]
    assert replicaset.slow_start_batches(10) == [1, 2, 4, 3]
    assert replicaset.slow_start_batches(500) == [1, 2, 4, 8, 16, 32, 64, 128, 245]


@pytest.mark.django_db
def test_one_replicaset_step_creates_a_burst_in_slow_start_batches() -> None:
    cluster = services.create_cluster("burst")
    create(cluster, *_nodes(3), deployment_yaml("web", 0))
    reconcile(cluster)
    start = cluster.resource_version
    services.scale(cluster, "Deployment", "default", "web", 700, "kubectl")
    actors = []
    while len(store.list_objects(cluster, "Pod")) < 500:
        actor, _ = step_once(cluster)
        actors.append(actor)
        assert actor in ("deployment-controller", "replicaset-controller")
    assert actors[-1] == "replicaset-controller"
    assert len(store.list_objects(cluster, "Pod")) == replicaset.BURST_REPLICAS  # one sync: at most 500
    # In the watch log: runs of pods, each run followed by its SuccessfulCreate events, 1, 2, 4, …
    runs: list[int] = []
    previous = ""
    for _, event, kind, _, component in _log(cluster):
        if component != "replicaset-controller" or event != "ADDED":
            continue
        if kind == "Pod":
            if previous != "Pod":
                runs.append(0)
            runs[-1] += 1
        previous = kind
    assert runs == replicaset.slow_start_batches(500)
    created = events(cluster, reason="SuccessfulCreate")
    assert len(created) == 500
    assert {e["message"] for e in created} == {f"Created pod: {p['metadata']['name']}" for p in _pods(cluster)}
    rvs = [rv for rv, *_ in _log(cluster) if rv > start]
    assert rvs == list(range(start + 1, start + 1 + len(rvs)))  # no gap, each change once
    reconcile(cluster)
    assert len(_pods(cluster)) == 700


def _pods(cluster: Cluster) -> list[Obj]:
    return store.list_objects(cluster, "Pod")


@pytest.mark.django_db
def test_a_scale_up_ends_with_every_pod_bound_once_running_and_logged() -> None:
    cluster = services.create_cluster("scale")
    create(cluster, *_nodes(8), deployment_yaml("web", 0))
    reconcile(cluster)
    services.scale(cluster, "Deployment", "default", "web", 120, "kubectl")
    steps = reconcile(cluster)
    assert steps < 30, f"{steps} steps: the controllers acted one object at a time"
    pods = _pods(cluster)
    assert len(pods) == 120
    assert all(p["spec"].get("nodeName") and p["status"]["phase"] == "Running" for p in pods)
    assert Counter(p["spec"]["nodeName"] for p in pods).most_common(1)[0][1] <= 40  # 4 cpu / 100m
    scheduled = events(cluster, reason="Scheduled")
    assert sorted(e["involvedObject"]["name"] for e in scheduled) == sorted(p["metadata"]["name"] for p in pods)
    for event in scheduled:
        pod = store.get(cluster, "Pod", "default", event["involvedObject"]["name"])
        assert (
            event["message"] == f"Successfully assigned default/{pod['metadata']['name']} to {pod['spec']['nodeName']}"
        )
        assert event["source"] == {"component": "default-scheduler"}
    for reason in ("Pulling", "Pulled", "Created", "Started"):
        assert len(events(cluster, reason=reason)) == 120, reason
    # one cycle per pod, numbered 1…120, each naming the node the pod is bound to
    cycles = {c.pod: c for c in SchedulingCycle.objects.filter(cluster=cluster)}
    assert sorted(c.number for c in cycles.values()) == list(range(1, 121))
    assert all(cycles[f"default/{p['metadata']['name']}"].node == p["spec"]["nodeName"] for p in pods)
    # the watch log: every write once, in order, without a gap; each pod bound by exactly one write
    log = _log(cluster)
    assert [rv for rv, *_ in log] == list(range(1, len(log) + 1))
    binds = [name for _, event, kind, name, component in log if kind == "Pod" and component == "default-scheduler"]
    assert sorted(binds) == sorted(p["metadata"]["name"] for p in pods)
    # the informer / scheduler cache equals a fresh read of the store
    assert_consistent(cluster)
    rs = store.list_objects(cluster, "ReplicaSet")[0]
    assert rs["status"]["readyReplicas"] == 120


def _spread_pod(name: str) -> str:
    # A soft zone spread and pod anti-affinity: where each pod goes depends on the pods bound before it.
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
    return pod_yaml(
        name,
        cpu="300m",
        labels={"app": "web"},
        topologySpreadConstraints=[
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ],
        affinity={
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "podAffinityTerm": term}]
            }
        },
    )


@pytest.mark.django_db
def test_a_batch_schedules_each_pod_as_one_by_one_scheduling_does() -> None:
    """Same cycles, same order, same nodes, same messages and the same replayable traces; pods that do
    not fit are written as a single step writes them."""
    documents = [*_nodes(5, cpu="2"), *(_spread_pod(f"p{k:02}") for k in range(40))]
    single = services.create_cluster("single")
    batched = services.create_cluster("batched")
    create(single, *documents)
    create(batched, *documents)
    while scheduler.schedule_next(single):
        pass
    while scheduler.schedule_batch(batched, limit=1000):
        pass

    def outcome(cluster: Cluster) -> list[tuple[Any, ...]]:
        rows = SchedulingCycle.objects.filter(cluster=cluster).order_by("number")
        return [(c.number, c.pod, c.scheduled, c.node, c.message, c.resource_version > 0) for c in rows]

    assert outcome(batched) == outcome(single)
    assert sum(1 for row in outcome(single) if not row[2]) == 10  # 5 nodes × 2 cpu / 300m: 30 fit
    assert {p["metadata"]["name"]: p["spec"].get("nodeName") for p in _pods(batched)} == {
        p["metadata"]["name"]: p["spec"].get("nodeName") for p in _pods(single)
    }
    # every trace (stored lazily for the batch) replays as the one-by-one cycle's
    for cycle in SchedulingCycle.objects.filter(cluster=batched).order_by("number"):
        assert cycle_traces.resolve(cycle)
        expected = SchedulingCycle.objects.get(cluster=single, number=cycle.number).events
        assert json.loads(json.dumps(cycle.events)) == expected, cycle.number
    assert_consistent(batched)


@pytest.mark.django_db
def test_deferred_traces_are_stored_when_the_loop_is_idle(client: Any) -> None:
    cluster = services.create_cluster("traces")
    create(cluster, *_nodes(4), *(pod_yaml(f"p{k}") for k in range(12)))
    assert scheduler.schedule_batch(cluster, limit=1000)
    deferred = [c.number for c in SchedulingCycle.objects.filter(cluster=cluster) if cycle_traces.is_deferred(c.events)]
    assert deferred == list(range(1, 13))
    # asked before it is stored: encoded at once, as any kept cycle
    answer = client.get(f"/api/clusters/traces/cycles/{deferred[0]}").json()
    assert answer["events"][0]["type"] == "cycle.started" and answer["events"][-1]["type"] == "cycle.finished"
    reconcile(cluster)  # the pods start; then idle steps store the rest
    while cycle_traces.pending_count(cluster.pk):
        step_once(cluster)
    stored = SchedulingCycle.objects.filter(cluster=cluster)
    assert not [c.number for c in stored if cycle_traces.is_deferred(c.events)]
    table = scheduler_cache.synced(cluster).table()
    assert all(c.events[0]["nodeNames"] == list(table.names) for c in stored)


@pytest.mark.django_db
def test_a_trace_lost_with_its_process_is_a_clear_404(client: Any) -> None:
    cluster = services.create_cluster("lost")
    create(cluster, *_nodes(2), pod_yaml("a"), pod_yaml("b"))
    assert scheduler.schedule_batch(cluster, limit=1000)
    cycle_traces.forget(cluster.pk)  # as a restarted server has forgotten them
    response = client.get("/api/clusters/lost/cycles/1")
    assert response.status_code == 404
    assert "trace was not kept" in response.json()["message"]


@pytest.mark.django_db(transaction=True)
async def test_a_follower_receives_each_change_of_a_scale_up_exactly_once(make_cluster: Any, ws_connect: Any) -> None:
    objects = "\n---\n".join([*_nodes(6), deployment_yaml("web", 0)])
    await sync_to_async(make_cluster)("c1", objects)
    presenter = await ws_connect("c1")
    follower = await ws_connect("c1", query="")
    for stream in (presenter, follower):
        assert (await stream.recv())["type"] == "snapshot"
    await presenter.send({"action": "scale", "name": "web", "replicas": 90})

    def all_running(message: dict[str, Any]) -> bool:
        return (
            message.get("type") == "watch"
            and message["kind"] == "ReplicaSet"
            and (message["object"].get("status", {}).get("readyReplicas") == 90)
        )

    received = await follower.until(all_running, timeout=60)
    received += await follower.quiet(idle=1.0, limit=30)
    watched = [m for m in received if m["type"] == "watch"]
    rvs = [int(m["resourceVersion"]) for m in watched]
    assert rvs == list(range(rvs[0], rvs[0] + len(rvs))), "each change exactly once, in order"
    cluster = await Cluster.objects.aget(slug="c1")
    assert rvs[-1] == cluster.resource_version
    logged = await sync_to_async(_log)(cluster)
    assert [(m["kind"], m["object"]["metadata"]["name"]) for m in watched] == [
        (kind, name) for rv, _, kind, name, _ in logged if rv >= rvs[0]
    ]
    assert follower.batches >= 5, "the bulk writes came as watch.batch messages"
    running = {
        m["object"]["metadata"]["name"]
        for m in watched
        if m["kind"] == "Pod" and m["object"].get("status", {}).get("phase") == "Running"
    }
    assert len(running) == 90
    cycles = [m for m in received if m["type"] == "scheduler.cycle"]
    assert len(cycles) == 90 and all(m["scheduled"] for m in cycles)


async def test_published_batches_splice_the_stored_bodies_into_valid_messages() -> None:
    """`publish_changes` splices each body as the store encoded it: the text decodes to the message."""
    from channels.layers import get_channel_layer

    from clusterviz.publish import group_name, publish_changes

    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(group_name(77), channel)
    bodies = [{"kind": "Pod", "metadata": {"name": f"p{k}", "labels": {"ü": "ß"}}, "n": k} for k in range(3)]
    changes = [
        {"event": "ADDED", "kind": "Pod", "object": body, "resourceVersion": str(10 + k), "component": "x"}
        for k, body in enumerate(bodies)
    ]
    await sync_to_async(publish_changes)(77, changes, [json.dumps(body) for body in bodies])
    envelope = await layer.receive(channel)
    message = json.loads(envelope["text"])
    assert message["type"] == "watch.batch" and (message["from"], message["resourceVersion"]) == ("10", "12")
    assert message["changes"] == [{"type": "watch", **c, "path": ["x", *FULL_PATH]} for c in changes]
    await layer.group_discard(group_name(77), channel)


FULL_PATH = ["kube-apiserver", "etcd", "kube-apiserver", "scheduler", "kubelet", "controller-manager"]
