"""services: what kubectl (and the browser) can do to a cluster, validated first, all or nothing."""

from __future__ import annotations

import re
import textwrap
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from clusterviz import services, store
from clusterviz.controllers.runner import reconcile
from clusterviz.models import Cluster, KubeObject
from scheduler_core.api.loading import InputError, load_yaml_documents
from tests.app import changes, create, deployment_yaml, events, node_yaml, pod, pod_yaml, priority_class_yaml, rv


@pytest.fixture
def cluster(db: None) -> Cluster:
    return services.create_cluster("services-test")


@pytest.fixture
def node01(cluster: Cluster) -> Cluster:
    create(cluster, node_yaml("node01", labels={"qqq": "1"}))
    return cluster


def _node(cluster: Cluster, name: str = "node01") -> dict[str, Any]:
    return store.get(cluster, "Node", "", name)


def exactly(message: str) -> str:
    """A `match=` pattern for exactly this message."""
    return f"^{re.escape(message)}$"


def _seconds_ago(stamp: str) -> float:
    return datetime.now(UTC).timestamp() - datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


# --- create_from_yaml -------------------------------------------------------------------------

TWO_DOCUMENTS = """\
apiVersion: v1
kind: Node
metadata: {name: node01}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: web
    image: nginx
    resources:
      requests: {cpu: 2x}
"""


def test_create_from_yaml_is_all_or_nothing_and_names_file_line_and_field(cluster: Cluster) -> None:
    with pytest.raises(InputError) as caught:
        services.create_from_yaml(cluster, TWO_DOCUMENTS, "kubectl", source="app.yaml")
    message = str(caught.value)
    assert message.startswith("app.yaml:14: spec.containers[0].resources.requests.cpu: ")
    assert '"2x"' in message
    assert not KubeObject.objects.filter(cluster=cluster).exists()
    assert rv(cluster) == 0
    assert changes(cluster) == []


def test_create_from_yaml_rolls_back_when_a_later_object_already_exists(cluster: Cluster) -> None:
    create(cluster, pod_yaml("web"))
    with pytest.raises(store.AlreadyExists, match=exactly('pods "web" already exists')):
        create(cluster, node_yaml("node01"), pod_yaml("web"))
    assert store.list_objects(cluster, "Node") == []
    assert rv(cluster) == 1


