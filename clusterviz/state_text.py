"""The cluster's state as JSON text, spliced from the stored bodies: the HTTP state and the stream's
snapshot send what the database holds without decoding and re-encoding every object (at 1,000
realistic nodes that round trip is 10 MB of JSON each way).

Two fields no browser view reads are left out by the database itself: a Node's `status.images` (on a
cloud node, a list of cached images with their digests: 7 of its 10 KB) and every object's
`metadata.managedFields`. The gzipped state is kept per cluster while its validator (ETag) holds, so
the pages that open a cluster at the same resourceVersion (a class) cost one encoding."""

from __future__ import annotations

import gzip
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.db.models import Func, TextField

from .models import Cluster, KubeObject

# The paths `BrowserBody` removes, as (SQLite JSON path, PostgreSQL text[] path).
UNREAD_PATHS = (("$.status.images", "{status,images}"), ("$.metadata.managedFields", "{metadata,managedFields}"))
GZIP_LEVEL = 6  # Django's GZipMiddleware level
MAX_ENCODED = 8  # clusters whose encoded state is kept


class BrowserBody(Func):
    """A stored body as JSON text, without the `UNREAD_PATHS` (removed in SQL: no decoding in Python)."""

    output_field = TextField()

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, Any]:
        paths = ", ".join(f"'{sqlite}'" for sqlite, _ in UNREAD_PATHS)
        return self.as_sql(compiler, connection, template=f"json_remove(%(expressions)s, {paths})", **extra)

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, Any]:
        removed = "%(expressions)s"
        for _, path in UNREAD_PATHS:
            removed = f"({removed} #- '{path}')"
        return self.as_sql(compiler, connection, template=f"{removed}::text", **extra)


def state_texts(cluster: Cluster) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """(`{"cluster", "resourceVersion"}`, every object's JSON text by kind), read at one resourceVersion,
    in the order `services.state` gives."""
    cluster.refresh_from_db()
    objects: dict[str, list[str]] = {}
    with transaction.atomic():
        rv = Cluster.objects.filter(pk=cluster.pk).values_list("resource_version", flat=True).get()
        rows = (
            KubeObject.objects.filter(cluster=cluster)
            .order_by("kind", "namespace", "name")
            .annotate(text=BrowserBody("body"))
            .values_list("kind", "text")
        )
        for kind, text in rows.iterator(chunk_size=2000):
            objects.setdefault(kind, []).append(text)
    head = {"cluster": cluster.to_dict(), "resourceVersion": str(rv)}
    head["cluster"]["resourceVersion"] = str(rv)
    return head, objects


def state_json(head: dict[str, Any], objects: dict[str, list[str]]) -> str:
    """The state document (`services.state`'s shape) as one JSON text."""
    kinds = ",".join(f"{json.dumps(kind)}:[{','.join(texts)}]" for kind, texts in objects.items())
    return f'{json.dumps(head)[:-1]}, "objects": {{{kinds}}}}}'


_encoded: OrderedDict[int, tuple[str, bytes]] = OrderedDict()  # cluster pk → (ETag, gzipped state)
_encoded_lock = threading.Lock()


def gzipped_state(cluster: Cluster, etag_of: Callable[[Cluster, str], str]) -> tuple[str, bytes]:
    """(ETag, the state document gzipped): the kept one while `etag_of(cluster, its resourceVersion)`
    still names it, else read, encoded and kept."""
    cluster.refresh_from_db()
    current = etag_of(cluster, str(cluster.resource_version))
    with _encoded_lock:
        kept = _encoded.get(cluster.pk)
    if kept is not None and kept[0] == current:
        return kept
    head, objects = state_texts(cluster)
    etag = etag_of(cluster, head["resourceVersion"])
    body = gzip.compress(state_json(head, objects).encode(), compresslevel=GZIP_LEVEL, mtime=0)
    with _encoded_lock:
        _encoded[cluster.pk] = (etag, body)
        _encoded.move_to_end(cluster.pk)
        while len(_encoded) > MAX_ENCODED:
            _encoded.popitem(last=False)
    return etag, body
