"""The runner's lease (clusterviz/controllers/runner.py): exactly one process drives a cluster."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from clusterviz import services
from clusterviz.controllers import runner
from clusterviz.models import Cluster, KubeObject

from .conftest import node_yaml, pod_yaml


def lease(cluster: Cluster) -> tuple[str, float]:
    cluster.refresh_from_db()
    return cluster.lease_owner, cluster.lease_until


@pytest.fixture(autouse=True)
def _forget_held_leases() -> Iterator[None]:
    """Leases taken here must not be "released at exit" against another database."""
    yield
    runner._held.clear()


@pytest.mark.django_db
def test_two_holders_cannot_both_acquire(make_cluster: Any) -> None:
    cluster = make_cluster("c1")
    before = time.time()
    assert runner.acquire_lease(cluster.pk, "A") is True
    owner, until = lease(cluster)
    assert owner == "A"
    assert before + runner.lease_seconds() <= until <= time.time() + runner.lease_seconds()
    assert runner.acquire_lease(cluster.pk, "B") is False
    assert lease(cluster) == ("A", until), "a refused acquire changes nothing"


@pytest.mark.django_db
def test_the_holder_renews(make_cluster: Any) -> None:
    cluster = make_cluster("c1")
    Cluster.objects.filter(pk=cluster.pk).update(lease_owner="A", lease_until=time.time() + 1)
    assert runner.acquire_lease(cluster.pk, "A") is True
    owner, until = lease(cluster)
    assert owner == "A"
    assert until > time.time() + runner.lease_seconds() - 1


@pytest.mark.django_db
def test_release_lets_the_other_holder_in(make_cluster: Any) -> None:
    cluster = make_cluster("c1")
    assert runner.acquire_lease(cluster.pk, "A")
    runner.release_lease(cluster.pk, "B")  # not B's to release
    assert lease(cluster)[0] == "A"
    assert runner.acquire_lease(cluster.pk, "B") is False
    runner.release_lease(cluster.pk, "A")
    assert lease(cluster) == ("", 0.0)
    assert runner.acquire_lease(cluster.pk, "B") is True
    assert lease(cluster)[0] == "B"


@pytest.mark.django_db
def test_an_expired_lease_is_taken_over(make_cluster: Any) -> None:
    cluster = make_cluster("c1")
    Cluster.objects.filter(pk=cluster.pk).update(lease_owner="A", lease_until=time.time() - 0.01)
    assert runner.acquire_lease(cluster.pk, "B") is True
    assert lease(cluster)[0] == "B"
    assert runner.acquire_lease(cluster.pk, "A") is False, "the old holder does not get it back"


@pytest.mark.django_db
def test_default_owner_is_this_process(make_cluster: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    cluster, other = make_cluster("c1"), make_cluster("c2")
    monkeypatch.setattr(runner, "PROCESS_ID", "process-1")
    assert runner.acquire_lease(cluster.pk)
    assert runner.acquire_lease(other.pk)
    assert runner._held == {cluster.pk, other.pk}
    monkeypatch.setattr(runner, "PROCESS_ID", "process-2")
    assert not runner.acquire_lease(cluster.pk)
    runner.release_lease(cluster.pk)  # not process-2's to release
    assert lease(cluster)[0] == "process-1"
    monkeypatch.setattr(runner, "PROCESS_ID", "process-1")
    runner.release_lease(cluster.pk)
    assert lease(cluster)[0] == ""
    assert runner._held == {other.pk}
    runner.release_all_leases()  # what a server does when it stops
    assert lease(other)[0] == ""
    assert runner._held == set()


@pytest.mark.django_db
def test_lease_length_comes_from_settings(make_cluster: Any, settings: Any) -> None:
    settings.CLUSTERVIZ_LEASE_SECONDS = 2.5
    cluster = make_cluster("c1")
    assert runner.lease_seconds() == 2.5
    runner.acquire_lease(cluster.pk, "A")
    assert lease(cluster)[1] == pytest.approx(time.time() + 2.5, abs=0.5)


@pytest.mark.django_db(transaction=True)
def test_racing_holders_exactly_one_wins(make_cluster: Any) -> None:
    """Eight holders, each on its own thread and database connection, acquire at the same moment."""
    cluster = make_cluster("c1")
    barrier = threading.Barrier(8)
    results: dict[str, bool] = {}

    def contend(owner: str) -> None:
        try:
            barrier.wait()
            results[owner] = runner.acquire_lease(cluster.pk, owner)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=contend, args=(f"holder-{i}",)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [owner for owner, won in results.items() if won]
    assert len(results) == 8
    assert len(winners) == 1
    assert lease(cluster)[0] == winners[0]


async def _pod_node(name: str) -> str:
    return (await KubeObject.objects.aget(kind="Pod", name=name)).node_name


@pytest.mark.django_db(transaction=True)
async def test_a_runner_waits_for_anothers_lease_then_takes_over(
    make_cluster: Any, stop_runners: None, settings: Any
) -> None:
    settings.CLUSTERVIZ_LEASE_SECONDS = 0.6  # a non-holder retries every 0.2 s
    cluster = await sync_to_async(make_cluster)("c1", node_yaml("n1") + "---\n" + pod_yaml("p1"))
    # Another (live) process holds the lease: this process's runner must not act.
    await Cluster.objects.filter(pk=cluster.pk).aupdate(lease_owner="other", lease_until=time.time() + 60)
    runner.ensure_runner(cluster.pk)
    await asyncio.sleep(0.6)
    assert await _pod_node("p1") == ""
    assert (await Cluster.objects.aget(pk=cluster.pk)).lease_owner == "other"
    # The other process dies: its lease expires, and this runner takes over.
    await Cluster.objects.filter(pk=cluster.pk).aupdate(lease_until=time.time() - 1)
    for _ in range(100):
        if await _pod_node("p1"):
            break
        await asyncio.sleep(0.02)
    assert await _pod_node("p1") == "n1"
    assert (await Cluster.objects.aget(pk=cluster.pk)).lease_owner == runner.PROCESS_ID
    # Stopping the runner hands the lease back.
    await runner.stop_runners()
    assert (await Cluster.objects.aget(pk=cluster.pk)).lease_owner == ""


@pytest.mark.django_db(transaction=True)
async def test_a_runner_renews_its_lease_while_idle(make_cluster: Any, stop_runners: None, settings: Any) -> None:
    settings.CLUSTERVIZ_LEASE_SECONDS = 0.6
    cluster = await sync_to_async(make_cluster)("c1", node_yaml("n1"))
    runner.ensure_runner(cluster.pk)
    await asyncio.sleep(0.1)
    first = (await Cluster.objects.aget(pk=cluster.pk)).lease_until
    await asyncio.sleep(0.9)  # longer than the lease: only renewal keeps it
    current = await Cluster.objects.aget(pk=cluster.pk)
    assert current.lease_owner == runner.PROCESS_ID
    assert current.lease_until > first
    assert current.lease_until > time.time()
    assert not await sync_to_async(runner.acquire_lease)(cluster.pk, "intruder")


@pytest.mark.django_db(transaction=True)
async def test_ensure_runner_reuses_a_live_runner_and_replaces_a_dead_one(
    make_cluster: Any, stop_runners: None
) -> None:
    cluster = await sync_to_async(make_cluster)("c1")
    first = runner.ensure_runner(cluster.pk)
    assert runner.ensure_runner(cluster.pk) is first
    assert first.task is not None
    first.task.cancel()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    second = runner.ensure_runner(cluster.pk)
    assert second is not first
    assert second.task is not None and not second.task.done()


@pytest.mark.django_db(transaction=True)
def test_a_quiet_runner_skips_the_echoes_of_its_own_writes_only(make_cluster: Any) -> None:
    """After a drive that ended with nothing to do, the changes it had seen wake nothing; a newer change,
    any other message, a poke or a sixth of the lease gone by does."""
    cluster = make_cluster("c1", node_yaml("n1") + "---\n" + pod_yaml("p1"))
    loop_runner = runner.ClusterRunner(cluster.pk)
    asyncio.run(loop_runner._drive())  # binds p1, starts it, then finds nothing to do
    assert KubeObject.objects.get(name="p1").node_name == "n1"
    quiet = Cluster.objects.get(pk=cluster.pk).resource_version
    assert loop_runner.quiet_rv == quiet and loop_runner._up_to_date()
    for echo in range(quiet - 3, quiet + 1):  # its own writes, heard after the drive
        loop_runner._hear({"type": "watch", "resourceVersion": str(echo)})
    loop_runner._hear({"type": "scheduler.cycle", "cycle": 1})
    assert loop_runner._up_to_date()
    changed = services.set_label(cluster, "n1", "k", "v", "kubectl")  # a change it has not seen
    loop_runner._hear({"type": "watch", "resourceVersion": changed["metadata"]["resourceVersion"]})
    assert not loop_runner._up_to_date()
    asyncio.run(loop_runner._drive())
    assert loop_runner._up_to_date()
    loop_runner._hear({"type": "profile.updated"})  # no resourceVersion: it looks again
    assert not loop_runner._up_to_date()
    asyncio.run(loop_runner._drive())
    loop_runner.poke()
    assert not loop_runner._up_to_date()
    asyncio.run(loop_runner._drive())
    loop_runner.driven_at -= runner.lease_seconds() / 6  # time to renew the lease
    assert not loop_runner._up_to_date()
