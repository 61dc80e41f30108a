"""Recording a lesson (clusterviz/lesson_recording.py, recorded_steps.py, lesson_export.py,
recording_views.py): a teacher's actions through the browser's actions API and through the
Kubernetes API (as kubectl sends them) become steps; the exported file validates as a built-in
lesson does, loads from the home page, and replays to the end state of the recording."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from clusterviz import lessons, store
from clusterviz.controllers.runner import reconcile
from clusterviz.models import Cluster, LessonRecording

from .conftest import node_yaml, pod_yaml

START = node_yaml("node01", cpu="4", memory="8Gi") + "---\n" + node_yaml("node02", cpu="2", memory="4Gi")
WEB = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, resources: {requests: {cpu: 500m}}}]
"""


def action(client: Client, slug: str, body: dict[str, Any]) -> Any:
    response = client.post(f"/api/clusters/{slug}/actions", json.dumps(body), content_type="application/json")
    assert response.status_code == 200, response.content
    return response.json()


def recording(client: Client, slug: str, op: str | None = None) -> Any:
    if op is None:
        response = client.get(f"/api/clusters/{slug}/recording")
    else:
        response = client.post(
            f"/api/clusters/{slug}/recording", json.dumps({"op": op}), content_type="application/json"
        )
    assert response.status_code == 200, response.content
    return response.json()["recording"]


def kube(client: Client, cluster: Cluster, method: str, path: str, body: Any, content_type: str) -> Any:
    """A request as kubectl sends it (its bearer token, its content type)."""
    response = client.generic(
        method,
        f"/k8s/{cluster.slug}{path}",
        json.dumps(body),
        content_type=content_type,
        HTTP_AUTHORIZATION=f"Bearer {cluster.owner_token}",
        HTTP_USER_AGENT="kubectl/v1.32.0 (linux/amd64) kubernetes/abc",
    )
    assert response.status_code in (200, 201), response.content
    return response.json()


def placements(cluster: Cluster) -> dict[str, Any]:
    """Where each named pod is, and how many of each Deployment's pods run on each node."""
    out: dict[str, Any] = {}
    for body in store.list_objects(cluster, "Pod"):
        if body["metadata"].get("deletionTimestamp"):
            continue
        node = body["spec"].get("nodeName") or "Pending"
        refs = body["metadata"].get("ownerReferences")
        if refs:
            app = body["metadata"]["labels"]["app"]
            out.setdefault(app, {}).setdefault(node, 0)
            out[app][node] += 1
        else:
            out[body["metadata"]["name"]] = node
    return out


def record_a_lesson(client: Client, cluster: Cluster) -> None:
    """Board actions and kubectl writes, the cluster settling after each (as it does while the
    teacher talks)."""
    slug = cluster.slug
    assert recording(client, slug, "start")["active"] is True
    action(client, slug, {"action": "label", "node": "node02", "key": "disk", "value": "ssd"})
    reconcile(cluster)
    pod = yaml.safe_load(pod_yaml("fast", cpu="500m", node_selector={"disk": "ssd"}))
    kube(client, cluster, "POST", "/api/v1/namespaces/default/pods", pod, "application/json")
    reconcile(cluster)
    taint = {"spec": {"taints": [{"key": "gpu", "value": "none", "effect": "NoSchedule"}]}}
    kube(client, cluster, "PATCH", "/api/v1/nodes/node01", taint, "application/strategic-merge-patch+json")
    reconcile(cluster)
    action(client, slug, {"action": "create", "yaml": pod_yaml("picky", cpu="100m") + "---\n" + WEB})
    reconcile(cluster)
    scale = {"spec": {"replicas": 5}}
    kube(
        client,
        cluster,
        "PATCH",
        "/apis/apps/v1/namespaces/default/deployments/web/scale",
        scale,
        "application/merge-patch+json",
    )
    reconcile(cluster)
    kube(client, cluster, "DELETE", "/api/v1/namespaces/default/pods/fast", {}, "application/json")
    reconcile(cluster)


