"""A realistic dump imported into the app and scheduled there gives what `python -m scheduler_core
explain` says of the same dump: the same node, the same message (app ↔ CLI parity)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterviz import imports, services
from clusterviz.controllers import scheduler
from clusterviz.models import KubeObject, SchedulingCycle
from scheduler_core.api.loading import KINDS
from scheduler_core.synthetic import SnapshotSpec, dump_json, generate_objects, pending_pod

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def cli_explain(dump: Path, pod: dict[str, Any], seed: int, tmp_path: Path) -> dict[str, Any]:
    pod_file = tmp_path / "pod.yaml"
    pod_file.write_text(yaml.safe_dump(pod))
    command = [sys.executable, "-m", "scheduler_core", "explain", "--cluster", str(dump), "--pod", str(pod_file)]
    out = subprocess.run(
        [*command, "--seed", str(seed), "-o", "json"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def test_an_imported_dump_schedules_its_next_pod_as_the_cli_explains_it(tmp_path: Path) -> None:
    objects = list(generate_objects(SnapshotSpec(nodes=200, pods=800, seed=7)))
    text = io.StringIO()
    dump_json(objects, text)
    dump = tmp_path / "cluster.json"
    dump.write_text(text.getvalue())

    job = imports.new_job("real", "cluster.json")
    cluster = imports.run(job, dump.read_bytes())
    assert job.skipped == {}  # every kind of the dump is one the app serves (ConfigMaps included)

    # every kind the scheduler reads (and the ConfigMaps the app serves) is stored, as the dump has it
    stored = Counter(KubeObject.objects.filter(cluster=cluster).values_list("kind", flat=True))
    expected = Counter(o["kind"] for o in objects if o["kind"] in KINDS or o["kind"] == "ConfigMap")
    assert stored == expected
    assert {"PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode", "PodDisruptionBudget"} <= set(
        stored
    )
    for kind in ("StorageClass", "PodDisruptionBudget", "StatefulSet", "Job", "DaemonSet", "Service"):
        body = KubeObject.objects.filter(cluster=cluster, kind=kind).first().body  # type: ignore[union-attr]
        original = next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == body["metadata"]["name"])
        assert (body["kind"], body["apiVersion"]) == (kind, original["apiVersion"])

    row = scheduler.next_pod(cluster)
    assert row is not None
    pod = next(o for o in objects if o["kind"] == "Pod" and o["metadata"]["name"] == row.name)
    assert scheduler.schedule_next(cluster)
    cycle = SchedulingCycle.objects.get(cluster=cluster, pod=f"{row.namespace}/{row.name}")

    cli = cli_explain(dump, pod, seed=cycle.number, tmp_path=tmp_path)
    assert (cycle.node or None, cycle.message) == (cli["selectedNode"], cli["message"])
    assert KubeObject.objects.get(pk=row.pk).body["spec"].get("nodeName") == cli["selectedNode"]

    # a new pod, as users paste it, first in the queue: bound where the CLI says (nothing else was bound)
    new = pending_pod()
    new["spec"]["priorityClassName"] = "system-cluster-critical"
    services.create_from_yaml(cluster, yaml.safe_dump(new), "kubectl")
    assert scheduler.schedule_next(cluster)
    cycle = SchedulingCycle.objects.get(cluster=cluster, pod="default/" + new["metadata"]["name"])
    cli = cli_explain(dump, new, seed=cycle.number, tmp_path=tmp_path)
    assert cli["selectedNode"] is not None
    assert (cycle.node, cycle.message) == (cli["selectedNode"], cli["message"])
    bound = KubeObject.objects.get(cluster=cluster, kind="Pod", namespace="default", name=new["metadata"]["name"])
    assert bound.body["spec"]["nodeName"] == cli["selectedNode"]
