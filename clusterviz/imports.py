"""Cluster import: a `kubectl get … -o json|yaml` dump into a cluster, in bulk, atomically.

An import validates the dump object by object and writes it in batches (`bulk_create`, in short
transactions of WRITE_ROWS rows, the job's progress after each batch) into a hidden *staging*
cluster; one last short transaction then moves every row into the target cluster (which must be
empty) and resets its watch log (watchers relist, as after an etcd compaction). A failed,
cancelled or killed import therefore never leaves a half cluster: its staging cluster is deleted,
at once or — after a crash — by the next process that looks at the job (`recover_interrupted`).

`start()` runs an import in a worker process (clusterviz/import_process.py: the server's event loop
and GIL stay free; `work()` is what that process does); `run()` runs it in the caller's thread (the
management command, tests).
"""

from __future__ import annotations

import logging
import secrets
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from django.conf import settings
from django.db import transaction

from scheduler_core.api.loading import KINDS, InputError, locate, parse_object
from scheduler_core.api.objects import PriorityClass
from scheduler_core.api.version_document import server_git_version
from scheduler_core.versions.suggest import Suggestion, suggest_version

from . import import_process, services, store
from .dump_reading import Dump, Item, read_dump
from .models import (
    IMPORT_CANCELLED,
    IMPORT_DONE,
    IMPORT_FAILED,
    IMPORT_RUNNING,
    STAGING_PREFIX,
    Change,
    Cluster,
    ImportJob,
    KubeObject,
)
from .publish import publish
from .validation import SUPPORTED_KINDS, admit

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_OBJECTS",
    "ImportCancelled",
    "cancel",
    "max_bytes",
    "max_objects",
    "new_job",
    "recover_interrupted",
    "run",
    "settle",
    "start",
    "work",
]

log = logging.getLogger(__name__)

#: settings.CLUSTERVIZ_IMPORT_MAX_BYTES: the largest dump an import reads — 1 GiB, room for a
#: 5,000-node / 50,000-pod `kubectl get … -o json` dump (949 MB, README's snapshot table). An import
#: holds the dump's bytes and one object at a time (a YAML dump: its text too, as libyaml reads a
#: stream whole), plus one batch of rows.
DEFAULT_MAX_BYTES = 1024 * 1024 * 1024
#: settings.CLUSTERVIZ_IMPORT_MAX_OBJECTS: the most objects one import stores.
DEFAULT_MAX_OBJECTS = 250_000
BATCH_SIZE = 1000  # objects per progress update (and cancel check)
WRITE_ROWS = 100  # objects per write transaction (see _write)
HEARTBEAT_SECONDS = 2.0  # how often a running import proves it is alive
COMPONENT = "kubectl"
INTERRUPTED = "interrupted: the server stopped during the import; nothing was stored"
FAILED_ON_SERVER = "the import failed on the server; nothing was stored"
_SERVER_FIELDS = ("resourceVersion", "generation", "managedFields", "selfLink")


def max_bytes() -> int:
    return int(getattr(settings, "CLUSTERVIZ_IMPORT_MAX_BYTES", DEFAULT_MAX_BYTES))


def stale_seconds() -> float:
    """How long a running import may be silent before it is taken for dead (its process was killed)."""
    from .controllers.runner import lease_seconds

    return max(3 * HEARTBEAT_SECONDS, 2 * lease_seconds())


def max_objects() -> int:
    return int(getattr(settings, "CLUSTERVIZ_IMPORT_MAX_OBJECTS", DEFAULT_MAX_OBJECTS))


class ImportCancelled(Exception):
    """The job was cancelled (by its owner) while running."""


# --- the job ------------------------------------------------------------------------------------------


def new_job(slug: str, source: str) -> ImportJob:
    """Register an import into `slug` (an existing empty cluster, or a new one) and its staging cluster."""
    recover_interrupted()
    from .controllers.runner import PROCESS_ID

    with transaction.atomic():
        if ImportJob.objects.filter(slug=slug, state=IMPORT_RUNNING).exists():
            raise store.Conflict(f'cluster "{slug}" is already being imported into')
        target = Cluster.objects.filter(slug=slug).first()
        if target is not None and KubeObject.objects.filter(cluster=target).exists():
            raise InputError(f'cluster "{slug}" is not empty: import into a new cluster')
        staging = Cluster.objects.create(slug=f"{STAGING_PREFIX}{secrets.token_hex(8)}", title=f"import into {slug}")
        return ImportJob.objects.create(
            slug=slug,
            staging=staging,
            source=source[:256],
            worker=PROCESS_ID,
            heartbeat=time.time(),
        )


