"""Management commands: load_scenario, import_cluster, export_scenario (via call_command)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from clusterviz import store
from clusterviz.lessons import all_lessons
from clusterviz.models import Cluster, KubeObject
from tests.app.test_services import KUBECTL_GET_NODES_PODS

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_load_scenario_list_names_every_lesson() -> None:
    output = run("load_scenario", "--list")
    lines = output.splitlines()
    assert len(lines) == len(all_lessons())
    for lesson in all_lessons().values():
        assert any(line.split()[0] == lesson.name and lesson.title in line for line in lines), lesson.name
    assert not Cluster.objects.exists()


def test_load_scenario_demo_runs_the_cluster() -> None:
    output = run("load_scenario", "demo", "--cluster", "x")
    assert output.strip().startswith(
        "cluster x loaded from lesson demo; edit link: http://127.0.0.1:8000/clusters/x/?key="
    )
    cluster = Cluster.objects.get(slug="x")
    assert cluster.lesson == "demo"
    assert [n["metadata"]["name"] for n in store.list_objects(cluster, "Node")] == ["node01", "node02", "node03"]
    pods = store.list_objects(cluster, "Pod")
    assert len(pods) == 3
    assert {p["status"]["phase"] for p in pods} == {"Running"}
    # node01's qqq=value1:NoSchedule taint keeps the myapp pods off it
    assert {p["spec"]["nodeName"] for p in pods} <= {"node02", "node03"}
    assert store.get(cluster, "Deployment", "default", "myapp")["status"]["readyReplicas"] == 3


def test_load_scenario_defaults_the_slug_and_honours_if_missing() -> None:
    run("load_scenario", "demo")
    assert Cluster.objects.filter(slug="demo").exists()
    assert run("load_scenario", "demo", "--if-missing").strip().startswith("cluster demo exists; edit link: ")
    with pytest.raises(CommandError, match='cluster "demo" already exists'):
        run("load_scenario", "demo")


def test_load_scenario_errors() -> None:
    with pytest.raises(CommandError, match="give a lesson name, or --list"):
        run("load_scenario")
    with pytest.raises(CommandError, match=r'^lesson "nope" not found \(known: .*demo'):
        run("load_scenario", "nope", "--cluster", "y")
    with pytest.raises(CommandError, match=r'^slug: Invalid value: "Bad Slug"'):
        run("load_scenario", "demo", "--cluster", "Bad Slug")


def test_a_failed_load_scenario_leaves_nothing_behind() -> None:
    with pytest.raises(CommandError):
        run("load_scenario", "nope", "--cluster", "y")
    assert not Cluster.objects.filter(slug="y").exists()


def test_import_cluster_loads_a_kubectl_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "snap.yaml"
    path.write_text(KUBECTL_GET_NODES_PODS)
    output = run("import_cluster", "prod-copy", str(path))
    assert output.strip().startswith(
        "imported 5 objects into cluster prod-copy; edit link: http://127.0.0.1:8000/clusters/prod-copy/?key="
    )
    cluster = Cluster.objects.get(slug="prod-copy")
    web = store.get(cluster, "Pod", "default", "web-0")
    assert (web["spec"]["nodeName"], web["status"]["phase"]) == ("node01", "Running")
    assert "nodeName" not in store.get(cluster, "Pod", "default", "pending-0")["spec"]


def test_import_cluster_errors(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    with pytest.raises(CommandError, match=r"missing\.yaml: No such file or directory"):
        run("import_cluster", "c", str(missing))
    bad = tmp_path / "bad.yaml"
    bad.write_text(KUBECTL_GET_NODES_PODS.replace("cpu: 500m", "cpu: lots"))
    with pytest.raises(CommandError) as caught:
        run("import_cluster", "c2", str(bad))
    message = str(caught.value)
    assert message.startswith(f"{bad}:")
    assert "cpu" in message and "lots" in message
    assert not KubeObject.objects.filter(cluster__slug="c2").exists()
    good = tmp_path / "good.yaml"
    good.write_text(KUBECTL_GET_NODES_PODS)
    run("import_cluster", "c3", str(good))
    with pytest.raises(CommandError, match='cluster "c3" is not empty: import into a new cluster'):
        run("import_cluster", "c3", str(good))


def test_export_scenario_output_loads_again(tmp_path: Path) -> None:
    run("load_scenario", "demo", "--cluster", "source")
    exported = run("export_scenario", "source")
    data = yaml.safe_load(exported)
    assert data["kind"] == "List"
    kinds = [item["kind"] for item in data["items"]]
    assert kinds.count("Node") == 3
    assert kinds.count("Deployment") == 1
    assert "Pod" not in kinds  # the Deployment's pods come back through it
    path = tmp_path / "export.yaml"
    path.write_text(exported)
    assert run("import_cluster", "copy", str(path)).strip().startswith("imported 4 objects into cluster copy;")
    copy = Cluster.objects.get(slug="copy")
    pods = store.list_objects(copy, "Pod")
    assert len(pods) == 3
    assert {p["status"]["phase"] for p in pods} == {"Running"}
    assert run("export_scenario", "copy") == exported


def test_export_scenario_of_a_missing_cluster() -> None:
    with pytest.raises(CommandError, match=r'^cluster "nope" not found$'):
        run("export_scenario", "nope")