@pytest.mark.django_db
def test_every_door_records_a_step_with_its_command(client: Client, make_cluster: Any) -> None:
    cluster = make_cluster("rec1", START)
    reconcile(cluster)
    record_a_lesson(client, cluster)
    state = recording(client, cluster.slug, "stop")
    assert state["active"] is False
    assert [step["command"] for step in state["steps"]] == [
        "kubectl label node node02 disk=ssd --overwrite",
        "kubectl apply -f fast.yaml",
        "kubectl taint node node01 gpu=none:NoSchedule",
        "kubectl apply -f picky.yaml",
        "kubectl scale deployment web --replicas=5",
        "kubectl delete pod fast",
    ]
    texts = [(step["say"], step["after"]) for step in state["steps"]]
    assert texts[0] == ("Label node node02 with disk=ssd.", "No pod was scheduled, evicted or removed.")
    assert texts[1] == ("Create Pod fast.", "default/fast was scheduled on node02.")
    assert texts[3][0] == "Create Pod picky, Deployment web."
    assert "default/picky was scheduled on node02." in texts[3][1]
    assert texts[5][0] == "Delete Pod fast."
    # a controller's pods are counted by owner: a replay names them afresh
    assert texts[5][1].startswith("default/fast is gone. 1 pod of default/web-")
    assert texts[5][1].endswith(" was scheduled on node02.")
    # a question may be about the pods a create makes, else the named pods there before the step
    assert state["steps"][3]["pods"] == ["default/picky"]
    assert state["steps"][2]["pods"] == ["default/fast"]


@pytest.mark.django_db
def test_exported_lesson_replays_to_the_recorded_end_state(client: Client, make_cluster: Any) -> None:
    cluster = make_cluster("rec2", START)
    reconcile(cluster)
    record_a_lesson(client, cluster)
    recording(client, cluster.slug, "stop")
    recorded_end = placements(cluster)
    steps = recording(client, cluster.slug)["steps"]
    draft = {
        "name": "my-first-lesson",
        "title": "Labels, taints and a Deployment",
        "summary": "What a label and a taint change for the next pods.",
        "topic": "taints-tolerations",
        "steps": {
            str(steps[3]["id"]): {
                "say": "node01 is tainted gpu=none. Create picky, which tolerates nothing, and a Deployment.",
                "predict": {"question": "Where does picky go?", "pod": "default/picky", "ask": "node"},
            }
        },
    }
    response = client.post(
        f"/api/clusters/{cluster.slug}/recording/lesson", json.dumps({"draft": draft}), content_type="application/json"
    )
    assert response.status_code == 200, response.content
    exported = response.json()
    assert exported["fileName"] == "my-first-lesson.yaml"
    lesson = lessons.parse_lesson(exported["yaml"], exported["fileName"])  # validates as a built-in one
    assert lesson.steps[3].predict is not None and lesson.steps[3].expect["pods"]["default/picky"] == {"node": "node02"}
    # the draft is kept: the download is the same file
    download = client.get(f"/api/clusters/{cluster.slug}/recording/lesson.yaml")
    assert download.content.decode() == exported["yaml"]
    assert 'filename="my-first-lesson.yaml"' in download["Content-Disposition"]

    upload = SimpleUploadedFile("my-first-lesson.yaml", exported["yaml"].encode(), content_type="application/yaml")
    response = client.post("/clusters/new", {"lesson_file": upload, "then": "alone"})
    assert response.status_code == 302, response.content
    replay = Cluster.objects.get(slug=response["Location"].split("/")[2])
    assert replay.lesson == "my-first-lesson" and replay.title == "Labels, taints and a Deployment"
    reconcile(replay)
    for step in lesson.steps:
        lessons.play_step(replay)
        reconcile(replay)
        assert lessons.check(replay, step.expect) == []
    assert lessons.check_expectations(replay, lesson) == []
    assert placements(replay) == recorded_end
    # the lesson view serves the teacher's own lesson like a built-in one
    view = client.get(f"/api/clusters/{replay.slug}/lesson").json()["messages"][0]["lesson"]
    assert view["title"] == "Labels, taints and a Deployment" and view["done"] is True


