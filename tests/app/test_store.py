"""The store: resourceVersions, the watch log, optimistic concurrency and kubectl's error texts."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from clusterviz import publish, services, store
from clusterviz.models import Change, Cluster, KubeObject
from tests.app import changes, create, node_yaml, pod_yaml, rv


@pytest.fixture
def cluster(db: None) -> Cluster:
    return services.create_cluster("store-test")


def _node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": {"allocatable": {"cpu": "2"}}}


def _pod(name: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, **meta},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }


def _add_label(key: str, value: str) -> Any:
    def mutate(body: dict[str, Any]) -> None:
        body["metadata"].setdefault("labels", {})[key] = value

    return mutate


def test_every_write_bumps_the_cluster_resource_version_by_one_and_stamps_it(cluster: Cluster) -> None:
    assert rv(cluster) == 0
    created = store.create(cluster, _node("node01"), "kubectl")
    assert rv(cluster) == 1
    assert created["metadata"]["resourceVersion"] == "1"
    patched = store.patch(cluster, "Node", "", "node01", _add_label("a", "b"), "kubectl")
    assert rv(cluster) == 2
    assert patched["metadata"]["resourceVersion"] == "2"
    replaced = copy.deepcopy(patched)
    replaced["metadata"]["labels"]["a"] = "c"
    replaced = store.replace(cluster, replaced, "kubectl")
    assert rv(cluster) == 3
    assert replaced["metadata"]["resourceVersion"] == "3"
    deleted = store.delete(cluster, "Node", "", "node01", "kubectl")
    assert rv(cluster) == 4
    assert deleted["metadata"]["resourceVersion"] == "4"
    assert not KubeObject.objects.filter(cluster=cluster).exists()


def test_the_row_and_its_body_carry_the_same_resource_version(cluster: Cluster) -> None:
    store.create(cluster, _node("node01"), "kubectl")
    store.patch(cluster, "Node", "", "node01", _add_label("a", "b"), "kubectl")
    row = KubeObject.objects.get(cluster=cluster, name="node01")
    assert row.resource_version == 2
    assert row.body["metadata"]["resourceVersion"] == "2"
    assert store.get(cluster, "Node", "", "node01")["metadata"]["labels"] == {"a": "b"}


def test_changes_are_logged_in_order_with_their_type_kind_and_component(cluster: Cluster) -> None:
    store.create(cluster, _node("node01"), "kubectl")
    store.create(cluster, _pod("web"), "kubectl")
    store.patch(cluster, "Pod", "default", "web", _add_label("app", "web"), "default-scheduler")
    store.delete(cluster, "Pod", "default", "web", "kubelet")
    log = changes(cluster)
    assert [(c.resource_version, c.type, c.kind, c.namespace, c.name, c.component) for c in log] == [
        (1, "ADDED", "Node", "", "node01", "kubectl"),
        (2, "ADDED", "Pod", "default", "web", "kubectl"),
        (3, "MODIFIED", "Pod", "default", "web", "default-scheduler"),
        (4, "DELETED", "Pod", "default", "web", "kubelet"),
    ]
    assert log[2].body["metadata"]["labels"] == {"app": "web"}
    assert log[3].to_dict()["resourceVersion"] == "4"


def test_a_write_is_published_after_commit_as_a_watch_message(
    cluster: Cluster, django_capture_on_commit_callbacks: Any
) -> None:
    seen: list[tuple[int, dict[str, Any]]] = []

    def listener(cluster_id: int, message: dict[str, Any]) -> None:
        seen.append((cluster_id, message))

    publish.add_listener(listener)
    try:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            store.create(cluster, _node("node01"), "kubectl")
        assert seen == []  # nothing leaves before the transaction commits
        for callback in callbacks:
            callback()
    finally:
        publish.remove_listener(listener)
    assert len(seen) == 1
    cluster_id, message = seen[0]
    assert cluster_id == cluster.pk
    assert message["type"] == "watch"
    assert message["event"] == "ADDED"
    assert message["kind"] == "Node"
    assert message["resourceVersion"] == "1"
    assert message["object"]["metadata"]["name"] == "node01"
    assert message["path"] == [
        "kubectl",
        "kube-apiserver",
        "etcd",
        "kube-apiserver",
        "scheduler",
        "controller-manager",
    ]


def test_a_stale_resource_version_is_refused_and_the_first_edit_survives(cluster: Cluster) -> None:
    store.create(cluster, _node("node01"), "kubectl")
    alice = copy.deepcopy(store.get(cluster, "Node", "", "node01"))
    bob = copy.deepcopy(alice)
    alice["metadata"]["labels"] = {"owner": "alice"}
    bob["metadata"]["labels"] = {"owner": "bob"}
    store.replace(cluster, alice, "kubectl")
    before = rv(cluster)
    with pytest.raises(store.Conflict) as caught:
        store.replace(cluster, bob, "kubectl")
    assert str(caught.value) == (
        'Operation cannot be fulfilled on nodes "node01": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    assert caught.value.code == 409
    assert rv(cluster) == before
    assert store.get(cluster, "Node", "", "node01")["metadata"]["labels"] == {"owner": "alice"}


def test_patch_and_delete_with_a_stale_expected_resource_version_conflict(cluster: Cluster) -> None:
    created = store.create(cluster, _pod("web"), "kubectl")
    old = created["metadata"]["resourceVersion"]
    store.patch(cluster, "Pod", "default", "web", _add_label("a", "1"), "kubectl", expected_rv=old)
    with pytest.raises(store.Conflict, match='pods "web"'):
        store.patch(cluster, "Pod", "default", "web", _add_label("a", "2"), "kubectl", expected_rv=old)
    with pytest.raises(store.Conflict):
        store.delete(cluster, "Pod", "default", "web", "kubectl", expected_rv=old)
    assert store.get(cluster, "Pod", "default", "web")["metadata"]["labels"] == {"a": "1"}


def test_replace_keeps_uid_and_creation_timestamp(cluster: Cluster) -> None:
    created = store.create(cluster, _node("node01"), "kubectl")
    body = copy.deepcopy(created)
    body["metadata"]["uid"] = "forged"
    body["metadata"]["creationTimestamp"] = "2000-01-01T00:00:00Z"
    replaced = store.replace(cluster, body, "kubectl")
    assert replaced["metadata"]["uid"] == created["metadata"]["uid"]
    assert replaced["metadata"]["creationTimestamp"] == created["metadata"]["creationTimestamp"]


def test_already_exists_uses_kubectls_text_and_writes_nothing(cluster: Cluster) -> None:
    store.create(cluster, _pod("x"), "kubectl")
    with pytest.raises(store.AlreadyExists) as caught:
        store.create(cluster, _pod("x"), "kubectl")
    assert str(caught.value) == 'pods "x" already exists'
    assert caught.value.code == 409
    assert rv(cluster) == 1
    assert Change.objects.filter(cluster=cluster).count() == 1
    # the failed create left the in-memory cluster consistent: the next write is rv 2
    assert store.create(cluster, _pod("y"), "kubectl")["metadata"]["resourceVersion"] == "2"


def test_same_name_in_another_namespace_or_kind_is_fine(cluster: Cluster) -> None:
    store.create(cluster, _pod("x"), "kubectl")
    store.create(cluster, _pod("x", namespace="other"), "kubectl")
    store.create(cluster, _node("x"), "kubectl")
    assert [p["metadata"]["namespace"] for p in store.list_objects(cluster, "Pod")] == ["default", "other"]
    assert [p["metadata"]["name"] for p in store.list_objects(cluster, "Pod", namespace="other")] == ["x"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: store.get(c, "Pod", "default", "x"), 'pods "x" not found'),
        (lambda c: store.get(c, "Node", "", "node09"), 'nodes "node09" not found'),
        (lambda c: store.delete(c, "Pod", "default", "x", "kubectl"), 'pods "x" not found'),
        (lambda c: store.patch(c, "Pod", "", "x", lambda b: None, "kubectl"), 'pods "x" not found'),
        (lambda c: store.get(c, "Deployment", "default", "web"), 'deployments "web" not found'),
        (lambda c: store.get(c, "PriorityClass", "", "high"), 'priorityclasses "high" not found'),
    ],
    ids=["get-pod", "get-node", "delete-pod", "patch-pod", "get-deployment", "get-priorityclass"],
)
def test_not_found_uses_kubectls_text(cluster: Cluster, call: Any, message: str) -> None:
    with pytest.raises(store.NotFound) as caught:
        call(cluster)
    assert str(caught.value) == message
    assert caught.value.code == 404


def test_a_pod_in_another_namespace_is_not_found_in_default(cluster: Cluster) -> None:
    store.create(cluster, _pod("x", namespace="other"), "kubectl")
    with pytest.raises(store.NotFound):
        store.get(cluster, "Pod", "default", "x")
    assert store.get(cluster, "Pod", "other", "x")["metadata"]["namespace"] == "other"


def test_a_no_op_patch_writes_nothing(cluster: Cluster) -> None:
    store.create(cluster, _node("node01"), "kubectl")
    store.patch(cluster, "Node", "", "node01", _add_label("a", "b"), "kubectl")
    before = rv(cluster)
    body = store.patch(cluster, "Node", "", "node01", _add_label("a", "b"), "kubectl")
    assert body["metadata"]["resourceVersion"] == str(before)
    assert rv(cluster) == before
    assert Change.objects.filter(cluster=cluster).count() == 2


def test_a_failing_mutation_writes_nothing(cluster: Cluster) -> None:
    store.create(cluster, _node("node01"), "kubectl")

    def broken(body: dict[str, Any]) -> None:
        body["metadata"]["labels"] = {"half": "done"}
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        store.patch(cluster, "Node", "", "node01", broken, "kubectl")
    assert "labels" not in store.get(cluster, "Node", "", "node01")["metadata"]
    assert rv(cluster) == 1


def test_generate_name_gets_five_random_characters(cluster: Cluster) -> None:
    first = store.create(cluster, _pod("", generateName="web-"), "kubectl")
    second = store.create(cluster, _pod("", generateName="web-"), "kubectl")
    names = [first["metadata"]["name"], second["metadata"]["name"]]
    for name in names:
        assert re.fullmatch(r"web-[bcdfghjklmnpqrstvwxz2456789]{5}", name), name
    assert names[0] != names[1]
    assert first["metadata"]["generateName"] == "web-"
    assert store.get(cluster, "Pod", "default", names[0])["metadata"]["uid"] == first["metadata"]["uid"]


def test_a_nameless_object_is_refused(cluster: Cluster) -> None:
    with pytest.raises(store.StoreError, match=re.escape("metadata.name: Required value")):
        store.create(cluster, _pod(""), "kubectl")
    assert rv(cluster) == 0


def test_create_fills_in_namespace_uid_and_creation_timestamp(cluster: Cluster) -> None:
    body = store.create(cluster, _pod("x"), "kubectl")
    node = store.create(cluster, {**_node("n"), "metadata": {"name": "n", "namespace": "ignored"}}, "kubectl")
    assert body["metadata"]["namespace"] == "default"
    assert re.fullmatch(r"[0-9a-f-]{36}", body["metadata"]["uid"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", body["metadata"]["creationTimestamp"])
    row = KubeObject.objects.get(cluster=cluster, kind="Node")
    assert row.namespace == ""
    assert node["metadata"]["name"] == "n"


def test_pod_rows_index_node_name_and_priority(cluster: Cluster) -> None:
    body = _pod("x")
    body["spec"]["priority"] = 7
    store.create(cluster, body, "kubectl")
    row = KubeObject.objects.get(cluster=cluster, kind="Pod", name="x")
    assert (row.node_name, row.priority) == ("", 7)

    def bind(b: dict[str, Any]) -> None:
        b["spec"]["nodeName"] = "node01"

    store.patch(cluster, "Pod", "default", "x", bind, "default-scheduler")
    row.refresh_from_db()
    assert row.node_name == "node01"


def test_clusters_are_independent(db: None) -> None:
    one = services.create_cluster("one")
    two = services.create_cluster("two")
    create(one, node_yaml("node01"), pod_yaml("web"))
    create(two, pod_yaml("web"))
    assert rv(one) == 2
    assert rv(two) == 1
    store.delete(two, "Pod", "default", "web", "kubectl")
    assert store.get(one, "Pod", "default", "web")["metadata"]["name"] == "web"
    with pytest.raises(store.AlreadyExists, match='cluster "one" already exists'):
        services.create_cluster("one")
