"""The cluster's cache (an informer): every object of a cluster as stored, and the view the scheduler
schedules against, kept in the process that drives the cluster and updated from the watch log
instead of being re-read for every cycle and every controller step.

The control loops list their kinds from it (`listed`, in the order the rows were created, as
`order_by("id")` reads them) and write only through the store; `pinned` keeps one view for a whole
controller step (one look at the log per step).

As upstream's pkg/scheduler/backend/cache (`UpdateSnapshot` with generation numbers), a change
touches only what it changes: a pod is added to or removed from its node's columns, a node is
updated, inserted (in name order) or removed in place (`NodeTable.update_node`, `insert_node`,
`remove_node`). The cache follows the log change by change; when the log no
longer reaches back to where it stands (pruned, reset by an import) or the cluster is not the one
it was built for, it is rebuilt from the store — as it is when this process takes over the
cluster's lease (`forget`), so a restart or a hand-over never schedules against a stale view.
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import connection

from scheduler_core.api.loading import KINDS
from scheduler_core.api.objects import Namespace, Node, PriorityClass, RuntimeClass, Workload
from scheduler_core.collector import collector_paused
from scheduler_core.dra.index import DraIndex
from scheduler_core.explain import add_workloads
from scheduler_core.framework.node_table import NodeTable
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.framework.volume_index import VolumeIndex
from scheduler_core.versions import Version

from .adapters import READ_KINDS, scheduler_object
from .models import Change, Cluster, KubeObject

__all__ = ["Entry", "SchedulerCache", "cached", "forget", "known_absent", "listed", "pinned", "synced", "view", "warm"]

log = logging.getLogger(__name__)
TERMINAL_PHASES = ("Succeeded", "Failed")  # not in the scheduler's cache (the informer's field selector)
#: The kinds kept by `KINDS` bucket beside nodes, pods and namespaces (workloads, volumes, budgets, classes).
_TABLED = ("nodes", "pods", "namespaces")
# in `VolumeIndex.of`'s order
_VOLUME_BUCKETS = ("claims", "volumes", "storage_classes", "csi_nodes", "csi_drivers", "storage_capacities")
# in `DraIndex.of`'s order
_DRA_BUCKETS = ("resource_claims", "device_classes", "resource_slices", "resource_claim_templates")
ObjectKey = tuple[str, str, str]  # (kind, namespace, name): the order a fresh read gives
_SCHEDULER_KINDS = frozenset(READ_KINDS)


@dataclass(slots=True, eq=False)
class Entry:
    """One stored object as the cache holds it (read-only: a controller changes it through the store)."""

    kind: str
    namespace: str
    name: str
    body: dict[str, Any]
    resource_version: int
    created: tuple[int, int] = field(repr=False)  # (0, row id) when read, (1, rv) when followed: creation order

    @property
    def node_name(self) -> str:
        """What the row's `node_name` column holds (a pod's spec.nodeName)."""
        return (self.body.get("spec") or {}).get("nodeName") or "" if self.kind == "Pod" else ""


def _order(info: PodInfo) -> tuple[str, str]:
    return (info.namespace, info.name)


class SchedulerCache:
    """Every object of one cluster at `rv` as stored (`entries`), those of a kind scheduler_core reads
    (`KINDS`) also as its objects, and the NodeTable built from them as `explain.build_table` builds
    it (kept up to date in place while it exists: a change of one kind refreshes only what that kind
    feeds)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.cluster_id = cluster.pk
        self.created_at = cluster.created_at
        self.rv = 0
        self.generation = 0  # changes applied since the cache was built
        self.table_builds = 0  # how often the columns were built from scratch (first use, after a failed cycle)
        self.nodes: dict[str, Node] = {}
        self.pods: dict[str, PodInfo] = {}  # "namespace/name" → PodInfo
        self.namespaces: dict[str, Namespace] = {}
        # the other kinds, by `KINDS` bucket (workloads, claims, volumes, pdbs, priority_classes, …)
        self.buckets: dict[str, dict[ObjectKey, Any]] = {
            kind.bucket: {} for kind in KINDS.values() if kind.bucket not in _TABLED
        }
        self._versions: dict[tuple[str, str, str], int] = {}  # newest resourceVersion applied, per object
        self._table: NodeTable | None = None
        self.entries: dict[str, dict[tuple[str, str], Entry]] = {}  # kind → (namespace, name) → Entry
        self._listed: dict[str, list[Entry]] = {}  # kind → its entries in creation order (until it changes)
        self.changed_at: dict[str, int] = {}  # kind → resourceVersion of its latest change applied
        # controller → the rv (and the cluster's version) at which it last found nothing to do
        self.idle_at: dict[str, tuple[int, Version]] = {}

    # --- from the store ---------------------------------------------------------------------------

    def load(self) -> None:
        """Read everything (after the cluster's resourceVersion: rows read later are only newer)."""
        self.rv = Cluster.objects.filter(pk=self.cluster_id).values_list("resource_version", flat=True).get()
        rows = KubeObject.objects.filter(cluster_id=self.cluster_id).values_list(
            "id", "kind", "namespace", "name", "body", "resource_version"
        )
        # by kind, then namespace and name (by code point: not the database's collation), as `read_objects`
        for pk, kind, namespace, name, body, rv in sorted(rows, key=lambda row: row[1:4]):
            self._set(kind, namespace, name, body, rv, (0, pk))

    def follow(self) -> bool:
        """Apply the watch log up to the cluster's resourceVersion; False when it has a gap.

        One statement reads the cluster's resourceVersion and the changes since `rv` (a consistent
        snapshot: a change and its bump are committed together)."""
        cluster_table = connection.ops.quote_name(Cluster._meta.db_table)
        change_table = connection.ops.quote_name(Change._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT c.resource_version, ch.resource_version, ch.type, ch.kind, ch.namespace, ch.name, ch.body "
                f"FROM {cluster_table} c LEFT JOIN {change_table} ch ON ch.cluster_id = c.id "
                "AND ch.resource_version > %s AND ch.resource_version <= c.resource_version "
                "WHERE c.id = %s ORDER BY ch.resource_version, ch.id",
                [self.rv, self.cluster_id],
            )
            rows = cursor.fetchall()
        if not rows:
            raise Cluster.DoesNotExist(f"cluster {self.cluster_id} is gone")
        current = rows[0][0]
        if current == self.rv:
            return True
        if current < self.rv:
            return False
        if len(rows) != current - self.rv or rows[0][1] is None:  # pruned, or reset by an import
            return False
        for _, rv, event, kind, namespace, name, body in rows:
            if isinstance(body, (str, bytes)):  # SQLite hands JSON back as text, PostgreSQL decoded
                body = json.loads(body)
            self._set(kind, namespace, name, None if event == "DELETED" else body, rv, (1, rv))
        self.rv = current
        return True

    # --- changes ----------------------------------------------------------------------------------

    def _set(
        self, kind: str, namespace: str, name: str, body: dict[str, Any] | None, rv: int, created: tuple[int, int]
    ) -> None:
        """Object `kind namespace/name` is now `body` (None: deleted) as of `rv` (older news is ignored);
        `created` orders it among its kind when it is new."""
        key = (kind, namespace, name)
        if rv <= self._versions.get(key, 0):
            return
        self._versions[key] = rv
        self.changed_at[kind] = rv
        self._listed.pop(kind, None)
        entries = self.entries.setdefault(kind, {})
        if body is None:
            entries.pop((namespace, name), None)
        else:
            known = entries.get((namespace, name))
            entries[(namespace, name)] = Entry(kind, namespace, name, body, rv, known.created if known else created)
        if kind in _SCHEDULER_KINDS:
            self._set_scheduled(kind, namespace, name, None if body is None else scheduler_object(kind, body))

    def size(self) -> int:
        """How many objects it holds."""
        return sum(len(entries) for entries in self.entries.values())

    def listed(self, kind: str, namespace: str | None = None) -> list[Entry]:
        """The objects of `kind` (in `namespace` if given) in the order their rows were created."""
        entries = self._listed.get(kind)
        if entries is None:
            entries = sorted(self.entries.get(kind, {}).values(), key=lambda entry: entry.created)
            self._listed[kind] = entries
        if namespace is None:
            return entries
        return [entry for entry in entries if entry.namespace == namespace]

    def _set_scheduled(self, kind: str, namespace: str, name: str, obj: Any) -> None:
        """The scheduler's objects: `obj` is what scheduler_core reads of the stored body."""
        key = (kind, namespace, name)
        self.generation += 1
        if kind == "Pod":
            self._set_pod(f"{namespace}/{name}", None if obj is None else PodInfo.of(obj))
        elif kind == "Node":
            self._set_node(name, obj)
        elif kind == "Namespace":
            self._set_namespace(name, obj)
        else:
            bucket = KINDS[kind].bucket
            if obj is None:
                self.buckets[bucket].pop(key, None)
            else:
                self.buckets[bucket][key] = obj
            if self._table is not None:
                if bucket in _DRA_BUCKETS:
                    self._set_dra(self._table.dra, bucket, namespace, name, obj)
                else:
                    self._refresh(self._table, bucket)

    def assume_pod(self, body: dict[str, Any]) -> None:
        """The pod as the scheduler just bound it, before the bind is read back from the watch log
        (upstream's Cache.AssumePod): the next cycle of a batch sees it on its node. The stored
        change, when followed, replaces it (the same pod on the same node)."""
        meta = body["metadata"]
        self._set_pod(f"{meta['namespace']}/{meta['name']}", PodInfo.of(scheduler_object("Pod", body)))

    def _set_pod(self, key: str, info: PodInfo | None) -> None:
        old = self.pods.pop(key, None)
        if info is not None:
            self.pods[key] = info
        if self._table is not None:
            if old is not None:
                self._untrack(self._table, old)
            if info is not None:
                self._track(self._table, info)

    def _set_node(self, name: str, node: Node | None) -> None:
        known = name in self.nodes
        if node is None:
            self.nodes.pop(name, None)
        else:
            self.nodes[name] = node
        table = self._table
        if table is None:
            return
        if node is None:
            if name in table.index:
                table.remove_node(table.index[name])  # its pods stay in the cache, bound to a missing node
        elif known:
            table.update_node(table.index[name], node)
        else:
            # In name order, as a fresh build has them; the pods already bound (or nominated) to it come back.
            table.insert_node(bisect.bisect(table.names, name), node)
            for info in sorted(self.pods.values(), key=_order):
                if info.pod.spec.node_name == name or (
                    not info.pod.spec.node_name and info.pod.status.nominated_node_name == name
                ):
                    self._track(table, info)

    def _set_namespace(self, name: str, namespace: Namespace | None) -> None:
        if namespace is None:
            self.namespaces.pop(name, None)
        else:
            self.namespaces[name] = namespace
        if self._table is not None:
            if namespace is None:
                self._table.namespace_labels.pop(name, None)
            else:
                self._table.namespace_labels[name] = namespace.metadata.labels

    # --- the table --------------------------------------------------------------------------------

    @staticmethod
    def _track(table: NodeTable, info: PodInfo) -> None:
        """As `NodeTable.build` places a pod: on its node, or nominated there; pods stay in name order."""
        if info.pod.status.phase in TERMINAL_PHASES:
            return
        node_name = info.pod.spec.node_name
        if node_name:
            i = table.index.get(node_name)
            if i is not None:
                table.add_pod(info, i)
                pods = table.pods[i]
                pods.pop()
                bisect.insort(pods, info, key=_order)
        else:
            i = table.index.get(info.pod.status.nominated_node_name or "")
            if i is not None:
                bisect.insort(table.nominated.setdefault(i, []), info, key=_order)

    @staticmethod
    def _untrack(table: NodeTable, info: PodInfo) -> None:
        if info.pod.status.phase in TERMINAL_PHASES:
            return
        node_name = info.pod.spec.node_name
        if node_name:
            i = table.index.get(node_name)
            if i is not None:
                table.remove_pod(info, i)
        else:
            i = table.index.get(info.pod.status.nominated_node_name or "")
            if i is not None:
                nominated = table.nominated[i]
                nominated[:] = [other for other in nominated if other is not info]
                if not nominated:
                    del table.nominated[i]

    def objects(self, bucket: str) -> list[Any]:
        """The objects of a `KINDS` bucket in the order a fresh read gives (kind, namespace, name)."""
        objects = self.buckets[bucket]
        return [objects[key] for key in sorted(objects)]

    @property
    def priority_classes(self) -> dict[str, PriorityClass]:
        return {name: pc for (_, _, name), pc in sorted(self.buckets["priority_classes"].items())}

    @property
    def runtime_classes(self) -> dict[str, RuntimeClass]:
        return {name: rc for (_, _, name), rc in sorted(self.buckets["runtime_classes"].items())}

    @property
    def workloads(self) -> dict[ObjectKey, Workload]:
        return dict(sorted(self.buckets["workloads"].items()))

    def _refresh(self, table: NodeTable, bucket: str) -> None:
        """What the objects of `bucket` feed in the table, as `explain.build_table` sets it."""
        if bucket == "workloads":
            table.services.clear()
            table.controllers.clear()
            add_workloads(table, self.objects("workloads"))
        elif bucket in _VOLUME_BUCKETS:
            table.volumes = VolumeIndex.of(*(self.objects(b) for b in _VOLUME_BUCKETS))
        elif bucket == "pdbs":
            table.pdbs = self.objects("pdbs")

    def _set_dra(self, dra: DraIndex, bucket: str, namespace: str, name: str, obj: Any) -> None:
        """One DRA object changed: the index follows in place, as the DRA manager's informers do (a
        claim through the assume cache: its devices counted in or out; allocations in flight stay)."""
        key = f"{namespace}/{name}"
        if bucket == "resource_claims":
            if obj is None:
                dra.remove(key)
            else:
                dra.store(obj)
        elif bucket == "device_classes":
            if obj is None:
                dra.classes.pop(name, None)
            else:
                dra.classes[name] = obj
        elif bucket == "resource_claim_templates":
            if obj is None:
                dra.templates.pop(key, None)
            else:
                dra.templates[key] = obj
        else:
            dra.slices = self.objects("resource_slices")
            dra.invalidate_slices()

    def table(self) -> NodeTable:
        """The NodeTable at `rv` (a cycle may change it only temporarily, restoring what it touched)."""
        if self._table is None:
            self._table = self.new_table()
            self.table_builds += 1
        return self._table

    def new_table(self) -> NodeTable:
        """A NodeTable of its own at `rv`, for a what-if that changes it for good (a capacity query)."""
        nodes = [self.nodes[name] for name in sorted(self.nodes)]
        pods = sorted(self.pods.values(), key=_order)
        table = NodeTable.build(nodes, pods, self.namespaces.values())
        for bucket in ("workloads", "claims", "pdbs"):
            self._refresh(table, bucket)
        table.dra = DraIndex.of(*(self.objects(b) for b in _DRA_BUCKETS))
        return table

    def drop_table(self) -> None:
        """Forget the columns (after a cycle failed midway, they may not have been restored)."""
        self._table = None


