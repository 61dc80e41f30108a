"""A cluster's stored scheduler configuration (clusterviz/profiles.py, profile_views.py): stored only
when valid and only by the owner, downloaded as a file kube-scheduler reads, used by the scheduler
loop and what-ifs, and Compare of one pod under two profiles."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from django.test import Client

from clusterviz.controllers.runner import reconcile
from clusterviz.models import Cluster, KubeObject
from scheduler_core.framework.profile import load_config, profiles_from_config

from .conftest import node_yaml, pod_yaml

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
BIN_PACKING = HEADER + (
    "profiles:\n"
    "- schedulerName: default-scheduler\n"
    "  pluginConfig:\n"
    "  - name: NodeResourcesFit\n"
    "    args:\n"
    "      scoringStrategy:\n"
    "        type: MostAllocated\n"
)


def sized_pod(name: str, cpu: int, extra: str = "") -> str:
    """A pod asking cpu and memory in the nodes' proportion (1 cpu : 2Gi), so that
    NodeResourcesBalancedAllocation scores every node alike and NodeResourcesFit decides."""
    return (
        pod_yaml(name, cpu=str(cpu))
        .replace("{cpu: " + str(cpu) + "}", f"{{cpu: {cpu}, memory: {2 * cpu}Gi}}")
        .replace("spec:\n", "spec:\n" + extra)
    )


# One node half full, one empty: spreading (LeastAllocated) picks the empty one, bin packing the other.
CLUSTER = (
    node_yaml("busy", cpu="4", memory="8Gi")
    + "---\n"
    + node_yaml("empty", cpu="4", memory="8Gi")
    + "---\n"
    + sized_pod("filler", 2, "  nodeName: busy\n")
)


def put(client: Client, slug: str, body: Any) -> Any:
    return client.put(f"/api/clusters/{slug}/profile", json.dumps(body), content_type="application/json")


@pytest.mark.django_db
def test_default_then_store_then_download(client: Client, make_cluster: Any) -> None:
    make_cluster("p1", CLUSTER)
    shown = client.get("/api/clusters/p1/profile").json()
    assert shown["forms"][0]["scoringStrategy"]["type"] == "LeastAllocated"
    assert "kind: KubeSchedulerConfiguration" in shown["yaml"]
    response = put(client, "p1", {"yaml": BIN_PACKING})
    assert response.status_code == 200, response.content
    assert response.json()["forms"][0]["scoringStrategy"]["type"] == "MostAllocated"
    download = client.get("/api/clusters/p1/profile.yaml")
    assert download["Content-Type"] == "application/yaml"
    assert "attachment" in download["Content-Disposition"]
    text = download.content.decode()
    assert text.startswith("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    # What kube-scheduler would read gives the very profile that was stored.
    assert load_config(text, "d.yaml") == load_config(BIN_PACKING, "sent.yaml")


@pytest.mark.django_db
def test_a_form_config_round_trips_through_yaml(client: Client, make_cluster: Any) -> None:
    make_cluster("p2")
    config = yaml.safe_load(BIN_PACKING)
    config["profiles"][0]["plugins"] = {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}}
    checked = client.post("/api/clusters/p2/profile/check", json.dumps({"config": config}), "application/json")
    assert checked.status_code == 200
    back = client.post(
        "/api/clusters/p2/profile/check", json.dumps({"yaml": checked.json()["yaml"]}), "application/json"
    )
    assert back.json()["config"] == config
    fit = next(p for p in back.json()["forms"][0]["plugins"] if p["name"] == "NodeResourcesFit")
    assert fit["weight"] == 5
    assert Cluster.objects.get(slug="p2").scheduler_config == {}  # check stores nothing


@pytest.mark.django_db
def test_invalid_config_is_refused_located_and_nothing_stored(client: Client, make_cluster: Any) -> None:
    make_cluster("p3")
    bad = BIN_PACKING.replace("MostAllocated", "Balanced")
    response = put(client, "p3", {"yaml": bad})
    assert response.status_code == 400
    assert response.json()["message"] == (
        "profile.yaml:9: profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "
        '"Balanced": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
    )
    assert Cluster.objects.get(slug="p3").scheduler_config == {}
    response = put(client, "p3", {"yaml": "kind: [\n"})
    assert response.status_code == 400 and response.json()["message"].startswith("profile.yaml:")


@pytest.mark.django_db
def test_followers_may_not_change_it(make_cluster: Any) -> None:
    make_cluster("p4")
    follower = Client()
    response = put(follower, "p4", {"yaml": BIN_PACKING})
    assert response.status_code == 403
    assert response.json()["reason"] == "Forbidden"
    assert Cluster.objects.get(slug="p4").scheduler_config == {}
    assert follower.get("/api/clusters/p4/profile").status_code == 200  # reading is for everyone


@pytest.mark.django_db
def test_the_scheduler_loop_uses_the_stored_profile(client: Client, make_cluster: Any) -> None:
    cluster = make_cluster("p5", CLUSTER + "---\n" + sized_pod("spread", 1))
    reconcile(cluster)
    assert KubeObject.objects.get(cluster=cluster, name="spread").node_name == "empty"
    assert put(client, "p5", {"yaml": BIN_PACKING}).status_code == 200
    client.post(
        "/api/clusters/p5/actions",
        json.dumps({"action": "create", "yaml": sized_pod("packed", 1)}),
        content_type="application/json",
    )
    reconcile(cluster)
    assert KubeObject.objects.get(cluster=cluster, name="packed").node_name == "busy"


@pytest.mark.django_db
def test_a_pod_naming_another_profile_uses_it(client: Client, make_cluster: Any) -> None:
    config = yaml.safe_load(BIN_PACKING)
    config["profiles"][0]["schedulerName"] = "bin-packing"
    config["profiles"].insert(0, {"schedulerName": "default-scheduler"})
    cluster = make_cluster("p6", CLUSTER)
    assert put(client, "p6", {"config": config}).status_code == 200
    packed = sized_pod("packed", 1, "  schedulerName: bin-packing\n")
    other = sized_pod("other", 1, "  schedulerName: someone-else\n")
    for text in (packed, other):
        client.post(
            "/api/clusters/p6/actions", json.dumps({"action": "create", "yaml": text}), content_type="application/json"
        )
    reconcile(cluster)
    assert KubeObject.objects.get(cluster=cluster, name="packed").node_name == "busy"
    assert KubeObject.objects.get(cluster=cluster, name="other").node_name == ""  # no profile of ours: not ours
    scheduled = [
        e.body
        for e in KubeObject.objects.filter(cluster=cluster, kind="Event")
        if e.body.get("reason") == "Scheduled" and e.body["involvedObject"]["name"] == "packed"
    ]
    assert [e["source"]["component"] for e in scheduled] == ["bin-packing"]  # the profile reports its events
    assert set(profiles_from_config(config)) == {"default-scheduler", "bin-packing"}


@pytest.mark.django_db
def test_compare_gives_two_winners(make_cluster: Any) -> None:
    make_cluster("p7", CLUSTER)
    follower = Client()  # compare changes nothing: anyone watching may run it
    body = {"pod": sized_pod("incoming", 1), "a": None, "b": {"yaml": BIN_PACKING}}
    response = follower.post("/api/clusters/p7/compare", json.dumps(body), content_type="application/json")
    assert response.status_code == 200, response.content
    result = response.json()
    assert result["a"]["selectedNode"] == "empty"
    assert result["b"]["selectedNode"] == "busy"
    a_fit = result["a"]["nodes"]["busy"]["scores"]["NodeResourcesFit"]["normalized"]
    b_fit = result["b"]["nodes"]["busy"]["scores"]["NodeResourcesFit"]["normalized"]
    assert b_fit > a_fit
    bad = {**body, "b": {"yaml": BIN_PACKING.replace("MostAllocated", "Most")}}
    response = follower.post("/api/clusters/p7/compare", json.dumps(bad), content_type="application/json")
    assert response.status_code == 400
    assert response.json()["message"].startswith("b: profile.yaml:9: profiles[0].pluginConfig[0].args.scoringStrategy")


@pytest.mark.django_db
def test_compare_two_stored_profiles_by_name(client: Client, make_cluster: Any) -> None:
    config = yaml.safe_load(BIN_PACKING)
    config["profiles"][0]["schedulerName"] = "bin-packing"
    config["profiles"].insert(0, {"schedulerName": "default-scheduler"})
    make_cluster("p8", CLUSTER)
    assert put(client, "p8", {"config": config}).status_code == 200
    body = {
        "pod": sized_pod("incoming", 1),
        "a": {"schedulerName": "default-scheduler"},
        "b": {"schedulerName": "bin-packing"},
    }
    result = client.post("/api/clusters/p8/compare", json.dumps(body), content_type="application/json").json()
    assert (result["a"]["selectedNode"], result["b"]["selectedNode"]) == ("empty", "busy")
    assert (result["a"]["schedulerName"], result["b"]["schedulerName"]) == ("default-scheduler", "bin-packing")
    body["b"] = {"schedulerName": "nope"}
    response = client.post("/api/clusters/p8/compare", json.dumps(body), content_type="application/json")
    assert response.status_code == 400
    assert response.json()["message"] == (
        'b: schedulerName: Not found: "nope" (the profiles: "default-scheduler", "bin-packing")'
    )


@pytest.mark.django_db
def test_compare_a_bound_pod_as_if_scheduled_again(client: Client, make_cluster: Any) -> None:
    """The filler on busy is compared as if it were being scheduled now: taken off its node for the
    comparison, so both nodes are empty and tie; the scheduler's view is unchanged afterwards."""
    cluster = make_cluster("p9", CLUSTER)
    reconcile(cluster)
    filler = KubeObject.objects.get(cluster=cluster, name="filler").body
    body = {"pod": json.dumps(filler), "a": None, "b": {"yaml": BIN_PACKING}}
    result = client.post("/api/clusters/p9/compare", json.dumps(body), content_type="application/json").json()
    for side in ("a", "b"):
        totals = {name: node["total"] for name, node in result[side]["nodes"].items()}
        assert totals["busy"] == totals["empty"], totals
    again = {"pod": sized_pod("incoming", 1), "a": None, "b": {"yaml": BIN_PACKING}}
    result = client.post("/api/clusters/p9/compare", json.dumps(again), content_type="application/json").json()
    assert (result["a"]["selectedNode"], result["b"]["selectedNode"]) == ("empty", "busy")  # filler is back


