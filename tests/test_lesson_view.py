"""What each viewer of a lesson cluster is sent (clusterviz/lesson_view.py): a step's `after` only once
the step has run and, for a step that asks the class, once its question is revealed (or cancelled);
followers get the steps that ran and the next instruction, a presenter the instructions further on."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from clusterviz import lesson_view, prediction, services
from clusterviz.classroom import fork_cluster
from clusterviz.controllers.runner import reconcile
from clusterviz.lessons import get_lesson, load_lesson, play_step
from clusterviz.messages import LessonNext, perform
from clusterviz.models import Cluster
from clusterviz.prediction import Cancel, Pose, Reveal

pytestmark = pytest.mark.django_db


def start(name: str, slug: str = "c1") -> Cluster:
    cluster = services.create_cluster(slug)
    load_lesson(cluster, name)
    reconcile(cluster)
    return cluster


def views(cluster: Cluster) -> tuple[dict[str, Any], dict[str, Any]]:
    """The presenter's view and the class's."""
    presenter = lesson_view.lesson_view(cluster, presenter=True)
    follower = lesson_view.lesson_view(cluster, presenter=False)
    assert presenter is not None and follower is not None
    return presenter, follower


def text(view: dict[str, Any]) -> str:
    return json.dumps(view, ensure_ascii=False)


def ask(cluster: Cluster, step: int) -> None:
    """Pose a step's question as the presenter's player does (before the step runs)."""
    predict = get_lesson(cluster.lesson).steps[step].predict
    assert predict is not None
    prediction.perform(
        cluster, Pose(action="predict.pose", question=predict.question, pod=predict.pod, ask=predict.ask), None
    )


def test_a_predict_step_shows_its_outcome_only_after_the_reveal() -> None:
    cluster = start("demo")
    after = get_lesson("demo").steps[0].after
    presenter, follower = views(cluster)
    assert presenter["ran"] == 0 and not presenter["done"]
    assert presenter["items"][0]["predict"]["pod"] == "default/pod-kgc"  # the presenter sees the question coming
    assert "predict" not in follower["items"][0]  # the class hears it when it is asked
    assert follower["items"][0]["say"] == get_lesson("demo").steps[0].say

    ask(cluster, 0)
    play_step(cluster)
    reconcile(cluster)  # the pod is held Pending: no cycle yet
    for view in views(cluster):
        assert view["items"][0]["ran"] is True and view["items"][0]["awaiting"] == "reveal"
        assert after not in text(view) and "after" not in view["items"][0]

    prediction.perform(cluster, Reveal(action="predict.reveal"), None)
    for view in views(cluster):  # revealing: the cycle has not answered yet
        assert after not in text(view)
    reconcile(cluster)  # the scheduler's cycle settles the question
    for view in views(cluster):
        assert view["items"][0]["after"] == after and "awaiting" not in view["items"][0]
        assert view["done"] is True


def test_a_cancelled_question_shows_the_outcome() -> None:
    cluster = start("demo")
    ask(cluster, 0)
    play_step(cluster)
    prediction.perform(cluster, Cancel(action="predict.cancel"), None)
    reconcile(cluster)
    assert views(cluster)[1]["items"][0]["after"] == get_lesson("demo").steps[0].after


def test_a_step_without_a_question_shows_its_outcome_once_it_ran_and_the_presenter_looks_ahead() -> None:
    cluster = start("nodeselector")
    steps = get_lesson("nodeselector").steps
    presenter, follower = views(cluster)
    assert [item["number"] for item in presenter["items"]] == [1, 2, 3, 4, 5]
    assert [item["number"] for item in follower["items"]] == [1]
    assert "predict" in presenter["items"][2]
    for view in (presenter, follower):
        assert all(step.after not in text(view) for step in steps)

    play_step(cluster)
    presenter, follower = views(cluster)
    assert [item["number"] for item in follower["items"]] == [1, 2]
    assert follower["items"][0]["after"] == steps[0].after and "after" not in follower["items"][1]
    assert all(step.after not in text(presenter) for step in steps[1:])


def test_a_step_touches_its_node_or_its_pods_but_never_says_where_they_go() -> None:
    steps = get_lesson("taints-noschedule").steps
    assert lesson_view.touches(steps[0]) == {"nodes": ["node01"], "pods": []}
    assert lesson_view.touches(steps[1]) == {"nodes": [], "pods": ["default/myapp-*"]}
    assert lesson_view.touches(steps[3]) == {"nodes": [], "pods": ["default/myapp-*"]}
    assert lesson_view.touches(steps[4]) == {"nodes": [], "pods": ["default/myapp01"]}


def test_the_class_and_the_presenters_get_their_own_view_after_a_step(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = start("nodeselector")
    sent: list[tuple[dict[str, Any], str | None]] = []
    monkeypatch.setattr(lesson_view, "publish", lambda pk, message, group=None: sent.append((message, group)))
    perform(cluster, LessonNext(action="lesson.next"), "browser")
    (to_class, everyone), (to_presenters, presenters) = sent
    assert everyone is None and presenters == prediction.presenters_group(cluster.pk)
    assert to_class["audience"] == "class" and [i["number"] for i in to_class["lesson"]["items"]] == [1, 2]
    assert to_presenters["audience"] == "presenter" and len(to_presenters["lesson"]["items"]) == 5


def test_the_lesson_endpoint_answers_by_role(client: Client) -> None:
    cluster = start("nodeselector")
    url = f"/api/clusters/{cluster.slug}/lesson"
    (anyone,) = client.get(url).json()["messages"]
    assert anyone["audience"] == "class" and len(anyone["lesson"]["items"]) == 1
    auth = {"HTTP_AUTHORIZATION": f"Bearer {cluster.owner_token}"}
    (owner,) = client.get(url, **auth).json()["messages"]
    assert owner["audience"] == "presenter" and len(owner["lesson"]["items"]) == 5
    (preview,) = client.get(url + "?role=follower", **auth).json()["messages"]
    assert preview["audience"] == "class"
    assert client.get("/api/clusters/nope/lesson").status_code == 404
    plain = services.create_cluster("plain")
    assert client.get(f"/api/clusters/{plain.slug}/lesson").json() == {"messages": []}


def test_a_fork_made_during_a_question_keeps_the_outcome_back() -> None:
    """The copy's question is open (its pod held there too) until the fork's owner reveals it."""
    cluster = start("demo")
    after = get_lesson("demo").steps[0].after
    ask(cluster, 0)
    play_step(cluster)
    copy = fork_cluster(cluster)
    reconcile(copy)
    assert prediction.held_pods(copy) == {"default/pod-kgc"}
    for view in views(copy):
        assert view["ran"] == 1 and after not in text(view)
    prediction.perform(copy, Reveal(action="predict.reveal"), None)
    reconcile(copy)
    assert views(copy)[1]["items"][0]["after"] == after
    assert after not in text(views(cluster)[1])  # the class's question is still open
