"""Pruning keeps the annotations the volume plugins read, in JSON and YAML snapshots alike."""

from __future__ import annotations

import json

import pytest
import yaml

from scheduler_core.api.loading import load_cluster
from scheduler_core.api.storage import ANN_BIND_COMPLETED, BETA_STORAGE_CLASS_ANNOTATION

CLAIM = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {
        "name": "data",
        "namespace": "default",
        "annotations": {ANN_BIND_COMPLETED: "yes", BETA_STORAGE_CLASS_ANNOTATION: "fast", "unread/key": "x" * 5000},
    },
    "spec": {"volumeName": "pv1", "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    "status": {"phase": "Bound"},
}


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_binding_annotations_survive_pruning(fmt: str) -> None:
    dump = {"apiVersion": "v1", "kind": "List", "items": [CLAIM]}
    text = json.dumps(dump) if fmt == "json" else yaml.safe_dump(dump)
    claim = load_cluster(text, f"dump.{fmt}").claims[0]
    assert claim.fully_bound
    # a long annotation no plugin reads is dropped as the object is read
    assert claim.metadata.annotations == {ANN_BIND_COMPLETED: "yes", BETA_STORAGE_CLASS_ANNOTATION: "fast"}