def test_create_from_yaml_returns_the_stored_objects_with_defaults(cluster: Cluster) -> None:
    created = create(cluster, node_yaml("node01"), pod_yaml("web"))
    assert [(o["kind"], o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in created] == [
        ("Node", "node01", "1"),
        ("Pod", "web", "2"),
    ]
    web = created[1]
    assert web["metadata"]["namespace"] == "default"
    assert web["spec"]["schedulerName"] == "default-scheduler"
    assert web["spec"]["priority"] == 0
    assert web["spec"]["restartPolicy"] == "Always"
    assert web["status"]["phase"] == "Pending"
    assert "nodeName" not in web["spec"]  # the API server leaves empty fields out
    assert "priorityClassName" not in web["spec"]
    assert created[0]["spec"] == {}  # a struct: always written, `unschedulable: false` left out


def test_a_list_item_error_names_its_own_line_and_index(cluster: Cluster) -> None:
    text = textwrap.dedent(
        """\
        apiVersion: v1
        kind: List
        items:
        - apiVersion: v1
          kind: Node
          metadata: {name: node01}
        - apiVersion: v1
          kind: Pod
          metadata: {name: web}
          spec:
            containers:
            - name: web
              resources: {requests: {cpu: 2x}}
        """
    )
    with pytest.raises(InputError) as caught:
        services.create_from_yaml(cluster, text, "kubectl", source="list.yaml")
    assert str(caught.value).startswith("list.yaml:13: items[1].spec.containers[0].resources.requests.cpu: ")
    assert not KubeObject.objects.filter(cluster=cluster).exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: web}\n",
            'app.yaml:2: kind: unsupported kind "CronJob" (supported: Pod, Node, Deployment, ReplicaSet, Namespace, '
            "PriorityClass, DaemonSet, StatefulSet, Job, Service, ConfigMap, Secret, ServiceAccount, LimitRange, "
            "ResourceQuota, PersistentVolumeClaim, PodDisruptionBudget, ControllerRevision, DeviceClass, "
            "ResourceSlice, ResourceClaim, ResourceClaimTemplate, StorageClass, CSIDriver, CSIStorageCapacity, "
            "PersistentVolume, CSINode)",
        ),
        (
            "apiVersion: apps/v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: a}]}\n",
            'app.yaml:1: apiVersion: "apps/v1" is not served for kind Pod (use v1)',
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: Web_1}\nspec: {containers: [{name: a}]}\n",
            'app.yaml:3: metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain must consist of lower '
            "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ),
        (
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: a.b}\n",
            'app.yaml:3: metadata.name: Invalid value: "a.b": a lowercase RFC 1123 label must consist of lower case '
            "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. "
            "'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ),
        ("apiVersion: v1\nkind: Pod\n", "app.yaml:1: metadata: Required value"),
        ("", "app.yaml: no objects found"),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n"
            "spec: {priorityClassName: gold, containers: [{name: a, image: nginx}]}",
            'app.yaml:4: spec.priorityClassName: pods "web" is forbidden: no PriorityClass with name gold was found',
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: a\n"
            "    image: nginx\n  - name: b\n    image: ''\n",
            "app.yaml:9: spec.containers[1].image: Required value",
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n"
            "spec: {initContainers: [{name: init}], containers: [{name: a, image: nginx}]}",
            "app.yaml:4: spec.initContainers[0].image: Required value",
        ),
        (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {a: b}}\n"
            "  template:\n    metadata: {labels: {a: b}}\n    spec: {containers: [{name: a}]}\n",
            "app.yaml:8: spec.template.spec.containers[0].image: Required value",
        ),
    ],
    ids=[
        "wrong-kind",
        "wrong-api-version",
        "invalid-dns-name",
        "invalid-namespace-name",
        "no-metadata",
        "empty",
        "unknown-priority-class",
        "container-without-image",
        "init-container-without-image",
        "template-container-without-image",
    ],
)
def test_create_from_yaml_refuses_invalid_objects(cluster: Cluster, text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        services.create_from_yaml(cluster, text, "kubectl", source="app.yaml")
    assert str(caught.value) == message
    assert rv(cluster) == 0


def test_a_priority_class_in_the_same_stream_admits_the_pod(cluster: Cluster) -> None:
    create(
        cluster,
        priority_class_yaml("gold", 1000),
        pod_yaml("web", priorityClassName="gold"),
    )
    assert pod(cluster, "web")["spec"]["priority"] == 1000
    assert pod(cluster, "web")["spec"]["preemptionPolicy"] == "PreemptLowerPriority"


def test_scheduling_gates_add_the_scheduling_gated_condition(cluster: Cluster) -> None:
    create(cluster, pod_yaml("gated", schedulingGates=[{"name": "example.com/wait"}]))
    assert pod(cluster, "gated")["status"]["conditions"] == [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "SchedulingGated",
            "message": "Scheduling is blocked due to non-empty scheduling gates",
        }
    ]


# --- labels ------------------------------------------------------------------------------------


def test_label_add_overwrite_and_remove(node01: Cluster) -> None:
    cluster = node01
    services.set_label(cluster, "node01", "disktype", "ssd", "kubectl")
    assert _node(cluster)["metadata"]["labels"]["disktype"] == "ssd"
    services.set_label(cluster, "node01", "disktype", "hdd", "kubectl", overwrite=True)
    assert _node(cluster)["metadata"]["labels"]["disktype"] == "hdd"
    # `kubectl label nodes node01 qqq-`
    services.set_label(cluster, "node01", "qqq", None, "kubectl")
    assert _node(cluster)["metadata"]["labels"] == {"kubernetes.io/hostname": "node01", "disktype": "hdd"}


def test_label_without_overwrite_refuses_to_change_a_value(node01: Cluster) -> None:
    with pytest.raises(InputError, match=re.escape("'qqq' already has a value (1), and --overwrite is false")):
        services.set_label(node01, "node01", "qqq", "2", "kubectl", overwrite=False)
    # kubectl label.go validateNoOverwrites: an existing key is refused even with the same value
    with pytest.raises(InputError, match=re.escape("'qqq' already has a value (1), and --overwrite is false")):
        services.set_label(node01, "node01", "qqq", "1", "kubectl", overwrite=False)
    assert _node(node01)["metadata"]["labels"]["qqq"] == "1"
    before = rv(node01)
    services.set_label(node01, "node01", "qqq", "1", "kubectl", overwrite=True)  # same value: a no-op
    assert rv(node01) == before


