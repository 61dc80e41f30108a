"""List paging (`limit`, `continue`) as kube-apiserver 1.32's etcd3 store pages a list.

Items come in key order (`<namespace>/<name>`); a page that stops short carries `metadata.continue`
(storage.EncodeContinue: base64url, no padding, of `{"v":"meta.k8s.io/v1","rv":N,"start":"<key>\\x00"}`)
and `remainingItemCount` (only without selectors, as upstream). The next page is read as the cluster
was at `rv` — the store's watch log gives the objects changed since — so a paged list is consistent;
when the log no longer reaches back that far (pruned: etcd's compaction), the answer is 410 Expired
with a token that continues at the latest version (rv -1), as handleCompactedErrorForPaging does. A
token that does not decode is 400 BadRequest (`invalid continue token: …`, storage/continue.go).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any

from .status import ApiError

__all__ = ["CONTINUE_EXPIRED", "Continue", "decode", "encode", "expired", "key_of", "limit_of", "page"]

Obj = dict[str, Any]
VERSION = "meta.k8s.io/v1"
CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new "
    "list without the continue parameter, or use the continue value from the response to continue this list."
)
_INVALID = "continue key is not valid"
_ALPHABET = re.compile(r"[A-Za-z0-9_-]*")


@dataclass(frozen=True)
class Continue:
    """A decoded token: list the keys after `start`, as the cluster was at `rv` (-1: the latest)."""

    start: str
    rv: int


def key_of(obj: Obj) -> str:
    meta = obj.get("metadata", {})
    namespace = meta.get("namespace") or ""
    return f"{namespace}/{meta.get('name', '')}" if namespace else str(meta.get("name", ""))


def encode(start: str, rv: int) -> str:
    document = json.dumps({"v": VERSION, "rv": rv, "start": start + "\x00"}, separators=(",", ":"))
    return base64.urlsafe_b64encode(document.encode()).decode().rstrip("=")


def _bad(detail: str) -> ApiError:
    return ApiError(400, "BadRequest", f"invalid continue token: {detail}")


def decode(token: str) -> Continue:
    """The token, or 400 BadRequest worded as storage.DecodeContinue's errors."""
    valid = _ALPHABET.match(token)
    end = valid.end() if valid else 0
    if end < len(token) or len(token) % 4 == 1:
        index = end if end < len(token) else len(token) - 1
        raise _bad(f"{_INVALID}: illegal base64 data at input byte {index}")
    try:
        data = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        document = json.loads(data)
    except (binascii.Error, ValueError):
        raise _bad(f"{_INVALID}: invalid character looking for beginning of value") from None
    if not isinstance(document, dict):
        raise _bad(
            f"{_INVALID}: json: cannot unmarshal {type(document).__name__} into Go value of type storage.continueToken"
        )
    version, rv, start = document.get("v"), document.get("rv", 0), document.get("start", "")
    if version != VERSION:
        raise _bad(f"{_INVALID}: server does not recognize this encoded version {version or ''}".rstrip())
    if not isinstance(rv, int) or isinstance(rv, bool):
        raise _bad(
            f"{_INVALID}: json: cannot unmarshal {type(rv).__name__} into Go struct field "
            "continueToken.rv of type int64"
        )
    if rv == 0:
        raise _bad(f"{_INVALID}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    if not isinstance(start, str) or not start:
        raise _bad(f"{_INVALID}: encoded start key empty (version meta.k8s.io/v1)")
    return Continue(start.removesuffix("\x00"), rv)


def limit_of(raw: str | None) -> int:
    try:
        return max(int(raw or 0), 0)
    except ValueError:
        return 0


def page(objects: list[Obj], rv: str, limit: int, after: str | None, selected: bool) -> tuple[list[Obj], Obj]:
    """The page of `objects` (the list as of `rv`) after the key `after`, at most `limit` items, and
    its ListMeta. `selected`: a label or field selector applied (no remainingItemCount then)."""
    meta: Obj = {"resourceVersion": rv}
    if after is None and (not limit or len(objects) <= limit):
        return objects, meta  # one page: in the list's own order (events oldest first, as describe reads them)
    ordered = sorted(objects, key=key_of)
    if after is not None:
        ordered = [obj for obj in ordered if key_of(obj) > after]
    if limit and len(ordered) > limit:
        items, rest = ordered[:limit], ordered[limit:]
        meta["continue"] = encode(key_of(items[-1]), int(rv))
        if not selected:
            meta["remainingItemCount"] = len(rest)
        return items, meta
    return ordered, meta


def expired(start: str) -> ApiError:
    """410 Expired for a continue token whose version is gone, with a token at the latest version."""
    return ApiError(410, "Expired", CONTINUE_EXPIRED, metadata={"continue": encode(start, -1)})