# What one process keeps (the least recently used cluster goes first): every cluster it drives
# should fit, or each controller step would read its cluster again.
MAX_CACHES = 256
MAX_CACHED_OBJECTS = 400_000  # in all (a 50,000-pod cluster is about 100,000 objects with its events)
_caches: OrderedDict[int, SchedulerCache] = OrderedDict()


_builds_guard = threading.Lock()
_builds: dict[int, threading.Lock] = {}  # cluster → held while its cache is read from the store


def _build_lock(cluster_id: int) -> threading.Lock:
    """The lock one build of a cluster's cache holds: whoever needs it meanwhile (the stream's first
    message, the board's requested figures, a what-if, the control loop's `warm`) waits for that one
    build instead of reading the whole cluster again beside it."""
    with _builds_guard:
        return _builds.setdefault(cluster_id, threading.Lock())


def _current(cluster: Cluster) -> SchedulerCache | None:
    """The kept cache of `cluster`, brought up to date, if it has one it can follow."""
    cache = _caches.get(cluster.pk)
    if cache is not None and cache.created_at == cluster.created_at and cache.follow():
        _caches.move_to_end(cluster.pk)
        return cache
    return None


def synced(cluster: Cluster, rebuild: bool = False) -> SchedulerCache:
    """This process's cache of `cluster`, brought up to the store's current resourceVersion."""
    if not rebuild and (cache := _current(cluster)) is not None:
        return cache
    with _build_lock(cluster.pk):
        if not rebuild and (cache := _current(cluster)) is not None:  # built while this thread waited
            return cache
        if not rebuild and cluster.pk in _caches:
            log.info("cluster %s: the scheduler cache is rebuilt from the store (the watch log has a gap)", cluster.pk)
        cache = _build(cluster)
        cache.follow()  # what was written while the rows were read (applied only where newer)
        _caches[cluster.pk] = cache
        _caches.move_to_end(cluster.pk)
        _evict()
        return cache