def test_removing_a_missing_label_writes_nothing(node01: Cluster) -> None:
    """kubectl label prints `label "nope" not found.` and exits 0."""
    before = rv(node01)
    services.set_label(node01, "node01", "nope", None, "kubectl")
    assert rv(node01) == before


@pytest.mark.parametrize(
    ("key", "value", "fragment"),
    [
        ("a b", "x", 'metadata.labels: Invalid value: "a b": name part must consist of alphanumeric characters'),
        ("Bad_Prefix/x", "x", 'metadata.labels: Invalid value: "Bad_Prefix/x": prefix part must be a lowercase'),
        ("ok", "-bad", 'metadata.labels: Invalid value: "-bad": a valid label must be an empty string'),
    ],
    ids=["space-in-key", "bad-prefix", "bad-value"],
)
def test_invalid_labels_are_refused(node01: Cluster, key: str, value: str, fragment: str) -> None:
    with pytest.raises(InputError) as caught:
        services.set_label(node01, "node01", key, value, "kubectl")
    assert str(caught.value).startswith(fragment)


def test_labelling_a_missing_node_is_not_found(cluster: Cluster) -> None:
    with pytest.raises(store.NotFound, match='nodes "node09" not found'):
        services.set_label(cluster, "node09", "a", "b", "kubectl")


# --- taints ------------------------------------------------------------------------------------


def test_taint_add_replace_and_remove_by_key_and_effect(node01: Cluster) -> None:
    cluster = node01
    services.set_taint(cluster, "node01", "qqq", "value1", "NoSchedule", "kubectl")
    services.set_taint(cluster, "node01", "qqq", "", "PreferNoSchedule", "kubectl")
    assert _node(cluster)["spec"]["taints"] == [
        {"key": "qqq", "value": "value1", "effect": "NoSchedule"},
        {"key": "qqq", "effect": "PreferNoSchedule"},
    ]
    # same key and effect: replaced, not added
    services.set_taint(cluster, "node01", "qqq", "value2", "NoSchedule", "kubectl")
    assert _node(cluster)["spec"]["taints"] == [
        {"key": "qqq", "effect": "PreferNoSchedule"},
        {"key": "qqq", "value": "value2", "effect": "NoSchedule"},
    ]
    # `kubectl taint node node01 qqq:NoSchedule-`
    services.set_taint(cluster, "node01", "qqq", "", "NoSchedule", "kubectl", remove=True)
    assert _node(cluster)["spec"]["taints"] == [{"key": "qqq", "effect": "PreferNoSchedule"}]
    # `kubectl taint node node01 qqq-`: every effect of the key
    services.set_taint(cluster, "node01", "qqq", "value2", "NoSchedule", "kubectl")
    services.set_taint(cluster, "node01", "qqq", "", "", "kubectl", remove=True)
    assert "taints" not in _node(cluster).get("spec", {})


def test_no_execute_taints_get_time_added(node01: Cluster) -> None:
    services.set_taint(node01, "node01", "maintenance", "", "NoExecute", "kubectl")
    services.set_taint(node01, "node01", "other", "", "NoSchedule", "kubectl")
    taints = _node(node01)["spec"]["taints"]
    assert taints[0]["key"] == "maintenance"
    assert _seconds_ago(taints[0]["timeAdded"]) < 5
    assert "timeAdded" not in taints[1]


