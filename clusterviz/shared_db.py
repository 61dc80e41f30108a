"""The database connection of the one thread Django's sync work shares: kept open, dropped when broken.

The control loops' runner and the streams' actions and catch-ups run their database work in that
thread (asgiref's thread-sensitive `sync_to_async` outside a request). With CONN_MAX_AGE 0, Django's
`close_old_connections` closes every connection it meets; channels runs it before each stream message
and around each `database_sync_to_async` call, so a busy server opened and closed a SQLite connection,
PRAGMAs included, for nearly every action and controller step (a sixth of its CPU in bench/load.py
scenario B). Here the connection is replaced only when it may be broken — an error other than a data or
integrity error, or autocommit left off — and, with CONN_HEALTH_CHECKS (PostgreSQL), checked for life
before its next query, as Django checks a connection at the start of each request.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.db import connections


def drop_broken_connections() -> None:
    """Django's `close_old_connections` for this thread without its age rule: close a connection that
    raised a database error since its last use here, or was left outside autocommit; have any other
    one health-checked (when enabled) before its next query."""
    for conn in connections.all(initialized_only=True):
        if conn.connection is None:
            continue
        if conn.errors_occurred or conn.get_autocommit() != conn.settings_dict["AUTOCOMMIT"]:
            conn.close()
        else:
            conn.health_check_done = False


def shared_db[**P, R](function: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """`function` run in the shared sync thread, after `drop_broken_connections`."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> R:
        drop_broken_connections()
        return function(*args, **kwargs)

    return sync_to_async(run)
