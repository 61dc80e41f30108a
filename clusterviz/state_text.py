"""The cluster's state as JSON text, spliced from the stored bodies: the HTTP state and the stream's
snapshot send what the database holds without decoding and re-encoding every object (at 1,000
realistic nodes that round trip is 10 MB of JSON each way).

Two fields no browser view reads are left out by the database itself: a Node's `status.images` (on a
cloud node, a list of cached images with their digests: 7 of its 10 KB) and every object's
`metadata.managedFields`. The objects, gzip-compressed, are kept per cluster while its resourceVersion
holds, so the pages that open a cluster at the same resourceVersion (a class) cost one encoding."""

from __future__ import annotations

import json
import struct
import threading
import zlib
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
    return state_head(cluster, str(rv)), objects


def state_head(cluster: Cluster, rv: str) -> dict[str, Any]:
    """The state's `cluster` (its settings) and `resourceVersion`."""
    head = {"cluster": cluster.to_dict(), "resourceVersion": rv}
    head["cluster"]["resourceVersion"] = rv
    return head


def state_json(head: dict[str, Any], objects: dict[str, list[str]]) -> str:
    """The state document (`services.state`'s shape) as one JSON text."""
    kinds = ",".join(f"{json.dumps(kind)}:[{','.join(texts)}]" for kind, texts in objects.items())
    return f'{json.dumps(head)[:-1]}, "objects": {{{kinds}}}}}'


# cluster pk → (resourceVersion, its objects as compressed below): kept while no object changes; the
# cluster's settings (pace, presenter view, lesson step), which change without a resourceVersion, are
# compressed for each response and spliced in (a few hundred bytes).
_encoded: OrderedDict[int, tuple[str, _Deflated]] = OrderedDict()
_encoded_lock = threading.Lock()


class _Deflated:
    """A piece of a gzip member: raw deflate blocks ending on a byte boundary (a sync flush, or the
    final block), with the CRC-32 and length of what they hold after what came before them."""

    def __init__(self, data: bytes, crc: int, size: int, last: bool) -> None:
        packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
        self.blocks = packer.compress(data) + packer.flush(zlib.Z_FINISH if last else zlib.Z_FULL_FLUSH)
        self.crc = zlib.crc32(data, crc)
        self.size = size + len(data)


def _gzip_member(first: _Deflated, last: _Deflated) -> bytes:
    """One gzip member (RFC 1952, no name, mtime 0) of two deflated pieces."""
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    trailer = struct.pack("<II", last.crc, last.size & 0xFFFFFFFF)
    return header + first.blocks + last.blocks + trailer


def gzipped_state(cluster: Cluster, etag_of: Callable[[Cluster, str], str]) -> tuple[str, bytes]:
    """(ETag, the state document gzipped), its objects first: they are read and compressed once per
    resourceVersion; the head (the cluster and its resourceVersion) is compressed for each call."""
    cluster.refresh_from_db()
    rv = str(cluster.resource_version)
    with _encoded_lock:
        kept = _encoded.get(cluster.pk)
    if kept is None or kept[0] != rv:
        head, objects = state_texts(cluster)
        rv = head["resourceVersion"]
        kinds = ",".join(f"{json.dumps(kind)}:[{','.join(texts)}]" for kind, texts in objects.items())
        kept = (rv, _Deflated(f'{{"objects": {{{kinds}}}, '.encode(), 0, 0, last=False))
        with _encoded_lock:
            _encoded[cluster.pk] = kept
            _encoded.move_to_end(cluster.pk)
            while len(_encoded) > MAX_ENCODED:
                _encoded.popitem(last=False)
    objects_part = kept[1]
    head_part = _Deflated(json.dumps(state_head(cluster, rv))[1:].encode(), objects_part.crc, objects_part.size, True)
    return etag_of(cluster, rv), _gzip_member(objects_part, head_part)