def test_no_execute_time_added_is_one_rule_for_both_writers(node01: Cluster) -> None:
    """The browser's taint action and a kubectl write keep an existing NoExecute taint's timeAdded
    (same key and effect, whatever the value) and stamp a new one: the browser used to restart it."""
    from clusterviz.kube_api import writes
    from clusterviz.kube_api.patch import MERGE
    from clusterviz.kube_api.resources import by_kind

    services.set_taint(node01, "node01", "maintenance", "a", "NoExecute", "kubectl")
    store.patch(
        node01, "Node", "", "node01", lambda b: b["spec"]["taints"][0].update(timeAdded="2020-01-01T00:00:00Z"), "test"
    )
    # the browser's action: `kubectl taint node node01 maintenance=b:NoExecute --overwrite`
    services.set_taint(node01, "node01", "maintenance", "b", "NoExecute", "kubectl")
    (taint,) = _node(node01)["spec"]["taints"]
    assert (taint["value"], taint["timeAdded"]) == ("b", "2020-01-01T00:00:00Z")
    # the same through the API (kubectl sends the taints without timeAdded), plus a new taint
    res = by_kind("Node")
    assert res is not None
    taints = [{"key": "maintenance", "value": "c", "effect": "NoExecute"}, {"key": "new", "effect": "NoExecute"}]
    writes.patch(node01, res, "", "node01", MERGE, {"spec": {"taints": taints}})
    old, new = _node(node01)["spec"]["taints"]
    assert (old["value"], old["timeAdded"]) == ("c", "2020-01-01T00:00:00Z")
    assert _seconds_ago(new["timeAdded"]) < 5


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("apiVersion: v1\nkind: List\nitems: 5\n", "manifest:3: items: must be a list"),
        ("apiVersion: v1\nkind: PodList\n", "manifest: no objects found"),
    ],
)
def test_lists_unwrap_as_the_core_loader_does(cluster: Cluster, text: str, error: str) -> None:
    """The app's create and the core's loader unwrap a List by one rule (the app used to read a List
    without items as an object of kind PodList, and named no line for items that are not a list)."""
    from scheduler_core.api.loading import load_cluster

    with pytest.raises(InputError) as app_error:
        services.parse_objects(text, "manifest", cluster)
    assert str(app_error.value) == error
    if "items" in text:
        with pytest.raises(InputError, match=f"^{re.escape(error)}$"):
            load_cluster(load_yaml_documents(text, "manifest"), "manifest")
    else:
        assert load_cluster(load_yaml_documents(text, "manifest"), "manifest").pods == []


def test_taint_errors(node01: Cluster) -> None:
    with pytest.raises(InputError, match='taint "nope:NoSchedule" not found'):
        services.set_taint(node01, "node01", "nope", "", "NoSchedule", "kubectl", remove=True)
    with pytest.raises(InputError, match='taint "nope" not found'):
        services.set_taint(node01, "node01", "nope", "", "", "kubectl", remove=True)
    with pytest.raises(InputError, match='invalid taint effect: "Sometimes", unsupported taint effect'):
        services.set_taint(node01, "node01", "k", "", "Sometimes", "kubectl")
    with pytest.raises(InputError, match=r'^spec.taints: Invalid value: "a b"'):
        services.set_taint(node01, "node01", "a b", "", "NoSchedule", "kubectl")
    assert "taints" not in _node(node01).get("spec", {})


# --- cordon ------------------------------------------------------------------------------------


def test_cordon_and_uncordon(node01: Cluster) -> None:
    cluster = node01
    services.set_taint(cluster, "node01", "qqq", "value1", "NoSchedule", "kubectl")
    services.set_cordon(cluster, "node01", True, "kubectl")
    spec = _node(cluster)["spec"]
    assert spec["unschedulable"] is True
    assert spec["taints"][0] == {"key": "qqq", "value": "value1", "effect": "NoSchedule"}
    unschedulable = spec["taints"][1]
    assert {k: v for k, v in unschedulable.items() if k != "timeAdded"} == {
        "key": "node.kubernetes.io/unschedulable",
        "effect": "NoSchedule",
    }
    assert _seconds_ago(unschedulable["timeAdded"]) < 5
    before = rv(cluster)
    services.set_cordon(cluster, "node01", True, "kubectl")  # already cordoned: nothing to write
    assert rv(cluster) == before
    services.set_cordon(cluster, "node01", False, "kubectl")
    spec = _node(cluster)["spec"]
    assert "unschedulable" not in spec
    assert spec["taints"] == [{"key": "qqq", "value": "value1", "effect": "NoSchedule"}]


