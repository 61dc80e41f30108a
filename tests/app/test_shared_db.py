"""The shared sync thread's database connection (clusterviz/shared_db.py): kept across stream messages
and controller steps, replaced when it may be broken."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import OperationalError, connection

from clusterviz.shared_db import drop_broken_connections, shared_db

from .conftest import node_yaml, pod_yaml

pytestmark = pytest.mark.django_db(transaction=True)


def _raw_connection() -> Any:
    """This thread's open DB-API connection (opening one if there is none)."""
    connection.ensure_connection()
    return connection.connection


def test_a_working_connection_is_kept() -> None:
    raw = _raw_connection()
    drop_broken_connections()
    assert connection.connection is raw
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    assert connection.connection is raw


def test_a_connection_that_failed_is_replaced() -> None:
    raw = _raw_connection()
    with pytest.raises(OperationalError), connection.cursor() as cursor:
        cursor.execute("SELECT * FROM no_such_table")
    assert connection.errors_occurred
    drop_broken_connections()
    assert connection.connection is None
    assert _raw_connection() is not raw
    assert not connection.errors_occurred


def test_a_connection_left_outside_autocommit_is_replaced() -> None:
    _raw_connection()
    connection.set_autocommit(False)
    drop_broken_connections()
    assert connection.connection is None
    assert connection.get_autocommit()


def test_a_connection_is_health_checked_again_before_its_next_query() -> None:
    _raw_connection()
    connection.health_check_done = True
    drop_broken_connections()
    assert connection.health_check_done is False


async def test_shared_db_drops_a_broken_connection_before_the_work() -> None:
    def fail() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM no_such_table")

    def raw_and_errors() -> tuple[Any, bool]:
        return connection.connection, connection.errors_occurred

    def query() -> tuple[Any, bool]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return raw_and_errors()

    with pytest.raises(OperationalError):
        await shared_db(fail)()
    failed, errors = await sync_to_async(raw_and_errors)()
    assert errors is True
    assert (await shared_db(raw_and_errors)())[0] is None
    fresh, errors = await shared_db(query)()
    assert fresh is not failed
    assert errors is False


async def test_stream_actions_and_control_loops_keep_the_shared_threads_connection(
    make_cluster: Any, ws_connect: Any
) -> None:
    """channels closes the shared thread's connections before every stream message; the stream's
    frames bypass that, so a presenter's actions and the controller steps they cause reuse one
    connection instead of opening a new one each."""
    await sync_to_async(make_cluster)("c1", node_yaml("n1"))
    client = await ws_connect("c1")
    assert (await client.recv())["type"] == "snapshot"

    def started(name: str) -> Any:
        def check(message: dict[str, Any]) -> bool:
            event = message["object"] if message.get("type") == "watch" else {}
            return event.get("reason") == "Started" and event["involvedObject"]["name"] == name

        return check

    await client.send({"action": "create", "yaml": pod_yaml("p1"), "id": "p1"})
    await client.until(started("p1"))
    raw = await sync_to_async(lambda: connection.connection)()
    assert raw is not None

    await client.send({"action": "label", "node": "n1", "key": "zone", "value": "a", "id": "l"})
    await client.send({"action": "create", "yaml": pod_yaml("p2"), "id": "p2"})
    seen = await client.until(started("p2"))
    assert next(m for m in seen if m.get("id") == "l") == {"type": "result", "id": "l", "labelled": "n1"}
    assert await sync_to_async(lambda: connection.connection)() is raw
