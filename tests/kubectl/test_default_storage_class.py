"""The DefaultStorageClass admission plugin, through the real kubectl: a PersistentVolumeClaim that
names no class gets the default one (the StorageClass annotated
storageclass.kubernetes.io/is-default-class: "true"), one that names "" keeps asking for none, one
that names a class keeps it; without a default class nothing is set."""

from __future__ import annotations

import pytest

from .conftest import Cluster

pytestmark = pytest.mark.slow

CLASSES = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: example.com/disk
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: archive}
provisioner: example.com/tape
"""
CLAIM = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {name}}}
spec:
  {storage_class}accessModes: [ReadWriteOnce]
  resources: {{requests: {{storage: 1Gi}}}}
"""


def claim(name: str, storage_class: str | None = None) -> str:
    line = "" if storage_class is None else f'storageClassName: "{storage_class}"\n  '
    return CLAIM.format(name=name, storage_class=line)


def classes_of(cluster: Cluster) -> dict[str, str | None]:
    return {key: body["spec"].get("storageClassName") for key, body in cluster.objects("PersistentVolumeClaim").items()}


def test_a_claim_without_a_class_gets_the_default_one(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("before.yaml", claim("before")))
    cluster.kubectl("apply", "-f", cluster.write("classes.yaml", CLASSES))
    for name, storage_class in (("plain", None), ("none", ""), ("cold", "archive")):
        cluster.kubectl("apply", "-f", cluster.write(f"{name}.yaml", claim(name, storage_class)))
    assert classes_of(cluster) == {
        "default/before": None,  # made before there was a default class
        "default/plain": "standard",
        "default/none": "",
        "default/cold": "archive",
    }
    rows = {row[0]: row for row in cluster.kubectl("get", "pvc").rows()[1:]}
    assert rows["plain"][-3] == "standard" and rows["cold"][-3] == "archive"
