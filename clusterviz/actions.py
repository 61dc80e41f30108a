"""One pipeline for an action, whichever way it came (HTTP `POST /api/clusters/<slug>/actions` or a
WebSocket frame): decode, parse, check access, rate-limit, perform, publish.

The transports only turn its `Outcome` into their own reply (a Status object, or an `error`/`result`
frame), so both refuse the same inputs with the same messages and the same limits.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DataError

from scheduler_core.api.loading import InputError

from . import access, prediction, store
from .controllers.runner import ensure_runner
from .messages import MAX_YAML_CHARS, Step, data_error_message, parse_action, perform
from .models import Cluster
from .publish import publish

__all__ = ["MAX_ACTION_BYTES", "Limits", "Outcome", "handle", "limits_for", "reset_http_limits"]

log = logging.getLogger(__name__)
# The JSON of one action: a create/explain's YAML at its limit, plus room for the other fields.
# The largest action: a YAML of MAX_YAML_CHARS characters as JSON.stringify writes it (UTF-8, escaped
# newlines: up to 3 bytes per character); the YAML's own limit is checked, with its field, when parsed.
MAX_ACTION_BYTES = 3 * MAX_YAML_CHARS
SCHEDULER_ACTIONS = frozenset({"explain", "fixes"})
WINDOW_SECONDS = 10.0
# Per client and 10 s (settings CLUSTERVIZ_RATE_ACTIONS / CLUSTERVIZ_RATE_EXPLAINS): far above a
# person's pace, a bound for a runaway script; a what-if runs the whole scheduler, so it is cheap to refuse.
ACTIONS_PER_WINDOW = 100
EXPLAINS_PER_WINDOW = 30
FORBIDDEN = "this cluster is read-only for you: open its edit link to change it, or fork it"
HTTP_CLIENTS_KEPT = 10_000  # the HTTP clients whose windows are remembered (least recently seen dropped)


@dataclass
class Outcome:
    """What became of one action: `result` on success, else the refusal's reason, code and message."""

    result: dict[str, Any] | None = None
    action_id: Any = None  # the action's `id`, echoed in the WebSocket reply
    reason: str = ""
    code: int = 200
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.result is not None


def _refused(reason: str, code: int, message: str, action_id: Any = None) -> Outcome:
    return Outcome(reason=reason, code=code, message=message, action_id=action_id)


class RateLimit:
    """A sliding window: at most `count` events per `seconds`."""

    def __init__(self, count: int, seconds: float) -> None:
        self.count = count
        self.seconds = seconds
        self.times: collections.deque[float] = collections.deque()

    def allow(self) -> bool:
        now = time.monotonic()
        while self.times and now - self.times[0] > self.seconds:
            self.times.popleft()
        if len(self.times) >= self.count:
            return False
        self.times.append(now)
        return True


def _setting(name: str, default: int) -> int:
    value = getattr(settings, name, None)
    if value is None:
        value = os.environ.get(name) or default
    return int(value)


@dataclass
class Limits:
    """One client's windows: every action, and the what-if explains (which run the whole scheduler)."""

    actions: RateLimit = field(
        default_factory=lambda: RateLimit(_setting("CLUSTERVIZ_RATE_ACTIONS", ACTIONS_PER_WINDOW), WINDOW_SECONDS)
    )
    explains: RateLimit = field(
        default_factory=lambda: RateLimit(_setting("CLUSTERVIZ_RATE_EXPLAINS", EXPLAINS_PER_WINDOW), WINDOW_SECONDS)
    )

    def allow(self, action: str) -> bool:
        """Actions that run the scheduler (explain, fixes) have their own, smaller budget."""
        return (self.explains if action in SCHEDULER_ACTIONS else self.actions).allow()


_http_clients: collections.OrderedDict[tuple[str, ...], Limits] = collections.OrderedDict()


def limits_for(*client: str) -> Limits:
    """The windows of an HTTP client (e.g. its address and cluster), kept in this process; a WebSocket
    connection holds its own `Limits`."""
    limits = _http_clients.get(client)
    if limits is None:
        limits = _http_clients[client] = Limits()
        while len(_http_clients) > HTTP_CLIENTS_KEPT:
            _http_clients.popitem(last=False)
    else:
        _http_clients.move_to_end(client)
    return limits


def reset_http_limits() -> None:
    """Forget every HTTP client's windows."""
    _http_clients.clear()


def decode(raw: str | bytes) -> Any:
    """The JSON of an action, or InputError saying where it is wrong."""
    if len(raw) > MAX_ACTION_BYTES:
        raise InputError(f"action: too large: {len(raw)} bytes, at most {MAX_ACTION_BYTES}")
    try:
        return json.loads(raw or b"null")
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"invalid JSON: not valid UTF-8 (byte {exc.start})") from None
    except (RecursionError, ValueError):  # deep nesting; an integer over 4,300 digits
        raise InputError("invalid JSON: nested too deeply or a number too long") from None


async def handle(
    cluster: Cluster,
    raw: str | bytes,
    *,
    may_write: Callable[[], Awaitable[bool]],
    limits: Limits,
    component: str,
    run_sync: Callable[[Callable[..., Any]], Callable[..., Awaitable[Any]]] = sync_to_async,
    viewer: str | None = None,
) -> Outcome:
    """Run one action end to end. Never raises: every failure is an `Outcome` (nothing was changed).

    `run_sync` runs the database work (a stream passes `shared_db`, which keeps the shared sync thread's
    connection and drops it when broken; a request's connections are closed when it ends). `viewer` is the client's
    session identity, which a prediction answer is recorded under."""
    action_id = None
    try:
        data = decode(raw)
        action_id = data.get("id") if isinstance(data, dict) else None
        action = parse_action(data)
        if action.action not in access.READ_ONLY_ACTIONS and not await may_write():
            return _refused("Forbidden", 403, FORBIDDEN, action_id)
        if not limits.allow(action.action):
            return _refused("TooManyRequests", 429, f"too many {action.action} actions: slow down", action_id)
        if action.action in prediction.ACTIONS:
            result = await run_sync(prediction.perform)(cluster, action, viewer)
            if action.action == "predict.answer":
                await prediction.tally_soon(cluster.pk)
        else:
            result = await run_sync(perform)(cluster, action, component)
        if isinstance(action, Step):
            await run_sync(publish)(cluster.pk, {"type": "control.step", "steps": action.steps})
        elif action.action == "pace":
            await cluster.arefresh_from_db()
            await run_sync(publish)(cluster.pk, {"type": "cluster.updated", "cluster": cluster.to_dict()})
    except store.StoreError as exc:
        return _refused(exc.reason, exc.code, str(exc), action_id)
    except InputError as exc:
        return _refused("Invalid", 400, str(exc), action_id)
    except DataError as exc:  # e.g. a NUL character, which PostgreSQL cannot store in JSON
        return _refused("Invalid", 400, data_error_message(exc), action_id)
    except Exception:
        log.exception("action failed")
        return _refused("InternalError", 500, "the action failed on the server; nothing was changed", action_id)
    ensure_runner(cluster.pk)
    return Outcome(result=result, action_id=action_id)
