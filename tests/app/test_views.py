"""The HTTP side (clusterviz/views.py, urls.py, templates): pages, the JSON API and its Status errors."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import yaml
from django.test import Client

from clusterviz import access
from clusterviz.controllers.runner import reconcile
from clusterviz.models import Cluster, KubeObject
from tests.app.conftest import AsyncOwnerClient, OwnerClient

from .conftest import node_yaml, pod_yaml

DEPLOYMENT_YAML = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, resources: {requests: {cpu: 100m}}}]
"""


def status(code: int, reason: str, message: str) -> dict[str, Any]:
    """The Status a real API server answers (the kube API's too: `metadata: {}` included)."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def post_action(client: Client, slug: str, body: Any, raw: bool = False) -> Any:
    data = body if raw else json.dumps(body)
    return client.post(f"/api/clusters/{slug}/actions", data, content_type="application/json")


@pytest.fixture
def lenient_client() -> Client:
    """A client that returns 500 responses instead of raising the view's exception."""
    return OwnerClient(raise_request_exception=False)


# ---------------------------------------------------------------- state


@pytest.mark.django_db
def test_state_json(client: Client, make_cluster: Any) -> None:
    make_cluster("c1", node_yaml("n1") + "---\n" + pod_yaml("p1"))
    response = client.get("/api/clusters/c1/state")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    data = response.json()
    assert data["resourceVersion"] == "2"
    assert data["cluster"] == {
        "slug": "c1",
        "title": "c1",
        "resourceVersion": "2",
        "pace": "instant",
        "paceDelayMs": 800,
        "lesson": "",
        "lessonStep": 0,
        "presenterView": {},
    }
    assert sorted(data["objects"]) == ["Node", "Pod"]
    assert data["objects"]["Pod"][0]["metadata"]["name"] == "p1"
    assert data["objects"]["Pod"][0]["status"]["phase"] == "Pending"


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["state", "export", "cycles/1"])
def test_api_of_an_unknown_cluster_is_a_not_found_status(client: Client, path: str) -> None:
    response = client.get(f"/api/clusters/nope/{path}")
    assert response.status_code == 404
    assert response.json() == status(404, "NotFound", 'clusters "nope" not found')


@pytest.mark.django_db
def test_actions_and_import_of_an_unknown_cluster_are_not_found(client: Client) -> None:
    response = post_action(client, "nope", {"action": "step"})
    assert (response.status_code, response.json()["reason"]) == (404, "NotFound")
    response = client.post("/api/clusters/nope/import", "kind: List", content_type="application/yaml")
    assert response.json() == status(404, "NotFound", 'clusters "nope" not found')


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", "/api/clusters/c1/state"),
        ("post", "/api/clusters/c1/export"),
        ("get", "/api/clusters/c1/import"),
        ("post", "/api/lessons"),
        ("get", "/clusters/new"),
        ("post", "/"),
    ],
)
def test_wrong_method_is_405(client: Client, make_cluster: Any, method: str, path: str) -> None:
    make_cluster("c1")
    assert getattr(client, method)(path).status_code == 405


@pytest.mark.django_db
def test_get_actions_is_a_405_status(client: Client, make_cluster: Any) -> None:
    make_cluster("c1")
    response = client.get("/api/clusters/c1/actions")
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    assert response.json() == status(405, "MethodNotAllowed", "POST an action")


# ---------------------------------------------------------------- actions


