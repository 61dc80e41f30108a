"""The HTTP side of the endpoint: one async view resolves `/k8s/<slug>/<path>` to discovery,
OpenAPI, or a resource request, runs the (synchronous) store work in a thread, streams watches,
and answers every refusal as a metav1.Status — never an HTML page or a bare 500."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from .. import store
from ..controllers.runner import ensure_runner
from ..messages import MAX_YAML_CHARS
from ..models import Cluster, KubeObject
from . import discovery, openapi, writes
from .patch import APPLY, PATCH_TYPES, parse_body
from .present import node_addresses, present, scale_of, synthetic_lease
from .resources import GROUPS, Resource, find
from .selectors import FieldSelector, LabelSelector
from .status import ApiError, from_exception, not_found
from .tables import table, table_version
from .watch import stream

__all__ = ["endpoint"]

log = logging.getLogger(__name__)
Obj = dict[str, Any]
JSON = "application/json"
PROTOBUF = "application/vnd.kubernetes.protobuf"
BUILTIN_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
NO_CONTAINERS = ("log", "exec", "attach", "portforward", "proxy")


@dataclass
class Target:
    """A resource request: the type, its namespace (None: all / cluster-scoped), name, subresource."""

    res: Resource
    namespace: str | None
    name: str | None = None
    subresource: str | None = None
    watch_path: bool = False  # the legacy /watch/ URL prefix


@dataclass
class Reply:
    status: int
    body: Any
    content_type: str = JSON
    headers: dict[str, str] = field(default_factory=dict)
    wrote: bool = False


def _not_served(path: str) -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def _method_not_allowed(verb: str, what: str) -> ApiError:
    return ApiError(
        405, "MethodNotAllowed", f"the server does not allow this method on the requested resource ({verb} {what})"
    )


# --- routing ------------------------------------------------------------------------------


def _resource_target(group: str, version: str, rest: list[str], path: str) -> Target:
    watch_path = bool(rest) and rest[0] == "watch"
    if watch_path:
        rest = rest[1:]
    if not rest:
        raise _not_served(path)
    if rest[0] == "namespaces" and len(rest) >= 3:
        res = find(group, version, rest[2])
        if res is not None and res.namespaced:
            if len(rest) > 5:
                raise _not_served(path)
            name = rest[3] if len(rest) > 3 else None
            sub = rest[4] if len(rest) > 4 else None
            return Target(res, rest[1], name, sub, watch_path)
    res = find(group, version, rest[0])
    if res is None or len(rest) > 3 or (res.namespaced and len(rest) > 1):
        raise _not_served(path)
    return Target(res, None, rest[1] if len(rest) > 1 else None, rest[2] if len(rest) > 2 else None, watch_path)


def _route(path: str) -> tuple[str, Any]:
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
        if len(parts) == 4 and parts[:3] == ["openapi", "v3", "api"]:
            return "openapi-group", ("", parts[3])
        if len(parts) == 5 and parts[:3] == ["openapi", "v3", "apis"]:
            return "openapi-group", (parts[3], parts[4])
        raise _not_served(path)
    if head == "api" and len(parts) >= 2:
        if GROUPS.get("") != parts[1]:
            raise _not_served(path)
        if len(parts) == 2:
            return "resources", ("", parts[1])
        return "resource", _resource_target("", parts[1], parts[2:], path)
    if head == "apis" and len(parts) >= 2:
        group = parts[1]
        if group not in GROUPS or not group:
            raise _not_served(path)
        if len(parts) == 2:
            return "group", group
        if GROUPS[group] != parts[2]:
            raise _not_served(path)
        if len(parts) == 3:
            return "resources", (group, parts[2])
        return "resource", _resource_target(group, parts[2], parts[3:], path)
    raise _not_served(path)


# --- reads --------------------------------------------------------------------------------


def _prepare(cluster: Cluster, res: Resource) -> Any:
    """A function presenting stored bodies of `res` (node addresses are looked up once)."""
    addresses = node_addresses(cluster) if res.kind == "Node" else None

    def prepare(bodies: list[Obj]) -> list[Obj]:
        return [present(res, body, addresses) for body in bodies]

    return prepare


def _synthetic_namespaces(cluster: Cluster, stored: dict[str, Obj]) -> list[Obj]:
    used = set(KubeObject.objects.filter(cluster=cluster).exclude(namespace="").values_list("namespace", flat=True))
    created = cluster.created_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    out = []
    for name in sorted(set(BUILTIN_NAMESPACES) | used):
        if name not in stored:
            out.append(
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {
                        "name": name,
                        "uid": f"namespace-{cluster.pk}-{name}",
                        "resourceVersion": "1",
                        "creationTimestamp": created,
                        "labels": {"kubernetes.io/metadata.name": name},
                    },
                    "spec": {"finalizers": ["kubernetes"]},
                    "status": {"phase": "Active"},
                }
            )
    return out


def _leases(cluster: Cluster, namespace: str | None) -> list[Obj]:
    if namespace not in (None, "kube-node-lease"):
        return []
    return [synthetic_lease(body) for body in store.list_objects(cluster, "Node")]


def _stored(cluster: Cluster, res: Resource, namespace: str | None, fields: FieldSelector) -> tuple[list[Obj], str]:
    rows = KubeObject.objects.filter(cluster=cluster, kind=res.kind)
    if namespace is not None and res.namespaced:
        rows = rows.filter(namespace=namespace)
    name = fields.required("metadata.name")
    if name is not None:
        rows = rows.filter(name=name)
    node = fields.required("spec.nodeName") if res.kind == "Pod" else None
    if node is not None:
        rows = rows.filter(node_name=node)
    order = ("namespace", "id") if res.kind == "Event" else ("namespace", "name")
    rv = Cluster.objects.filter(pk=cluster.pk).values_list("resource_version", flat=True).get()
    return [row.body for row in rows.order_by(*order)], str(rv)


def list_objects(
    cluster: Cluster, res: Resource, namespace: str | None, labels: LabelSelector, fields: FieldSelector
) -> tuple[list[Obj], str]:
    """The presented objects a list request selects, and the resourceVersion of the read."""
    from django.db import transaction

    with transaction.atomic():
        bodies, rv = _stored(cluster, res, namespace, fields)
        if res.kind == "Lease":
            objects = _leases(cluster, namespace)
        else:
            objects = _prepare(cluster, res)(bodies)
        if res.kind == "Namespace":
            stored = {obj["metadata"]["name"]: obj for obj in objects}
            objects = sorted(objects + _synthetic_namespaces(cluster, stored), key=lambda o: o["metadata"]["name"])
    return [obj for obj in objects if labels.matches(obj) and fields.matches(obj)], rv


def get_object(cluster: Cluster, res: Resource, namespace: str | None, name: str) -> Obj:
    """The presented object (leases and built-in namespaces are synthesized)."""
    if res.kind == "Lease":
        if namespace != "kube-node-lease":
            raise not_found(res, name)
        try:
            return synthetic_lease(store.get(cluster, "Node", "", name))
        except store.NotFound:
            raise not_found(res, name) from None
    try:
        body = store.get(cluster, res.kind, namespace or "", name)
    except store.NotFound:
        if res.kind == "Namespace":
            for synthetic in _synthetic_namespaces(cluster, {}):
                if synthetic["metadata"]["name"] == name:
                    return synthetic
        raise not_found(res, name) from None
    return _prepare(cluster, res)([body])[0]


# --- request handling ---------------------------------------------------------------------


@dataclass
class Call:
    cluster: Cluster
    method: str
    target: Target
    params: Any  # QueryDict
    accept: str
    content_type: str
    body: bytes

    @property
    def dry_run(self) -> bool:
        return bool(self.params.get("dryRun"))


def _encode_one(call: Call, obj: Obj) -> Obj:
    version = table_version(call.accept)
    if version is None:
        return obj
    include = call.params.get("includeObject", "Metadata")
    return table(call.target.res, [obj], obj.get("metadata", {}).get("resourceVersion", ""), include, version)


def _body(call: Call) -> Any:
    if call.content_type == PROTOBUF:
        raise ApiError(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json, application/yaml",
            warning=(
                "clusterviz reads JSON request bodies only; kubectl 1.32 sends protobuf for generator commands "
                "such as 'kubectl create deployment': write a manifest and use 'kubectl apply -f' instead"
            ),
        )
    if len(call.body) > MAX_YAML_CHARS:
        raise ApiError(413, "RequestEntityTooLarge", "the request body is too large")
    content_type = APPLY if call.content_type in ("application/yaml", APPLY) else call.content_type
    if content_type not in (JSON, APPLY, *PATCH_TYPES):
        raise ApiError(
            415,
            "UnsupportedMediaType",
            f'the body of the request was in an unknown format "{call.content_type}" - accepted media types '
            "include: application/json, application/yaml",
        )
    return parse_body(call.body, content_type)


def _delete_options(call: Call) -> Obj:
    options: Obj = {}
    if call.body and call.content_type == JSON:
        try:
            parsed = json.loads(call.body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            parsed = None
        if isinstance(parsed, dict):
            options = parsed
    grace = call.params.get("gracePeriodSeconds")
    if grace is not None and grace.lstrip("-").isdigit():
        options["gracePeriodSeconds"] = int(grace)
    return options


def _collection(call: Call) -> Reply:
    target, res, cluster = call.target, call.target.res, call.cluster
    if call.method == "GET":
        if not res.allows("list"):
            raise _method_not_allowed("list", res.qualified)
        labels = LabelSelector.parse(call.params.get("labelSelector"))
        fields = FieldSelector.parse(call.params.get("fieldSelector"), res.kind)
        objects, rv = list_objects(cluster, res, target.namespace, labels, fields)
        version = table_version(call.accept)
        if version is not None:
            include = call.params.get("includeObject", "Metadata")
            return Reply(200, table(res, objects, rv, include, version))
        return Reply(
            200,
            {
                "kind": res.list_kind,
                "apiVersion": res.api_version,
                "metadata": {"resourceVersion": rv},
                "items": objects,
            },
        )
    if call.method == "POST":
        if not res.allows("create"):
            raise _method_not_allowed("create", res.qualified)
        if res.namespaced and target.namespace is None:
            raise _method_not_allowed("create", f"{res.qualified} across all namespaces")
        created = writes.create(cluster, res, target.namespace or "", _body(call), call.dry_run)
        return Reply(201, _prepare(cluster, res)([created])[0], wrote=not call.dry_run)
    raise _method_not_allowed(call.method.lower(), res.qualified)


def _object(call: Call) -> Reply:
    target, res, cluster = call.target, call.target.res, call.cluster
    assert target.name is not None
    name, namespace = target.name, target.namespace or ""
    if call.method == "GET":
        return Reply(200, _encode_one(call, get_object(cluster, res, target.namespace, name)))
    verb = {"PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(call.method)
    if verb is None or not res.allows(verb):
        raise _method_not_allowed(verb or call.method.lower(), res.qualified)
    if call.method == "DELETE":
        deleted = writes.delete(cluster, res, namespace, name, _delete_options(call), call.dry_run)
        return Reply(200, _prepare(cluster, res)([deleted])[0], wrote=not call.dry_run)
    body = _body(call)
    if call.method == "PUT":
        updated = writes.replace(cluster, res, namespace, name, body, target.subresource, call.dry_run)
        return Reply(200, _prepare(cluster, res)([updated])[0], wrote=not call.dry_run)
    if call.content_type not in PATCH_TYPES:
        raise ApiError(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: "
            + ", ".join(PATCH_TYPES),
        )
    patched, created = writes.patch(
        cluster, res, namespace, name, call.content_type, body, target.subresource, call.dry_run
    )
    return Reply(201 if created else 200, _prepare(cluster, res)([patched])[0], wrote=not call.dry_run)


def _scale(call: Call) -> Reply:
    target, res, cluster = call.target, call.target.res, call.cluster
    assert target.name is not None
    namespace = target.namespace or ""
    if call.method == "GET":
        return Reply(200, scale_of(res, store.get(cluster, res.kind, namespace, target.name)))
    if call.method not in ("PUT", "PATCH"):
        raise _method_not_allowed(call.method.lower(), f"{res.qualified}/scale")
    content_type = call.content_type if call.method == "PATCH" else None
    scale = writes.update_scale(cluster, res, namespace, target.name, content_type, _body(call), call.dry_run)
    return Reply(200, scale, wrote=not call.dry_run)


def handle(call: Call) -> Reply:
    """A non-watch resource request (synchronous: runs in a worker thread)."""
    target = call.target
    sub = target.subresource
    if sub is not None and sub not in target.res.subresources:
        if target.res.kind == "Pod" and sub in NO_CONTAINERS and target.name:
            raise ApiError(
                400,
                "BadRequest",
                f'pods "{target.name}": clusterviz simulates containers, so there is nothing to {sub} '
                "(no logs, no processes, no ports)",
            )
        raise _not_served(sub)
    if target.name is None:
        return _collection(call)
    if sub == "scale":
        return _scale(call)
    if sub == "status" and call.method == "GET":
        return Reply(200, get_object(call.cluster, target.res, target.namespace, target.name))
    return _object(call)


def _watch(call: Call) -> StreamingHttpResponse:
    res, target, params = call.target.res, call.target, call.params
    if not res.allows("watch"):
        raise _method_not_allowed("watch", res.qualified)
    labels = LabelSelector.parse(params.get("labelSelector"))
    fields = FieldSelector.parse(params.get("fieldSelector"), res.kind)
    if target.name is not None:
        fields = FieldSelector((*fields.terms, ("metadata.name", target.name, False)))
    since_text = params.get("resourceVersion") or ""
    if since_text and not since_text.isdigit():
        raise ApiError(400, "BadRequest", f'invalid resource version "{since_text}"')
    timeout_text = params.get("timeoutSeconds") or ""
    timeout = float(timeout_text) if timeout_text.isdigit() and int(timeout_text) > 0 else None
    version = table_version(call.accept)
    include = params.get("includeObject", "Metadata")
    cluster = call.cluster

    def prepare(bodies: list[Obj]) -> list[Obj]:
        return _prepare(cluster, res)(bodies)

    def matches(obj: Obj) -> bool:
        return labels.matches(obj) and fields.matches(obj)

    def encode(obj: Obj) -> Obj:
        if version is None:
            return obj
        return table(res, [obj], obj.get("metadata", {}).get("resourceVersion", ""), include, version)

    events = stream(
        cluster,
        res.kind,
        target.namespace if res.namespaced else None,
        int(since_text) if since_text else None,
        prepare,
        matches,
        encode,
        timeout,
    )
    response = StreamingHttpResponse(events, content_type=JSON)
    response["Cache-Control"] = "no-cache, private"
    response["X-Accel-Buffering"] = "no"
    return response


def _respond(reply: Reply) -> HttpResponse:
    if isinstance(reply.body, (dict, list)):
        content = json.dumps(reply.body, separators=(",", ":"))
    else:
        content = str(reply.body)
    response = HttpResponse(content, status=reply.status, content_type=reply.content_type)
    for key, value in reply.headers.items():
        response[key] = value
    return response


def _error(error: ApiError) -> HttpResponse:
    response = _respond(Reply(error.code, error.body()))
    if error.warning:
        response["Warning"] = f'299 - "{error.warning}"'
    return response


def _meta(what: str, details: Any, request: HttpRequest, prefix: str) -> Reply:
    """Discovery, OpenAPI, /version and the root paths."""
    accept = request.headers.get("Accept", "")
    if what == "version":
        return Reply(200, discovery.version())
    if what == "health":
        return Reply(200, "ok", "text/plain")
    if what == "root":
        paths = [
            "/api",
            "/api/v1",
            "/apis",
            *(f"/apis/{g}/{v}" for g, v in GROUPS.items() if g),
            "/openapi/v3",
            "/version",
        ]
        return Reply(200, {"paths": sorted(paths)})
    if what in ("api", "apis"):
        aggregated = discovery.aggregated_version(accept)
        if aggregated is not None:
            body, content_type = discovery.aggregated(what == "api", aggregated)
            return Reply(200, body, content_type)
        if what == "api":
            return Reply(200, discovery.core_api(request.get_host()))
        return Reply(200, discovery.api_groups())
    if what == "group":
        return Reply(200, discovery.api_group(details))
    if what == "resources":
        body = discovery.api_resources(*details)
        if body is None:
            raise _not_served(request.path)
        return Reply(200, body)
    if what == "openapi":
        return Reply(200, openapi.index(prefix))
    if what == "openapi-group":
        body = openapi.group_document(*details)
        if body is None:
            raise _not_served(request.path)
        return Reply(200, body)
    raise _not_served(request.path)


@csrf_exempt
async def endpoint(request: HttpRequest, slug: str, path: str = "") -> HttpResponse:
    """Every request under `/k8s/<slug>/`."""
    target: Target | None = None
    try:
        cluster = await Cluster.objects.filter(slug=slug).afirst()
        if cluster is None:
            raise ApiError(404, "NotFound", f'cluster "{slug}" not found (create it first)', {"name": slug})
        what, details = _route(path)
        if what != "resource":
            if request.method not in ("GET", "HEAD"):
                raise _method_not_allowed(str(request.method).lower(), path or "/")
            prefix = request.path[: len(request.path) - len(path)].rstrip("/")
            if what == "openapi":
                prefix = request.path[: -len("/openapi/v3")] if request.path.endswith("/openapi/v3") else prefix
            return _respond(_meta(what, details, request, prefix))
        target = details
        call = Call(
            cluster,
            str(request.method),
            target,
            request.GET,
            request.headers.get("Accept", ""),
            (request.content_type or "").split(";")[0].strip().lower(),
            request.body if request.method in ("POST", "PUT", "PATCH", "DELETE") else b"",
        )
        watching = call.method == "GET" and (target.watch_path or call.params.get("watch") in ("true", "1"))
        if watching:
            return await sync_to_async(_watch)(call)
        reply = await sync_to_async(handle)(call)
        if reply.wrote:
            ensure_runner(cluster.pk)
        return _respond(reply)
    except Exception as exc:  # every refusal becomes a Status; an unexpected failure a 500 Status
        name = target.name if target is not None and target.name else ""
        error = from_exception(exc, target.res if target is not None else None, name)
        if error.code >= 500:
            log.exception("kube API request failed: %s %s", request.method, request.path)
        return _error(error)
