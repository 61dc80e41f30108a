"""The language of a WebSocket connection, chosen as LocaleMiddleware chooses it for a request: the
language switch's cookie, else the handshake's Accept-Language, else settings.LANGUAGE_CODE."""

from __future__ import annotations

import contextlib
from http.cookies import CookieError, SimpleCookie
from typing import Any

from django.conf import settings
from django.utils.translation import get_supported_language_variant
from django.utils.translation.trans_real import parse_accept_lang_header

__all__ = ["language_of_scope"]


def _supported(code: str) -> str | None:
    try:
        return get_supported_language_variant(code)
    except LookupError:
        return None


def language_of_scope(scope: dict[str, Any]) -> str:
    headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope.get("headers", [])}
    cookie = SimpleCookie()
    with contextlib.suppress(CookieError):  # a malformed Cookie header: as if there were none
        cookie.load(headers.get("cookie", ""))
    chosen = cookie.get(settings.LANGUAGE_COOKIE_NAME)
    if chosen is not None and (language := _supported(chosen.value)):
        return language
    for code, _quality in parse_accept_lang_header(headers.get("accept-language", "")):
        if code != "*" and (language := _supported(code)):
            return language
    return settings.LANGUAGE_CODE
