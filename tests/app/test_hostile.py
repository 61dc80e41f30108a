"""Hostile input on every path that takes it: a clear, located error, quickly, and nothing changes.

Paths: the HTTP actions API (`POST /api/clusters/<slug>/actions`: create and explain), the same actions
over the WebSocket, the import endpoint (`POST /api/clusters/<slug>/import`) and the CLI
(`python -m scheduler_core explain`; tests/test_cli_errors.py covers its basic errors).

For every input: the reply is a 4xx Status (or WebSocket `error`, or CLI exit 2) whose one-line message
names the source, the line and the field; the cluster's resourceVersion, objects and watch log are
unchanged; memory is measured with tracemalloc where it could grow. How long each refusal takes is a
figure of bench/refusals.py (tests assert outcomes, never wall-clock bounds).
The limits are the named constants of scheduler_core/api/limits.py; upstream Kubernetes has few hard
limits, so ours are far above what real workloads write (see that module). Messages follow the API
server's field errors (`Too many: 1001: must have at most 1000 items` is upstream's field.TooMany).
"""

from __future__ import annotations

import asyncio
import json
import re
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.test import Client

from clusterviz import services
from clusterviz.models import Change, Cluster, KubeObject
from scheduler_core.__main__ import main as cli_main
from scheduler_core.api import limits
from scheduler_core.api.loading import InputError, load_pod
from scheduler_core.api.objects import Node, Pod
from tests.app.conftest import OwnerClient
from tests.hostile_cases import (
    CASES,
    Hostile,
    billion_laughs,
    busy_cluster,
    flow,
    pod,
    pod_at_the_limits,
)

from .conftest import node_yaml, pod_yaml

MiB = 1024 * 1024


def cases_for(path: str) -> list[Any]:
    return [pytest.param(case, id=case.id) for case in CASES if path in case.paths]


# --------------------------------------------------------------------------- the cluster, before and after


SEED = node_yaml("n1") + "---\n" + pod_yaml("p1")


def cluster_state(slug: str) -> tuple[Any, ...]:
    """resourceVersion, the watch log's length and every object (with its resourceVersion and body)."""
    cluster = Cluster.objects.get(slug=slug)
    objects = sorted(
        (o.kind, o.namespace, o.name, o.resource_version, json.dumps(o.body, sort_keys=True))
        for o in KubeObject.objects.filter(cluster=cluster)
    )
    return cluster.resource_version, Change.objects.filter(cluster=cluster).count(), objects


