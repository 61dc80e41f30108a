"""Cluster import (clusterviz/imports.py): bulk and atomic, from the command line and over HTTP in
the background, with progress, cancellation and recovery from a killed import."""

from __future__ import annotations

import io
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from bench.cluster_dump import dump, dump_json
from clusterviz import access, import_process, imports, store
from clusterviz.models import IMPORT_CANCELLED, IMPORT_DONE, IMPORT_FAILED, Change, Cluster, ImportJob, KubeObject
from scheduler_core.api.loading import InputError
from tests.app.servers import wait_for

from .conftest import node_yaml

pytestmark = pytest.mark.django_db


def command(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def no_staging_left() -> bool:
    return not Cluster.objects.filter(slug__startswith="import.").exists()


def command_of(pid: int) -> str:
    """The command line of a running process ("" once it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.fixture(autouse=True)
def _no_worker_left() -> Iterator[None]:
    """No import worker outlives its test (it would write into the next test's database): a finished
    import's worker exits by itself."""
    yield
    try:
        wait_for(lambda: not import_process.running(), 15, "the import workers to exit")
    finally:
        import_process.stop_all()


def test_the_command_imports_a_dump_far_above_the_request_limit_and_prints_the_absolute_link(tmp_path: Path) -> None:
    path = tmp_path / "dump.json"
    path.write_bytes(dump_json(200, 10, pending=3))  # 2,203 objects (a request takes 2,000)
    out = command("import_cluster", "big", str(path), "--base-url", "https://class.example.org/")
    cluster = Cluster.objects.get(slug="big")
    assert (
        out.strip()
        == f"imported 2203 objects into cluster big; edit link: https://class.example.org/clusters/big/?key={cluster.owner_token}"
    )
    assert KubeObject.objects.filter(cluster=cluster, kind="Node").count() == 200
    # every object has its own resourceVersion, the cluster's is the newest; the dump's uids are kept
    rvs = sorted(
        KubeObject.objects.filter(cluster=cluster, node_name__gt="").values_list("resource_version", flat=True)
    )
    assert rvs[:2000] == list(range(201, 2201))  # nodes 1-200, bound pods 201-2200, the pending ones bound since
    first = store.get(cluster, "Node", "", "ip-10-0-0-0")
    assert first["metadata"]["uid"] == "00000000-0000-4000-8000-000000000000"
    assert first["metadata"]["resourceVersion"] == str(
        KubeObject.objects.get(cluster=cluster, name="ip-10-0-0-0").resource_version
    )
    # the pending pods were scheduled after the import (reconcile), the bound ones left where they run
    pending = [
        p for p in store.list_objects(cluster, "Pod") if p["metadata"]["name"].endswith(("002000", "002001", "002002"))
    ]
    assert all(p["spec"].get("nodeName") for p in pending)
    assert no_staging_left()


def test_the_command_default_link_is_the_dev_server(tmp_path: Path) -> None:
    path = tmp_path / "dump.json"
    path.write_bytes(dump_json(2, 1))
    out = command("import_cluster", "small", str(path))
    assert " edit link: http://127.0.0.1:8000/clusters/small/?key=" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"foo": 1}', "dump.json:1: not a Kubernetes object (a mapping with kind, apiVersion and metadata)"),
        (
            b'{"kind": "List", "items": [\n{"kind": "Node",\n "metadata": }]}',
            "dump.json:3:14: Expecting value",
        ),
        (b"[1, 2]", "dump.json:1:1: expected a Kubernetes object (a mapping), got list"),
        (
            b'{"kind": "List", "items": [{"kind": "Ingress", "apiVersion": "networking.k8s.io/v1", '
            b'"metadata": {"name": "s"}}]}',
            "dump.json: no objects found (a dump holds Nodes, Pods and the other kinds the scheduler reads; "
            "left out: 1 Ingress)",
        ),
    ],
    ids=["not-a-dump", "malformed-json", "not-objects", "nothing-importable"],
)
def test_bad_dumps_are_refused_with_their_place_and_nothing_is_stored(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "dump.json"
    path.write_bytes(content)
    with pytest.raises(CommandError) as caught:
        command("import_cluster", "c1", str(path))
    assert str(caught.value).startswith(message.replace("dump.json", str(path), 1)), str(caught.value)
    assert not Cluster.objects.filter(slug="c1").exists()
    assert no_staging_left() and not KubeObject.objects.exists()
    assert ImportJob.objects.get().state == IMPORT_FAILED


def test_an_invalid_object_deep_in_a_big_dump_is_located_and_nothing_is_stored(tmp_path: Path) -> None:
    data = dump(300, 10)
    data["items"][2500]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CommandError) as caught:
        command("import_cluster", "c1", str(path))
    assert str(caught.value) == (
        f'{path}: items[2500].spec.containers[0].resources.requests.cpu: Invalid value: "lots": '
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    ) or "items[2500].spec.containers[0].resources.requests" in str(caught.value)
    assert no_staging_left() and not KubeObject.objects.exists()


