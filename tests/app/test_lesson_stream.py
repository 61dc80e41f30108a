"""A lesson over the real stream: no frame to the presenter or to a follower carries a predict step's
outcome (`after`) before its question is revealed; the reveal brings it to both, each in its own view."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from clusterviz.lessons import get_lesson

from .conftest import ORIGIN, Message, StreamClient

pytestmark = pytest.mark.django_db(transaction=True)


def lesson_view_with(predicate: Any, audience: str) -> Any:
    return lambda m: m.get("type") == "lesson.view" and m["audience"] == audience and predicate(m["lesson"])


def frames(messages: list[Message]) -> str:
    return "\n".join(json.dumps(m, ensure_ascii=False) for m in messages)


async def test_a_predict_steps_outcome_reaches_nobody_before_the_reveal(make_cluster: Any, ws_connect: Any) -> None:
    from clusterviz.asgi import application

    await sync_to_async(make_cluster)("c1", lesson="demo")
    step = get_lesson("demo").steps[0]
    assert step.predict is not None
    presenter = await ws_connect("c1")
    communicator = WebsocketCommunicator(application, "/ws/clusters/c1/", headers=ORIGIN)
    connected, _ = await communicator.connect(timeout=5)
    assert connected
    follower = StreamClient(communicator)
    try:
        # On connect each gets its own view: the presenter sees the question coming, the class does not.
        mine = (await presenter.until(lambda m: m.get("type") == "lesson.view"))[-1]
        theirs = (await follower.until(lambda m: m.get("type") == "lesson.view"))[-1]
        assert mine["audience"] == "presenter" and "predict" in mine["lesson"]["items"][0]
        assert theirs["audience"] == "class" and "predict" not in theirs["lesson"]["items"][0]
        assert step.after not in frames(presenter.received + follower.received)

        # The presenter's player: ask, then run the step (its pod is created and held Pending).
        await presenter.send(
            {"action": "predict.pose", "question": step.predict.question, "pod": step.predict.pod, "ask": "node"}
        )
        await presenter.send({"action": "lesson.next"})
        seen: dict[str, list[Message]] = {}
        for client, audience in ((presenter, "presenter"), (follower, "class")):
            ran = lesson_view_with(lambda view: view["ran"] == 1, audience)
            seen[audience] = await client.until(ran)
            assert seen[audience][-1]["lesson"]["items"][0]["awaiting"] == "reveal"
            seen[audience] += await client.quiet()  # the pod created and held, the question open
        assert any(m.get("type") == "result" and m.get("ran") == 1 for m in seen["presenter"])
        for audience, messages in seen.items():
            assert any(m.get("type") == "prediction.question" for m in messages), audience
            assert step.after not in frames(messages), audience

        await presenter.send({"action": "predict.reveal"})
        for client, audience in ((presenter, "presenter"), (follower, "class")):
            shown = lesson_view_with(lambda view: view["items"][0].get("after") == step.after, audience)
            messages = await client.until(shown, timeout=10)
            revealed = [m for m in messages if m.get("type") == "prediction.question"]
            assert revealed and revealed[-1]["question"]["outcome"] == "node02"
    finally:
        await communicator.disconnect(timeout=2)
