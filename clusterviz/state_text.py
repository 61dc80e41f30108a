"""The cluster's state as JSON text, spliced from the stored bodies: the HTTP state and the stream's
snapshot send what the database holds without decoding and re-encoding every object (at 1,000
realistic nodes that round trip is 10 MB of JSON each way)."""

from __future__ import annotations

import json
from typing import Any

from django.db import transaction
from django.db.models import TextField
from django.db.models.functions import Cast

from .models import Cluster, KubeObject


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
            .annotate(text=Cast("body", output_field=TextField()))
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