@pytest.mark.django_db
def test_a_draft_that_gives_the_answer_away_is_refused_at_its_step(client: Client, make_cluster: Any) -> None:
    cluster = make_cluster("rec3", START)
    reconcile(cluster)
    record_a_lesson(client, cluster)
    steps = recording(client, cluster.slug)["steps"]
    bad = {
        "steps": {
            str(steps[3]["id"]): {
                "say": "Create picky: it lands on node02.",
                "predict": {"question": "Where does picky go?", "pod": "default/picky", "ask": "node"},
            }
        }
    }
    response = client.post(
        f"/api/clusters/{cluster.slug}/recording/lesson", json.dumps({"draft": bad}), content_type="application/json"
    )
    assert response.status_code == 400
    body = response.json()
    assert "steps[3].say: gives the answer away: it names node02" in body["message"]
    assert body["message"].startswith("rec3.yaml:")
    assert body["details"] == {"step": steps[3]["id"], "field": "say"}
    # a question about a pod the step does not create names the pod and the step
    wrong_pod = {
        "steps": {str(steps[3]["id"]): {"predict": {"question": "Where?", "pod": "default/nope", "ask": "node"}}}
    }
    response = client.post(
        f"/api/clusters/{cluster.slug}/recording/lesson",
        json.dumps({"draft": wrong_pod}),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert '"default/nope" is not created by this step' in response.json()["message"]
    # a malformed draft names its field
    response = client.post(
        f"/api/clusters/{cluster.slug}/recording/lesson",
        json.dumps({"draft": {"steps": {"1": {"say": 3}}}}),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["message"].startswith("draft.steps.1.say:")


@pytest.mark.django_db
def test_only_a_writer_records_and_a_recording_costs_nothing_when_off(client: Client, make_cluster: Any) -> None:
    cluster = make_cluster("rec4", START)
    stranger = Client()
    response = stranger.post(
        f"/api/clusters/{cluster.slug}/recording", json.dumps({"op": "start"}), content_type="application/json"
    )
    assert response.status_code == 403
    assert recording(client, cluster.slug) is None
    action(client, cluster.slug, {"action": "label", "node": "node02", "key": "disk", "value": "ssd"})
    assert not LessonRecording.objects.filter(cluster=cluster).exists()
    response = client.post(
        f"/api/clusters/{cluster.slug}/recording", json.dumps({"op": "rewind"}), content_type="application/json"
    )
    assert response.status_code == 400 and "op: Unsupported value: 'rewind'" in response.json()["message"]


@pytest.mark.django_db
def test_a_bad_lesson_file_is_refused_on_the_home_page_and_nothing_is_created(client: Client) -> None:
    before = Cluster.objects.count()
    text = "name: broken\ntitle: Broken\nsteps:\n- say: Label it.\n  after: Done.\n  do: {action: label, node: n1}\n"
    upload = SimpleUploadedFile("broken.yaml", text.encode(), content_type="application/yaml")
    response = client.post("/clusters/new", {"lesson_file": upload})
    assert response.status_code == 400
    page = response.content.decode()
    assert 'id="lesson-file-error"' in page
    assert "broken.yaml:6: steps[0].do.key: Field required" in page
    upload = SimpleUploadedFile("binary.yaml", b"\xff\xfe\x00name", content_type="application/yaml")
    response = client.post("/clusters/new", {"lesson_file": upload})
    assert response.status_code == 400 and "binary.yaml: not UTF-8 text (byte 0)" in response.content.decode()
    assert Cluster.objects.count() == before
