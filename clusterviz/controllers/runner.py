"""Drives the control loops of each cluster at its pace.

`step_once` lets the first controller with work do one action (a write, published like any other);
`reconcile` steps until nothing is left. In a server process, a `ClusterRunner` task per cluster
wakes on every change of its cluster (through the channel layer, so changes made by other server
processes wake it too), holds a lease in the database so that exactly one process drives a
cluster, and honours the pace: instant, slowed (one action per delay) or paused (one action per
"step").
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import logging
import os
import time
import uuid
from collections.abc import Callable
from typing import Any

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db.models import Q

from scheduler_core.versions import Version

from .. import cycle_traces, profiles, rows, scheduler_cache
from ..models import PACE_INSTANT, PACE_PAUSED, Cluster
from ..publish import group_name, publish
from ..shared_db import shared_db
from . import (
    daemonset,
    deployment,
    disruption,
    endpoints,
    job,
    kubelet,
    namespace,
    persistentvolume,
    replicaset,
    resourceclaim,
    scheduler,
    statefulset,
    taint_manager,
)

__all__ = [
    "ClusterRunner",
    "acquire_lease",
    "ensure_runner",
    "reconcile",
    "release_all_leases",
    "release_lease",
    "step_once",
    "stop_runners",
]

log = logging.getLogger(__name__)
PROCESS_ID = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
LEASE_SECONDS = 15.0  # default of settings.CLUSTERVIZ_LEASE_SECONDS
MAX_STEPS = 10_000
#: Messages a runner's own drive publishes: hearing them is no reason to look at the cluster again.
OWN_MESSAGES = frozenset({"scheduler.cycle", "control.stepped"})
REJOIN_SECONDS = 2.0  # how often a listener renews its group membership (a restarted Redis forgets groups)
LISTEN_BACKOFF_MAX = 0.5  # the longest wait between two attempts to reach a lost channel layer


#: The clockless controllers, in the order a step tries them, with the kinds each one reads (None:
#: every kind). Each decides from those objects alone, so one that found nothing to do finds nothing
#: again until an object of one of its kinds changes: it is skipped until then.
CONTROLLERS: tuple[tuple[str, Callable[[Cluster], bool], frozenset[str] | None], ...] = (
    ("deployment-controller", deployment.sync_deployments, frozenset({"Deployment", "ReplicaSet", "Pod"})),
    ("replicaset-controller", replicaset.sync_replica_sets, frozenset({"ReplicaSet", "Pod"})),
    (
        "daemonset-controller",
        daemonset.sync_daemon_sets,
        frozenset({"DaemonSet", "Node", "Pod", "Event", "ControllerRevision"}),
    ),
    (
        "statefulset-controller",
        statefulset.sync_stateful_sets,
        frozenset({"StatefulSet", "Pod", "PersistentVolumeClaim", "ControllerRevision"}),
    ),
    ("job-controller", job.sync_jobs, frozenset({"Job", "Pod"})),
    (
        "resourceclaim-controller",
        resourceclaim.sync_resource_claims,
        frozenset({"Pod", "ResourceClaim", "ResourceClaimTemplate"}),
    ),
    ("endpoint-controller", endpoints.sync_endpoints, frozenset({"Service", "Endpoints", "EndpointSlice", "Pod"})),
    (
        "persistentvolume-binder-controller",
        persistentvolume.sync_volumes,
        frozenset({"PersistentVolume", "PersistentVolumeClaim", "StorageClass"}),
    ),
)


#: What a clockless controller runs instead at the instant pace (see `step_once`).
BULK_SYNCS: dict[str, Callable[[Cluster], bool]] = {
    "replicaset-controller": lambda cluster: replicaset.sync_replica_sets(cluster, bulk=True),
    "resourceclaim-controller": lambda cluster: resourceclaim.sync_resource_claims(cluster, bulk=True),
}


def _run_unless_idle(
    cache: scheduler_cache.SchedulerCache,
    name: str,
    sync: Callable[[Cluster], bool],
    kinds: frozenset[str] | None,
    cluster: Cluster,
    version: Version,
) -> bool:
    """Run one clockless controller, unless nothing it reads changed since it last found nothing to
    do — the objects of `kinds` (every kind: None), and the version the cluster runs (its gates
    change what a controller does, as a kube-controller-manager restarted at another release)."""
    idle = cache.idle_at.get(name)
    if idle is not None and idle[1] == version:
        idle_at = idle[0]
        if kinds is None:
            if cache.rv == idle_at:
                return False
        elif all(cache.changed_at.get(kind, 0) <= idle_at for kind in kinds):
            return False
    if sync(cluster):
        cache.idle_at.pop(name, None)
        return True
    cache.idle_at[name] = (cache.rv, version)
    return False


def step_once(cluster: Cluster) -> tuple[str | None, float | None]:
    """One controller action; returns (which controller acted or None, next timed deadline)."""
    actor, deadline, _ = _step(cluster)
    return actor, deadline


def _step(cluster: Cluster) -> tuple[str | None, float | None, int]:
    """`step_once`, and the resourceVersion of the view the controllers looked at."""
    # At the instant pace a step acts on many objects, as a control plane at scale does (slow-start
    # pod creation, many cycles per scheduler step, kubelets starting pods in parallel); at the slow
    # and paused paces each step stays one object, so that a class sees each.
    bulk = cluster.pace == PACE_INSTANT
    with scheduler_cache.pinned(cluster) as cache:
        seen = cache.rv
        version = profiles.version_of(cluster)
        for name, sync, kinds in CONTROLLERS:
            if bulk and name in BULK_SYNCS:
                sync = BULK_SYNCS[name]
            if _run_unless_idle(cache, name, sync, kinds, cluster, version):
                return name, None, seen
        if disruption.sync_disruption_budgets(cluster):  # reads the clock (disruptedPods expire): every step
            return "disruption-controller", None, seen
        if scheduler.schedule_batch(cluster) if bulk else scheduler.schedule_next(cluster):
            return "scheduler", None, seen
        if bulk and kubelet.start_batch(cluster):
            return "kubelet", None, seen
        acted, waiting = kubelet.scan(cluster)
        if acted:
            return "kubelet", None, seen
        if _run_unless_idle(cache, "namespace-controller", namespace.step, None, cluster, version):
            return "namespace-controller", None, seen
        acted, deadline = taint_manager.step(cluster)
        if acted:
            return "taint-eviction-controller", None, seen
    if waiting is not None:
        deadline = waiting if deadline is None else min(deadline, waiting)
    if cycle_traces.flush(cluster.pk):  # idle: store the traces a batch deferred, and come back soon
        deadline = time.time() if deadline is None else min(deadline, time.time())
    return None, deadline, seen


def reconcile(cluster: Cluster, limit: int = MAX_STEPS) -> int:
    """Step until quiet (timed evictions that are not yet due are left); returns the actions taken."""
    for taken in range(limit):
        actor, _ = step_once(cluster)
        if actor is None:
            return taken
    log.warning("cluster %s: still busy after %d steps", cluster.slug, limit)
    return limit


def lease_seconds() -> float:
    """How long a lease lasts without renewal: how long a crashed process keeps its clusters stalled."""
    return float(getattr(settings, "CLUSTERVIZ_LEASE_SECONDS", LEASE_SECONDS))


_held: set[int] = set()  # clusters whose lease this process may hold (released at exit)


def acquire_lease(cluster_id: int, owner: str | None = None) -> bool:
    """Take or renew the lease of a cluster (free, expired or already `owner`'s; this process by default)."""
    owner = owner or PROCESS_ID
    now = time.time()
    taken = (
        Cluster.objects.filter(pk=cluster_id)
        .filter(Q(lease_owner=owner) | Q(lease_until__lt=now) | Q(lease_owner=""))
        .update(lease_owner=owner, lease_until=now + lease_seconds())
    )
    if taken == 1 and owner == PROCESS_ID:
        _held.add(cluster_id)
    return taken == 1


def release_lease(cluster_id: int, owner: str | None = None) -> None:
    owner = owner or PROCESS_ID
    Cluster.objects.filter(pk=cluster_id, lease_owner=owner).update(lease_owner="", lease_until=0)
    if owner == PROCESS_ID:
        _held.discard(cluster_id)


def release_all_leases() -> None:
    """Give up every lease of this process, so that a restarted server takes over at once."""
    if not _held:
        return
    Cluster.objects.filter(pk__in=list(_held), lease_owner=PROCESS_ID).update(lease_owner="", lease_until=0)
    _held.clear()


@atexit.register
def _release_at_exit() -> None:
    # A server stopped by SIGTERM (daphne) exits normally: hand its clusters over right away
    # instead of leaving them stalled until the lease expires. uvicorn uses the ASGI lifespan.
    with contextlib.suppress(Exception):
        release_all_leases()


class ClusterRunner:
    """The control-loop task of one cluster in this process."""

    def __init__(self, cluster_id: int) -> None:
        self.cluster_id = cluster_id
        self.wake = asyncio.Event()
        self.steps_requested = 0
        self.task: asyncio.Task[None] | None = None
        self.listener: asyncio.Task[None] | None = None
        self.holding = False  # whether this process held the lease at the last attempt
        self.driven_at = 0.0  # monotonic time of the last drive's start
        # What the next wake-up must look at: a drive that ended with nothing to do at `quiet_rv` need
        # not run again for the echoes of its own writes (changes up to `quiet_rv`), only for a newer
        # change (`heard_rv`), for anything else that was published (`must_drive`), or on its clock.
        self.quiet_rv: int | None = None
        self.heard_rv = 0
        self.must_drive = True

    def start(self) -> None:
        # Fresh contexts: a task inherits its creator's context variables, and a request handled
        # through a sync middleware carries asgiref's per-request CurrentThreadExecutor, which quits
        # when the request ends. Every later sync_to_async of the runner would then fail
        # ("CurrentThreadExecutor already quit or is broken"), and the cluster would stall for good.
        loop = asyncio.get_running_loop()
        self.task = loop.create_task(self.run(), name=f"runner-{self.cluster_id}", context=contextvars.Context())
        self.listener = loop.create_task(
            self.listen(), name=f"runner-listen-{self.cluster_id}", context=contextvars.Context()
        )

    async def stop(self) -> None:
        for task in (self.task, self.listener):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        await shared_db(release_lease)(self.cluster_id)

    def poke(self, steps: int = 0) -> None:
        self.steps_requested += steps
        self.must_drive = True
        self.wake.set()

    def _hear(self, message: dict[str, Any]) -> None:
        """Note what a message of the cluster's group asks of the next drive."""
        kind = message.get("type")
        if kind == "watch":
            try:
                self.heard_rv = max(self.heard_rv, int(message.get("resourceVersion", 0)))
                return
            except (TypeError, ValueError):
                pass
        elif kind in OWN_MESSAGES:
            return
        elif kind == "control.step":
            self.steps_requested += int(message.get("steps", 1))
        self.must_drive = True

    def _up_to_date(self) -> bool:
        """Whether a wake-up brought nothing the last drive has not seen (and the lease is fresh)."""
        return (
            not self.must_drive
            and self.holding
            and self.quiet_rv is not None
            and self.heard_rv <= self.quiet_rv
            and time.monotonic() - self.driven_at < lease_seconds() / 6
        )

    async def listen(self) -> None:
        """Wake on every message to the cluster's group (from any process).

        Survives the channel layer going away (Redis restarted): a failed receive is retried with
        backoff, and the group membership is renewed every `REJOIN_SECONDS`, because a restarted Redis
        has forgotten every group (its receive may even reconnect silently). Each reconnection wakes
        the loop once, for whatever changed meanwhile.
        """
        layer = get_channel_layer()
        if layer is None:
            return
        group = group_name(self.cluster_id)
        # One channel for the runner's life: a new one per reconnection would leave dead members behind.
        channel = await layer.new_channel()
        failures = 0
        try:
            while True:
                rejoin: asyncio.Task[None] | None = None
                try:
                    await layer.group_add(group, channel)
                    rejoin = asyncio.create_task(
                        _rejoin(layer, group, channel), name=f"runner-rejoin-{self.cluster_id}"
                    )
                    if failures:
                        log.warning("cluster %s: listening to the channel layer again", self.cluster_id)
                        failures = 0
                        self.poke()
                    while True:
                        message = await layer.receive(channel)
                        self._hear(message.get("message", {}))
                        self.wake.set()
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    failures += 1
                    delay = min(LISTEN_BACKOFF_MAX, 0.1 * 2 ** min(failures - 1, 6))
                    if failures == 1:
                        log.warning("cluster %s: lost the channel layer (%r); reconnecting", self.cluster_id, exc)
                    self.poke()  # a change may have been missed: look once
                    await asyncio.sleep(delay)
                finally:
                    if rejoin is not None:
                        rejoin.cancel()
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(layer.group_discard(group, channel), timeout=2)

    async def run(self) -> None:
        deadline: float | None = None
        while True:
            timeout = lease_seconds() / 3
            if deadline is not None:
                timeout = max(0.05, min(timeout, deadline - time.time()))
            woken = False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), timeout=timeout)
                woken = True
            self.wake.clear()
            if woken and self._up_to_date() and (deadline is None or time.time() < deadline):
                continue
            try:
                deadline = await self._drive()
            except asyncio.CancelledError:
                raise
            except Exception:
                self.quiet_rv = None
                log.exception("cluster %s: control loop failed", self.cluster_id)
                await asyncio.sleep(1.0)

    async def _drive(self) -> float | None:
        self.must_drive = False
        self.quiet_rv = None
        self.driven_at = time.monotonic()
        cluster, first = await shared_db(_lease_and_step)(self.cluster_id, self.holding)
        if cluster is None:
            if self.holding:  # another process drives the cluster now: our view would go stale
                self.holding = False
                scheduler_cache.forget(self.cluster_id)
            return None
        if not self.holding:  # (re)acquired: a cache kept meanwhile (for what-ifs, the stream) is kept:
            # each use follows the watch log, which holds the other holder's writes, and a gap rebuilds it
            self.holding = True
        if not scheduler_cache.cached(cluster):
            # A big cluster's first read happens in a worker thread, not in the one all requests share.
            await sync_to_async(scheduler_cache.warm, thread_sensitive=False)(cluster)
        if cluster.pace == PACE_PAUSED:
            if self.steps_requested <= 0:
                return None
            self.steps_requested -= 1
            actor, deadline, _ = await shared_db(_step)(cluster)
            await shared_db(_announce)(cluster.pk, actor)
            return deadline
        if cluster.pace == PACE_INSTANT:
            while True:
                actor, deadline, seen = first or await shared_db(_step)(cluster)
                first = None
                if actor is None:
                    self.quiet_rv = seen
                    return deadline
        actor, deadline, seen = await shared_db(_step)(cluster)
        if actor is None:
            self.quiet_rv = seen
        else:
            await shared_db(_announce)(cluster.pk, actor)
            await asyncio.sleep(cluster.pace_delay_ms / 1000)
            self.poke()
        return deadline


