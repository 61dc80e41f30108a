"""`GET /healthz` for a load balancer: 200 when this process serves and reaches its database, else 503.

Answered before every other middleware, so that a probe by IP address (not in ALLOWED_HOSTS) over
plain http (no https redirect) gets the answer.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.decorators import sync_and_async_middleware

HEALTH_PATH = "/healthz"
log = logging.getLogger(__name__)


def health_response(request: HttpRequest) -> HttpResponse:
    if request.method not in ("GET", "HEAD"):
        response = JsonResponse({"status": "error", "message": "GET /healthz"}, status=405)
        response["Allow"] = "GET, HEAD"
        return response
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        log.warning("health check: the database is unreachable: %r", exc)
        return JsonResponse({"status": "unavailable", "database": "unreachable"}, status=503)
    finally:
        connection.close_if_unusable_or_obsolete()
    return JsonResponse({"status": "ok", "database": "ok"})


@sync_and_async_middleware
def health_check_middleware(get_response: Callable[[HttpRequest], Any]) -> Callable[[HttpRequest], Any]:
    if iscoroutinefunction(get_response):

        async def async_middleware(request: HttpRequest) -> HttpResponse:
            if request.path == HEALTH_PATH:
                return await sync_to_async(health_response)(request)
            response: Awaitable[HttpResponse] = get_response(request)
            return await response

        return async_middleware

    def middleware(request: HttpRequest) -> HttpResponse:
        if request.path == HEALTH_PATH:
            return health_response(request)
        return get_response(request)  # type: ignore[no-any-return]

    return middleware