def _progress(job: ImportJob, **fields: Any) -> None:
    fields["heartbeat"] = time.time()
    ImportJob.objects.filter(pk=job.pk).update(**fields)
    for name, value in fields.items():
        setattr(job, name, value)


def _check_cancel(job: ImportJob) -> None:
    if ImportJob.objects.filter(pk=job.pk, cancel_requested=True).exists():
        raise ImportCancelled


def _admission_pass(job: ImportJob, dump: Dump) -> tuple[dict[str, PriorityClass], str | None]:
    """First reading: every object is an object, how many there are (within the limit), the
    PriorityClasses pods take their priority from, the kinds that are left out, and the API
    server's version when the dump holds a `kubectl version` document."""
    source = dump.source
    classes: dict[str, PriorityClass] = {}
    skipped: Counter[str] = Counter()
    server: str | None = None
    total = 0
    for item in dump.items():
        if server is None and (git_version := server_git_version(item.data)) is not None:
            server = git_version
            continue
        if not isinstance(item.data, dict) or not isinstance(item.data.get("kind"), str):
            where = locate(source, item.node, item.prefix)
            raise InputError(f"{where}: not a Kubernetes object (a mapping with kind, apiVersion and metadata)")
        kind = item.data["kind"]
        if kind == "PriorityClass":
            body = admit(item.data, source, item.node, prefix=item.prefix)
            classes[body["metadata"]["name"]] = PriorityClass.model_validate(body)
        elif not _stored(kind):
            skipped[kind] += 1
        total += 1
        if total % BATCH_SIZE == 0:
            _check_cancel(job)
        if total > max_objects():
            raise InputError(f"{source}: more than {max_objects()} objects (CLUSTERVIZ_IMPORT_MAX_OBJECTS)")
    _progress(job, total=total, skipped=dict(skipped), phase="storing")
    return classes, server


def _stored(kind: str) -> bool:
    """Whether an import stores objects of `kind`: the kinds the app serves, and every kind the
    scheduler reads (scheduler_core's `KINDS`); the rest are counted and left out."""
    return kind in SUPPORTED_KINDS or kind in KINDS


# Kinds whose admission (clusterviz.validation.admit) already validates with scheduler_core's models.
_ADMITTED_WITH_CORE_MODELS = frozenset({"Pod", "Node", "Namespace", "PriorityClass", "Deployment", "ReplicaSet"})


def _validated(dump: Dump, classes: dict[str, PriorityClass]) -> Iterator[tuple[Item, dict[str, Any]]]:
    """Second reading: every stored object admitted (validated and defaulted) as it comes."""
    runtimes: dict[str, Any] = {}
    for item in dump.items():
        kind = item.data.get("kind")
        if not isinstance(kind, str) or not _stored(kind):  # (kindless: the `kubectl version` document)
            continue
        meta = item.data.get("metadata")
        if isinstance(meta, dict):
            for field in _SERVER_FIELDS:
                meta.pop(field, None)
        if kind in SUPPORTED_KINDS:
            if kind in KINDS and kind not in _ADMITTED_WITH_CORE_MODELS:
                # the scheduler's reading of it must succeed too (e.g. a claim's storage quantity)
                parse_object(item.data, dump.source, item.object_node, prefix=item.prefix)
            body = admit(item.data, dump.source, item.node, classes, runtimes, item.prefix)
        else:
            # A kind only the scheduler reads: validated by the core's model (a located error), stored
            # as the dump has it — kind and apiVersion unchanged, so the API can serve it later.
            _check_meta(item, dump.source)
            parse_object(item.data, dump.source, item.object_node, prefix=item.prefix)
            body = item.data
        # the parsed object is released as it is admitted (what locates a duplicate name stays)
        item.data = {"kind": kind, "metadata": {"name": body["metadata"].get("name")}}
        yield item, body


def _check_meta(item: Item, source: str) -> None:
    """metadata with a name (what every stored object needs before its model is read)."""
    meta = item.data.get("metadata")
    if not isinstance(meta, dict):
        raise InputError(f"{locate(source, item.node, (*item.prefix, 'metadata'))}: Required value")
    if not isinstance(meta.get("name"), str) or not meta["name"]:
        raise InputError(f"{locate(source, item.node, (*item.prefix, 'metadata', 'name'))}: Required value")