def test_a_name_twice_in_a_dump_is_refused_with_both_places(tmp_path: Path) -> None:
    data = dump(3, 1)
    data["items"].append(data["items"][1])
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(data))
    with pytest.raises(
        CommandError, match=r'items\[6\]\.metadata\.name: nodes "ip-10-0-0-1" appears twice \(first at items\.1\)'
    ):
        command("import_cluster", "c1", str(path))
    assert no_staging_left() and not KubeObject.objects.exists()


def test_yaml_dumps_with_other_kinds_are_imported_and_the_others_counted(tmp_path: Path) -> None:
    path = tmp_path / "dump.yaml"
    service = (
        "---\nkind: Service\napiVersion: v1\nmetadata: {name: web}\nspec: {selector: {app: web}, ports: [{port: 80}]}\n"
    )
    ingress = "---\nkind: Ingress\napiVersion: networking.k8s.io/v1\nmetadata: {name: c}\n"
    path.write_text(node_yaml("n1") + service + ingress)
    out = command("import_cluster", "c1", str(path))
    # a Service is read by the scheduler (PodTopologySpread's default selector): stored as it came
    assert out.startswith("imported 2 objects into cluster c1 (left out: 1 Ingress); edit link: ")
    stored = store.get(Cluster.objects.get(slug="c1"), "Service", "default", "web")
    assert (stored["apiVersion"], stored["spec"]["selector"]) == ("v1", {"app": "web"})


def test_import_into_a_non_empty_cluster_is_refused(tmp_path: Path, make_cluster: Any) -> None:
    make_cluster("c1", node_yaml("n1"))
    path = tmp_path / "dump.json"
    path.write_bytes(dump_json(2, 1))
    with pytest.raises(CommandError, match='cluster "c1" is not empty: import into a new cluster'):
        command("import_cluster", "c1", str(path))
    assert KubeObject.objects.count() == 1 and no_staging_left()


def test_the_swap_resets_the_watch_log_of_an_emptied_cluster(make_cluster: Any) -> None:
    cluster = make_cluster("c1", node_yaml("n1"))
    store.delete(cluster, "Node", "", "n1", "kubectl")
    assert Change.objects.filter(cluster=cluster).count() == 2
    job = imports.new_job("c1", "dump.json")
    imports.run(job, dump_json(2, 1))
    cluster.refresh_from_db()
    assert cluster.resource_version == 2 + 4
    assert sorted(KubeObject.objects.filter(cluster=cluster).values_list("resource_version", flat=True)) == [3, 4, 5, 6]
    # the old changes cannot be replayed on top of the import: resuming watchers relist
    assert not Change.objects.filter(cluster=cluster).exists()
    assert not store.log_reaches_back_to(cluster, 2, cluster.resource_version)


def test_a_killed_import_is_found_and_its_staging_dropped(make_cluster: Any, settings: Any) -> None:
    make_cluster("c1")
    job = imports.new_job("c1", "dump.json")
    staging = job.staging_id
    # as a killed process leaves it: rows staged, the job "running", its heartbeat old
    KubeObject.objects.create(cluster_id=staging, kind="Node", name="n1", uid="u", resource_version=1, body={})
    ImportJob.objects.filter(pk=job.pk).update(heartbeat=time.time() - imports.stale_seconds() - 1)
    assert imports.recover_interrupted() == 1
    job.refresh_from_db()
    assert job.state == IMPORT_FAILED and job.error.startswith("interrupted")
    assert no_staging_left() and not KubeObject.objects.exists()
    assert not KubeObject.objects.filter(cluster__slug="c1").exists()


def test_staging_clusters_are_not_listed_on_the_home_page(make_cluster: Any, client: Client) -> None:
    client.get(access.edit_url(make_cluster("c1")))  # listed: this browser holds its edit link
    imports.new_job("c1", "dump.json")
    page = client.get("/").content.decode()
    assert "/clusters/c1/" in page and "import." not in page


# ----------------------------------------------------------------- over HTTP, in the background


def start(client: Client, slug: str, body: bytes, **headers: Any) -> Any:
    return client.post(f"/api/clusters/{slug}/imports", body, content_type="application/json", **headers)


