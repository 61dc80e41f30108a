"""Hostile input on every path that takes it: a clear, located error, quickly, and nothing changes.

Paths: the HTTP actions API (`POST /api/clusters/<slug>/actions`: create and explain), the same actions
over the WebSocket, the import endpoint (`POST /api/clusters/<slug>/import`) and the CLI
(`python -m scheduler_core explain`; tests/test_cli_errors.py covers its basic errors).

For every input: the reply is a 4xx Status (or WebSocket `error`, or CLI exit 2) whose one-line message
names the source, the line and the field; the cluster's resourceVersion, objects and watch log are
unchanged; it completes within BOUND seconds (memory is measured with tracemalloc where it could grow).
The limits are the named constants of scheduler_core/api/limits.py; upstream Kubernetes has few hard
limits, so ours are far above what real workloads write (see that module). Messages follow the API
server's field errors (`Too many: 1001: must have at most 1000 items` is upstream's field.TooMany).
"""

from __future__ import annotations

import json
import re
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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

from .conftest import node_yaml, pod_yaml

BOUND = 2.0  # seconds for any refusal (measured: well under 0.5 s each)
MiB = 1024 * 1024


# --------------------------------------------------------------------------- builders


def pod(spec: str = "", meta: str = "", container: str = "", name: str = "web", cpu: str = "100m") -> str:
    """A Pod with extra lines (already indented) in metadata, spec and its container."""
    return (
        "apiVersion: v1\nkind: Pod\nmetadata:\n"
        f"  name: {name}\n{meta}"
        f"spec:\n{spec}"
        "  containers:\n  - name: c\n    image: nginx\n"
        f"{container}"
        f"    resources:\n      requests:\n        cpu: {cpu}\n"
    )


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the first occurrence of `needle`."""
    return text[: text.index(needle)].count("\n") + 1


def flow(items: list[str]) -> str:
    return "[" + ", ".join(items) + "]"


def billion_laughs() -> str:
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return "\n".join(lines) + "\n"


def too_many(n: int, limit: int) -> str:
    return re.escape(f"Too many: {n}: must have at most {limit} items") + "$"


EXPR = "{key: zone, operator: In, values: [a]}"
SELECTOR_EXPR = "{key: app, operator: In, values: [a]}"


@dataclass(frozen=True)
class Hostile:
    """One hostile document. `pattern` is a regex with `SRC` standing for the source name; `paths`
    are where it applies: create (HTTP/WS), explain (HTTP/WS), import, cli (as the --pod file)."""

    id: str
    text: str
    pattern: str
    paths: frozenset[str] = frozenset({"create", "explain", "import", "cli"})

    def regex(self, source: str) -> str:
        return self.pattern.replace("SRC", re.escape(source))


ALL = frozenset({"create", "explain", "import", "cli"})
ADMISSION = frozenset({"create", "import"})  # the API server's own checks (names, NUL): not the CLI's
NOT_A_POD = frozenset({"create", "import"})


def _cases() -> list[Hostile]:
    cases: list[Hostile] = []

    def add(id: str, text: str, pattern: str, paths: frozenset[str] = ALL) -> None:
        cases.append(Hostile(id, text, pattern, paths))

    # --- YAML itself
    add("alias-bomb", billion_laughs(), r"^SRC:6:\d+: excessive aliasing: aliases expand to more than 100000 nodes$")
    refs = "a: &a x\nb: [" + ", ".join(["*a"] * (limits.MAX_ALIAS_REFERENCES + 1)) + "]\n"
    add("alias-references", refs, r"^SRC:2:\d+: too many alias references \(limit 10000\)$")
    add("deep-maps", "spec: " + "{a: " * 300 + "1" + "}" * 300 + "\n", r"^SRC:1:\d+: nesting deeper than 100 levels$")
    add("deep-lists", "a: " + "[" * 50_000 + "]" * 50_000 + "\n", r"^SRC:1:\d+: nesting deeper than 100 levels$")
    many = "a: [" + ",".join(["1"] * limits.MAX_YAML_NODES) + "]\n"  # + the map, its key: one over
    add("too-many-yaml-nodes", many, r"^SRC:1:\d+: more than 100000 YAML nodes \(values, lists and maps\)$")
    add(
        "tab-indentation",
        "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: web\n",
        r"^SRC:4:1: found character '\\t' that cannot start any token$",
    )
    text = pod(meta="  name: api\n")
    add("duplicate-key", text, r"^SRC:5:3: duplicate key 'name'$")
    add("huge-integer", pod(spec="  priority: " + "9" * 5000 + "\n"), r"^SRC:6:13: integer with more than 4000 digits$")
    add("control-character", pod().replace("nginx", "ngi\x07nx"), r"^SRC:8:\d+: unacceptable character #x0007")
    add("python-tag", pod().replace("nginx", "!!python/object/apply:os.system [id]"), r"^SRC:8:\d+: could not")

    # --- wrong kinds and types
    add("kind-cronjob", pod().replace("kind: Pod", "kind: CronJob"), r'^SRC:2: kind: unsupported kind "CronJob"')
    add("kind-list-value", pod().replace("kind: Pod", "kind: [Pod]"), r"^SRC:2: kind: unsupported kind")
    add("kind-number", pod().replace("kind: Pod", "kind: 5"), r'^SRC:2: kind: unsupported kind "5"')
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: [1]\n"
    add("spec-is-a-list", text, r'^SRC:4: spec: Invalid value: "\[1\]": must be an object$')
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: abc}\n"
    add("containers-is-a-string", text, r'^SRC:4: spec\.containers: Invalid value: "abc": must be a list$')
    add(
        "priority-word",
        pod(spec="  priority: high\n"),
        r'^SRC:6: spec\.priority: Invalid value: "high": must be an int',
    )
    add(
        "priority-1e100", pod(spec="  priority: 1e100\n"), r'^SRC:6: spec\.priority: Invalid value: "1e100": must be an'
    )
    add(
        "priority-float",
        pod(spec="  priority: 1.5\n"),
        r'^SRC:6: spec\.priority: Invalid value: "1\.5": must be an int',
    )
    add(
        "priority-over-int32",
        pod(spec="  priority: 99999999999\n"),
        r'^SRC:6: spec\.priority: Invalid value: "99999999999": must be less than or equal to 2147483647$',
    )
    add(
        "tolerationSeconds-over-int64",
        pod(spec="  tolerations: [{key: a, operator: Exists, tolerationSeconds: 99999999999999999999}]\n"),
        r"^SRC:6: spec\.tolerations\[0\]\.tolerationSeconds: Invalid value: \"99999999999999999999\": "
        r"must be less than or equal to 9223372036854775807$",
    )
    add("labels-is-a-list", pod(meta="  labels: [a]\n"), r"^SRC:5: metadata\.labels: ", ALL - {"explain", "cli"})

    # --- absurd quantities
    cpu = r"^SRC:11: spec\.containers\[0\]\.resources\.requests"
    add("cpu-negative", pod(cpu='"-1"'), cpu + r'\[cpu\]: Invalid value: "-1": must be greater than or equal to 0$')
    add("cpu-nan", pod(cpu=".nan"), cpu + r"\.cpu: nan is not a valid quantity$")
    add("cpu-NaN-string", pod(cpu="NaN"), cpu + r'\.cpu: "NaN" is not a valid quantity$')
    add("cpu-inf", pod(cpu=".inf"), cpu + r"\.cpu: inf is not a valid quantity$")
    add("cpu-Infinity", pod(cpu="Infinity"), cpu + r'\.cpu: "Infinity" is not a valid quantity$')
    add(
        "cpu-huge-digit-string",
        pod(cpu='"' + "9" * 5000 + '"'),
        cpu + r'\.cpu: "9{64}…" is not a valid quantity: must be no more than 100 characters$',
    )
    text = pod(spec="  overhead: {cpu: '-2'}\n")
    add(
        "overhead-negative",
        text,
        r'^SRC:6: spec\.overhead\.limits\[cpu\]: Invalid value: "-2": must be greater than or equal to 0$',
    )
    text = pod(spec="  resources: {limits: {memory: '-1Gi'}}\n")
    add(
        "pod-resources-negative",
        text,
        r'^SRC:6: spec\.resources\.limits\[memory\]: Invalid value: "-1Gi": must be greater than or equal to 0$',
    )
    text = "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\nstatus:\n  allocatable: {cpu: '-1', pods: '110'}\n"
    add(
        "node-allocatable-negative",
        text,
        r'^SRC:5: status\.allocatable\.cpu: Invalid value: "-1": must be greater than or equal to 0$',
        NOT_A_POD,
    )

    # --- thousands of things
    tolerations = flow([f"{{key: k{i}, operator: Exists}}" for i in range(limits.MAX_TOLERATIONS + 1)])
    add(
        "tolerations",
        pod(spec=f"  tolerations: {tolerations}\n"),
        r"^SRC:6: spec\.tolerations: " + too_many(1001, 1000),
    )
    terms = flow([f"{{matchExpressions: [{EXPR}]}}"] * (limits.MAX_SELECTOR_TERMS + 1))
    affinity = (
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        f"        nodeSelectorTerms: {terms}\n"
    )
    add(
        "nodeSelectorTerms",
        pod(spec=affinity),
        r"^SRC:9: spec\.affinity\.nodeAffinity\.requiredDuringSchedulingIgnoredDuringExecution\.nodeSelectorTerms: "
        + too_many(101, 100),
    )
    exprs = flow([EXPR] * (limits.MAX_MATCH_EXPRESSIONS + 1))
    affinity = (
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        f"        nodeSelectorTerms:\n        - matchExpressions: {exprs}\n"
    )
    add(
        "matchExpressions",
        pod(spec=affinity),
        r"^SRC:10: spec\.affinity\.nodeAffinity\.requiredDuringSchedulingIgnoredDuringExecution\."
        r"nodeSelectorTerms\[0\]\.matchExpressions: " + too_many(101, 100),
    )
    values = flow([f"v{i}" for i in range(limits.MAX_SELECTOR_VALUES + 1)])
    affinity = (
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:\n        - matchExpressions:\n"
        f"          - {{key: zone, operator: In, values: {values}}}\n"
    )
    add(
        "selector-values",
        pod(spec=affinity),
        r"^SRC:11: spec\.affinity\..*\.matchExpressions\[0\]\.values: " + too_many(1001, 1000),
    )
    preferred = flow([f"{{weight: 1, preference: {{matchExpressions: [{EXPR}]}}}}"] * 101)
    affinity = f"  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution: {preferred}\n"
    add(
        "preferred-terms",
        pod(spec=affinity),
        r"^SRC:8: spec\.affinity\.nodeAffinity\.preferredDuringSchedulingIgnoredDuringExecution: " + too_many(101, 100),
    )
    pod_terms = flow([f"{{topologyKey: zone, labelSelector: {{matchExpressions: [{SELECTOR_EXPR}]}}}}"] * 101)
    affinity = f"  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution: {pod_terms}\n"
    add(
        "pod-anti-affinity-terms",
        pod(spec=affinity),
        r"^SRC:8: spec\.affinity\.podAntiAffinity\.requiredDuringSchedulingIgnoredDuringExecution: "
        + too_many(101, 100),
    )
    label_exprs = flow([SELECTOR_EXPR] * 101)
    affinity = (
        "  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        f"      - topologyKey: zone\n        labelSelector: {{matchExpressions: {label_exprs}}}\n"
    )
    add(
        "label-selector-expressions",
        pod(spec=affinity),
        r"^SRC:10: spec\.affinity\.podAffinity\.requiredDuringSchedulingIgnoredDuringExecution\[0\]\."
        r"labelSelector\.matchExpressions: " + too_many(101, 100),
    )
    spread = flow([f"{{maxSkew: 1, topologyKey: z{i}, whenUnsatisfiable: ScheduleAnyway}}" for i in range(101)])
    add(
        "topologySpreadConstraints",
        pod(spec=f"  topologySpreadConstraints: {spread}\n"),
        r"^SRC:6: spec\.topologySpreadConstraints: " + too_many(101, 100),
    )
    containers = flow([f"{{name: c{i}, image: nginx}}" for i in range(limits.MAX_CONTAINERS + 1)])
    text = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: web}}\nspec:\n  containers: {containers}\n"
    add("containers", text, r"^SRC:5: spec\.containers: " + too_many(101, 100))
    ports = flow([f"{{containerPort: {i + 1}}}" for i in range(limits.MAX_CONTAINER_PORTS + 1)])
    add(
        "container-ports",
        pod(container=f"    ports: {ports}\n"),
        r"^SRC:9: spec\.containers\[0\]\.ports: " + too_many(101, 100),
    )
    labels = "{" + ", ".join(f"k{i}: v" for i in range(limits.MAX_LABELS + 1)) + "}"
    add("labels", pod(meta=f"  labels: {labels}\n"), r"^SRC:5: metadata\.labels: " + too_many(1001, 1000))
    add(
        "nodeSelector",
        pod(spec=f"  nodeSelector: {labels}\n"),
        r"^SRC:6: spec\.nodeSelector: " + too_many(1001, 1000),
    )
    resources = "".join(f"        example.com/r{i}: '1'\n" for i in range(limits.MAX_RESOURCE_NAMES + 1))
    add(
        "resource-names",
        pod().replace("        cpu: 100m\n", resources),
        r"^SRC:10: spec\.containers\[0\]\.resources\.requests: " + too_many(101, 100),
    )
    annotations = "{a: " + "x" * (limits.MAX_ANNOTATIONS_BYTES) + "}"
    add(
        "annotations-size",
        pod(meta=f"  annotations: {annotations}\n"),
        r"^SRC:5: metadata\.annotations: Too long: must have at most 262144 bytes$",
    )
    taints = flow([f"{{key: t{i}, effect: NoSchedule}}" for i in range(limits.MAX_TAINTS + 1)])
    text = f"apiVersion: v1\nkind: Node\nmetadata: {{name: n2}}\nspec:\n  taints: {taints}\n"
    add("node-taints", text, r"^SRC:5: spec\.taints: " + too_many(101, 100), NOT_A_POD)
    template_containers = flow([f"{{name: c{i}}}" for i in range(101)])
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {a: b}}\n"
        f"  template:\n    metadata: {{labels: {{a: b}}}}\n    spec:\n      containers: {template_containers}\n"
    )
    add(
        "deployment-template-containers",
        text,
        r"^SRC:9: spec\.template\.spec\.containers: " + too_many(101, 100),
        NOT_A_POD,
    )
    text = text.replace(f"containers: {template_containers}", "containers: [{name: c}]").replace(
        "spec:\n  selector", "spec:\n  replicas: 1e100\n  selector"
    )
    add(
        "deployment-replicas-1e100",
        text,
        r'^SRC:5: spec\.replicas: Invalid value: "1e100": must be an integer$',
        NOT_A_POD,
    )

    # --- names that are not DNS-1123 (the API server's checks, so not the CLI's)
    rfc1123 = "a lowercase RFC 1123 "
    add(
        "pod-name", pod(name="Web_1"), rf'^SRC:4: metadata\.name: Invalid value: "Web_1": {rfc1123}subdomain', ADMISSION
    )
    add("pod-name-long", pod(name="a" * 254), r"^SRC:4: metadata\.name: Invalid value: .*no more than 253", ADMISSION)
    add(
        "namespace",
        pod(meta="  namespace: Prod\n"),
        rf'^SRC:5: metadata\.namespace: Invalid value: "Prod": {rfc1123}label',
        ADMISSION,
    )
    add(
        "container-name",
        pod().replace("- name: c\n", "- name: C_1\n"),
        rf'^SRC:7: spec\.containers\[0\]\.name: Invalid value: "C_1": {rfc1123}label',
        ADMISSION,
    )
    add(
        "duplicate-container-name",
        pod().replace("  - name: c\n", "  - name: c\n    image: a\n  - name: c\n"),
        r'^SRC:9: spec\.containers\[1\]\.name: Duplicate value: "c"$',
        ADMISSION,
    )
    text = "apiVersion: v1\nkind: Node\nmetadata: {name: 'Node 1'}\n"
    add("node-name", text, rf'^SRC:3: metadata\.name: Invalid value: "Node 1": {rfc1123}subdomain', NOT_A_POD)
    add(
        "label-key",
        pod(meta="  labels: {'-bad-': x}\n"),
        r'^SRC:5: metadata\.labels: Invalid value: "-bad-": name part must consist of',
        ADMISSION,
    )

    # --- NUL characters (PostgreSQL cannot store them in JSON): refused at admission, located
    nul = r"must not contain NUL characters$"
    text = pod().replace("image: nginx", 'image: "ngi\\0nx"')
    add("nul-image", text, rf'^SRC:8: spec\.containers\[0\]\.image: Invalid value: "ngi\\u0000nx": {nul}', ADMISSION)
    text = pod(meta='  annotations: {note: "a\\0b"}\n')
    add("nul-annotation", text, rf'^SRC:5: metadata\.annotations\.note: Invalid value: "a\\u0000b": {nul}', ADMISSION)
    text = pod().replace("kind: Pod\n", 'kind: Pod\nextra: {deep: ["x\\0"]}\n')
    add("nul-unknown-field", text, rf'^SRC:3: extra\.deep\[0\]: Invalid value: "x\\u0000": {nul}', ADMISSION)
    text = pod(meta='  annotations: {"k\\0": v}\n')
    add(
        "nul-key",
        text,
        r'^SRC:5: metadata\.annotations: Invalid value: "k\\u0000": keys must not contain NUL',
        ADMISSION,
    )
    text = pod(name='"we\\0b"')
    add("nul-name", text, rf'^SRC:4: metadata\.name: Invalid value: "we\\u0000b": {nul}', ADMISSION)
    return cases


CASES = _cases()


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


@contextmanager
def within(seconds: float = BOUND) -> Iterator[None]:
    start = time.perf_counter()
    yield
    elapsed = time.perf_counter() - start
    assert elapsed < seconds, f"took {elapsed:.2f}s (bound {seconds}s)"


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
    with within():
        response = post_action(lenient, "c1", {"action": "create", "yaml": case.text})
    message = assert_status(response)
    assert re.search(case.regex("yaml"), message), message
    assert cluster_state("c1") == before


@pytest.mark.django_db
@pytest.mark.parametrize("case", cases_for("explain"))
def test_http_explain_refuses(lenient: Client, make_cluster: Any, case: Hostile) -> None:
    make_cluster("c1", SEED)
    before = cluster_state("c1")
    with within():
        response = post_action(lenient, "c1", {"action": "explain", "yaml": case.text})
    message = assert_status(response)
    assert re.search(case.regex("pod.yaml"), message), message
    assert cluster_state("c1") == before


@pytest.mark.django_db
def test_http_yaml_over_the_action_limit_is_refused_quickly(lenient: Client, make_cluster: Any) -> None:
    make_cluster("c1", SEED)
    before = cluster_state("c1")
    text = "a: " + "x" * (limits.MAX_YAML_CHARS - 3)  # one character over
    with within(1.0):
        response = post_action(lenient, "c1", {"action": "create", "yaml": text + "\n"})
    assert assert_status(response) == f"yaml: String should have at most {limits.MAX_YAML_CHARS} characters"
    with within(1.0):  # a body over the limit is refused before it is parsed
        response = post_action(lenient, "c1", {"action": "create", "yaml": "x" * (3 * limits.MAX_YAML_CHARS + 5000)})
    assert assert_status(response, 413, "RequestEntityTooLarge") == "request body too large (6.3 MB > 6 MiB)"
    assert cluster_state("c1") == before


@pytest.mark.django_db
def test_http_body_over_django_limit_is_a_413_status(lenient: Client, make_cluster: Any) -> None:
    make_cluster("c1", SEED)
    with within(1.0):
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
        {"action": "delete", "kind": "Secret", "name": "x"},
        r"^kind: Input should be 'Pod', 'Deployment', 'ReplicaSet', 'Node', 'PriorityClass' or 'Namespace'$",
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
    with within():
        response = post_action(lenient, "c1", action)
    message = assert_status(response, *((404, "NotFound") if "NotFound" in pattern else ()))
    assert re.search(pattern, message), message
    assert cluster_state("c1") == before


@pytest.mark.django_db
@pytest.mark.parametrize(("body", "pattern"), BAD_BODIES)
def test_http_bad_json_numbers(lenient: Client, make_cluster: Any, body: str, pattern: str) -> None:
    make_cluster("c1", SEED)
    before = cluster_state("c1")
    with within():
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
    with within():
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
    await client.quiet()  # the runner schedules and starts p1 first
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
        start = time.perf_counter()
        await client.send({**action, "id": action_id})
        reply = (await client.until(lambda m, i=action_id: m.get("id") == i or m.get("type") == "error"))[-1]
        elapsed = time.perf_counter() - start
        ok = (
            reply.get("type") == "error"
            and reply.get("id") == action_id
            and reply.get("reason") in ("Invalid", "NotFound")
            and re.search(pattern, reply.get("message", ""))
            and "\n" not in reply["message"]
            and elapsed < BOUND
        )
        if not ok:
            failures.append((action_id, f"{elapsed:.2f}s", str(reply)[:300]))
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
    with within():
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
    with within(1.0):
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
def test_import_file_over_the_size_limit_is_refused_quickly(lenient: Client, make_cluster: Any) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    make_cluster("c1")
    upload = SimpleUploadedFile("big.yaml", b"#" * (limits.MAX_YAML_BYTES + 1))
    with within():
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
    with within():
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
    with within(), pytest.raises(ValidationError) as caught:
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


def _pod_at_the_limits() -> str:
    """1000 tolerations, 100 required terms of 10 expressions (the last failing), 100 preferred terms,
    100 pod (anti-)affinity terms and 100 spread constraints: heavy, but valid."""
    exprs = ", ".join(["{key: zone, operator: In, values: [z0, z1, z2]}"] * 9 + ["{key: zone, operator: Exists}"])
    failing = exprs.replace("operator: Exists", "operator: DoesNotExist")
    terms = flow([f"{{matchExpressions: [{failing}]}}"] * 99 + [f"{{matchExpressions: [{exprs}]}}"])
    preferred = flow([f"{{weight: 1, preference: {{matchExpressions: [{exprs}]}}}}"] * 100)
    selector = "{matchExpressions: [{key: app, operator: NotIn, values: [x]}]}"
    weighted = flow([f"{{weight: 1, podAffinityTerm: {{topologyKey: zone, labelSelector: {selector}}}}}"] * 100)
    anti = flow(
        [
            f"{{topologyKey: kubernetes.io/hostname, labelSelector: {{matchLabels: {{app: nope{i}}}}}}}"
            for i in range(100)
        ]
    )
    spread = flow(
        [f"{{maxSkew: 5, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {selector}}}"] * 100
    )
    tolerations = flow([f"{{key: k{i}, operator: Exists}}" for i in range(limits.MAX_TOLERATIONS)])
    spec = (
        f"  tolerations: {tolerations}\n  topologySpreadConstraints: {spread}\n  affinity:\n"
        f"    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: {terms}}}\n"
        f"      preferredDuringSchedulingIgnoredDuringExecution: {preferred}\n"
        f"    podAffinity: {{preferredDuringSchedulingIgnoredDuringExecution: {weighted}}}\n"
        f"    podAntiAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {anti}}}\n"
    )
    return pod(spec=spec, name="heavy")


def _busy_cluster(nodes: int = 30, pods: int = 300) -> str:
    out = [node_yaml(f"n{i}", cpu="8", labels={"zone": f"z{i % 3}"}) for i in range(nodes)]
    out += [
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: e{i}, labels: {{app: a{i % 7}}}}}\n"
        f"spec: {{nodeName: n{i % nodes}, containers: [{{name: c, image: nginx, "
        "resources: {requests: {cpu: 10m}}}]}\n"
        for i in range(pods)
    ]
    return "---\n".join(out)


@pytest.mark.django_db
def test_explain_of_a_pod_at_the_limits_is_time_bounded(client: Client, make_cluster: Any) -> None:
    make_cluster("c1", _busy_cluster())
    before = cluster_state("c1")
    text = _pod_at_the_limits()
    with within(3 * BOUND):
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
    with within():
        response = post_action(client, "c1", {"action": "explain", "yaml": thousands})
    assert re.search(r"nodeSelectorTerms: Too many: 5100: must have at most 100 items$", assert_status(response))


def test_absurd_but_valid_quantities_load_and_explain_quickly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
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
        with within():
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


def test_yaml_at_the_node_limit_parses_within_bounds() -> None:
    """The worst accepted document (MAX_YAML_NODES nodes) takes about a second and tens of MiB."""
    items = limits.MAX_YAML_NODES - 20
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nextra: [" + "1, " * items + "]\n"
    text += "spec: {containers: [{name: c}]}\n"
    with within(3.0):
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