def _rows(
    job: ImportJob, dump: Dump, classes: dict[str, PriorityClass], first_rv: int, kubelets: list[str]
) -> Iterator[list[KubeObject]]:
    """Validated objects as rows of the staging cluster, in batches; duplicates refused with their place.
    The Nodes' kubelet versions are gathered in `kubelets`."""
    assert job.staging_id is not None
    seen: dict[tuple[str, str, str], tuple[int | str, ...]] = {}
    uids: set[str] = set()
    batch: list[KubeObject] = []
    now = time.time()
    rv = first_rv
    source = dump.source
    for item, body in _validated(dump, classes):
        kind, meta = body["kind"], body["metadata"]
        if kind == "Node":
            info = (body.get("status") or {}).get("nodeInfo")
            if isinstance(info, dict) and isinstance(info.get("kubeletVersion"), str):
                kubelets.append(info["kubeletVersion"])
        namespace = "" if kind in store.CLUSTER_SCOPED else (meta.get("namespace") or "default")
        if kind not in store.CLUSTER_SCOPED:
            meta["namespace"] = namespace
        key = (kind, namespace, meta["name"])
        if key in seen:
            where = locate(source, item.node, (*item.prefix, "metadata", "name"))
            first = ".".join(map(str, seen[key])) or "the same document"
            raise InputError(f'{where}: {store.resource_name(kind)} "{meta["name"]}" appears twice (first at {first})')
        seen[key] = item.prefix
        uid = meta.get("uid")
        if not isinstance(uid, str) or not uid or uid in uids:
            uid = meta["uid"] = str(uuid.uuid4())
        uids.add(uid)
        meta.setdefault("creationTimestamp", store.now_rfc3339())
        meta["resourceVersion"] = str(rv)
        row = KubeObject(
            cluster_id=job.staging_id,
            kind=kind,
            namespace=namespace,
            name=meta["name"],
            uid=uid,
            resource_version=rv,
            body=body,
            queue_ts=now,
        )
        store._index(row)
        batch.append(row)
        rv += 1
        if len(batch) >= BATCH_SIZE:
            yield batch
            batch = []
    if batch:
        yield batch
    if not seen:
        skipped = ", ".join(f"{n} {kind}" for kind, n in sorted(job.skipped.items()))
        raise InputError(
            f"{source}: no objects found (a dump holds Nodes, Pods and the other kinds the scheduler reads"
            f"{'; left out: ' + skipped if skipped else ''})"
        )


def run(
    job: ImportJob, data: bytes, on_progress: Callable[[ImportJob], None] | None = None, *, announce: bool = True
) -> Cluster:
    """Carry out an import (in this thread); the target cluster, or an error with nothing stored.

    `announce`: publish `cluster.imported` once it is swapped in (a worker process leaves that to the
    server, whose channel layer the target's clients and control loop listen to: `settle`)."""
    source = job.source or "snapshot"
    try:
        if len(data) > max_bytes():
            raise InputError(f"{source}: larger than {max_bytes() // 2**20} MiB (CLUSTERVIZ_IMPORT_MAX_BYTES)")
        dump = read_dump(data, source, max_bytes(), stored=_stored)
        del data
        classes, server = _admission_pass(job, dump)  # syntax errors, too, are found before anything is stored
        target = Cluster.objects.filter(slug=job.slug).first()
        first_rv = (target.resource_version if target else 0) + 1
        read = stored = 0
        kubelets: list[str] = []
        for batch in _rows(job, dump, classes, first_rv, kubelets):
            _check_cancel(job)
            read += len(batch)
            _write(batch)
            stored += len(batch)
            _progress(job, read=read, stored=stored)
            if on_progress is not None:
                on_progress(job)
            for row in batch:  # what is stored is released
                row.body = None
        del dump
        _check_cancel(job)
        _progress(job, phase="swapping")
        cluster = _swap(job, first_rv, stored, announce, suggest_version(kubelets, server))
    except ImportCancelled:
        _finish(job, IMPORT_CANCELLED, "cancelled")
        raise
    except InputError as exc:
        _finish(job, IMPORT_FAILED, str(exc))
        raise
    except store.StoreError as exc:
        _finish(job, IMPORT_FAILED, str(exc))
        raise
    except Exception:
        log.exception("import %s failed", job.pk)
        _finish(job, IMPORT_FAILED, FAILED_ON_SERVER)
        raise
    return cluster