# --- scale ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replicas", "message"),
    [
        (-1, "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
        (10_001, "spec.replicas: Invalid value: 10001: must be less than or equal to 10000"),
    ],
)
def test_replicas_are_refused_alike_by_create_scale_and_the_scale_subresource(
    cluster: Cluster, replicas: int, message: str
) -> None:
    """One rule (and upstream's wording) for spec.replicas: the scale action said "must be between
    0 and 10000" where create said "must be greater than or equal to 0" and quoted the number."""
    from clusterviz.kube_api import writes
    from clusterviz.kube_api.resources import by_kind
    from clusterviz.kube_api.status import ApiError

    with pytest.raises(InputError) as created:
        services.create_from_yaml(cluster, deployment_yaml("web", replicas), "kubectl")
    assert str(created.value).endswith(message)
    create(cluster, deployment_yaml("web", 1))
    with pytest.raises(InputError, match=f"^{re.escape(message)}$"):
        services.scale(cluster, "Deployment", "default", "web", replicas, "kubectl")
    res = by_kind("Deployment")
    assert res is not None
    with pytest.raises(ApiError) as scaled:
        writes.update_scale(cluster, res, "default", "web", None, {"spec": {"replicas": replicas}})
    assert scaled.value.message == f'The Scale "web" is invalid: {message}'
    field, _, text = message.partition(": ")  # kubectl prints the causes, not the message
    assert scaled.value.details is not None
    assert scaled.value.details["causes"] == [{"reason": "FieldValueInvalid", "message": text, "field": field}]


def test_scale_sets_replicas_and_refuses_bad_values(cluster: Cluster) -> None:
    create(cluster, deployment_yaml("myapp", 3))
    assert services.scale(cluster, "Deployment", "default", "myapp", 5, "kubectl")["spec"]["replicas"] == 5
    assert store.get(cluster, "Deployment", "default", "myapp")["spec"]["replicas"] == 5
    with pytest.raises(
        InputError, match=re.escape("spec.replicas: Invalid value: -1: must be greater than or equal to 0")
    ):
        services.scale(cluster, "Deployment", "default", "myapp", -1, "kubectl")
    with pytest.raises(InputError, match="Pod: cannot be scaled"):
        services.scale(cluster, "Pod", "default", "myapp", 1, "kubectl")
    with pytest.raises(store.NotFound, match='deployments "nope" not found'):
        services.scale(cluster, "Deployment", "default", "nope", 1, "kubectl")


# --- delete --------------------------------------------------------------------------------------


def test_deleting_a_running_pod_makes_it_terminating_then_the_kubelet_removes_it(node01: Cluster) -> None:
    cluster = node01
    create(cluster, pod_yaml("web"))
    reconcile(cluster)
    assert pod(cluster, "web")["status"]["phase"] == "Running"
    terminating = services.delete_object(cluster, "Pod", "default", "web", "kubectl")
    assert terminating["metadata"]["deletionGracePeriodSeconds"] == 30
    assert "deletionTimestamp" in pod(cluster, "web")["metadata"]
    reconcile(cluster)
    with pytest.raises(store.NotFound):
        pod(cluster, "web")
    killing = events(cluster, "web", "Killing")
    assert [e["message"] for e in killing] == ["Stopping container app"]
    assert killing[0]["source"] == {"component": "kubelet", "host": "node01"}
    assert [c.type for c in changes(cluster) if c.kind == "Pod"][-1] == "DELETED"


def test_deleting_a_pending_pod_removes_it_at_once(cluster: Cluster) -> None:
    create(cluster, pod_yaml("web"))
    services.delete_object(cluster, "Pod", "default", "web", "kubectl")
    with pytest.raises(store.NotFound):
        pod(cluster, "web")


def test_deleting_a_deployment_removes_its_replica_set_and_pods(node01: Cluster) -> None:
    cluster = node01
    create(cluster, deployment_yaml("myapp", 2), deployment_yaml("other", 1))
    reconcile(cluster)
    assert len(store.list_objects(cluster, "Pod")) == 3
    services.delete_object(cluster, "Deployment", "default", "myapp", "kubectl")
    # background propagation: the ReplicaSet goes, its running pods turn Terminating
    assert len(store.list_objects(cluster, "ReplicaSet")) == 1
    terminating = [p for p in store.list_objects(cluster, "Pod") if p["metadata"].get("deletionTimestamp")]
    assert len(terminating) == 2
    reconcile(cluster)
    assert [d["metadata"]["name"] for d in store.list_objects(cluster, "Deployment")] == ["other"]
    assert [r["metadata"]["name"].rsplit("-", 1)[0] for r in store.list_objects(cluster, "ReplicaSet")] == ["other"]
    pods = store.list_objects(cluster, "Pod")
    assert [p["metadata"]["name"].split("-")[0] for p in pods] == ["other"]
    assert len(events(cluster, reason="Killing")) == 2