async def _rejoin(layer: Any, group: str, channel: str) -> None:
    """Renew a channel's group membership periodically (idempotent; a failure is retried next time)."""
    while True:
        await asyncio.sleep(REJOIN_SECONDS)
        with contextlib.suppress(Exception):
            await layer.group_add(group, channel)


def _leased_cluster(cluster_id: int) -> Cluster | None:
    """The cluster, if this process holds its lease. The lease is taken, or renewed once a sixth of it
    has passed — not written on each of a busy cluster's wake-ups (an idle runner wakes every third
    of it, and renews then)."""
    cluster = rows.find_cluster(cluster_id)
    if cluster.lease_owner == PROCESS_ID and cluster.lease_until - time.time() > lease_seconds() * 5 / 6:
        return cluster
    return cluster if acquire_lease(cluster_id) else None


def _lease_and_step(
    cluster_id: int, holding: bool
) -> tuple[Cluster | None, tuple[str | None, float | None, int] | None]:
    """`_leased_cluster`, and, in the same trip to the database thread, the drive's first step when
    nothing has to happen in between (the lease was held already, the pace is instant, the cache built)."""
    cluster = _leased_cluster(cluster_id)
    if cluster is None or not holding or cluster.pace != PACE_INSTANT or not scheduler_cache.cached(cluster):
        return cluster, None
    return cluster, _step(cluster)


def _announce(cluster_id: int, actor: str | None) -> None:
    publish(cluster_id, {"type": "control.stepped", "controller": actor, "idle": actor is None})


_runners: dict[int, ClusterRunner] = {}


def ensure_runner(cluster_id: int) -> ClusterRunner:
    """The runner of a cluster in this process, started on first use (inside the server's loop)."""
    runner = _runners.get(cluster_id)
    if runner is None or runner.task is None or runner.task.done():
        runner = ClusterRunner(cluster_id)
        _runners[cluster_id] = runner
        runner.start()
    runner.poke()
    return runner


async def stop_runners() -> None:
    for runner in list(_runners.values()):
        await runner.stop()
    _runners.clear()