def _write(batch: list[KubeObject]) -> None:
    """Store rows in transactions of WRITE_ROWS: each holds the database's write lock (SQLite's, taken
    at BEGIN IMMEDIATE) only while its one INSERT is built and run, so a live class's writes wait
    milliseconds, not the whole batch (bench/load.py --import-nodes). The staging cluster, not these
    transactions, makes the import atomic."""
    for start in range(0, len(batch), WRITE_ROWS):
        with transaction.atomic():
            KubeObject.objects.bulk_create(batch[start : start + WRITE_ROWS])


def _swap(job: ImportJob, first_rv: int, stored: int, announce: bool, suggestion: Suggestion | None) -> Cluster:
    """Move the staged rows into the target in one transaction; the watch log restarts after them.
    The target answers as the version the snapshot's API server or kubelets suggest, the why kept beside it."""
    with transaction.atomic():
        target = Cluster.objects.select_for_update().filter(slug=job.slug).first()
        if target is None:
            target = services.create_cluster(job.slug)
        elif KubeObject.objects.filter(cluster=target).exists():
            raise InputError(f'cluster "{job.slug}" is not empty: import into a new cluster')
        current = ImportJob.objects.select_for_update().get(pk=job.pk)
        if current.cancel_requested:
            raise ImportCancelled
        if current.state != IMPORT_RUNNING or current.staging_id != job.staging_id:
            # taken for dead by another process (no heartbeat for too long): its staging is gone
            raise store.Conflict("the import was interrupted; nothing was stored")
        moved = KubeObject.objects.filter(cluster_id=job.staging_id).update(cluster=target)
        if moved != stored:
            raise store.Conflict(f"the import lost staged objects ({moved} of {stored}); nothing was stored")
        # Changes before the import cannot be replayed on top of it: watchers relist (410 Gone upstream).
        Change.objects.filter(cluster=target).delete()
        rv = max(target.resource_version, first_rv + stored - 1)
        version: dict[str, Any] = {}
        if suggestion is not None:
            version = {
                "kubernetes_version": suggestion.version,
                "feature_gates": "",
                "version_hint": suggestion.to_json(),
            }
        Cluster.objects.filter(pk=target.pk).update(resource_version=rv, **version)
        target.resource_version = rv
        staging_id = job.staging_id
        ImportJob.objects.filter(pk=job.pk).update(state=IMPORT_DONE, phase="done", staging=None, heartbeat=time.time())
        Cluster.objects.filter(pk=staging_id).delete()
        job.state, job.phase, job.staging_id = IMPORT_DONE, "done", None
        if announce:
            transaction.on_commit(lambda: _announce(job, target))
    return target


def _announce(job: ImportJob, target: Cluster) -> None:
    """Tell the target's clients and control loop that its objects were swapped in."""
    message = {"type": "cluster.imported", "import": job.pk, "resourceVersion": str(target.resource_version)}
    publish(target.pk, message)


def _finish(job: ImportJob, state: str, error: str) -> None:
    """A job that did not complete: record why and drop its staging cluster (nothing stays). A job
    already settled (done, or taken for dead by another process) keeps its outcome; what this one
    staged since is dropped all the same. The outcome is recorded in the transaction that removes the
    staging cluster, so a job is never seen failed while what it staged is still stored."""
    staging_id = job.staging_id
    if staging_id is not None:
        _drop_staged_rows(staging_id)
    with transaction.atomic():
        taken = ImportJob.objects.filter(pk=job.pk, state=IMPORT_RUNNING).update(
            state=state, error=error, staging=None, heartbeat=time.time()
        )
        if staging_id is not None:
            _drop_staging_cluster(staging_id)
    job.staging_id = None
    if taken:
        job.state, job.error = state, error


def _drop_staged_rows(cluster_id: int) -> None:
    """Delete a staging cluster's rows in short transactions (a live class keeps writing)."""
    while True:
        ids = list(KubeObject.objects.filter(cluster_id=cluster_id).values_list("pk", flat=True)[:5000])
        if not ids:
            break
        KubeObject.objects.filter(pk__in=ids).delete()