def wait_job(
    client: Client, url: str, states: tuple[str, ...] = (IMPORT_DONE, IMPORT_FAILED, IMPORT_CANCELLED)
) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def finished() -> bool:
        seen.update(client.get(url).json()["import"])
        return seen["state"] in states

    wait_for(finished, 120, "the import to finish", interval=0.05)
    return seen


@pytest.mark.django_db(transaction=True)
def test_http_import_runs_in_a_worker_process_with_progress(client: Client, make_cluster: Any) -> None:
    make_cluster("c1")
    response = start(client, "c1", dump_json(400, 10), HTTP_X_FILENAME="cluster.json")
    assert response.status_code == 202, response.content
    number = response.json()["import"]["id"]
    url = response.json()["url"]
    assert url == f"/api/clusters/c1/imports/{number}"
    progress: list[tuple[int, int]] = []
    workers: set[tuple[str, str]] = set()  # the process the job names as its worker while it stores, its command

    def finished() -> bool:
        job = client.get(url).json()["import"]
        progress.append((job["read"], job["stored"]))
        if 0 < job["stored"] < 4400:
            worker = ImportJob.objects.get(pk=number).worker
            workers.add((worker, command_of(int(worker.split("-")[0]))))
        return job["state"] == IMPORT_DONE

    wait_for(finished, 120, "the import", interval=0.02)
    job = client.get(url).json()["import"]
    assert (job["total"], job["read"], job["stored"], job["error"]) == (4400, 4400, 4400, "")
    assert any(0 < stored < 4400 for _, stored in progress), "progress was reported while storing"
    assert all(read >= stored for read, stored in progress)
    # the work was done by one other process, the worker (its id begins the job's worker name), gone now
    assert len(workers) == 1, workers
    worker, command = workers.pop()
    pid = int(worker.split("-")[0])
    assert pid != os.getpid() and command.endswith("-m clusterviz.import_worker"), (pid, command)
    wait_for(lambda: import_process.pid_of(number) is None, 10, "the worker to be reaped")
    assert not Path(f"/proc/{pid}").exists()
    assert KubeObject.objects.filter(cluster__slug="c1").count() == 4400
    assert no_staging_left()


@pytest.mark.django_db(transaction=True)
def test_a_cancelled_import_leaves_nothing(client: Client, make_cluster: Any) -> None:
    make_cluster("c1")
    url = start(client, "c1", dump_json(1500, 10)).json()["url"]
    wait_for(lambda: client.get(url).json()["import"]["stored"] > 0, 60, "some objects stored")
    assert client.post(url + "/cancel", b"{}", content_type="application/json").status_code == 200
    job = wait_job(client, url)
    assert (job["state"], job["error"]) == (IMPORT_CANCELLED, "cancelled")
    assert not KubeObject.objects.exists() and no_staging_left()
    assert Cluster.objects.get(slug="c1").resource_version == 0


@pytest.mark.django_db(transaction=True)
def test_http_import_bad_input_is_reported_in_the_job_and_nothing_stored(client: Client, make_cluster: Any) -> None:
    make_cluster("c1")
    bad = dump(3, 1)
    bad["items"][4]["spec"]["containers"][0]["resources"]["requests"]["memory"] = "-1"
    text = json.dumps(bad, indent=1)
    line = next(
        k for k, row in enumerate(text.splitlines(), 1) if row.strip() == '"memory": "-1"'
    )  # as the CLI names it
    url = start(client, "c1", text.encode(), HTTP_X_FILENAME="mine.json").json()["url"]
    job = wait_job(client, url)
    assert job["state"] == IMPORT_FAILED
    assert job["error"].startswith(f"mine.json:{line}: items[4].spec.containers[0].resources.requests"), job["error"]
    assert not KubeObject.objects.exists() and no_staging_left()


def test_http_import_refusals(client: Client, make_cluster: Any, settings: Any) -> None:
    make_cluster("c1")
    follower = Client()
    response = follower.post("/api/clusters/c1/imports", dump_json(1, 1), content_type="application/json")
    assert response.status_code == 403 and response.json()["reason"] == "Forbidden"
    response = client.post("/api/clusters/c1/imports", {"file": io.BytesIO(b"{}")})
    assert response.status_code == 415
    settings.CLUSTERVIZ_IMPORT_MAX_BYTES = 1000
    response = start(client, "c1", dump_json(5, 1))
    assert response.status_code == 413
    assert response.json()["message"] == "snapshot: larger than 0 MiB (CLUSTERVIZ_IMPORT_MAX_BYTES)"
    response = client.get("/api/clusters/c1/imports/999")
    assert response.status_code == 404 and response.json()["message"] == "import 999 not found"
    assert not ImportJob.objects.exists() and no_staging_left()