@pytest.mark.django_db(transaction=True)
async def test_action_ok_and_the_runner_schedules_it(make_cluster: Any, stop_runners: None) -> None:
    from asgiref.sync import sync_to_async

    await sync_to_async(make_cluster)("c1", node_yaml("n1"))
    client = AsyncOwnerClient()
    action = {"action": "create", "yaml": pod_yaml("p1"), "id": 7}
    response = await client.post("/api/clusters/c1/actions", action, content_type="application/json")
    assert response.status_code == 200
    assert response.json() == {"ok": True, "created": ["Pod/p1"]}
    # The runner started by the view (in this loop) schedules the pod and the kubelet runs it.
    for _ in range(100):
        pod = await KubeObject.objects.aget(cluster__slug="c1", kind="Pod", name="p1")
        if pod.body["status"]["phase"] == "Running":
            break
        await asyncio.sleep(0.02)
    assert pod.node_name == "n1"
    assert pod.body["status"]["phase"] == "Running"
    cycle = (await client.get("/api/clusters/c1/cycles/1")).json()
    assert (cycle["cycle"], cycle["pod"], cycle["scheduled"], cycle["node"]) == (1, "default/p1", True, "n1")
    assert cycle["message"] == "Successfully assigned default/p1 to n1"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("action", "result"),
    [
        ({"action": "label", "node": "n1", "key": "zone", "value": "a"}, {"labelled": "n1"}),
        ({"action": "taint", "node": "n1", "key": "k", "value": "v", "effect": "NoSchedule"}, {"tainted": "n1"}),
        ({"action": "cordon", "node": "n1"}, {"cordoned": "n1"}),
        ({"action": "uncordon", "node": "n1"}, {"uncordoned": "n1"}),
        ({"action": "delete", "kind": "Node", "name": "n1"}, {"deleted": "Node/n1"}),
        ({"action": "pace", "pace": "slow", "delayMs": 100}, {"pace": "slow", "delayMs": 100}),
        ({"action": "step", "steps": 2}, {"steps": 2}),
    ],
    ids=lambda v: v.get("action", "") if isinstance(v, dict) else "",
)
def test_action_results(client: Client, make_cluster: Any, action: dict[str, Any], result: dict[str, Any]) -> None:
    make_cluster("c1", node_yaml("n1"))
    response = post_action(client, "c1", action)
    assert response.status_code == 200, response.content
    assert response.json() == {"ok": True, **result}


@pytest.mark.django_db
def test_scale_action(client: Client, make_cluster: Any) -> None:
    make_cluster("c1", DEPLOYMENT_YAML)
    response = post_action(client, "c1", {"action": "scale", "name": "web", "replicas": 4})
    assert response.json() == {"ok": True, "scaled": "Deployment/web", "replicas": 4}
    assert KubeObject.objects.get(kind="Deployment", name="web").body["spec"]["replicas"] == 4


@pytest.mark.django_db
def test_explain_action_changes_nothing(client: Client, make_cluster: Any) -> None:
    cluster = make_cluster("c1", node_yaml("n1"))
    response = post_action(client, "c1", {"action": "explain", "yaml": pod_yaml("q")})
    assert response.status_code == 200
    explanation = response.json()["explanation"]
    assert (explanation["pod"], explanation["scheduled"], explanation["selectedNode"]) == ("default/q", True, "n1")
    cluster.refresh_from_db()
    assert cluster.resource_version == 1
    assert not KubeObject.objects.filter(kind="Pod").exists()


@pytest.mark.django_db
def test_explain_as_the_board_plays_it(client: Client, make_cluster: Any) -> None:
    make_cluster("c1", node_yaml("n1") + "---\n" + node_yaml("n2", cpu="100m"))
    full = post_action(client, "c1", {"action": "explain", "yaml": pod_yaml("q", cpu="500m")}).json()["explanation"]
    cycle = post_action(client, "c1", {"action": "explain", "yaml": pod_yaml("q", cpu="500m"), "form": "cycle"})
    played = cycle.json()["explanation"]
    assert "nodes" not in played
    same = ("pod", "scheduled", "selectedNode", "message", "code", "tiedTop")
    assert {k: played[k] for k in same} == {k: full[k] for k in same} and played["selectedNode"] == "n1"
    assert [e["type"] for e in played["events"]] == [e["type"] for e in full["events"]]
    started = played["events"][0]
    assert started["type"] == "cycle.started" and started["nodeNames"] == ["n1", "n2"], "the stream's compact form"
    wrong = post_action(client, "c1", {"action": "explain", "yaml": pod_yaml("q"), "form": "table"})
    assert wrong.status_code == 400 and "form" in wrong.json()["message"]