def test_deleting_a_node_is_plain(node01: Cluster) -> None:
    services.delete_object(node01, "Node", "", "node01", "kubectl")
    assert store.list_objects(node01, "Node") == []
    with pytest.raises(store.NotFound, match='nodes "node01" not found'):
        services.delete_object(node01, "Node", "", "node01", "kubectl")


# --- pace, state ---------------------------------------------------------------------------------


def test_set_pace(cluster: Cluster) -> None:
    services.set_pace(cluster, "slow", 1500)
    cluster.refresh_from_db()
    assert (cluster.pace, cluster.pace_delay_ms) == ("slow", 1500)
    with pytest.raises(InputError, match='pace: Unsupported value: "fast"'):
        services.set_pace(cluster, "fast")
    with pytest.raises(InputError, match="delayMs: must be between 50 and 60000"):
        services.set_pace(cluster, "slow", 10)


def test_state_lists_everything_at_one_resource_version(node01: Cluster) -> None:
    create(node01, pod_yaml("web"))
    data = services.state(node01)
    assert data["resourceVersion"] == "2"
    assert data["cluster"]["slug"] == "services-test"
    assert [o["metadata"]["name"] for o in data["objects"]["Node"]] == ["node01"]
    assert [o["metadata"]["name"] for o in data["objects"]["Pod"]] == ["web"]


def test_create_cluster_refuses_a_bad_slug(db: None) -> None:
    with pytest.raises(InputError, match="^" + re.escape('slug: Invalid value: "Bad Slug"')):
        services.create_cluster("Bad Slug")


# --- export / import -----------------------------------------------------------------------------


def test_export_then_import_round_trips(node01: Cluster) -> None:
    source = node01
    create(
        source,
        node_yaml("node02", cpu="4", labels={"kgc": "a"}),
        priority_class_yaml("gold", 1000),
        deployment_yaml("myapp", 2),
        pod_yaml("solo", priorityClassName="gold", nodeSelector={"kgc": "a"}),
    )
    services.set_taint(source, "node01", "qqq", "value1", "NoSchedule", "kubectl")
    reconcile(source)
    exported = services.export_yaml(source)
    data = yaml.safe_load(exported)
    assert data["kind"] == "List"
    assert [(i["kind"], i["metadata"]["name"]) for i in data["items"]] == [
        ("PriorityClass", "gold"),
        ("Node", "node01"),
        ("Node", "node02"),
        ("Deployment", "myapp"),
        ("Pod", "solo"),  # the Deployment's pods are left out: it recreates them
    ]
    for item in data["items"]:
        assert not {"uid", "resourceVersion", "creationTimestamp"} & set(item["metadata"])

    copy = services.create_cluster("copy")
    count = services.import_snapshot(copy, exported, "kubectl", source="export.yaml")
    assert count == 5
    reconcile(copy)
    assert _node(copy)["spec"]["taints"] == [{"key": "qqq", "value": "value1", "effect": "NoSchedule"}]
    assert _node(copy, "node02")["metadata"]["labels"]["kgc"] == "a"
    solo = pod(copy, "solo")
    assert (solo["spec"]["nodeName"], solo["spec"]["priority"], solo["status"]["phase"]) == ("node02", 1000, "Running")
    assert store.get(copy, "Deployment", "default", "myapp")["status"]["readyReplicas"] == 2
    # and it exports the same again
    assert yaml.safe_load(services.export_yaml(copy))["items"] == data["items"]