@pytest.mark.django_db
def test_a_new_profile_retries_parked_pods(client: Client, make_cluster: Any) -> None:
    """As a restarted kube-scheduler: a pod parked as unschedulable is tried again under the new
    profile (here TaintToleration's filter is disabled, so the tainted node takes it)."""
    tainted = node_yaml("tainted").replace(
        "status:", "spec: {taints: [{key: qqq, value: value1, effect: NoSchedule}]}\nstatus:"
    )
    cluster = make_cluster("p10", tainted + "---\n" + pod_yaml("waiting"))
    reconcile(cluster)
    assert KubeObject.objects.get(cluster=cluster, name="waiting").queue_state == "unschedulable"
    config = yaml.safe_load(HEADER + "profiles:\n- plugins:\n    filter:\n      disabled: [{name: TaintToleration}]\n")
    assert put(client, "p10", {"config": config}).status_code == 200
    reconcile(cluster)
    assert KubeObject.objects.get(cluster=cluster, name="waiting").node_name == "tainted"


def test_a_lesson_with_a_bad_profile_is_refused_at_its_line() -> None:
    from clusterviz.lessons import LESSONS_DIR, parse_lesson
    from scheduler_core.api.loading import InputError

    text = (LESSONS_DIR / "bin-packing-vs-spreading.yaml").read_text().replace("type: MostAllocated", "type: Most")
    with pytest.raises(InputError) as caught:
        parse_lesson(text, "lesson.yaml")
    assert str(caught.value) == (
        "lesson.yaml:17: profile: profiles[1].pluginConfig[0].args.scoringStrategy.type: "
        'Unsupported value: "Most": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
    )