ACTION_ERRORS = [
    pytest.param(
        b'{"action": "create",\n "yaml": }',
        400,
        "Invalid",
        "invalid JSON at line 2 column 10: Expecting value",
        id="invalid-json-located",
    ),
    pytest.param(b"null", 400, "Invalid", "action: expected a JSON object", id="null"),
    pytest.param(b"\xff\xfe\xfa", 400, "Invalid", "invalid JSON", id="not-utf8"),
    pytest.param(b"[1, 2]", 400, "Invalid", "action: expected a JSON object", id="array"),
    pytest.param(b'{"action": "nope"}', 400, "Invalid", "action: unknown action 'nope'", id="unknown-action"),
    pytest.param(b'{"action": "create"}', 400, "Invalid", "yaml: Field required", id="missing-yaml"),
    pytest.param(
        b'{"action": "step", "bogus": 1}', 400, "Invalid", "bogus: Extra inputs are not permitted", id="extra-field"
    ),
    pytest.param(
        json.dumps({"action": "create", "yaml": "kind: Pod\nmetadata: {name: p}\nspec: {containers: 1}"}),
        400,
        "Invalid",
        "yaml:3: spec.containers",
        id="yaml-schema-error-located",
    ),
    pytest.param(
        json.dumps({"action": "create", "yaml": "kind: Pod\nmetadata: {name: [x\n"}),
        400,
        "Invalid",
        "yaml:3:1: ",
        id="yaml-syntax-error-located",
    ),
    pytest.param(
        json.dumps({"action": "create", "yaml": node_yaml("n1")}),
        409,
        "AlreadyExists",
        'nodes "n1" already exists',
        id="already-exists",
    ),
    pytest.param(
        b'{"action": "delete", "kind": "Pod", "name": "ghost"}',
        404,
        "NotFound",
        'pods "ghost" not found',
        id="not-found",
    ),
    pytest.param(
        b'{"action": "label", "node": "n1", "key": "a/b/c", "value": "x"}',
        400,
        "Invalid",
        'metadata.labels: Invalid value: "a/b/c"',
        id="invalid-label",
    ),
    pytest.param(
        b'{"action": "taint", "node": "n1", "key": "k", "effect": "Sometimes"}',
        400,
        "Invalid",
        'invalid taint effect: "Sometimes", unsupported taint effect',
        id="invalid-taint-effect",
    ),
    pytest.param(
        b'{"action": "scale", "name": "web", "replicas": -1}',
        400,
        "Invalid",
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        id="negative-replicas",
    ),
    pytest.param(
        b'{"action": "pace", "pace": "slow", "delayMs": 10}',
        400,
        "Invalid",
        "delayMs: must be between 50 and 60000",
        id="pace-delay",
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("body", "code", "reason", "message"), ACTION_ERRORS)
def test_action_errors_are_statuses(
    client: Client, make_cluster: Any, body: Any, code: int, reason: str, message: str
) -> None:
    make_cluster("c1", node_yaml("n1") + "---\n" + DEPLOYMENT_YAML)
    response = post_action(client, "c1", body, raw=True)
    assert response.status_code == code
    data = response.json()
    assert {k: v for k, v in data.items() if k != "message"} == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "reason": reason,
        "code": code,
    }
    assert message in data["message"], data["message"]
    cluster = Cluster.objects.get(slug="c1")
    assert cluster.resource_version == 2, "a refused action changes nothing"
    assert cluster.pace == "instant"


@pytest.mark.django_db
def test_action_needs_a_json_content_type(client: Client, make_cluster: Any) -> None:
    make_cluster("c1")
    response = client.post("/api/clusters/c1/actions", {"action": "step"})  # a form post
    assert response.status_code == 415
    assert response.json()["reason"] == "UnsupportedMediaType"
    assert response.json()["message"].startswith('Content-Type: must be "application/json"')
    response = client.post("/api/clusters/c1/actions", '{"action": "step"}', content_type="text/plain")
    assert response.status_code == 415