#: A cluster of at least this many objects is read with the cycle collector paused, and its cache
#: moved out of the collector's reach once built (a small one is read as any other data).
FREEZE_ABOVE = 2_000


def _build(cluster: Cluster, table: bool = False) -> SchedulerCache:
    """A new cache of `cluster` read from the store (and its columns if `table`); logs what it cost.

    A large one is built with the collector paused, then frozen (`gc.freeze`, process-wide): the
    collector never walks its million objects again (the first collection after the build would, for
    about as long as the build itself, and so would every full collection while it is kept). Nothing
    in a cache is in a reference cycle, so a dropped one is still freed (by reference counting); only
    cycles other threads made garbage while it was built stay uncollected."""
    started, cpu = time.perf_counter(), time.thread_time()
    cache = SchedulerCache(cluster)
    large = KubeObject.objects.filter(cluster_id=cluster.pk).count() >= FREEZE_ABOVE
    if large:  # what is garbage now, while the heap is small: not frozen below
        gc.collect()
    # A build makes about a hundred objects per stored object (rows, models, pod infos), none in a
    # cycle; each collection on the way would walk all those made so far: half of a 5,000-node build.
    with collector_paused() if large else contextlib.nullcontext():
        cache.load()
        if table:
            cache.table()
        if large:
            gc.freeze()
    log.info(
        "cluster %s: scheduler cache built from the store: %d objects in %.2f s (%.2f s CPU)",
        cluster.pk,
        cache.size(),
        time.perf_counter() - started,
        time.thread_time() - cpu,
    )
    return cache


