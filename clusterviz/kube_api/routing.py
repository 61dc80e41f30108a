"""Where a request under `/k8s/<slug>/` goes: discovery, OpenAPI, /version, or a resource
(group, version, plural, namespace, name, subresource), resolved against the served resources."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .resources import GROUPS, Resource, find
from .status import ApiError

__all__ = ["Target", "method_not_allowed", "not_served", "route"]


@dataclass
class Target:
    """A resource request: the type, its namespace (None: all / cluster-scoped), name, subresource."""

    res: Resource
    namespace: str | None
    name: str | None = None
    subresource: str | None = None
    watch_path: bool = False  # the legacy /watch/ URL prefix


def not_served(path: str) -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def method_not_allowed(verb: str, what: str) -> ApiError:
    return ApiError(
        405, "MethodNotAllowed", f"the server does not allow this method on the requested resource ({verb} {what})"
    )


def _resource_target(group: str, version: str, rest: list[str], path: str) -> Target:
    watch_path = bool(rest) and rest[0] == "watch"
    if watch_path:
        rest = rest[1:]
    if not rest:
        raise not_served(path)
    if rest[0] == "namespaces" and len(rest) >= 3:
        res = find(group, version, rest[2])
        if res is not None and res.namespaced:
            if len(rest) > 5:
                raise not_served(path)
            name = rest[3] if len(rest) > 3 else None
            sub = rest[4] if len(rest) > 4 else None
            return Target(res, rest[1], name, sub, watch_path)
    res = find(group, version, rest[0])
    if res is None or len(rest) > 3 or (res.namespaced and len(rest) > 1):
        raise not_served(path)
    return Target(res, None, rest[1] if len(rest) > 1 else None, rest[2] if len(rest) > 2 else None, watch_path)


def route(path: str) -> tuple[str, Any]:
    """(what, details): "version", "api", "apis", "group", "resources", "openapi", "openapi-group",
    "root", "health" or "resource" (a Target)."""
    parts = [p for p in path.split("/") if p]
    if not parts:
        return "root", None
    head = parts[0]
    if parts == ["version"]:
        return "version", None
    if head in ("healthz", "livez", "readyz") and len(parts) <= 2:
        return "health", None
    if parts == ["api"]:
        return "api", None
    if parts == ["apis"]:
        return "apis", None
    if head == "openapi":
        if parts == ["openapi", "v3"]:
            return "openapi", None
        if parts == ["openapi", "v2"]:
            return "openapi-v2", None
        if len(parts) == 4 and parts[:3] == ["openapi", "v3", "api"]:
            return "openapi-group", ("", parts[3])
        if len(parts) == 5 and parts[:3] == ["openapi", "v3", "apis"]:
            return "openapi-group", (parts[3], parts[4])
        raise not_served(path)
    if head == "api" and len(parts) >= 2:
        if GROUPS.get("") != parts[1]:
            raise not_served(path)
        if len(parts) == 2:
            return "resources", ("", parts[1])
        return "resource", _resource_target("", parts[1], parts[2:], path)
    if head == "apis" and len(parts) >= 2:
        group = parts[1]
        if group not in GROUPS or not group:
            raise not_served(path)
        if len(parts) == 2:
            return "group", group
        if GROUPS[group] != parts[2]:
            raise not_served(path)
        if len(parts) == 3:
            return "resources", (group, parts[2])
        return "resource", _resource_target(group, parts[2], parts[3:], path)
    raise not_served(path)