KUBECTL_GET_NODES_PODS = """\
apiVersion: v1
items:
- apiVersion: v1
  kind: Node
  metadata:
    annotations:
      node.alpha.kubernetes.io/ttl: "0"
    creationTimestamp: "2025-01-10T08:00:00Z"
    labels:
      kubernetes.io/arch: amd64
      kubernetes.io/hostname: master
      node-role.kubernetes.io/control-plane: ""
    managedFields:
    - apiVersion: v1
      fieldsType: FieldsV1
      manager: kubelet
      operation: Update
      time: "2025-01-10T08:00:00Z"
    name: master
    resourceVersion: "4711"
    uid: 0b6f6c2e-9f55-4a4c-9f8e-1d2c3b4a5f60
  spec:
    podCIDR: 10.244.0.0/24
    taints:
    - effect: NoSchedule
      key: node-role.kubernetes.io/control-plane
  status:
    addresses:
    - address: 192.168.1.10
      type: InternalIP
    allocatable: {cpu: "2", ephemeral-storage: "36496716535", memory: 1863Mi, pods: "110"}
    capacity: {cpu: "2", ephemeral-storage: 39601472Ki, memory: 1965Mi, pods: "110"}
    conditions:
    - lastHeartbeatTime: "2025-01-10T09:00:00Z"
      lastTransitionTime: "2025-01-10T08:00:00Z"
      message: kubelet is posting ready status
      reason: KubeletReady
      status: "True"
      type: Ready
    nodeInfo: {kubeletVersion: v1.34.0, architecture: amd64, operatingSystem: linux}
- apiVersion: v1
  kind: Node
  metadata:
    labels: {kubernetes.io/hostname: node01}
    name: node01
    uid: 6a1d5e2f-0000-4000-8000-000000000001
  spec: {podCIDR: 10.244.1.0/24}
  status:
    allocatable: {cpu: "2", memory: 1863Mi, pods: "110"}
    capacity: {cpu: "2", memory: 1965Mi, pods: "110"}
- apiVersion: v1
  kind: Pod
  metadata:
    creationTimestamp: "2025-01-10T08:01:00Z"
    generateName: coredns-6f6b679f8f-
    labels: {k8s-app: kube-dns, pod-template-hash: 6f6b679f8f}
    name: coredns-6f6b679f8f-abcde
    namespace: kube-system
    ownerReferences:
    - apiVersion: apps/v1
      blockOwnerDeletion: true
      controller: true
      kind: ReplicaSet
      name: coredns-6f6b679f8f
      uid: 11111111-2222-4333-8444-555555555555
    resourceVersion: "500"
    uid: 22222222-3333-4444-8555-666666666666
  spec:
    containers:
    - image: registry.k8s.io/coredns/coredns:v1.11.3
      name: coredns
      resources:
        limits: {memory: 170Mi}
        requests: {cpu: 100m, memory: 70Mi}
    nodeName: master
    priority: 2000000000
    priorityClassName: system-cluster-critical
    tolerations:
    - {key: CriticalAddonsOnly, operator: Exists}
    - {effect: NoSchedule, key: node-role.kubernetes.io/control-plane}
  status:
    conditions:
    - {lastTransitionTime: "2025-01-10T08:01:00Z", status: "True", type: PodScheduled}
    phase: Running
    podIP: 10.244.0.2
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-0
    namespace: default
    uid: 33333333-4444-4555-8666-777777777777
  spec:
    containers:
    - {image: nginx, name: web, resources: {requests: {cpu: 500m}}}
    nodeName: node01
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: pending-0, namespace: default}
  spec:
    containers:
    - {image: nginx, name: web, resources: {requests: {cpu: "3"}}}
  status: {phase: Pending}
kind: List
metadata:
  resourceVersion: ""
"""