@pytest.mark.django_db
def test_action_api_works_without_a_csrf_token(make_cluster: Any) -> None:
    """Scripts call the actions API; the JSON content type (never sent by a cross-site form) protects it."""
    make_cluster("c1")
    client = OwnerClient(enforce_csrf_checks=True)
    response = post_action(client, "c1", {"action": "step"})
    assert response.status_code == 200
    assert response.json() == {"ok": True, "steps": 1}


@pytest.mark.django_db
def test_oversized_action_is_413(client: Client, make_cluster: Any) -> None:
    make_cluster("c1")
    body = json.dumps({"action": "create", "yaml": "#" * (6 * 1024 * 1024 + 5000)})
    response = post_action(client, "c1", body, raw=True)
    assert response.status_code == 413
    assert response.json()["reason"] == "RequestEntityTooLarge"


NEVER_500 = [
    {"action": None},
    {"action": "create", "yaml": None},
    {"action": "create", "yaml": ""},
    {"action": "create", "yaml": "---\n---\n"},
    {"action": "create", "yaml": "just a string"},
    {"action": "create", "yaml": "a: &a [*a, *a]"},
    {"action": "create", "yaml": "!!python/object/apply:os.system ['true']"},
    {"action": "create", "yaml": "apiVersion: v1\nkind: List\nitems: 5"},
    {"action": "create", "yaml": "apiVersion: v1\nkind: List\nitems: [5, null]"},
    {"action": "create", "yaml": "apiVersion: v1\nkind: Pod\nmetadata: 5"},
    {"action": "create", "yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: 5}}"},
    {"action": "create", "yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [5]}"},
    {"action": "create", "yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeSelector: [1]}"},
    {"action": "create", "yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {}"},
    {"action": "create", "yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: x}"},
    {"action": "create", "yaml": "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\nstatus: {allocatable: 3}"},
    {"action": "create", "yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: " + "a" * 300 + "}"},
    {"action": "delete", "kind": "Event", "name": "x"},
    {"action": "delete", "kind": "Pod", "name": ""},
    {"action": "label", "node": "n1", "key": "", "value": "x"},
    {"action": "label", "node": "n1", "key": "k", "value": 5},
    {"action": "taint", "node": "n1", "key": "missing", "remove": True},
    {"action": "scale", "name": "web", "replicas": "many"},
    {"action": "scale", "name": "web", "replicas": 10**30},
    {"action": "scale", "kind": "Pod", "name": "web", "replicas": 1},
    {"action": "explain", "yaml": "kind: Node"},
    {"action": "explain", "yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec: {containers: []}"},
    {"action": "explain", "yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: q}", "seed": "x"},
    {"action": "pace", "pace": None},
    {"action": "pace", "pace": "slow", "delayMs": 10**30},
    {"action": "step", "steps": 1000},
    {"action": "step", "id": {"nested": True}},
]


@pytest.mark.django_db
@pytest.mark.parametrize("body", NEVER_500, ids=[str(i) for i in range(len(NEVER_500))])
def test_bad_input_is_never_a_500(lenient_client: Client, make_cluster: Any, body: dict[str, Any]) -> None:
    make_cluster("c1", node_yaml("n1") + "---\n" + DEPLOYMENT_YAML)
    response = post_action(lenient_client, "c1", body)
    assert 400 <= response.status_code < 500, response.content
    assert response.json()["kind"] == "Status"
    assert Cluster.objects.get(slug="c1").resource_version == 2


@pytest.mark.django_db
def test_metadata_name_that_is_not_a_string_is_a_400(lenient_client: Client, make_cluster: Any) -> None:
    make_cluster("c1")
    body = {"action": "create", "yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: 5}\nspec: {containers: [{}]}"}
    response = post_action(lenient_client, "c1", body)
    assert response.status_code == 400, response.content
    assert "metadata.name" in response.json()["message"]


# ---------------------------------------------------------------- export / import