def _drop_staging_cluster(cluster_id: int) -> None:
    """Delete a staging cluster no job refers to any more (with any rows staged since its rows went)."""
    Cluster.objects.filter(pk=cluster_id, staged_import__isnull=True, slug__startswith=STAGING_PREFIX).delete()


def _drop_staging(cluster_id: int) -> None:
    """Delete a staging cluster and its rows."""
    _drop_staged_rows(cluster_id)
    _drop_staging_cluster(cluster_id)


def cancel(job: ImportJob) -> ImportJob:
    """Stop a running import: its worker process, when this server runs it, is killed and the job
    settled here; another process's worker stops at its next batch. Nothing it staged stays (a
    finished import is left as it is)."""
    ImportJob.objects.filter(pk=job.pk, state=IMPORT_RUNNING).update(cancel_requested=True)
    import_process.stop(job.pk)
    job.refresh_from_db()
    return job


def recover_interrupted() -> int:
    """Fail the imports whose process died (no heartbeat for `stale_seconds()`) and drop their staging.

    Also drops staging clusters left without a job (a crash between the two writes of a cleanup).
    """
    stale = time.time() - stale_seconds()
    count = 0
    for job in ImportJob.objects.filter(state=IMPORT_RUNNING, heartbeat__lt=stale):
        taken = ImportJob.objects.filter(pk=job.pk, state=IMPORT_RUNNING, heartbeat__lt=stale).update(
            state=IMPORT_FAILED, error=INTERRUPTED
        )
        if taken:
            count += 1
            if job.staging_id is not None:
                ImportJob.objects.filter(pk=job.pk).update(staging=None)
                _drop_staging(job.staging_id)
    for orphan in Cluster.objects.filter(slug__startswith=STAGING_PREFIX, staged_import__isnull=True):
        _drop_staging(orphan.pk)
    return count


# --- in a worker process -------------------------------------------------------------------------------


def start(job: ImportJob, dump: BinaryIO) -> None:
    """Run the import in a worker process (clusterviz/import_process.py); `dump` is a file holding the
    dump (the worker reads it; it may be closed once this returns)."""
    try:
        import_process.start(job.pk, dump, on_end=settle, beat=_beat, every=HEARTBEAT_SECONDS)
    except OSError as exc:  # no process could be started (out of memory, process limit)
        log.error("import %s: no worker process: %s", job.pk, exc)
        _finish(job, IMPORT_FAILED, f"the import could not start: {exc.strerror or exc}; nothing was stored")


def work(job_id: int, data: bytes) -> int:
    """The worker process's part: carry out the import; its exit status (0: done, 1: refused,
    cancelled or taken for dead, 2: failed). Its outcome is in the job's row."""
    from .controllers.runner import PROCESS_ID

    ImportJob.objects.filter(pk=job_id).update(worker=PROCESS_ID)
    job = ImportJob.objects.get(pk=job_id)
    if job.state != IMPORT_RUNNING or job.staging_id is None:
        return 1  # settled before the worker could begin (cancelled, or its server taken for dead)
    held = [data]
    del data
    try:
        run(job, held.pop(), announce=False)  # the only reference: run() lets the bytes go once decoded
    except (InputError, store.StoreError, ImportCancelled):
        return 1
    except Exception:  # logged by run()
        return 2
    return 0


def _beat(job_id: int) -> None:
    """Prove a running import alive (the server does it while its worker lives: the worker starts
    slowly on a busy machine, and its reading passes write nothing for a while)."""
    ImportJob.objects.filter(pk=job_id, state=IMPORT_RUNNING).update(heartbeat=time.time())


def settle(job_id: int, interrupted: bool = False) -> ImportJob | None:
    """After a worker process ended: a job it left running is marked cancelled (when that was asked),
    interrupted (the server stopped it) or failed (it crashed), its staging dropped; a done one is
    announced."""
    job = ImportJob.objects.filter(pk=job_id).first()
    if job is None:
        return None
    if job.state == IMPORT_RUNNING:
        if job.cancel_requested:
            _finish(job, IMPORT_CANCELLED, "cancelled")
        else:
            _finish(job, IMPORT_FAILED, INTERRUPTED if interrupted else FAILED_ON_SERVER)
    elif job.state == IMPORT_DONE and not interrupted:  # (a stopping server publishes no more)
        target = Cluster.objects.filter(slug=job.slug).first()
        if target is not None:
            _announce(job, target)
    return job
