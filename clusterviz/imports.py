"""Cluster import: a `kubectl get … -o json|yaml` dump into a cluster, in bulk, atomically.

An import validates the dump object by object and writes it in batches (`bulk_create`, one short
transaction each, with the job's progress) into a hidden *staging* cluster; one last short
transaction then moves every row into the target cluster (which must be empty) and resets its watch
log (watchers relist, as after an etcd compaction). A failed, cancelled or killed import therefore
never leaves a half cluster: its staging cluster is deleted, at once or — after a crash — by the
next process that looks at the job (`recover_interrupted`).

`start()` runs an import in a worker thread (the server's event loop stays free); `run()` runs it
in the caller's thread (the management command).
"""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.db.models import Q

from scheduler_core.api.loading import InputError, load_yaml_documents, locate
from scheduler_core.api.objects import PriorityClass

from . import services, store
from .models import (
    IMPORT_CANCELLED,
    IMPORT_DONE,
    IMPORT_FAILED,
    IMPORT_RUNNING,
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
    "start",
]

log = logging.getLogger(__name__)

#: settings.CLUSTERVIZ_IMPORT_MAX_BYTES: the largest dump an import reads (a 5,000-node, 50,000-pod
#: `kubectl get nodes,pods -A -o json` is about 150 MiB).
DEFAULT_MAX_BYTES = 512 * 1024 * 1024
#: settings.CLUSTERVIZ_IMPORT_MAX_OBJECTS: the most objects one import stores.
DEFAULT_MAX_OBJECTS = 250_000
BATCH_SIZE = 1000  # objects per bulk write (and per progress update)
HEARTBEAT_SECONDS = 2.0  # how often a running import proves it is alive
COMPONENT = "kubectl"
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


# --- reading a dump ---------------------------------------------------------------------------------


@dataclass
class Item:
    """One object of a dump, with what locates its errors (YAML node and path, or just the path)."""

    data: Any
    node: yaml.Node | None
    prefix: tuple[int | str, ...]


def _list_items(data: Any, node: yaml.Node | None, source: str) -> list[Item]:
    """A `kind: List` (or `PodList`, …) → its items; any other document is one object."""
    if isinstance(data, dict) and str(data.get("kind", "")).endswith("List") and "items" in data:
        raw = data.get("items") or []
        if not isinstance(raw, list):
            raise InputError(f"{locate(source, node, ('items',))}: must be a list")
        item_kind = str(data["kind"])[: -len("List")]
        items = []
        for k, item in enumerate(raw):
            if item_kind and isinstance(item, dict) and "kind" not in item:
                item["kind"] = item_kind  # typed lists (PodList) leave out their items' kind
            items.append(Item(item, node, ("items", k)))
        return items
    return [Item(data, node, ())]


