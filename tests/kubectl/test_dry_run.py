"""`--dry-run=server` (dryRun=All) on every write kubectl makes: the answer is what a real server
prints, and the cluster is byte-identical afterwards — every object, its resourceVersion, the
cluster's resourceVersion, the watch log and the scheduling cycles (conftest `Cluster.dump`)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from .conftest import Cluster
from .test_api import call

pytestmark = pytest.mark.slow

WEB = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {{app: web{extra}}}
spec:
  nodeName: node01
  containers:
  - name: web
    image: nginx:1.25
    resources:
      requests: {{cpu: 100m}}
"""
NEW = """\
apiVersion: v1
kind: Pod
metadata: {name: new}
spec:
  containers: [{name: new, image: nginx}]
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: myapp}
spec:
  replicas: 2
  selector: {matchLabels: {app: myapp}}
  template:
    metadata: {labels: {app: myapp}}
    spec:
      containers: [{name: myapp, image: nginx}]
"""

# (kubectl arguments, a line it must print) — every write verb, each as a server-side dry run.
# kubectl 1.32 itself leaves the "(server dry run)" suffix off `patch` and `taint`.
DRY_RUNS: list[tuple[tuple[str, ...], str]] = [
    (("create", "-f", "new.yaml"), "pod/new created (server dry run)"),
    (("apply", "-f", "new.yaml"), "pod/new created (server dry run)"),
    (("apply", "--server-side", "-f", "new.yaml"), "pod/new serverside-applied (server dry run)"),
    (("apply", "-f", "web2.yaml"), "pod/web configured (server dry run)"),
    (("apply", "--server-side", "-f", "web2.yaml"), "pod/web serverside-applied (server dry run)"),
    (("replace", "-f", "myapp.yaml"), "deployment.apps/myapp replaced (server dry run)"),
    (("patch", "pod", "web", "-p", '{"metadata":{"labels":{"x":"y"}}}'), "pod/web patched"),
    (
        ("patch", "pod", "web", "--type=json", "-p", '[{"op":"add","path":"/metadata/labels/x","value":"y"}]'),
        "pod/web patched",
    ),
    (
        ("patch", "pod", "web", "--type=merge", "-p", '{"metadata":{"labels":{"x":"y"}}}'),
        "pod/web patched",
    ),
    (("label", "node", "node01", "disk=ssd"), "node/node01 labeled (server dry run)"),
    (("label", "pod", "web", "app-"), "pod/web unlabeled (server dry run)"),
    (("annotate", "pod", "web", "note=hi"), "pod/web annotated (server dry run)"),
    (("taint", "node", "node01", "gone=yes:NoExecute"), "node/node01 tainted"),
    (("cordon", "node01"), "node/node01 cordoned (server dry run)"),
    (("scale", "deployment", "myapp", "--replicas=5"), "deployment.apps/myapp scaled (server dry run)"),
    (("set", "image", "deployment/myapp", "myapp=nginx:2"), "deployment.apps/myapp image updated (server dry run)"),
    (("delete", "pod", "web"), 'pod "web" deleted (server dry run)'),
    (("delete", "pod", "web", "--grace-period=0", "--force"), 'pod "web" force deleted (server dry run)'),
    (("delete", "deployment", "myapp"), 'deployment.apps "myapp" deleted (server dry run)'),
    (("delete", "node", "node03"), 'node "node03" deleted (server dry run)'),
    (("delete", "-f", "web.yaml"), 'pod "web" deleted (server dry run)'),
    (("drain", "node01", "--force"), "node/node01 drained (server dry run)"),
]


def steady_dump(cluster: Cluster, quiet: float = 1.5) -> dict[str, Any]:
    """The store once the control loops have nothing left to do: unchanged for `quiet` seconds."""
    state: dict[str, Any] = {"dump": None, "since": 0.0}

    def settled() -> dict[str, Any] | None:
        dump, now = cluster.dump(), time.monotonic()
        if dump != state["dump"]:
            state.update(dump=dump, since=now)
            return None
        return dump if now - state["since"] >= quiet else None

    return cluster.wait(settled, 30, "the cluster to settle")


@pytest.fixture
def busy(cluster: Cluster) -> Cluster:
    """A cluster with a running pod on node01 and a running two-replica Deployment."""
    cluster.write("web.yaml", WEB.format(extra=""))
    cluster.write("web2.yaml", WEB.format(extra=", tier: fe"))
    cluster.write("new.yaml", NEW)
    cluster.write("myapp.yaml", DEPLOYMENT)
    cluster.kubectl("apply", "-f", "web.yaml")
    cluster.kubectl("apply", "-f", "myapp.yaml")
    cluster.wait(
        lambda: sum(p.get("status", {}).get("phase") == "Running" for p in cluster.pods().values()) == 3,
        20,
        "three running pods",
    )
    return cluster


def test_every_server_dry_run_prints_what_a_server_prints_and_changes_nothing(busy: Cluster) -> None:
    before = steady_dump(busy)
    for args, printed in DRY_RUNS:
        result = busy.kubectl(*args, "--dry-run=server", timeout=60)
        assert printed in result.lines, (args, result.stdout, result.stderr)
        assert busy.dump() == before, f"kubectl {' '.join(args)} --dry-run=server changed the cluster"
    drain = busy.kubectl("drain", "node01", "--force", "--dry-run=server")
    assert "evicting pod default/web (server dry run)" in drain.lines
    assert busy.dump() == steady_dump(busy) == before