def test_a_follower_cannot_cancel(client: Client, make_cluster: Any) -> None:
    make_cluster("c1")
    job = imports.new_job("c1", "dump.json")
    response = Client().post(f"/api/clusters/c1/imports/{job.pk}/cancel", b"{}", content_type="application/json")
    assert response.status_code == 403
    job.refresh_from_db()
    assert not job.cancel_requested


# ----------------------------------------------------------------- reading dumps item by item


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            b'{"apiVersion": "v1", "items": [{"kind": "Node"}, {"kind": "Pod"}], "kind": "List"}',
            [("items", 0), ("items", 1)],
        ),
        (b'{"kind": "PodList", "items": [{"metadata": {}}]}', [("items", 0)]),
        (b' {"kind": "Node"}\n{"kind": "Pod"} ', [(), ()]),
        (b'{"kind": "Node", "metadata": {"name": "n"}}', [()]),
        (b'{"kind": "ConfigMap", "data": {"items": "x"}}', [()]),
    ],
    ids=["List", "typed-list", "objects-one-after-another", "one-object", "object-with-items-field"],
)
def test_json_dumps_are_read_item_by_item(text: bytes, expected: list[tuple[Any, ...]]) -> None:
    from clusterviz.dump_reading import read_dump

    dump = read_dump(text, "d.json", 2**20)
    assert [item.prefix for item in dump.items()] == expected
    assert [item.prefix for item in dump.items()] == expected  # read again
    assert all(isinstance(item.data.get("kind"), str) for item in dump.items())
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:  # objects one after another
        whole = [json.loads(part) for part in text.split(b"\n")]
    objects = whole.get("items", [whole]) if isinstance(whole, dict) and "List" in whole.get("kind", "") else whole
    objects = objects if isinstance(objects, list) else [objects]
    assert [item.data.get("metadata") for item in dump.items()] == [o.get("metadata") for o in objects]


@pytest.mark.parametrize(
    "text",
    [b'{"items": [{"kind": "Node"} {"kind": "Pod"}]}', b'{"items": [1,]}', b'[{"a": 1}', b'{"a": 1} x', b'{"a" 1}'],
)
def test_json_syntax_errors_name_the_place_the_json_module_names(text: bytes) -> None:
    """Line and column as the json module's; the wording is the core reader's (a truncated input says so)."""
    from clusterviz.dump_reading import read_dump

    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(InputError) as caught:
        list(read_dump(text, "d.json", 2**20).items())
    error = expected.value
    assert str(caught.value).startswith(f"d.json:{error.lineno}:{error.colno}: "), str(caught.value)


def test_an_import_taken_for_dead_does_not_swap_in_what_is_left(make_cluster: Any) -> None:
    make_cluster("c1")
    job = imports.new_job("c1", "dump.json")

    def taken_for_dead(current: ImportJob) -> None:
        if current.stored >= 2000:  # another process found no heartbeat: it fails the job, drops the staging
            ImportJob.objects.filter(pk=current.pk).update(heartbeat=0)
            imports.recover_interrupted()

    with pytest.raises(store.Conflict, match="the import was interrupted; nothing was stored"):
        imports.run(job, dump_json(300, 10), taken_for_dead)
    assert not KubeObject.objects.exists() and no_staging_left()
    assert Cluster.objects.get(slug="c1").resource_version == 0


def test_a_yaml_dump_above_the_16_mib_request_limit_is_imported(tmp_path: Path) -> None:
    import yaml

    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump(dump(200, 10)) + "#" * (17 * 2**20))  # past MAX_YAML_BYTES, under the import's
    out = command("import_cluster", "c1", str(path))
    assert out.startswith("imported 2200 objects into cluster c1; edit link: ")


@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_a_kind_only_the_scheduler_reads_is_validated_by_the_cores_model_with_its_line(
    tmp_path: Path, suffix: str
) -> None:
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "default"},
        "spec": {"resources": {"requests": {"storage": "1x"}}},
    }
    document = {"apiVersion": "v1", "kind": "List", "items": [yaml.safe_load(node_yaml("n1")), claim]}
    text = yaml.safe_dump(document) if suffix == "yaml" else json.dumps(document, indent=1)
    line = next(k for k, row in enumerate(text.splitlines(), 1) if "1x" in row)
    path = tmp_path / f"dump.{suffix}"
    path.write_text(text)
    with pytest.raises(CommandError) as caught:
        command("import_cluster", "c1", str(path))
    assert str(caught.value).startswith(f"{path}:{line}: items[1].spec.resources.requests"), str(caught.value)
    assert not KubeObject.objects.exists() and no_staging_left()