def _evict() -> None:
    """Drop the least recently used caches beyond `MAX_CACHES` or `MAX_CACHED_OBJECTS` (the newest stays)."""
    total = sum(cache.size() for cache in list(_caches.values()))  # `warm` may add one meanwhile
    while len(_caches) > 1 and (len(_caches) > MAX_CACHES or total > MAX_CACHED_OBJECTS):
        _, dropped = _caches.popitem(last=False)
        total -= dropped.size()


def cached(cluster: Cluster) -> bool:
    """Whether this process holds a cache of `cluster` (up to date or not)."""
    cache = _caches.get(cluster.pk)
    return cache is not None and cache.created_at == cluster.created_at


def warm(cluster: Cluster) -> None:
    """Build the cache of `cluster` if this process has none — meant for a worker thread, so that
    reading a big cluster does not hold up the thread every other request of the process shares.
    Only a new cache is built and then published: one in use is never touched from here. A caller
    of `synced` that comes meanwhile waits for this build (and follows the log from where it stands)."""
    try:
        with _build_lock(cluster.pk):
            cached = _caches.get(cluster.pk)
            if cached is not None and cached.created_at == cluster.created_at:
                return
            _caches[cluster.pk] = _build(cluster, table=True)  # the columns too: a what-if needs them
    except Exception:  # whoever needs it next builds it
        log.exception("cluster %s: building the scheduler cache failed", cluster.pk)
    finally:
        connection.close()  # this worker thread's own connection