async def started(slug: str, pod: str, timeout: float = 15.0) -> None:
    """Wait until the kubelet has recorded `pod`'s Started event (its image pull takes a second)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    events = KubeObject.objects.filter(cluster__slug=slug, kind="Event", body__reason="Started")
    while not await events.filter(body__involvedObject__name=pod).aexists():
        assert loop.time() < deadline, f"{pod} was not started within {timeout}s"
        await asyncio.sleep(0.05)


def post_action(client: Client, slug: str, action: Any) -> Any:
    return client.post(f"/api/clusters/{slug}/actions", json.dumps(action), content_type="application/json")


def assert_status(response: Any, code: int = 400, reason: str = "Invalid") -> str:
    """A Kubernetes Status (never a 500), with a one-line message; returns the message."""
    assert response.status_code == code, response.content[:500]
    data = response.json()
    assert (data["kind"], data["status"], data["reason"], data["code"]) == ("Status", "Failure", reason, code)
    assert "\n" not in data["message"]
    assert "Traceback" not in data["message"]
    return str(data["message"])


@pytest.fixture
def lenient() -> Client:
    return OwnerClient(raise_request_exception=False)


# --------------------------------------------------------------------------- HTTP actions


@pytest.mark.django_db
@pytest.mark.parametrize("case", cases_for("create"))
def test_http_create_refuses(lenient: Client, make_cluster: Any, case: Hostile) -> None:
    make_cluster("c1", SEED)
    before = cluster_state("c1")
    response = post_action(lenient, "c1", {"action": "create", "yaml": case.text})
    message = assert_status(response)
    assert re.search(case.regex("yaml"), message), message
    assert cluster_state("c1") == before


@pytest.mark.django_db
@pytest.mark.parametrize("case", cases_for("explain"))
def test_http_explain_refuses(lenient: Client, make_cluster: Any, case: Hostile) -> None:
    make_cluster("c1", SEED)
    before = cluster_state("c1")
    response = post_action(lenient, "c1", {"action": "explain", "yaml": case.text})
    message = assert_status(response)
    assert re.search(case.regex("pod.yaml"), message), message
    assert cluster_state("c1") == before


@pytest.mark.django_db
def test_http_yaml_over_the_action_limit_is_refused(lenient: Client, make_cluster: Any) -> None:
    make_cluster("c1", SEED)
    before = cluster_state("c1")
    text = "a: " + "x" * (limits.MAX_YAML_CHARS - 3)  # one character over
    response = post_action(lenient, "c1", {"action": "create", "yaml": text + "\n"})
    assert assert_status(response) == f"yaml: String should have at most {limits.MAX_YAML_CHARS} characters"
    response = post_action(lenient, "c1", {"action": "create", "yaml": "x" * (3 * limits.MAX_YAML_CHARS + 5000)})
    assert assert_status(response, 413, "RequestEntityTooLarge") == "request body too large (6.3 MB > 6 MiB)"
    assert cluster_state("c1") == before


@pytest.mark.django_db
def test_http_body_over_django_limit_is_a_413_status(lenient: Client, make_cluster: Any) -> None:
    make_cluster("c1", SEED)
    response = post_action(lenient, "c1", {"action": "create", "yaml": "x" * (8 * MiB)})
    assert assert_status(response, 413, "RequestEntityTooLarge") == "request body too large (8.4 MB > 6 MiB)"


# Actions whose JSON fields are hostile: (action, expected message regex)
BAD_ACTIONS = [
    pytest.param(
        {"action": "delete", "kind": "Pod", "name": "p1\x00"},
        r'^name: Invalid value: "p1\\u0000": must not contain NUL characters$',
        id="nul-in-name",
    ),
    pytest.param(
        {"action": "label", "node": "n1", "key": "a\x00", "value": "b"},
        r'^key: Invalid value: "a\\u0000": must not contain NUL characters$',
        id="nul-in-label-key",
    ),
    pytest.param(
        {"action": "cordon", "node": "n1\x00"},
        r'^node: Invalid value: "n1\\u0000": must not contain NUL characters$',
        id="nul-in-node",
    ),
    pytest.param(
        {"action": "delete", "kind": "Pod", "name": "\ud800"},
        r"^name: Input should be a valid string, unable to parse raw data as a unicode string$",
        id="lone-surrogate",
    ),
    pytest.param(
        {"action": "label", "node": "n1", "key": "Bad Key", "value": "b"},
        r'^metadata\.labels: Invalid value: "Bad Key": name part must consist of',
        id="label-key-not-a-qualified-name",
    ),
    pytest.param(
        {"action": "label", "node": "n1", "key": "a", "value": "x" * 64},
        r"^value: String should have at most 63 characters$",
        id="label-value-too-long",
    ),
    pytest.param(
        {"action": "taint", "node": "n1", "key": "a", "effect": "Sometimes"},
        r'^invalid taint effect: "Sometimes", unsupported taint effect$',
        id="taint-effect",
    ),
    pytest.param(
        {"action": "scale", "name": "web", "replicas": -1},
        r"^spec\.replicas: Invalid value: -1: must be greater than or equal to 0$",
        id="replicas-negative",
    ),
    pytest.param(
        {"action": "scale", "name": "web", "replicas": 10**30},
        r"^spec\.replicas: Invalid value: 10{30}: must be less than or equal to 10000$",
        id="replicas-huge",
    ),
    pytest.param(
        {"action": "scale", "name": "web", "replicas": 1.5},
        r"^replicas: Input should be a valid integer, got a number with a fractional part$",
        id="replicas-fraction",
    ),
    pytest.param(
        {"action": "scale", "name": "web", "replicas": "many"},
        r"^replicas: Input should be a valid integer, unable to parse string as an integer$",
        id="replicas-word",
    ),
    pytest.param(
        {"action": "step", "steps": 10**9}, r"^steps: Input should be less than or equal to 100$", id="steps-huge"
    ),
    pytest.param(
        {"action": "pace", "pace": "slow", "delayMs": -5},
        r"^delayMs: must be between 50 and 60000$",
        id="delay-negative",
    ),
    pytest.param(
        {"action": "delete", "kind": "Event", "name": "x"},
        r"^kind: Input should be 'Pod', 'Deployment', 'ReplicaSet', 'DaemonSet', .* or 'ResourceSlice'$",
        id="wrong-kind",
    ),
    pytest.param({"action": "create", "yaml": 5}, r"^yaml: Input should be a valid string$", id="yaml-not-a-string"),
    pytest.param({"action": "create"}, r"^yaml: Field required$", id="yaml-missing"),
    pytest.param(
        {"action": "create", "yaml": "x", "extra": 1}, r"^extra: Extra inputs are not permitted$", id="unknown-field"
    ),
]

# Raw JSON bodies: (body, expected message regex)
BAD_BODIES = [
    pytest.param(
        '{"action": "scale", "name": "web", "replicas": NaN}',
        r"^replicas: Input should be a finite number$",
        id="replicas-NaN",
    ),
    pytest.param(
        '{"action": "scale", "name": "web", "replicas": 1e400}',
        r"^replicas: Input should be a finite number$",
        id="replicas-Infinity",
    ),
    pytest.param(
        '{"action": "pace", "pace": "slow", "delayMs": -Infinity}',
        r"^delayMs: Input should be a finite number$",
        id="delay-minus-Infinity",
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("action", "pattern"), BAD_ACTIONS)
def test_http_bad_action_fields(lenient: Client, make_cluster: Any, action: dict[str, Any], pattern: str) -> None:
    make_cluster("c1", SEED)
    before = cluster_state("c1")
    response = post_action(lenient, "c1", action)
    message = assert_status(response, *((404, "NotFound") if "NotFound" in pattern else ()))
    assert re.search(pattern, message), message
    assert cluster_state("c1") == before


@pytest.mark.django_db
@pytest.mark.parametrize(("body", "pattern"), BAD_BODIES)
def test_http_bad_json_numbers(lenient: Client, make_cluster: Any, body: str, pattern: str) -> None:
    make_cluster("c1", SEED)
    before = cluster_state("c1")
    response = lenient.post("/api/clusters/c1/actions", body, content_type="application/json")
    message = assert_status(response)
    assert re.search(pattern, message), message
    assert cluster_state("c1") == before


@pytest.mark.django_db
def test_http_body_not_utf8(lenient: Client, make_cluster: Any) -> None:
    make_cluster("c1", SEED)
    before = cluster_state("c1")
    body = b'{"action": "create", "yaml": "kind: Pod\\nmetadata: {name: \xc3\x28}"}'
    response = lenient.post("/api/clusters/c1/actions", body, content_type="application/json")
    assert assert_status(response) == f"invalid JSON: not valid UTF-8 (byte {body.index(b'\xc3')})"
    assert cluster_state("c1") == before


HOSTILE_JSON = [
    pytest.param("[" * 100_000 + "]" * 100_000, id="deeply-nested-json"),
    pytest.param('{"action": "scale", "name": "web", "replicas": ' + "9" * 5000 + "}", id="5000-digit-json-integer"),
]


@pytest.mark.django_db
@pytest.mark.parametrize("body", HOSTILE_JSON)
def test_http_hostile_json_is_a_400(lenient: Client, make_cluster: Any, body: str) -> None:
    make_cluster("c1", SEED)
    before = cluster_state("c1")
    response = lenient.post("/api/clusters/c1/actions", body, content_type="application/json")
    assert cluster_state("c1") == before
    message = assert_status(response)
    assert message.startswith("invalid JSON")


# --------------------------------------------------------------------------- WebSocket actions


@pytest.mark.django_db(transaction=True)
async def test_websocket_refuses_every_hostile_input_and_stays_up(
    make_cluster: Any, ws_connect: Any, settings: Any
) -> None:
    # Every hostile document goes down one socket at once: lift the per-connection rate limit.
    settings.CLUSTERVIZ_RATE_ACTIONS = settings.CLUSTERVIZ_RATE_EXPLAINS = 10_000
    await sync_to_async(make_cluster)("c1", SEED)
    client = await ws_connect("c1")
    assert (await client.recv())["type"] == "snapshot"
    await started("c1", "p1")  # the runner schedules p1 and the kubelet starts it first
    await client.quiet()
    before = await sync_to_async(cluster_state)("c1")
    sent: list[tuple[str, dict[str, Any], str]] = []
    for case in CASES:
        if "create" in case.paths:
            sent.append((f"create-{case.id}", {"action": "create", "yaml": case.text}, case.regex("yaml")))
        if "explain" in case.paths:
            sent.append((f"explain-{case.id}", {"action": "explain", "yaml": case.text}, case.regex("pod.yaml")))
    for param in BAD_ACTIONS:
        action, pattern = param.values
        sent.append((f"action-{param.id}", dict(action), pattern))  # type: ignore[arg-type]
    sent.append(
        (
            "yaml-over-limit",
            {"action": "create", "yaml": "x" * (limits.MAX_YAML_CHARS + 1)},
            f"^yaml: String should have at most {limits.MAX_YAML_CHARS} characters$",
        )
    )
    failures = []
    for action_id, action, pattern in sent:
        await client.send({**action, "id": action_id})
        reply = (await client.until(lambda m, i=action_id: m.get("id") == i or m.get("type") == "error"))[-1]
        ok = (
            reply.get("type") == "error"
            and reply.get("id") == action_id
            and reply.get("reason") in ("Invalid", "NotFound")
            and re.search(pattern, reply.get("message", ""))
            and "\n" not in reply["message"]
        )
        if not ok:
            failures.append((action_id, str(reply)[:300]))
    for body, pattern in ((p.values[0], p.values[1]) for p in BAD_BODIES):
        await client.communicator.send_to(text_data=body)
        reply = (await client.until(lambda m: m.get("type") in ("error", "result")))[-1]
        if not (reply.get("type") == "error" and re.search(pattern, reply.get("message", ""))):
            failures.append((body, str(reply)[:300]))
    assert not failures, failures
    assert await sync_to_async(cluster_state)("c1") == before
    # still up: a good action works on the same connection
    await client.send({"action": "label", "node": "n1", "key": "after", "value": "yes", "id": "good"})
    assert (await client.until(lambda m: m.get("id") == "good"))[-1] == {
        "type": "result",
        "id": "good",
        "labelled": "n1",
    }


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("body", HOSTILE_JSON)
async def test_websocket_hostile_json_gets_an_error_reply(make_cluster: Any, ws_connect: Any, body: str) -> None:
    await sync_to_async(make_cluster)("c1", SEED)
    client = await ws_connect("c1")
    assert (await client.recv())["type"] == "snapshot"
    await client.communicator.send_to(text_data=body)
    reply = (await client.until(lambda m: m.get("type") in ("error", "result"), timeout=1.0))[-1]
    assert (reply["type"], reply["reason"]) == ("error", "Invalid")
    await client.send({"action": "cordon", "node": "n1", "id": "after"})
    assert (await client.until(lambda m: m.get("id") == "after", timeout=1.0))[-1]["type"] == "result"


# --------------------------------------------------------------------------- import


@pytest.mark.django_db
@pytest.mark.parametrize("case", cases_for("import"))
def test_import_refuses(lenient: Client, make_cluster: Any, case: Hostile) -> None:
    make_cluster("c1")
    response = lenient.post("/api/clusters/c1/import", case.text.encode(), content_type="application/yaml")
    message = assert_status(response)
    assert re.search(case.regex("snapshot"), message), message
    assert cluster_state("c1") == (0, 0, [])


def _node_items(count: int) -> str:
    return "".join(f"- {{kind: Node, apiVersion: v1, metadata: {{name: n{i}}}}}\n" for i in range(count))


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body",
    [
        pytest.param("apiVersion: v1\nkind: List\nitems:\n" + _node_items(2001), id="List"),
        pytest.param(
            "---\n".join(f"{{kind: Node, apiVersion: v1, metadata: {{name: n{i}}}}}\n" for i in range(2001)),
            id="multi-document",
        ),
    ],
)
def test_import_of_too_many_objects_is_refused_before_validating_them(
    lenient: Client, make_cluster: Any, body: str
) -> None:
    make_cluster("c1")
    response = lenient.post("/api/clusters/c1/import", body.encode(), content_type="application/yaml")
    assert assert_status(response) == "snapshot: 2001 objects: more than 2000 objects in one request"
    assert cluster_state("c1") == (0, 0, [])


@pytest.mark.django_db
def test_import_at_the_object_limit_succeeds(client: Client, make_cluster: Any) -> None:
    make_cluster("c1")
    body = "apiVersion: v1\nkind: List\nitems:\n" + _node_items(limits.MAX_OBJECTS_PER_REQUEST)
    response = client.post("/api/clusters/c1/import", body.encode(), content_type="application/yaml")
    assert response.json() == {"ok": True, "imported": 2000}
    assert cluster_state("c1")[0] == 2000


@pytest.mark.django_db
def test_import_file_over_the_size_limit_is_refused(lenient: Client, make_cluster: Any) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    make_cluster("c1")
    upload = SimpleUploadedFile("big.yaml", b"#" * (limits.MAX_YAML_BYTES + 1))
    response = lenient.post("/api/clusters/c1/import", {"file": upload})
    assert assert_status(response) == "snapshot: larger than 16 MiB"
    assert cluster_state("c1") == (0, 0, [])


@pytest.mark.django_db
def test_import_of_invalid_utf8_names_the_line(lenient: Client, make_cluster: Any) -> None:
    make_cluster("c1")
    body = b"apiVersion: v1\nkind: Node\nmetadata:\n  name: n\xff1\n"
    response = lenient.post("/api/clusters/c1/import", body, content_type="application/yaml")
    assert assert_status(response) == f"snapshot:4:10: not valid UTF-8 (byte {body.index(b'\xff')})"
    assert cluster_state("c1") == (0, 0, [])


@pytest.mark.django_db
def test_import_raw_body_over_django_limit_is_a_status(lenient: Client, make_cluster: Any) -> None:
    make_cluster("c1")
    body = (node_yaml("n1") + "#" * (3 * MiB)).encode()
    response = lenient.post("/api/clusters/c1/import", body, content_type="application/yaml")
    assert response["Content-Type"] == "application/json"
    data = response.json()
    assert data.get("ok") is True or data["code"] in (400, 413)


# --------------------------------------------------------------------------- CLI


CLUSTER = (
    "apiVersion: v1\nkind: List\nitems:\n"
    "- {apiVersion: v1, kind: Node, metadata: {name: big}, status: {allocatable: {cpu: '4', pods: '110'}}}\n"
)


def cli_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], pod_text: str, cluster: str = CLUSTER) -> str:
    (tmp_path / "cluster.yaml").write_text(cluster)
    (tmp_path / "pod.yaml").write_text(pod_text)
    args = ["explain", "--cluster", str(tmp_path / "cluster.yaml"), "--pod", str(tmp_path / "pod.yaml")]
    code = cli_main(args)
    captured = capsys.readouterr()
    assert (code, captured.out) == (2, ""), captured
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    return lines[0].removeprefix("error: ")


# tests/test_cli_errors.py already has: syntax, duplicate keys, wrong kind, invalid quantity, invalid UTF-8,
# the billion laughs, deep maps, a huge integer, a NUL byte, /dev/zero.
CLI_COVERED = {"alias-bomb", "deep-maps", "duplicate-key", "huge-integer"}


@pytest.mark.parametrize("case", [p for p in cases_for("cli") if p.values[0].id not in CLI_COVERED])
def test_cli_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: Hostile) -> None:
    line = cli_error(tmp_path, capsys, case.text)
    assert re.search(case.regex(str(tmp_path / "pod.yaml")), line), line


def test_cli_refuses_a_hostile_cluster_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    taints = flow([f"{{key: t{i}, effect: NoSchedule}}" for i in range(101)])
    cluster = CLUSTER + f"- {{apiVersion: v1, kind: Node, metadata: {{name: tainted}}, spec: {{taints: {taints}}}}}\n"
    line = cli_error(tmp_path, capsys, pod(), cluster)
    assert line == f"{tmp_path}/cluster.yaml:5: items[1].spec.taints: Too many: 101: must have at most 100 items"
    cluster = CLUSTER.replace("cpu: '4'", "cpu: '-4'")
    line = cli_error(tmp_path, capsys, pod(), cluster)
    expected = 'items[0].status.allocatable.cpu: Invalid value: "-4": must be greater than or equal to 0'
    assert line == f"{tmp_path}/cluster.yaml:4: {expected}"


# --------------------------------------------------------------------------- limits: exact, and cheap at the limit


def _pod_dict(**spec: Any) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}], **spec}}


def _req(n: int) -> list[dict[str, Any]]:
    return [{"key": f"k{i}", "operator": "Exists"} for i in range(n)]


LIMITS = [
    pytest.param(
        lambda n: _pod_dict(tolerations=_req(n)), limits.MAX_TOLERATIONS, "spec.tolerations", id="tolerations"
    ),
    pytest.param(
        lambda n: _pod_dict(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": _req(1)}] * n
                    }
                }
            }
        ),
        limits.MAX_SELECTOR_TERMS,
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
        id="nodeSelectorTerms",
    ),
    pytest.param(
        lambda n: _pod_dict(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchFields": _req(n)}]}
                }
            }
        ),
        limits.MAX_MATCH_EXPRESSIONS,
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields",
        id="matchFields",
    ),
    pytest.param(
        lambda n: _pod_dict(containers=[{"name": f"c{i}"} for i in range(n)]),
        limits.MAX_CONTAINERS,
        "spec.containers",
        id="containers",
    ),
    pytest.param(
        lambda n: _pod_dict(initContainers=[{"name": f"i{i}"} for i in range(n)]),
        limits.MAX_CONTAINERS,
        "spec.initContainers",
        id="initContainers",
    ),
    pytest.param(
        lambda n: _pod_dict(volumes=[{"name": f"v{i}"} for i in range(n)]),
        limits.MAX_VOLUMES,
        "spec.volumes",
        id="volumes",
    ),
    pytest.param(
        lambda n: {**_pod_dict(), "metadata": {"name": "p", "labels": {f"k{i}": "v" for i in range(n)}}},
        limits.MAX_LABELS,
        "metadata.labels",
        id="labels",
    ),
    pytest.param(
        lambda n: {
            **_pod_dict(),
            "metadata": {"name": "p", "ownerReferences": [{"kind": "ReplicaSet", "name": f"r{i}"} for i in range(n)]},
        },
        limits.MAX_OWNER_REFERENCES,
        "metadata.ownerReferences",
        id="ownerReferences",
    ),
]


@pytest.mark.parametrize(("build", "limit", "path"), LIMITS)
def test_limits_are_exact(build: Any, limit: int, path: str) -> None:
    from pydantic import ValidationError

    from scheduler_core.api.loading import format_validation_error

    Pod.model_validate(build(limit))  # at the limit: fine
    with pytest.raises(ValidationError) as caught:
        Pod.model_validate(build(limit + 1))
    message = format_validation_error(caught.value, "p.yaml", None)
    assert message == f"p.yaml: {path}: Too many: {limit + 1}: must have at most {limit} items"


def test_node_limits_are_exact() -> None:
    from pydantic import ValidationError

    taints = [{"key": f"t{i}", "effect": "NoSchedule"} for i in range(limits.MAX_TAINTS)]
    images = [{"names": [f"i{i}"]} for i in range(limits.MAX_NODE_IMAGES)]
    Node.model_validate({"metadata": {"name": "n"}, "spec": {"taints": taints}, "status": {"images": images}})
    with pytest.raises(ValidationError, match="Too many: 101: must have at most 100 items"):
        Node.model_validate({"metadata": {"name": "n"}, "spec": {"taints": [*taints, taints[0]]}})
    with pytest.raises(ValidationError, match="Too many: 1001: must have at most 1000 items"):
        Node.model_validate({"metadata": {"name": "n"}, "status": {"images": [*images, images[0]]}})
    with pytest.raises(ValidationError, match="must be no more than 100 characters"):
        Node.model_validate({"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "1" * 101}}})
    Node.model_validate({"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "1" * 100}}})


@pytest.mark.django_db
def test_explain_of_a_pod_at_the_limits_answers(client: Client, make_cluster: Any) -> None:
    make_cluster("c1", busy_cluster())
    before = cluster_state("c1")
    text = pod_at_the_limits()
    response = post_action(client, "c1", {"action": "explain", "yaml": text})
    data = response.json()
    assert response.status_code == 200, data
    explanation = data["explanation"]
    assert explanation["scheduled"] is True
    assert explanation["selectedNode"] in {f"n{i}" for i in range(30)}
    assert cluster_state("c1") == before
    # a pod with thousands of terms never reaches the scheduler: refused at validation, quickly
    thousands = text.replace(
        "[{matchExpressions:",
        "[" + "{matchExpressions: [{key: a, operator: Exists}]}, " * 5000 + "{matchExpressions:",
        1,
    )
    response = post_action(client, "c1", {"action": "explain", "yaml": thousands})
    assert re.search(r"nodeSelectorTerms: Too many: 5100: must have at most 100 items$", assert_status(response))


def test_absurd_but_valid_quantities_load_and_explain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`1e100` and a 100-digit quantity are valid quantities upstream (capped at int64 here, as the
    scheduler's int64 arithmetic saturates): the pod simply does not fit."""
    for cpu in ("1e100", '"1E+100"', '"' + "9" * 100 + '"', '"0.000000001"'):
        (tmp_path / "cluster.yaml").write_text(CLUSTER)
        (tmp_path / "pod.yaml").write_text(pod(cpu=cpu))
        args = [
            "explain",
            "--cluster",
            str(tmp_path / "cluster.yaml"),
            "--pod",
            str(tmp_path / "pod.yaml"),
            "-o",
            "json",
        ]
        assert cli_main(args) == 0
        result = json.loads(capsys.readouterr().out)
        fits = cpu == '"0.000000001"'
        assert result["scheduled"] is fits, (cpu, result.get("message"))
        if not fits:
            assert result["message"].startswith("0/1 nodes are available: 1 Insufficient cpu."), result["message"]


