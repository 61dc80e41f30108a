"""Prediction mode (clusterviz/prediction.py) over the real stream: a presenter poses a pod, followers
(each with the session the page gives them) answer once, the scheduler holds the pod until the reveal,
and the reveal's right answer is the scheduler's own cycle."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from clusterviz.models import KubeObject, SchedulingCycle

from .conftest import ORIGIN, Message, StreamClient, node_yaml, pod_yaml

pytestmark = pytest.mark.django_db(transaction=True)

NODES = node_yaml("n1") + "---\n" + node_yaml("n2", labels={"disk": "ssd"}) + "---\n" + node_yaml("n3")
SSD_POD = pod_yaml("nginx", node_selector={"disk": "ssd"})


def of_type(kind: str) -> Callable[[Message], bool]:
    return lambda m: m.get("type") == kind


def question_in(state: str) -> Callable[[Message], bool]:
    return lambda m: m.get("type") == "prediction.question" and m["question"]["state"] == state


@pytest.fixture
async def follower(ws_connect: Any) -> AsyncIterator[Callable[..., Any]]:
    """Factory: `await follower(slug)` → (StreamClient, session cookie), a follower who opened the
    follower link's page (which gave their session its viewer id), then the stream, without the edit
    link. `await follower(slug, cookie)` reconnects the same follower."""
    communicators: list[WebsocketCommunicator] = []

    async def connect(slug: str, cookie: str | None = None) -> tuple[StreamClient, str]:
        from clusterviz.asgi import application

        if cookie is None:
            browser = Client()
            page = await sync_to_async(browser.get)(f"/clusters/{slug}/?role=follower")
            assert page.status_code == 200
            cookie = browser.cookies["sessionid"].value
        headers = [*ORIGIN, (b"cookie", f"sessionid={cookie}".encode())]
        communicator = WebsocketCommunicator(application, f"/ws/clusters/{slug}/", headers=headers)
        communicators.append(communicator)
        connected, code = await communicator.connect(timeout=5)
        assert connected, code
        client = StreamClient(communicator)
        assert (await client.recv())["type"] == "snapshot"
        return client, cookie

    yield connect
    for communicator in communicators:
        with contextlib.suppress(Exception, asyncio.CancelledError):  # already closed by the test
            await communicator.disconnect(timeout=2)


async def presenter_of(make_cluster: Any, ws_connect: Any, objects: str = NODES) -> StreamClient:
    await sync_to_async(make_cluster)("c1", objects)
    presenter = await ws_connect("c1")
    assert (await presenter.recv())["type"] == "snapshot"
    return presenter


async def pose(presenter: StreamClient, **fields: Any) -> Message:
    await presenter.send({"action": "predict.pose", **fields})
    result = (await presenter.until(of_type("result")))[-1]
    return result["question"]


async def answer(client: StreamClient, pick: str, name: str = "") -> Message:
    await client.send({"action": "predict.answer", "pick": pick, "name": name})
    return (await client.until(lambda m: m.get("type") in ("result", "error")))[-1]


async def test_a_round_held_answered_once_and_revealed_from_the_real_cycle(
    make_cluster: Any, ws_connect: Any, follower: Any
) -> None:
    presenter = await presenter_of(make_cluster, ws_connect)
    ada, _ = await follower("c1")
    bob, _ = await follower("c1")

    # Posed before the pod exists (a lesson poses, then its step creates the pod).
    question = await pose(presenter, pod="nginx", question="Which node will nginx land on?")
    assert question == {
        "number": 1,
        "text": "Which node will nginx land on?",
        "pod": "default/nginx",
        "ask": "node",
        "options": ["n1", "n2", "n3", "@pending"],
        "state": "open",
    }
    for client in (ada, bob):
        seen = await client.until(question_in("open"))
        assert seen[-1]["question"] == question

    # The pod is created and changes that re-queue pods happen: it stays Pending, no cycle runs for it.
    await presenter.send({"action": "create", "yaml": SSD_POD})
    await presenter.send({"action": "label", "node": "n3", "key": "zone", "value": "b"})
    await presenter.quiet()
    pod = await KubeObject.objects.aget(cluster__slug="c1", kind="Pod", name="nginx")
    assert pod.node_name == "" and pod.body["status"]["phase"] == "Pending"
    assert not await SchedulingCycle.objects.filter(cluster__slug="c1", pod="default/nginx").aexists()

    assert (await answer(ada, "n2", "Ada"))["answered"] == "n2"
    tally = await presenter.until(of_type("prediction.tally"))
    assert tally[-1]["counts"] == {"n2": 1} and tally[-1]["answered"] == 1
    assert (await answer(bob, "@pending", "Bob"))["answered"] == "@pending"
    tally = await presenter.until(of_type("prediction.tally"))
    assert tally[-1]["counts"] == {"n2": 1, "@pending": 1}

    # Once only, refused with a clear message; an unknown pick is refused with the choices.
    again = await answer(ada, "n1")
    assert again["type"] == "error" and again["reason"] == "Conflict"
    assert again["message"] == "you already answered question 1 (n2): one answer per question"
    bad = await answer(bob, "n9")
    assert bad["reason"] == "Invalid" and '"n9" is not one of the choices' in bad["message"]

    # Followers never see the others' answers before the reveal.
    for client in (ada, bob):
        assert not [m for m in await client.quiet() if m["type"] == "prediction.tally"]

    await presenter.send({"action": "predict.reveal"})
    messages = await presenter.until(question_in("revealed"))
    cycle = next(m for m in messages if m["type"] == "scheduler.cycle" and m["pod"] == "default/nginx")
    revealed = messages[-1]["question"]
    assert cycle["scheduled"] is True and cycle["node"] == "n2"
    assert revealed["outcome"] == cycle["node"] and revealed["cycle"] == cycle["cycle"]
    assert revealed["counts"] == {"n2": 1, "@pending": 1}
    assert revealed["score"] == {"right": 1, "answered": 2}
    for client in (ada, bob):
        seen = await client.until(question_in("revealed"))
        assert seen[-1]["question"] == revealed
    late = await answer(bob, "n2")
    assert late["reason"] == "Conflict" and late["message"] == "no question is open for answers"


async def test_followers_cannot_pose_reveal_cancel_or_export(make_cluster: Any, ws_connect: Any, follower: Any) -> None:
    presenter = await presenter_of(make_cluster, ws_connect)
    ada, _ = await follower("c1")
    refused = await answer(ada, "n1")
    assert refused["reason"] == "Conflict" and refused["message"] == "no question is open for answers"
    for action in (
        {"action": "predict.pose", "pod": "nginx"},
        {"action": "predict.reveal"},
        {"action": "predict.cancel"},
    ):
        await ada.send(action)
        error = (await ada.until(of_type("error")))[-1]
        assert error["reason"] == "Forbidden" and "read-only for you" in error["message"]
    assert (await sync_to_async(Client().get)("/api/clusters/c1/predictions.csv")).status_code == 403

    await pose(presenter, pod="nginx")
    await ada.until(question_in("open"))
    second = await presenter.send({"action": "predict.pose", "pod": "other"})
    error = (await presenter.until(lambda m: m.get("id") == second))[-1]
    assert error["reason"] == "Conflict" and error["message"] == "question 1 is still open: reveal or cancel it first"
    bad = await presenter.send({"action": "predict.pose", "pod": "default/No Such"})
    error = (await presenter.until(lambda m: m.get("id") == bad))[-1]
    assert error["reason"] == "Invalid" and error["message"].startswith('pod: Invalid value: "default/No Such"')
    reveal = await presenter.send({"action": "predict.reveal"})
    error = (await presenter.until(lambda m: m.get("id") == reveal))[-1]
    assert error["reason"] == "NotFound" and "does not exist yet: create it, then reveal" in error["message"]


async def test_a_late_follower_sees_the_open_question_and_their_own_answer(
    make_cluster: Any, ws_connect: Any, follower: Any
) -> None:
    presenter = await presenter_of(make_cluster, ws_connect)
    await pose(presenter, pod="nginx", ask="schedules")
    late, cookie = await follower("c1")
    shown = (await late.until(of_type("prediction.question")))[-1]
    assert shown["question"]["state"] == "open" and shown["question"]["options"] == ["@scheduled", "@pending"]
    assert shown["mine"] is None
    assert not [m for m in await late.quiet() if m["type"] == "prediction.tally"]
    assert (await answer(late, "@scheduled"))["answered"] == "@scheduled"
    await late.communicator.disconnect()

    again, _ = await follower("c1", cookie)  # the same browser, reconnected
    shown = (await again.until(of_type("prediction.question")))[-1]
    assert shown["mine"] == "@scheduled"
    assert (await answer(again, "@pending"))["reason"] == "Conflict"

    presenter_again = await ws_connect("c1")
    messages = await presenter_again.until(of_type("prediction.tally"))
    assert messages[-1]["counts"] == {"@scheduled": 1}

    # The same over HTTP (what a board asks when a stream message was lost): no tally for a follower.
    browser = Client()
    browser.cookies["sessionid"] = cookie
    data = (await sync_to_async(browser.get)("/api/clusters/c1/prediction")).json()
    assert [(m["type"], m["question"]["state"], m["mine"]) for m in data["messages"]] == [
        ("prediction.question", "open", "@scheduled")
    ]


async def test_stays_pending_is_right_when_the_cycle_fails_and_csv_has_every_answer(
    make_cluster: Any, ws_connect: Any, follower: Any
) -> None:
    presenter = await presenter_of(make_cluster, ws_connect)
    ada, _ = await follower("c1")
    bob, _ = await follower("c1")
    await presenter.send({"action": "create", "yaml": pod_yaml("web")})  # bound first: not askable
    await presenter.until(lambda m: m.get("type") == "scheduler.cycle")
    await presenter.send({"action": "predict.pose", "pod": "default/web"})
    error = (await presenter.until(of_type("error")))[-1]
    assert error["reason"] == "Invalid" and "already bound to" in error["message"]

    await pose(presenter, pod="big", ask="schedules", question="Will big (9 cpu) schedule?")
    await presenter.send({"action": "create", "yaml": pod_yaml("big", cpu="9")})
    await answer(ada, "@pending", "=Ada")
    await answer(bob, "@scheduled", "Bob")
    await presenter.send({"action": "predict.reveal"})
    messages = await presenter.until(question_in("revealed"))
    cycle = next(m for m in messages if m["type"] == "scheduler.cycle" and m["pod"] == "default/big")
    revealed = messages[-1]["question"]
    assert cycle["scheduled"] is False
    assert revealed["outcome"] == "@pending" and revealed["message"] == cycle["message"]
    assert revealed["score"] == {"right": 1, "answered": 2}

    owner = await sync_to_async(Client().get)(
        "/api/clusters/c1/predictions.csv", headers={"Authorization": f"Bearer {await _token('c1')}"}
    )
    assert owner.status_code == 200 and owner["Content-Type"] == "text/csv; charset=utf-8"
    rows = list(csv.DictReader(io.StringIO(owner.content.decode())))
    assert [(r["question"], r["follower"], r["pick"], r["correct"]) for r in rows] == [
        ("1", "'=Ada", "stays Pending", "yes"),  # a name a spreadsheet would run is kept as text
        ("1", "Bob", "schedules", "no"),
    ]
    assert rows[0]["text"] == "Will big (9 cpu) schedule?" and rows[0]["pod"] == "default/big"
    assert rows[0]["answered_at"].startswith("20") and rows[0]["follower_id"] != rows[1]["follower_id"]


async def test_cancel_releases_the_pod(make_cluster: Any, ws_connect: Any) -> None:
    presenter = await presenter_of(make_cluster, ws_connect)
    await pose(presenter, pod="nginx")
    await presenter.send({"action": "create", "yaml": SSD_POD})
    await presenter.quiet()
    assert not await SchedulingCycle.objects.filter(cluster__slug="c1").aexists()
    await presenter.send({"action": "predict.cancel"})
    messages = await presenter.until(lambda m: m.get("type") == "scheduler.cycle")
    assert any(question_in("cancelled")(m) for m in messages)
    assert messages[-1]["pod"] == "default/nginx" and messages[-1]["node"] == "n2"


async def test_a_pod_created_with_node_name_is_revealed_without_a_cycle(make_cluster: Any, ws_connect: Any) -> None:
    presenter = await presenter_of(make_cluster, ws_connect)
    await pose(presenter, pod="pinned")
    pinned = pod_yaml("pinned").replace("spec:\n", "spec:\n  nodeName: n3\n")
    await presenter.send({"action": "create", "yaml": pinned})
    await presenter.send({"action": "predict.reveal"})
    revealed = (await presenter.until(question_in("revealed")))[-1]["question"]
    assert (revealed["outcome"], revealed["cycle"]) == ("n3", None)
    assert revealed["message"] == "bound by spec.nodeName, without the scheduler"
    assert not await SchedulingCycle.objects.filter(cluster__slug="c1").aexists()


async def _token(slug: str) -> str:
    from clusterviz.models import Cluster

    return (await Cluster.objects.aget(slug=slug)).owner_token
