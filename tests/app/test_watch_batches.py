"""`publish.watch_batches`: consecutive watch messages grouped by size, in order, each once."""

from __future__ import annotations

import json
from typing import Any

from clusterviz.publish import watch_batches


def watch(rv: int, pad: int = 0) -> dict[str, Any]:
    return {"type": "watch", "resourceVersion": str(rv), "event": "MODIFIED", "object": {"x": "y" * pad}}


def batched(messages: list[dict[str, Any]], limit: int) -> list[tuple[dict[str, Any], str]]:
    return list(watch_batches(messages, [json.dumps(m) for m in messages], limit))


def test_batches_keep_every_change_once_in_order_within_the_limit() -> None:
    messages = [watch(rv, pad=(rv * 37) % 300) for rv in range(1, 60)]
    out = batched(messages, 1000)
    unpacked = [
        c for message, _ in out for c in (message["changes"] if message["type"] == "watch.batch" else [message])
    ]
    assert unpacked == messages
    for message, text in out:
        assert json.loads(text) == message
        if message["type"] == "watch.batch":
            assert len(message["changes"]) > 1
            assert sum(len(json.dumps(c)) for c in message["changes"]) <= 1000
            assert (message["from"], message["resourceVersion"]) == (
                message["changes"][0]["resourceVersion"],
                message["changes"][-1]["resourceVersion"],
            )


def test_a_lone_or_oversized_change_stays_a_watch_message() -> None:
    assert batched([watch(1)], 1000) == [(watch(1), json.dumps(watch(1)))]
    big = [watch(1), watch(2, pad=5000), watch(3)]
    assert [m["type"] for m, _ in batched(big, 1000)] == ["watch", "watch", "watch"]
    assert batched([], 1000) == []