def test_dry_run_still_validates_and_refuses(busy: Cluster) -> None:
    before = steady_dump(busy)
    busy.write("bad.yaml", NEW.replace("{name: new}", "{name: Bad_Name}"))
    bad = busy.kubectl("create", "-f", "bad.yaml", "--dry-run=server", ok=False)
    assert 'The Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"' in bad.stderr
    exists = busy.kubectl("create", "-f", "web.yaml", "--dry-run=server", ok=False)
    assert 'pods "web" already exists' in exists.stderr
    missing = busy.kubectl("delete", "pod", "nope", "--dry-run=server", ok=False)
    assert 'pods "nope" not found' in missing.stderr
    too_many = busy.kubectl("scale", "deployment", "myapp", "--replicas=100000", "--dry-run=server", ok=False)
    assert "spec.replicas" in too_many.stderr
    forbidden = busy.kubectl(
        "patch", "pod", "web", "-p", '{"spec":{"nodeName":"node02"}}', "--dry-run=server", ok=False
    )
    assert "pod updates may not change fields" in forbidden.stderr
    # a pod's manifest lacks what admission added (its service account token's volume): replacing
    # a running pod with it is refused, as on a real cluster
    replaced = busy.kubectl("replace", "-f", "web2.yaml", "--dry-run=server", ok=False)
    assert 'The Pod "web" is invalid: spec: Forbidden: pod updates may not change fields other than' in replaced.stderr
    assert busy.dump() == before


def test_dry_run_answers_the_object_that_would_result(busy: Cluster) -> None:
    before = steady_dump(busy)
    created = call(
        busy,
        "POST",
        "/api/v1/namespaces/default/pods?dryRun=All",
        {"metadata": {"generateName": "g-"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
    )
    assert created.status == 201, created.body
    meta = created.json()["metadata"]
    assert meta["name"].startswith("g-") and len(meta["name"]) == 7 and meta["uid"] and meta["creationTimestamp"]
    assert "resourceVersion" not in meta

    current_rv = busy.pods()["default/web"]["metadata"]["resourceVersion"]
    labelled = call(
        busy,
        "PATCH",
        "/api/v1/namespaces/default/pods/web?dryRun=All",
        {"metadata": {"labels": {"x": "y"}}},
        "application/merge-patch+json",
    ).json()
    assert labelled["metadata"]["labels"] == {"app": "web", "x": "y"}
    assert labelled["metadata"]["resourceVersion"] == current_rv

    status = call(
        busy,
        "PATCH",
        "/api/v1/namespaces/default/pods/web/status?dryRun=All",
        {"status": {"phase": "Failed"}},
        "application/merge-patch+json",
    )
    assert status.status == 200 and status.json()["status"]["phase"] == "Failed"

    stale = call(
        busy,
        "PATCH",
        "/api/v1/namespaces/default/pods/web?dryRun=All",
        {"metadata": {"resourceVersion": "1", "labels": {"x": "y"}}},
        "application/merge-patch+json",
    )
    assert stale.status == 409 and stale.json()["reason"] == "Conflict"

    deleting = call(
        busy,
        "DELETE",
        "/api/v1/namespaces/default/pods/web",
        {"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]},
    )
    assert deleting.status == 200 and deleting.json()["metadata"]["deletionTimestamp"]

    evicted = call(
        busy,
        "POST",
        "/api/v1/namespaces/default/pods/web/eviction",
        {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": "web"},
            "deleteOptions": {"dryRun": ["All"]},
        },
    )
    assert evicted.status == 201 and evicted.json()["status"] == "Success"

    scale = call(
        busy,
        "PATCH",
        "/apis/apps/v1/namespaces/default/deployments/myapp/scale?dryRun=All",
        {"spec": {"replicas": 7}},
        "application/merge-patch+json",
    )
    assert scale.status == 200 and scale.json()["spec"]["replicas"] == 7
    assert busy.dump() == before


@pytest.mark.parametrize(
    ("method", "path", "body", "kind"),
    [
        ("POST", "/api/v1/namespaces/default/pods?dryRun=Bogus", {"metadata": {"name": "z"}}, "CreateOptions"),
        ("PATCH", "/api/v1/nodes/node01?dryRun=All&dryRun=x", {}, "PatchOptions"),
        ("PUT", "/api/v1/nodes/node01?dryRun=", {}, "UpdateOptions"),
        ("DELETE", "/api/v1/nodes/node01", {"dryRun": ["all"]}, "DeleteOptions"),
    ],
)
def test_an_unknown_dry_run_value_is_refused_as_the_apiserver_does(
    api_cluster: Cluster, method: str, path: str, body: Any, kind: str
) -> None:
    before = api_cluster.dump()
    content_type = "application/merge-patch+json" if method == "PATCH" else "application/json"
    response = call(api_cluster, method, path, body, content_type)
    assert response.status == 422, response.body
    status = response.json()
    values = {"POST": '"Bogus"', "PATCH": '"All", "x"', "PUT": '""', "DELETE": '"all"'}[method]
    assert status["message"] == (
        f'{kind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{{{values}}}: supported values: "All"'
    )
    assert status["details"]["causes"][0]["field"] == "dryRun"
    assert api_cluster.dump() == before


def test_eviction_deletes_the_pod(busy: Cluster) -> None:
    """Without --dry-run, `kubectl drain` evicts (pods/eviction) rather than deletes."""
    drain = busy.kubectl("drain", "node01", "--force", timeout=60)
    assert "evicting pod default/web" in drain.lines and "node/node01 drained" in drain.lines
    assert "default/web" not in busy.pods()