@pytest.mark.django_db
def test_export_yaml_and_import_round_trip(client: Client, make_cluster: Any) -> None:
    source = make_cluster("c1", node_yaml("n1") + "---\n" + pod_yaml("p1") + "---\n" + DEPLOYMENT_YAML)
    reconcile(source)
    response = client.get("/api/clusters/c1/export")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/yaml"
    assert response["Content-Disposition"] == 'attachment; filename="c1.yaml"'
    exported = yaml.safe_load(response.content)
    assert (exported["apiVersion"], exported["kind"]) == ("v1", "List")
    assert [(i["kind"], i["metadata"]["name"]) for i in exported["items"]] == [
        ("Node", "n1"),
        ("Deployment", "web"),
        ("Pod", "p1"),  # the Deployment's pods are left out
    ]
    for item in exported["items"]:
        assert not {"uid", "resourceVersion", "creationTimestamp"} & set(item["metadata"])
    assert exported["items"][2]["spec"]["nodeName"] == "n1"
    assert "status" not in exported["items"][2]

    make_cluster("c2")
    response = client.post("/api/clusters/c2/import", response.content, content_type="application/yaml")
    assert response.status_code == 200
    assert response.json() == {"ok": True, "imported": 3}
    target = Cluster.objects.get(slug="c2")
    reconcile(target)
    state = client.get("/api/clusters/c2/state").json()["objects"]
    assert [p["spec"].get("nodeName") for p in state["Pod"] if p["metadata"]["name"] == "p1"] == ["n1"]
    assert len(state["Pod"]) == 3  # p1 and the Deployment's two pods, recreated
    assert all(p["status"]["phase"] == "Running" for p in state["Pod"])


@pytest.mark.django_db
def test_import_as_a_file_upload(client: Client, make_cluster: Any) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    make_cluster("c1")
    upload = SimpleUploadedFile("snap.yaml", (node_yaml("n1") + "---\n" + pod_yaml("p1")).encode())
    response = client.post("/api/clusters/c1/import", {"file": upload})
    assert response.json() == {"ok": True, "imported": 2}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "snapshot: no objects found"),
        (b"{{{", "snapshot:1:4: expected the node content"),
        (b"\xff\xfe\x00", "snapshot:1:1: not valid UTF-8"),
        (b"- 1", "snapshot:1: expected a Kubernetes object (a mapping), got list"),
        (b"apiVersion: v1\nkind: List\nitems: 5\n", "items: must be a list"),
        (b"apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: s}\n", 'unsupported kind "CronJob"'),
    ],
    ids=["empty", "yaml-error", "not-utf8", "not-a-mapping", "items-not-a-list", "unsupported-kind"],
)
def test_import_errors_are_statuses_and_change_nothing(
    lenient_client: Client, make_cluster: Any, body: bytes, message: str
) -> None:
    make_cluster("c1")
    response = lenient_client.post("/api/clusters/c1/import", body, content_type="application/yaml")
    assert response.status_code == 400, response.content
    data = response.json()
    assert (data["kind"], data["reason"], data["code"]) == ("Status", "Invalid", 400)
    assert message in data["message"], data["message"]
    assert Cluster.objects.get(slug="c1").resource_version == 0


@pytest.mark.django_db
def test_import_into_a_non_empty_cluster_is_refused(client: Client, make_cluster: Any) -> None:
    make_cluster("c1", node_yaml("n1"))
    response = client.post("/api/clusters/c1/import", pod_yaml("p1"), content_type="application/yaml")
    assert response.json() == status(400, "Invalid", 'cluster "c1" is not empty: import into a new cluster')
    assert not KubeObject.objects.filter(kind="Pod").exists()


# ---------------------------------------------------------------- cycles, lessons


