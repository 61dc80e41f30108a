"""Who may write to a cluster: whoever holds its owner token (the secret of the edit link, sent as
`?key=`, kept in the session after the first visit, or sent as `Authorization: Bearer <token>` by
kubectl and scripts), or its owning Django user. Everyone else may only watch (the follower link)."""

from __future__ import annotations

import base64
import binascii
import hmac
from collections.abc import Mapping
from typing import Any

from .models import Cluster

__all__ = [
    "READ_ONLY_ACTIONS",
    "SESSION_KEY",
    "edit_url",
    "grant",
    "granted_slugs",
    "holds_token",
    "may_write",
    "token_from_headers",
]

SESSION_KEY = "clusterviz.edit"
# Actions anyone watching may send: they change nothing (a follower's answer to a prediction only adds it).
READ_ONLY_ACTIONS = frozenset({"explain", "fixes", "predict.answer"})


def holds_token(cluster: Cluster, token: str | None) -> bool:
    """Constant-time comparison of bytes: any token (non-ASCII, NUL, any length) is simply wrong."""
    if not token:
        return False
    given = str(token).encode("utf-8", "surrogatepass")
    return hmac.compare_digest(given, cluster.owner_token.encode("utf-8"))


def token_from_headers(headers: Mapping[str, str]) -> str | None:
    """The token of an `Authorization` header (HTTP request META style or plain names): a bearer
    token, or the password of Basic credentials (kubectl sends those for a server URL's userinfo,
    `http://clusterviz:<token>@host/…`, the one credential it sends over plain http)."""
    value = headers.get("HTTP_AUTHORIZATION") or headers.get("authorization") or headers.get("Authorization") or ""
    scheme, _, token = value.partition(" ")
    token = token.strip()
    if not token:
        return None
    if scheme.lower() == "bearer":
        return token
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(token, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
        return decoded.partition(":")[2] or None
    return None


def may_write(cluster: Cluster, *, session: Any = None, user: Any = None, token: str | None = None) -> bool:
    if holds_token(cluster, token):
        return True
    if session is not None:
        granted = session.get(SESSION_KEY) or {}
        if holds_token(cluster, granted.get(cluster.slug)):
            return True
    return bool(user is not None and getattr(user, "is_authenticated", False) and cluster.owner_id == user.pk)


def grant(session: Any, cluster: Cluster) -> None:
    """Remember in the session that this browser holds the cluster's edit link."""
    granted = dict(session.get(SESSION_KEY) or {})
    granted[cluster.slug] = cluster.owner_token
    session[SESSION_KEY] = granted


def granted_slugs(session: Any) -> list[str]:
    """The slugs this browser holds the edit link of."""
    return list((session.get(SESSION_KEY) or {}).keys())


def edit_url(cluster: Cluster, base: str = "") -> str:
    return f"{base}/clusters/{cluster.slug}/?key={cluster.owner_token}"
