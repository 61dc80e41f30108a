"""Content negotiation on the parameters of an Accept header (`application/json;as=Table;v=v1;g=meta.k8s.io`)."""

from __future__ import annotations

from collections.abc import Iterable


def negotiate(accept: str, as_kind: str, group: str, versions: Iterable[str]) -> str | None:
    """The version of the first media range asking for `as_kind` of `group` in one of `versions`, else None."""
    wanted = tuple(versions)
    for part in accept.split(","):
        params: dict[str, str] = {}
        for item in part.split(";")[1:]:
            key, sep, value = item.strip().partition("=")
            if sep:
                params[key] = value
        if params.get("as") == as_kind and params.get("g") == group and params.get("v") in wanted:
            return params["v"]
    return None