@pytest.mark.django_db
def test_cycles(client: Client, make_cluster: Any) -> None:
    cluster = make_cluster("c1", node_yaml("n1", cpu="1") + "---\n" + pod_yaml("fits") + "---\n" + pod_yaml("big", "2"))
    reconcile(cluster)
    first = client.get("/api/clusters/c1/cycles/1").json()
    second = client.get("/api/clusters/c1/cycles/2").json()
    assert (first["pod"], first["scheduled"], first["node"]) == ("default/fits", True, "n1")
    assert (second["pod"], second["scheduled"], second["node"]) == ("default/big", False, None)
    assert second["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert second["events"][0]["type"] == "cycle.started"
    assert second["events"][-1]["type"] == "cycle.finished"
    assert int(first["resourceVersion"]) < int(second["resourceVersion"])
    response = client.get("/api/clusters/c1/cycles/3")
    assert response.status_code == 404
    assert response.json() == status(404, "NotFound", "cycle 3 not found (kept: the last 500)")


def test_lessons(client: Client) -> None:
    response = client.get("/api/lessons")
    assert response.status_code == 200
    lessons = {lesson["name"]: lesson for lesson in response.json()["lessons"]}
    assert "demo" in lessons
    demo = lessons["demo"]
    assert demo["title"].startswith("The demo cluster")
    assert (demo["steps"], demo["questions"]) == (1, 1)  # a catalog: no step's text (`/lesson` has them)
    assert "objects" not in demo


# ---------------------------------------------------------------- pages


@pytest.mark.django_db
def test_home_page_lists_clusters_and_lessons(client: Client, make_cluster: Any) -> None:
    alpha = make_cluster("alpha")
    client.get(access.edit_url(alpha))  # this browser holds its edit link: it is listed
    response = client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'href="/clusters/alpha/"' in html
    assert '<option value="demo">' in html
    assert 'action="/clusters/new"' in html
    assert "csrfmiddlewaretoken" in html


@pytest.mark.django_db
def test_create_cluster_form_with_a_lesson(make_cluster: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    token = client.get("/").cookies["csrftoken"].value
    response = client.post("/clusters/new", {"slug": "learn", "lesson": "demo", "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert response["Location"] == "/clusters/learn/"
    cluster = Cluster.objects.get(slug="learn")
    assert (cluster.lesson, cluster.lesson_step) == ("demo", 0)
    assert sorted(KubeObject.objects.filter(cluster=cluster).values_list("kind", "name")) == [
        ("Deployment", "myapp"),
        ("Node", "node01"),
        ("Node", "node02"),
        ("Node", "node03"),
    ]
    page = client.get("/clusters/learn/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-slug="learn"' in html
    assert "<title>learn · clusterviz</title>" in html


@pytest.mark.django_db
def test_create_empty_cluster(client: Client) -> None:
    response = client.post("/clusters/new", {"slug": "empty", "lesson": ""})
    assert response["Location"] == "/clusters/empty/"
    assert Cluster.objects.get(slug="empty").lesson == ""


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("form", "error"),
    [
        ({"slug": "Bad Slug"}, "slug: Invalid value: &quot;Bad Slug&quot;"),
        ({"slug": ""}, "slug: "),
        ({"slug": "x" * 65}, "must be no more than 63 characters"),
        ({"slug": "taken"}, "cluster &quot;taken&quot; already exists"),
        ({"slug": "fresh", "lesson": "no-such-lesson"}, "lesson &quot;no-such-lesson&quot; not found"),
        ({"slug": "fresh", "title": "t" * 201}, "title: must be no more than 200 characters"),
    ],
    ids=["bad-slug", "empty-slug", "long-slug", "duplicate", "unknown-lesson", "long-title"],
)
def test_create_cluster_form_errors(client: Client, make_cluster: Any, form: dict[str, str], error: str) -> None:
    make_cluster("taken")
    response = client.post("/clusters/new", form)
    assert response.status_code == 400
    html = response.content.decode()
    assert 'class="error" role="alert"' in html
    assert error in html
    assert list(Cluster.objects.values_list("slug", flat=True)) == ["taken"], "a refused form creates nothing"


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/clusters/nope/", "/nope", "/api/clusters/nope", "/api/clusters/c1/cycles/x"])
def test_unknown_pages_are_404(client: Client, make_cluster: Any, path: str) -> None:
    make_cluster("c1")
    assert client.get(path).status_code == 404


def test_static_files_are_served(client: Client) -> None:
    from django.conf import settings

    static = settings.STATICFILES_DIRS[0]
    script = sorted(static.glob("js/*.js"))[0]
    response = client.get(f"/static/{script.relative_to(static)}")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == script.read_bytes()
    assert client.get("/static/js/no-such-file.js").status_code == 404


@pytest.mark.django_db
def test_requested_figures_are_the_schedulers(client: Client, make_cluster: Any) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p1"},
        "spec": {
            "nodeName": "n1",
            "initContainers": [
                {"name": "log", "image": "x", "restartPolicy": "Always", "resources": {"requests": {"cpu": "250m"}}}
            ],
            "containers": [{"name": "app", "image": "x", "resources": {"requests": {"cpu": "500m"}}}],
        },
    }
    make_cluster("c1", node_yaml("n1") + "---\n" + json.dumps(pod))
    data = client.get("/api/clusters/c1/requested").json()
    assert data["nodes"]["n1"]["cpu"] == {"requested": 750, "allocatable": 2000}
    assert data["nodes"]["n1"]["pods"] == {"requested": 1, "allocatable": 110}
    assert data["resourceVersion"] == "2"


@pytest.mark.django_db
def test_the_presenters_view_is_kept_for_late_followers(client: Client, make_cluster: Any) -> None:
    make_cluster("c1", node_yaml("n1"))
    view = {"action": "view", "tab": "scores", "cycle": 3, "step": 7, "speed": 4, "playing": False}
    assert post_action(client, "c1", view).status_code == 200
    kept = client.get("/api/clusters/c1/state").json()["cluster"]["presenterView"]
    assert (kept["tab"], kept["cycle"], kept["step"], kept["speed"], kept["whatIf"]) == ("scores", 3, 7, 4.0, None)
    # Views handled out of order: an older one (by the presenter's seq) does not replace a newer one.
    assert post_action(client, "c1", {"action": "view", "step": 9, "seq": 20}).status_code == 200
    assert post_action(client, "c1", {"action": "view", "step": 8, "seq": 19}).status_code == 200
    assert client.get("/api/clusters/c1/state").json()["cluster"]["presenterView"]["step"] == 9
    response = post_action(client, "c1", {"action": "view", "step": -1})
    assert response.status_code == 400 and "step" in response.json()["message"]


@pytest.mark.django_db
def test_frozen_followers_keep_the_view_they_have(client: Client, make_cluster: Any) -> None:
    """While frozen the presenter's views are not kept (nor relayed); thawed, the next one is."""
    make_cluster("c1", node_yaml("n1"))
    assert (
        post_action(client, "c1", {"action": "view", "tab": "why", "lessonFocus": 2, "seq": 1}).json()["view"] is True
    )
    assert post_action(client, "c1", {"action": "freeze", "frozen": True}).json()["frozen"] is True
    assert (
        post_action(client, "c1", {"action": "view", "tab": "scores", "lessonFocus": 3, "seq": 2}).json()["view"]
        is False
    )
    kept = client.get("/api/clusters/c1/state").json()["cluster"]["presenterView"]
    assert (kept["tab"], kept["lessonFocus"], kept["frozen"]) == ("why", 2, True)
    assert post_action(client, "c1", {"action": "freeze", "frozen": False}).json()["frozen"] is False
    assert post_action(client, "c1", {"action": "view", "tab": "scores", "seq": 3}).json()["view"] is True
    kept = client.get("/api/clusters/c1/state").json()["cluster"]["presenterView"]
    assert kept["tab"] == "scores" and "frozen" not in kept


def test_the_favicon_is_an_icon(client: Client) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 200 and response["Content-Type"] == "image/vnd.microsoft.icon"
    body = response.content
    assert body[:4] == b"\x00\x00\x01\x00" and body[22:30] == b"\x89PNG\r\n\x1a\n"  # an ICO holding a PNG
    svg = client.get("/static/favicon.svg")
    assert svg.status_code == 200 and b"<svg" in b"".join(svg.streaming_content)