def test_import_of_kubectl_get_nodes_pods_output(cluster: Cluster) -> None:
    count = services.import_snapshot(cluster, KUBECTL_GET_NODES_PODS, "kubectl", source="snap.yaml")
    assert count == 5
    coredns = pod(cluster, "coredns-6f6b679f8f-abcde", "kube-system")
    # server-set fields are the new cluster's own
    assert coredns["metadata"]["uid"] != "22222222-3333-4444-8555-666666666666"
    assert coredns["metadata"]["resourceVersion"] != "500"
    reconcile(cluster)
    coredns = pod(cluster, "coredns-6f6b679f8f-abcde", "kube-system")
    assert (coredns["spec"]["nodeName"], coredns["spec"]["priority"], coredns["status"]["phase"]) == (
        "master",
        2000000000,
        "Running",
    )
    web = pod(cluster, "web-0")
    assert (web["spec"]["nodeName"], web["status"]["phase"]) == ("node01", "Running")
    # bound pods are not scheduled again; the pending one gets its verdict
    assert events(cluster, reason="Scheduled") == []
    pending = pod(cluster, "pending-0")
    assert "nodeName" not in pending["spec"]
    assert [e["message"] for e in events(cluster, "pending-0", "FailedScheduling")] == [
        pending["status"]["conditions"][0]["message"]
    ]
    assert _node(cluster, "master")["spec"]["taints"] == [
        {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
    ]


def test_import_refuses_a_non_empty_cluster_and_bad_input(node01: Cluster, db: None) -> None:
    with pytest.raises(InputError, match='cluster "services-test" is not empty: import into a new cluster'):
        services.import_snapshot(node01, KUBECTL_GET_NODES_PODS, "kubectl")
    empty = services.create_cluster("empty")
    with pytest.raises(InputError, match=r"^snap.yaml:\d+: "):
        services.import_snapshot(
            empty, KUBECTL_GET_NODES_PODS.replace("cpu: 500m", "cpu: lots"), "kubectl", "snap.yaml"
        )
    assert not KubeObject.objects.filter(cluster=empty).exists()


def test_a_typed_list_gives_its_items_their_kind(cluster: Cluster) -> None:
    text = "apiVersion: v1\nkind: NodeList\nitems:\n- metadata: {name: node01}\n- metadata: {name: node02}\n"
    created = services.create_from_yaml(cluster, text, "kubectl")
    assert [(o["kind"], o["metadata"]["name"]) for o in created] == [("Node", "node01"), ("Node", "node02")]


def test_a_list_whose_items_are_not_a_list_is_refused(cluster: Cluster) -> None:
    with pytest.raises(InputError, match=exactly("list.yaml:3: items: must be a list")):
        services.create_from_yaml(cluster, "apiVersion: v1\nkind: List\nitems: 5\n", "kubectl", source="list.yaml")
    with pytest.raises(InputError, match="^" + re.escape("list.yaml:4: items[0]: expected a Kubernetes object")):
        services.create_from_yaml(cluster, "apiVersion: v1\nkind: List\nitems:\n- 5\n", "kubectl", source="list.yaml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: 5}\nspec: {containers: [{name: a}]}",
            'y.yaml:3: metadata.name: Invalid value: "5": must be a string',
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: x, namespace: Bad_NS}\nspec: {containers: [{name: a}]}",
            'y.yaml:3: metadata.namespace: Invalid value: "Bad_NS": a lowercase RFC 1123 label must consist of',
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {labels: {a: b}}\nspec: {containers: [{name: a}]}",
            "y.yaml:3: metadata.name: Required value: name or generateName is required",
        ),
        (
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: p}\nvalue: 2000000001",
            "y.yaml:4: value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
        ),
        (
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: system-mine}\nvalue: 5",
            "y.yaml:3: metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for "
            "system use only. error: system-mine is not a known system priority class",
        ),
    ],
    ids=["name-not-a-string", "bad-namespace", "no-name", "priority-too-high", "system-prefix"],
)
def test_metadata_and_priority_class_validation(cluster: Cluster, text: str, message: str) -> None:
    """ValidateObjectMeta and ValidatePriorityClass (pkg/apis/scheduling/validation)."""
    with pytest.raises(InputError) as caught:
        services.create_from_yaml(cluster, text, "kubectl", source="y.yaml")
    assert str(caught.value).startswith(message)
    assert rv(cluster) == 0


def test_label_values_may_be_empty_strings(cluster: Cluster) -> None:
    created = create(cluster, node_yaml("node01", labels={"node-role.kubernetes.io/worker": ""}))
    assert created[0]["metadata"]["labels"]["node-role.kubernetes.io/worker"] == ""
    created = create(cluster, pod_yaml("web", nodeSelector={"node-role.kubernetes.io/worker": ""}))
    assert created[0]["spec"]["nodeSelector"] == {"node-role.kubernetes.io/worker": ""}