def read_dump(data: bytes, source: str) -> list[Item]:
    """Parse a JSON or YAML dump (a List, a multi-document stream or one object) into its objects."""
    if len(data) > max_bytes():
        raise InputError(f"{source}: larger than {max_bytes() // 2**20} MiB (CLUSTERVIZ_IMPORT_MAX_BYTES)")
    head = data[:4096].lstrip()
    if head[:1] in (b"{", b"["):
        try:
            parsed = json.loads(data)
        except UnicodeDecodeError as exc:
            raise InputError(f"{source}: not valid UTF-8 (byte {exc.start})") from None
        except json.JSONDecodeError as exc:
            raise InputError(f"{source}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
        except RecursionError:
            raise InputError(f"{source}: nesting too deep") from None
        del data
        if isinstance(parsed, list):
            return [Item(obj, None, (k,)) for k, obj in enumerate(parsed)]
        return _list_items(parsed, None, source)
    items: list[Item] = []
    for document in load_yaml_documents(data, source):
        items.extend(_list_items(document.data, document.node, source))
    return items


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
        # Not addressable: "." is neither in a URL slug nor in a DNS label.
        staging = Cluster.objects.create(slug=f"import.{secrets.token_hex(8)}", title=f"import into {slug}")
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


def _validated(job: ImportJob, items: list[Item], source: str) -> Iterator[tuple[Item, dict[str, Any]]]:
    """Admit every supported object (PriorityClasses first: pods take their priority from them)."""
    classes: dict[str, PriorityClass] = {}
    skipped: Counter[str] = Counter()
    for item in items:
        if not isinstance(item.data, dict) or not isinstance(item.data.get("kind"), str):
            where = locate(source, item.node, item.prefix)
            raise InputError(f"{where}: not a Kubernetes object (a mapping with kind, apiVersion and metadata)")
        kind = item.data["kind"]
        if kind == "PriorityClass":
            body = admit(item.data, source, item.node, prefix=item.prefix)
            classes[body["metadata"]["name"]] = PriorityClass.model_validate(body)
        elif kind not in SUPPORTED_KINDS:
            skipped[kind] += 1
    if skipped:
        _progress(job, skipped=dict(skipped))
    runtimes: dict[str, Any] = {}
    for item in sorted(items, key=lambda i: i.data["kind"] != "PriorityClass"):
        if item.data["kind"] not in SUPPORTED_KINDS:
            continue
        meta = item.data.get("metadata")
        if isinstance(meta, dict):
            for field in _SERVER_FIELDS:
                meta.pop(field, None)
        body = admit(item.data, source, item.node, classes, runtimes, item.prefix)
        item.data = {"kind": item.data["kind"]}  # the parsed dump is released as it is admitted
        yield item, body


def _rows(job: ImportJob, items: list[Item], source: str, first_rv: int) -> Iterator[list[KubeObject]]:
    """Validated objects as rows of the staging cluster, in batches; duplicates refused with their place."""
    assert job.staging_id is not None
    seen: dict[tuple[str, str, str], tuple[int | str, ...]] = {}
    uids: set[str] = set()
    batch: list[KubeObject] = []
    now = time.time()
    rv = first_rv
    for item, body in _validated(job, items, source):
        kind, meta = body["kind"], body["metadata"]
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
        if len(seen) > max_objects():
            raise InputError(f"{source}: more than {max_objects()} objects (CLUSTERVIZ_IMPORT_MAX_OBJECTS)")
        if len(batch) >= BATCH_SIZE:
            yield batch
            batch = []
    if batch:
        yield batch
    if not seen:
        skipped = ", ".join(f"{n} {kind}" for kind, n in sorted(job.skipped.items()))
        raise InputError(
            f"{source}: no objects found (a dump holds Nodes, Pods, Namespaces, PriorityClasses, Deployments "
            f"or ReplicaSets{'; left out: ' + skipped if skipped else ''})"
        )


def run(job: ImportJob, data: bytes, on_progress: Callable[[ImportJob], None] | None = None) -> Cluster:
    """Carry out an import (in this thread); the target cluster, or an error with nothing stored."""
    source = job.source or "snapshot"
    try:
        items = read_dump(data, source)
        del data
        if len(items) > max_objects():
            raise InputError(
                f"{source}: {len(items)} objects: more than {max_objects()} (CLUSTERVIZ_IMPORT_MAX_OBJECTS)"
            )
        _progress(job, total=len(items), phase="storing")
        target = Cluster.objects.filter(slug=job.slug).first()
        first_rv = (target.resource_version if target else 0) + 1
        read = stored = 0
        for batch in _rows(job, items, source, first_rv):
            _check_cancel(job)
            read += len(batch)
            with transaction.atomic():
                KubeObject.objects.bulk_create(batch, batch_size=BATCH_SIZE)
                stored += len(batch)
                _progress(job, read=read, stored=stored)
            if on_progress is not None:
                on_progress(job)
            for row in batch:  # the parsed dump is released as it is stored
                row.body = None
        del items
        _check_cancel(job)
        _progress(job, phase="swapping")
        cluster = _swap(job, first_rv + stored - 1)
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
        _finish(job, IMPORT_FAILED, "the import failed on the server; nothing was stored")
        raise
    return cluster


def _swap(job: ImportJob, last_rv: int) -> Cluster:
    """Move the staged rows into the target in one transaction; the watch log restarts after them."""
    with transaction.atomic():
        target = Cluster.objects.select_for_update().filter(slug=job.slug).first()
        if target is None:
            target = services.create_cluster(job.slug)
        elif KubeObject.objects.filter(cluster=target).exists():
            raise InputError(f'cluster "{job.slug}" is not empty: import into a new cluster')
        if ImportJob.objects.filter(pk=job.pk, cancel_requested=True).exists():
            raise ImportCancelled
        KubeObject.objects.filter(cluster_id=job.staging_id).update(cluster=target)
        # Changes before the import cannot be replayed on top of it: watchers relist (410 Gone upstream).
        Change.objects.filter(cluster=target).delete()
        rv = max(target.resource_version, last_rv)
        Cluster.objects.filter(pk=target.pk).update(resource_version=rv)
        target.resource_version = rv
        staging_id = job.staging_id
        ImportJob.objects.filter(pk=job.pk).update(state=IMPORT_DONE, phase="done", staging=None, heartbeat=time.time())
        Cluster.objects.filter(pk=staging_id).delete()
        job.state, job.phase, job.staging_id = IMPORT_DONE, "done", None
        message = {"type": "cluster.imported", "import": job.pk, "resourceVersion": str(rv)}
        transaction.on_commit(lambda: publish(target.pk, message))
    return target


def _finish(job: ImportJob, state: str, error: str) -> None:
    """A job that did not complete: record why and drop its staging cluster (nothing stays)."""
    staging_id = job.staging_id
    ImportJob.objects.filter(pk=job.pk).update(state=state, error=error, staging=None, heartbeat=time.time())
    if staging_id is not None:
        _drop_staging(staging_id)
    job.state, job.error, job.staging_id = state, error, None


def _drop_staging(cluster_id: int) -> None:
    """Delete a staging cluster and its rows in short transactions (a live class keeps writing)."""
    while True:
        ids = list(KubeObject.objects.filter(cluster_id=cluster_id).values_list("pk", flat=True)[:5000])
        if not ids:
            break
        KubeObject.objects.filter(pk__in=ids).delete()
    Cluster.objects.filter(pk=cluster_id, staged_import__isnull=True, slug__startswith="import.").delete()


def cancel(job: ImportJob) -> ImportJob:
    """Ask a running import to stop; it removes what it staged (a finished import is left as it is)."""
    ImportJob.objects.filter(pk=job.pk, state=IMPORT_RUNNING).update(cancel_requested=True)
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
            state=IMPORT_FAILED, error="interrupted: the server stopped during the import; nothing was stored"
        )
        if taken:
            count += 1
            if job.staging_id is not None:
                ImportJob.objects.filter(pk=job.pk).update(staging=None)
                _drop_staging(job.staging_id)
    for orphan in Cluster.objects.filter(Q(slug__startswith="import."), staged_import__isnull=True):
        _drop_staging(orphan.pk)
    return count


# --- in the background --------------------------------------------------------------------------------

_running: dict[int, threading.Thread] = {}


def start(job: ImportJob, data: bytes) -> threading.Thread:
    """Run the import in a worker thread, with a heartbeat while it reads (a server stays responsive)."""

    def work() -> None:
        done = threading.Event()

        def beat() -> None:
            while not done.wait(HEARTBEAT_SECONDS):
                with contextlib.suppress(Exception):
                    ImportJob.objects.filter(pk=job.pk, state=IMPORT_RUNNING).update(heartbeat=time.time())
            connection.close()

        beater = threading.Thread(target=beat, name=f"import-{job.pk}-heartbeat", daemon=True)
        beater.start()
        try:
            close_old_connections()
            run(job, data)
        except (InputError, store.StoreError, ImportCancelled):
            pass
        except Exception:
            log.exception("import %s failed", job.pk)
        finally:
            done.set()
            beater.join()
            _running.pop(job.pk, None)
            connection.close()

    thread = threading.Thread(target=work, name=f"import-{job.pk}", daemon=True)
    _running[job.pk] = thread
    thread.start()
    return thread