# --------------------------------------------------------------------------- memory


MEMORY = [
    pytest.param(billion_laughs(), 10, id="alias-bomb"),
    pytest.param("a: " + "[" * 50_000 + "]" * 50_000 + "\n", 10, id="deep-lists"),
    pytest.param("a: [" + ",".join(["1"] * limits.MAX_YAML_NODES) + "]\n", 10, id="too-many-yaml-nodes"),
    pytest.param(pod(spec="  tolerations: [" + "{key: a, operator: Exists}, " * 20_000 + "]\n"), 60, id="tolerations"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("text", "megabytes"), MEMORY)
def test_refusal_memory_is_bounded(make_cluster: Any, text: str, megabytes: int) -> None:
    cluster = make_cluster("c1", SEED)
    before = cluster_state("c1")
    tracemalloc.start()
    try:
        with pytest.raises(InputError):
            services.create_from_yaml(cluster, text, "browser", source="yaml")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < megabytes * MiB, f"peak {peak / MiB:.1f} MiB"
    assert cluster_state("c1") == before


def test_yaml_at_the_node_limit_parses_within_memory_bounds() -> None:
    """The worst accepted document (MAX_YAML_NODES nodes) takes about a second and tens of MiB."""
    items = limits.MAX_YAML_NODES - 20
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nextra: [" + "1, " * items + "]\n"
    text += "spec: {containers: [{name: c}]}\n"
    parsed = load_pod(text, "p.yaml")
    assert len(parsed.extra) == items  # type: ignore[attr-defined]
    del parsed
    tracemalloc.start()
    try:
        load_pod(text, "p.yaml")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 120 * MiB, f"peak {peak / MiB:.1f} MiB"
    with pytest.raises(InputError, match="more than 100000 YAML nodes"):
        load_pod(text.replace("extra: [", "extra: [" + "1, " * 30), "p.yaml")
