"""The endpoint's pure parts: patches, selectors, table cells, content negotiation (fast, no server)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from clusterviz.kube_api import discovery, openapi, tables
from clusterviz.kube_api.patch import json_merge_patch, json_patch, strategic_merge_patch
from clusterviz.kube_api.resources import by_kind
from clusterviz.kube_api.schema import releases, schema_of
from clusterviz.kube_api.selectors import FieldSelector, LabelSelector, format_label_selector
from clusterviz.kube_api.status import ApiError, invalid

# --- strategic merge patch: the bodies kubectl sent in the probe (kubectl-api.md §7.2, §7.5, §7.6)

LIVE = {
    "metadata": {"labels": {"app": "web"}, "annotations": {"a": "1"}},
    "spec": {
        "replicas": 3,
        "template": {
            "spec": {
                "containers": [
                    {"name": "web", "image": "nginx:1.25", "ports": [{"containerPort": 80}]},
                ],
                "tolerations": [{"key": "old", "operator": "Exists"}],
            }
        },
    },
}


def test_smp_adds_a_sidecar_env_and_replaces_atomic_lists() -> None:
    patch = {
        "metadata": {"labels": {"tier": "fe"}},
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "web"}, {"name": "sidecar"}],
                    "containers": [
                        {"env": [{"name": "A", "value": "1"}], "name": "web"},
                        {"image": "busybox", "name": "sidecar"},
                    ],
                    "nodeSelector": {"kgc": "a"},
                    "tolerations": [{"effect": "NoSchedule", "key": "qqq", "operator": "Equal", "value": "value1"}],
                }
            }
        },
    }
    out = strategic_merge_patch(LIVE, patch)
    spec = out["spec"]["template"]["spec"]
    assert out["metadata"]["labels"] == {"app": "web", "tier": "fe"}
    assert spec["containers"] == [
        {"name": "web", "image": "nginx:1.25", "ports": [{"containerPort": 80}], "env": [{"name": "A", "value": "1"}]},
        {"image": "busybox", "name": "sidecar"},
    ]
    assert spec["tolerations"] == [{"effect": "NoSchedule", "key": "qqq", "operator": "Equal", "value": "value1"}]
    assert spec["nodeSelector"] == {"kgc": "a"}
    assert LIVE["spec"]["template"]["spec"]["containers"][0].get("env") is None  # the input is not modified


def test_smp_deletes_with_null_and_patch_directives() -> None:
    live = strategic_merge_patch(
        LIVE, {"spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "busybox"}]}}}}
    )
    patch = {
        "metadata": {"labels": None},
        "spec": {
            "replicas": 2,
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "web"}],
                    "containers": [
                        {"env": None, "image": "nginx:1.26", "name": "web"},
                        {"$patch": "delete", "name": "sidecar"},
                    ],
                    "tolerations": None,
                }
            },
        },
    }
    out = strategic_merge_patch(live, patch)
    assert "labels" not in out["metadata"] and out["metadata"]["annotations"] == {"a": "1"}
    assert out["spec"]["replicas"] == 2
    assert out["spec"]["template"]["spec"] == {
        "containers": [{"name": "web", "image": "nginx:1.26", "ports": [{"containerPort": 80}]}]
    }


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        pytest.param({"spec": {"unschedulable": True}}, {"unschedulable": True, "taints": [{"key": "a"}]}, id="cordon"),
        pytest.param({"spec": {"taints": None}}, {}, id="last-taint-removed"),
        pytest.param(
            {"spec": {"taints": [{"key": "b", "effect": "NoExecute"}, {"key": "a"}]}},
            {"taints": [{"key": "b", "effect": "NoExecute"}, {"key": "a"}]},
            id="taints-atomic-new-first",
        ),
        pytest.param({"spec": {"$patch": "replace", "podCIDR": "x"}}, {"podCIDR": "x"}, id="patch-replace-map"),
        pytest.param({"spec": {"$retainKeys": ["podCIDR"], "podCIDR": "y"}}, {"podCIDR": "y"}, id="retain-keys"),
    ],
)
def test_smp_node_spec(patch: dict[str, Any], expected: dict[str, Any]) -> None:
    node = {"spec": {"taints": [{"key": "a"}]}}
    assert strategic_merge_patch(node, patch)["spec"] == expected


def test_smp_primitive_lists() -> None:
    meta = {"finalizers": ["a", "b"], "args": ["x"]}
    out = strategic_merge_patch(
        meta, {"finalizers": ["c"], "$deleteFromPrimitiveList/finalizers": ["a"], "args": ["y"]}
    )
    assert out == {"finalizers": ["b", "c"], "args": ["y"]}


def test_json_merge_patch_rfc7386() -> None:
    target = {"metadata": {"labels": {"qqq": "1", "kgc": "a"}}, "spec": {"taints": [{"key": "x"}]}}
    assert json_merge_patch(target, {"metadata": {"labels": {"qqq": None}}}) == {
        "metadata": {"labels": {"kgc": "a"}},
        "spec": {"taints": [{"key": "x"}]},
    }
    assert json_merge_patch(target, {"spec": {"taints": []}})["spec"] == {"taints": []}  # lists replace


def test_json_patch_rfc6902() -> None:
    doc = {"a": {"b": [1, 2]}, "c": "x"}
    ops = [
        {"op": "add", "path": "/a/b/-", "value": 3},
        {"op": "add", "path": "/a/b/0", "value": 0},
        {"op": "replace", "path": "/c", "value": "y"},
        {"op": "copy", "from": "/c", "path": "/d"},
        {"op": "move", "from": "/d", "path": "/e~1f"},
        {"op": "remove", "path": "/a/b/1"},
        {"op": "test", "path": "/e~1f", "value": "y"},
    ]
    assert json_patch(doc, ops) == {"a": {"b": [0, 2, 3]}, "c": "y", "e/f": "y"}
    with pytest.raises(ApiError) as failed:
        json_patch(doc, [{"op": "remove", "path": "/nope"}])
    assert failed.value.code == 422


# --- selectors


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("app=web", True),
        ("app==web,tier=fe", True),
        ("app!=web", False),
        ("app in (web,api),tier notin (be)", True),
        ("gone", False),
        ("!gone", True),
        ("replicas>2", True),
        ("replicas<2", False),
        ("", True),
    ],
)
def test_label_selector(selector: str, matches: bool) -> None:
    obj = {"metadata": {"labels": {"app": "web", "tier": "fe", "replicas": "3"}}}
    assert LabelSelector.parse(selector).matches(obj) is matches


def test_field_selector_terms_in_any_order_with_negation_and_empty_values() -> None:
    pod = {
        "metadata": {"name": "x", "namespace": "default"},
        "spec": {"nodeName": "node01"},
        "status": {"phase": "Running"},
    }
    selector = FieldSelector.parse("status.phase!=Failed,spec.nodeName=node01,status.phase!=Succeeded", "Pod")
    assert selector.matches(pod) and selector.required("spec.nodeName") == "node01"
    assert not FieldSelector.parse("spec.nodeName=node02", "Pod").matches(pod)
    event = {"metadata": {"name": "e"}, "involvedObject": {"kind": "Node", "name": "node01"}}
    assert FieldSelector.parse("involvedObject.namespace=,involvedObject.kind=Node", "Event").matches(event)
    with pytest.raises(ApiError, match=r"field label not supported: spec\.foo"):
        FieldSelector.parse("spec.foo=1", "Pod")


def test_format_label_selector() -> None:
    selector = {
        "matchLabels": {"b": "2", "a": "1"},
        "matchExpressions": [
            {"key": "c", "operator": "In", "values": ["y", "x"]},
            {"key": "d", "operator": "DoesNotExist"},
        ],
    }
    assert format_label_selector(selector) == "a=1,b=2,c in (x,y),!d"
    assert format_label_selector({}) == "<none>"


# --- tables


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(-5, "<invalid>"), (0, "0s"), (119, "119s"), (125, "2m5s"), (600, "10m"), (3 * 3600 + 120, "3h2m"),
     (9 * 3600, "9h"), (50 * 3600, "2d2h"), (400 * 86400, "400d"), (3 * 365 * 86400, "3y")],
)  # fmt: skip
def test_human_duration(seconds: int, text: str) -> None:
    assert tables.human_duration(seconds) == text


def _pod_row(status: dict[str, Any], deleting: bool = False) -> list[Any]:
    meta: dict[str, Any] = {"name": "p", "creationTimestamp": "2026-01-01T00:00:00Z"}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:01:00Z"
    pod = {"metadata": meta, "spec": {"containers": [{"name": "a"}], "nodeName": "node01"}, "status": status}
    now = datetime(2026, 1, 1, 0, 7, 2, tzinfo=UTC)
    return tables.table(by_kind("Pod"), [pod], "1", now=now)["rows"][0]["cells"]  # type: ignore[arg-type]


def test_pod_status_cells() -> None:
    waiting = {
        "phase": "Pending",
        "containerStatuses": [{"ready": False, "state": {"waiting": {"reason": "ContainerCreating"}}}],
    }
    assert _pod_row(waiting)[:5] == ["p", "0/1", "ContainerCreating", "0", "7m2s"]
    running = {
        "phase": "Running",
        "podIP": "10.0.0.1",
        "containerStatuses": [{"ready": True, "state": {"running": {}}}],
    }
    assert _pod_row(running) == ["p", "1/1", "Running", "0", "7m2s", "10.0.0.1", "node01", "<none>", "<none>"]
    assert _pod_row(running, deleting=True)[2] == "Terminating"
    gated = {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}],
    }
    assert _pod_row(gated)[2] == "SchedulingGated"


def test_node_and_event_cells() -> None:
    node = {
        "metadata": {"name": "cp", "labels": {"node-role.kubernetes.io/control-plane": ""}},
        "spec": {"unschedulable": True},
        "status": {"conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": "v1"}},
    }
    cells = tables.table(by_kind("Node"), [node], "1")["rows"][0]["cells"]  # type: ignore[arg-type]
    assert cells[:3] == ["cp", "Ready,SchedulingDisabled", "control-plane"]
    event = {
        "metadata": {"name": "x.1"},
        "involvedObject": {"kind": "Pod", "name": "x"},
        "type": "Normal",
        "reason": "Scheduled",
        "message": " hi ",
        "source": {"component": "kubelet", "host": "node01"},
        "count": 3,
    }
    cells = tables.table(by_kind("Event"), [event], "1")["rows"][0]["cells"]  # type: ignore[arg-type]
    assert cells == ["<unknown>", "Normal", "Scheduled", "pod/x", "", "kubelet, node01", "hi", "<unknown>", 3, "x.1"]


# --- negotiation, OpenAPI, Status


@pytest.mark.parametrize(
    ("accept", "version"),
    [
        ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json", "v2"),
        ("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", "v2beta1"),
        ("application/json", None),
        ("application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList", None),
    ],
)
def test_aggregated_discovery_negotiation(accept: str, version: str | None) -> None:
    assert discovery.aggregated_version(accept) == version


def test_table_negotiation() -> None:
    assert tables.table_version("application/json;as=Table;v=v1;g=meta.k8s.io,application/json") == "v1"
    assert tables.table_version("application/json;as=Table;v=v1beta1;g=meta.k8s.io") == "v1beta1"
    assert tables.table_version("application/vnd.kubernetes.protobuf,application/json") is None


def test_openapi_index_carries_the_prefix() -> None:
    paths = openapi.index("/k8s/demo", schema_of(34), "v1.34.0")["paths"]
    assert set(paths) == {
        "api/v1",
        "apis/apps/v1",
        "apis/events.k8s.io/v1",
        "apis/batch/v1",
        "apis/discovery.k8s.io/v1",
        "apis/policy/v1",
        "apis/scheduling.k8s.io/v1",
        "apis/resource.k8s.io/v1",
        "apis/storage.k8s.io/v1",
        "apis/coordination.k8s.io/v1",
        "apis/authorization.k8s.io/v1",
        "apis/authentication.k8s.io/v1",
    }
    assert paths["api/v1"]["serverRelativeURL"].startswith("/k8s/demo/openapi/v3/api/v1?hash=")
    leases = openapi.group_document("coordination.k8s.io", "v1", schema_of(34), "v1.34.0")
    assert leases is not None
    # read-only: a path for explain, no PATCH (so no server-side field validation is advertised)
    assert leases["paths"] == {
        "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}": {
            "get": {
                "x-kubernetes-group-version-kind": {"group": "coordination.k8s.io", "version": "v1", "kind": "Lease"}
            }
        }
    }
    lease = leases["components"]["schemas"]["io.k8s.api.coordination.v1.Lease"]
    assert lease["x-kubernetes-group-version-kind"] == [
        {"group": "coordination.k8s.io", "kind": "Lease", "version": "v1"}
    ]
    assert lease["description"] == "Lease defines a lease concept."
    # a struct-typed field carries its own description, as upstream's document does (kubectl explain prints it)
    assert lease["properties"]["spec"] == {
        "allOf": [{"$ref": "#/components/schemas/io.k8s.api.core.v1.LeaseSpec"}],
        "description": "spec contains the specification of the Lease. More info: "
        "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status",
    }


def test_invalid_status_names_the_field() -> None:
    error = invalid(by_kind("Pod"), "bad1", "object:7: spec.containers[0].image: Required value")  # type: ignore[arg-type]
    assert (error.code, error.reason) == (422, "Invalid")
    assert error.message == 'The Pod "bad1" is invalid: spec.containers[0].image: Required value'
    assert error.body()["details"]["causes"] == [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.containers[0].image"}
    ]


def test_each_release_serves_its_own_schema() -> None:
    """kube_schema.json keeps 1.34 whole and each later release as its changes (schema_build.py):
    a field a release added is there from that release on, one it removed is gone."""
    assert releases() == (34, 35, 36, 37)
    node_status = {minor: set(schema_of(minor).fields_of("NodeStatus") or {}) for minor in releases()}
    assert "declaredFeatures" not in node_status[34]  # NodeDeclaredFeatures' field is new in 1.35
    assert all("declaredFeatures" in node_status[minor] for minor in (35, 36, 37))
    pod_spec = {minor: set(schema_of(minor).fields_of("PodSpec") or {}) for minor in releases()}
    assert "workloadRef" in pod_spec[35] and "workloadRef" not in pod_spec[36]  # replaced by schedulingGroup
    assert "schedulingGroup" in pod_spec[36] and "schedulingGroup" not in pod_spec[34]
    # 1.37's OpenAPI no longer marks a DeploymentCondition's status and type required
    assert schema_of(36).fields_of("DeploymentCondition")["type"].required  # type: ignore[index]
    assert not schema_of(37).fields_of("DeploymentCondition")["type"].required  # type: ignore[index]
    assert schema_of(99) is schema_of(37) and schema_of(20) is schema_of(34)
    # the OpenAPI documents differ, so their hashes do (kubectl caches a document by its URL)
    hashes = {openapi.index("", schema_of(m), f"v1.{m}.0")["paths"]["api/v1"]["serverRelativeURL"] for m in releases()}
    assert len(hashes) == 4
