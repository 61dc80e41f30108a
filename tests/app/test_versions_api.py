"""A cluster's kube-scheduler version (clusterviz/version_views.py): read by anyone, changed by the
owner only, validated (the version, its gates, the stored profile under it), and every pending pod
tried again under the new version."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from django.test import Client
from django.urls import reverse

from bench.cluster_dump import dump_json
from clusterviz import access, imports
from clusterviz.controllers.runner import reconcile
from clusterviz.models import Cluster, KubeObject

from .conftest import node_yaml, pod_yaml

TAINTED = node_yaml("tainted").replace(
    "status:", "spec: {taints: [{key: qqq, value: value1, effect: NoSchedule}]}\nstatus:"
)


def put(client: Client, slug: str, body: Any) -> Any:
    return client.put(f"/api/clusters/{slug}/version", json.dumps(body), content_type="application/json")


def scheduled_message(cluster: Cluster, name: str) -> str:
    body = KubeObject.objects.get(cluster=cluster, name=name).body
    condition = next(c for c in body["status"]["conditions"] if c["type"] == "PodScheduled")
    return condition["message"]


@pytest.mark.django_db
def test_a_cluster_answers_as_v134_until_its_owner_changes_it(client: Client, make_cluster: Any) -> None:
    cluster = make_cluster("v1", TAINTED + "---\n" + pod_yaml("waiting"))
    shown = client.get("/api/clusters/v1/version").json()
    assert (shown["version"], shown["gitVersion"]) == ("1.34", "v1.34.0")
    assert shown["supported"] == ["1.34", "1.35", "1.36", "1.37"]
    assert "NodeDeclaredFeatures" not in shown["gates"]
    reconcile(cluster)
    assert "1 node(s) had untolerated taint {qqq: value1}." in scheduled_message(cluster, "waiting")

    response = put(client, "v1", {"version": "1.35"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["version"] == "1.35" and [c["change"] for c in body["changes"]] == ["taint-reason-constant"]
    assert body["gates"]["NodeDeclaredFeatures"] == {
        "default": False,
        "stage": "ALPHA",
        "locked": False,
        "enabled": False,
    }
    reconcile(cluster)  # the parked pod is tried again as v1.35 answers
    assert "1 node(s) had untolerated taint(s)." in scheduled_message(cluster, "waiting")
    assert Cluster.objects.get(slug="v1").kubernetes_version == "1.35"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"version": "1.20"}, "version: 1.20: unsupported Kubernetes version; supported: v1.34 to v1.37"),
        ({"version": "1.36", "featureGates": "Nope=true"}, "featureGates: unrecognized feature gate: Nope"),
        ({"version": "1.36", "featureGates": "GenericWorkload=true"}, "featureGates: GenericWorkload=true"),
        ({}, "version: Required value"),
        ({"version": "1.36", "featureGates": 3}, "featureGates: must be a string"),
    ],
)
def test_bad_versions_are_refused_and_change_nothing(
    client: Client, make_cluster: Any, body: dict[str, Any], message: str
) -> None:
    make_cluster("v2")
    response = put(client, "v2", body)
    assert response.status_code == 400
    assert response.json()["message"].startswith(message), response.json()
    assert Cluster.objects.get(slug="v2").kubernetes_version == "1.34"


@pytest.mark.django_db
def test_the_stored_profile_must_hold_in_the_new_version(client: Client, make_cluster: Any) -> None:
    make_cluster("v3")
    assert put(client, "v3", {"version": "1.36"}).status_code == 200
    config = yaml.safe_load(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- plugins:\n    filter:\n      enabled: [{name: NodeDeclaredFeatures}]\n"
    )
    stored = client.put("/api/clusters/v3/profile", json.dumps({"config": config}), content_type="application/json")
    assert stored.status_code == 200, stored.content
    response = put(client, "v3", {"version": "1.34"})
    assert response.status_code == 400
    assert response.json()["message"].startswith("version: 1.34: the cluster's scheduler profile does not hold there")
    assert Cluster.objects.get(slug="v3").kubernetes_version == "1.36"


@pytest.mark.django_db
def test_followers_may_read_but_not_change_it(make_cluster: Any) -> None:
    make_cluster("v4")
    follower = Client()
    assert follower.get("/api/clusters/v4/version").status_code == 200
    response = put(follower, "v4", {"version": "1.36"})
    assert response.status_code == 403
    assert Cluster.objects.get(slug="v4").kubernetes_version == "1.34"


@pytest.mark.django_db
def test_an_import_answers_as_its_kubelets_version_until_the_owner_chooses(client: Client) -> None:
    data = dump_json(3, 2).replace(b'"kubeletVersion": "v1.34.0"', b'"kubeletVersion": "v1.36.2"')
    cluster = imports.run(imports.new_job("v5", "dump.json"), data, announce=False)
    cluster.refresh_from_db()
    assert cluster.kubernetes_version == "1.36"
    assert cluster.version_hint["kubelets"] == [["v1.36", 3]]
    assert cluster.version_hint["why"].startswith("the nodes run kubelet v1.36 (3 nodes)")
    client.get(access.edit_url(cluster))  # hold the edit link, as the owner does
    assert put(client, "v5", {"version": "1.37"}).status_code == 200
    cluster.refresh_from_db()
    assert (cluster.kubernetes_version, cluster.version_hint) == ("1.37", {})


@pytest.mark.django_db
def test_a_kubectl_version_document_in_the_dump_names_the_version(client: Client) -> None:
    """`{ kubectl version -o json; kubectl get nodes,pods -A -o json; }`: the API server's release
    wins over the kubelets' lower bound; the board names it."""
    version = b'{"clientVersion": {"gitVersion": "v1.32.4"}, "serverVersion": {"gitVersion": "v1.35.2", "minor": "35"}}'
    cluster = imports.run(imports.new_job("v6", "dump.json"), version + b"\n" + dump_json(3, 2), announce=False)
    cluster.refresh_from_db()
    assert cluster.kubernetes_version == "1.35"
    assert cluster.version_hint["server"] == "v1.35.2"
    assert cluster.version_hint["why"] == (
        "the dump's `kubectl version` reports the API server at v1.35.2 (its nodes run kubelet v1.34 (3 nodes))"
    )
    assert sorted(set(cluster.kube_objects.values_list("kind", flat=True))) == ["Node", "Pod"]
    page = client.get(reverse("clusterviz-cluster", args=[cluster.slug])).content.decode()
    assert "suggested by the dump's API server: v1.35.2" in page