def forget(cluster_id: int) -> None:
    """Drop a cluster's cache (its lease was lost or taken over: rebuild from the store when next used)."""
    _caches.pop(cluster_id, None)


_pinned: dict[int, SchedulerCache] = {}  # cluster → the view one controller step reads


@contextlib.contextmanager
def pinned(cluster: Cluster) -> Iterator[SchedulerCache]:
    """Bring the cache up to date once and let every `view` of `cluster` read it until the block ends
    (one controller step: each controller writes at most once and then ends the step)."""
    cache = synced(cluster)
    _pinned[cluster.pk] = cache
    try:
        yield cache
    finally:
        _pinned.pop(cluster.pk, None)


def view(cluster: Cluster) -> SchedulerCache:
    """The cache a controller reads: the step's pinned one, else brought up to date now."""
    cache = _pinned.get(cluster.pk)
    return cache if cache is not None else synced(cluster)


def known_absent(cluster: Cluster, kind: str, namespace: str, name: str) -> bool:
    """Whether the view of the running controller step (if any) holds no such object."""
    cache = _pinned.get(cluster.pk)
    return cache is not None and (namespace, name) not in cache.entries.get(kind, {})


def listed(cluster: Cluster, kind: str, namespace: str | None = None) -> list[Entry]:
    """The stored objects of `kind` (in `namespace` if given), in the order their rows were created."""
    return view(cluster).listed(kind, namespace)
