"""Field validation as kube-apiserver 1.32: `fieldValidation=Strict` (kubectl's default) refuses an
unknown or duplicate field with upstream's text, `Warn` answers a `Warning` and `Ignore` drops it —
never kept, never silently accepted; for every served kind and every write verb."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Cluster
from .test_api import call
from .test_dry_run import steady_dump

pytestmark = pytest.mark.slow

TYPO = """\
apiVersion: v1
kind: Pod
metadata: {name: typo}
spec:
  nodeSelecter: {disk: ssd}
  containers:
  - {name: web, image: nginx}
"""


def test_a_misspelled_field_is_refused_with_upstreams_text(cluster: Cluster) -> None:
    cluster.write("typo.yaml", TYPO)
    before = cluster.dump()
    for verb in ("create", "apply"):
        refused = cluster.kubectl(verb, "-f", "typo.yaml", ok=False)
        assert refused.stderr.strip() == (
            'Error from server (BadRequest): error when creating "typo.yaml": Pod in version "v1" cannot be '
            'handled as a Pod: strict decoding error: unknown field "spec.nodeSelecter"'
        )
    ssa = cluster.kubectl("apply", "--server-side", "-f", "typo.yaml", ok=False)
    assert (
        "failed to create typed patch object (default/typo; /v1, Kind=Pod): "
        ".spec.nodeSelecter: field not declared in schema" in ssa.stderr
    )
    assert cluster.dump() == before


def test_warn_reports_and_ignore_drops_the_field(cluster: Cluster) -> None:
    cluster.write("typo.yaml", TYPO)
    warned = cluster.kubectl("create", "-f", "typo.yaml", "--validate=warn")
    assert 'Warning: unknown field "spec.nodeSelecter"' in warned.stderr
    assert "nodeSelecter" not in cluster.pods()["default/typo"]["spec"]
    cluster.write("typo2.yaml", TYPO.replace("name: typo", "name: typo2"))
    ignored = cluster.kubectl("create", "-f", "typo2.yaml", "--validate=false")
    assert "Warning" not in ignored.stderr
    assert "nodeSelecter" not in cluster.pods()["default/typo2"]["spec"]


def test_patches_and_apply_of_an_existing_object(cluster: Cluster) -> None:
    cluster.write("typo.yaml", TYPO)
    cluster.kubectl("create", "-f", "typo.yaml", "--validate=false")
    before = steady_dump(cluster)
    # kubectl patch sends no fieldValidation: the server's default, Warn
    warned = cluster.kubectl("patch", "pod", "typo", "--type=merge", "-p", '{"metadata":{"labelz":{"a":"b"}}}')
    assert warned.stderr == 'Warning: unknown field "metadata.labelz"\n'
    assert warned.stdout.startswith("pod/typo patched")
    pod = "/api/v1/namespaces/default/pods/typo?fieldValidation=Strict"
    labelz = {"metadata": {"labelz": {"a": "b"}}}
    merge = call(cluster, "PATCH", pod, labelz, "application/merge-patch+json")
    assert (merge.status, merge.json()["message"]) == (400, 'strict decoding error: unknown field "metadata.labelz"')
    ops = [{"op": "add", "path": "/metadata/labelz", "value": {"a": "b"}}]
    jp = call(cluster, "PATCH", pod, ops, "application/json-patch+json")
    assert (jp.status, jp.json()["message"]) == (400, 'strict decoding error: unknown field "metadata.labelz"')
    smp = call(cluster, "PATCH", pod, labelz, "application/strategic-merge-patch+json")
    assert (smp.status, smp.json()["message"]) == (
        422,
        ' "" is invalid: patch: Invalid value: "map[metadata:map[labelz:map[a:b]]]": strict decoding error: '
        'unknown field "metadata.labelz"',
    )
    cluster.write("typo.yaml", TYPO.replace("metadata: {name: typo}", "metadata: {name: typo, labelz: {a: b}}"))
    applied = cluster.kubectl("apply", "-f", "typo.yaml", ok=False)
    assert 'unknown field "metadata.labelz"' in applied.stderr
    assert cluster.dump() == before


@pytest.mark.parametrize(
    ("path", "body", "unknown"),
    [
        (
            "/apis/apps/v1/namespaces/default/deployments",
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "d"},
                "spec": {
                    "replica": 2,
                    "selector": {"matchLabels": {"a": "b"}},
                    "template": {
                        "metadata": {"labels": {"a": "b"}},
                        "spec": {"containers": [{"name": "c", "image": "x", "imagePullPolice": "Always"}]},
                    },
                },
            },
            'unknown field "spec.replica", unknown field "spec.template.spec.containers[0].imagePullPolice"',
        ),
        (
            "/api/v1/nodes",
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n9"}, "spec": {"taint": []}},
            'unknown field "spec.taint"',
        ),
        (
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns9", "label": {}}},
            'unknown field "metadata.label"',
        ),
        (
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "hi"}, "valu": 5},
            'unknown field "valu"',
        ),
    ],
)
def test_every_served_kind_is_checked(api_cluster: Cluster, path: str, body: Any, unknown: str) -> None:
    before = api_cluster.dump()
    refused = call(api_cluster, "POST", path + "?fieldValidation=Strict", body)
    assert refused.status == 400, refused.body
    kind = body["kind"]
    assert refused.json()["message"] == (
        f'{kind} in version "v1" cannot be handled as a {kind}: strict decoding error: {unknown}'
    )
    assert api_cluster.dump() == before


def test_duplicate_fields_and_a_bad_directive(api_cluster: Cluster) -> None:
    before = api_cluster.dump()
    duplicated = (
        b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"dup","name":"dup"},'
        b'"spec":{"containers":[{"name":"c","image":"x","image":"y"}]}}'
    )
    refused = call(api_cluster, "POST", "/api/v1/namespaces/default/pods?fieldValidation=Strict", duplicated)
    assert refused.json()["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: duplicate field "metadata.name", '
        'duplicate field "spec.containers[0].image"'
    )
    bad = call(api_cluster, "POST", "/api/v1/namespaces/default/pods?fieldValidation=strict", duplicated)
    assert bad.status == 422
    assert bad.json()["message"] == (
        'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": supported values: '
        '"", "Ignore", "Strict", "Warn"'
    )
    assert api_cluster.dump() == before
    warned = call(api_cluster, "POST", "/api/v1/namespaces/default/pods", duplicated)  # the default is Warn
    assert warned.status == 201
    assert (
        warned.headers["Warning"]
        == '299 - "duplicate field \\"metadata.name\\"", 299 - "duplicate field \\"spec.containers[0].image\\""'
    )
    assert api_cluster.pods()["default/dup"]["spec"]["containers"][0]["image"] == "y"