@pytest.mark.django_db
def test_the_version_action_is_the_same_change_as_the_api(make_cluster: Any) -> None:
    """A lesson's step (or a client) sends {"action": "version"}: the same checks and requeue as PUT."""
    from clusterviz.messages import parse_action, perform
    from scheduler_core.api.loading import InputError

    cluster = make_cluster("v-action", TAINTED + "---\n" + pod_yaml("waiting"))
    reconcile(cluster)
    assert perform(cluster, parse_action({"action": "version", "version": "1.35"}), "kubectl") == {"version": "1.35"}
    reconcile(cluster)
    assert "1 node(s) had untolerated taint(s)." in scheduled_message(cluster, "waiting")
    unsupported = r"^version 1\.20: unsupported Kubernetes version; supported: v1\.34 to v1\.37$"
    with pytest.raises(InputError, match=unsupported):
        perform(cluster, parse_action({"action": "version", "version": "1.20"}), "kubectl")
    with pytest.raises(InputError, match=r"^featureGates: .*NoSuchGate"):
        perform(cluster, parse_action({"action": "version", "version": "1.36", "featureGates": "NoSuchGate=true"}), "")
    assert Cluster.objects.get(slug="v-action").kubernetes_version == "1.35"  # nothing changed


def test_a_lesson_names_a_supported_version() -> None:
    from clusterviz.lessons import get_lesson, parse_lesson
    from scheduler_core.api.loading import InputError

    assert get_lesson("scheduler-versions").version == "1.34"
    text = "name: t\ntitle: T\nversion: '1.20'\nsteps:\n- {say: s, after: a}\n"
    refused = r'^t\.yaml:3: version: Unsupported value: "1\.20": supported values: 1\.34, 1\.35, 1\.36, 1\.37$'
    with pytest.raises(InputError, match=refused):
        parse_lesson(text, "t.yaml")
