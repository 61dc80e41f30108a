"""The HTTP side of the endpoint: one async view resolves `/k8s/<slug>/<path>` to discovery,
OpenAPI, or a resource request, runs the (synchronous) store work in a thread, streams watches,
and answers every refusal as a metav1.Status — never an HTML page or a bare 500."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from asgiref.sync import sync_to_async
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from scheduler_core.api.validation import dns1123_label_error

from .. import access, lesson_recording, recorded_steps, retention, store
from ..controllers.runner import ensure_runner
from ..messages import MAX_YAML_CHARS
from ..models import Cluster
from . import discovery, openapi, paging, protobuf, writes
from .eviction import evict
from .fields import FieldValidation
from .options import WriteOptions, write_options
from .patch import APPLY, PATCH_TYPES, parse_body_fields
from .present import scale_of
from .reads import get_object, list_objects, presenter
from .resources import GROUPS, REVIEW_KINDS
from .routing import Target, method_not_allowed, not_served, route
from .schema import schema_of
from .selectors import FieldSelector, LabelSelector
from .served import served_schema, served_version
from .status import ApiError, from_exception, success_body
from .tables import table, table_version
from .watch import stream

__all__ = ["endpoint"]

log = logging.getLogger(__name__)
Obj = dict[str, Any]
JSON = "application/json"
PROTOBUF = protobuf.MEDIA_TYPE
NO_CONTAINERS = ("log", "exec", "attach", "portforward", "proxy")
MAX_BODY_BYTES = MAX_YAML_CHARS  # the most a manifest may hold (kube-apiserver's own limit is 3 MiB)


@dataclass
class Reply:
    status: int
    body: Any
    content_type: str = JSON
    headers: dict[str, str] = field(default_factory=dict)
    wrote: bool = False


@dataclass
class Call:
    cluster: Cluster
    method: str
    target: Target
    params: Any  # QueryDict
    accept: str
    content_type: str
    body: bytes
    duplicates: list[str] = field(default_factory=list)  # duplicate fields of the JSON body
    owner: bool = False  # the request carries the cluster's owner token
    user_agent: str = ""

    @property
    def manager(self) -> str | None:
        """The write's field manager: `fieldManager`, else the User-Agent's product (`kubectl`), as upstream."""
        return self.params.get("fieldManager") or self.user_agent.split("/")[0] or None

    @cached_property
    def options(self) -> WriteOptions:
        """The write's options (dryRun, DeleteOptions), validated as the apiserver does."""
        return write_options(self.method, self.params, self.body)

    @property
    def dry_run(self) -> bool:
        return self.options.dry_run

    @cached_property
    def fields(self) -> FieldValidation:
        """The fieldValidation directive of a create, update or patch (and the warnings it collects)."""
        return FieldValidation.of(self.method, self.params, served_schema(self.cluster))


def _encode_one(call: Call, obj: Obj) -> Obj:
    version = table_version(call.accept)
    if version is None:
        return obj
    include = call.params.get("includeObject", "Metadata")
    return table(call.target.res, [obj], obj.get("metadata", {}).get("resourceVersion", ""), include, version)


def _body(call: Call) -> Any:
    if call.content_type == PROTOBUF:  # kubectl's typed client: `kubectl create namespace|deployment|…`, `debug`
        return protobuf.decode(call.body, call.target.res.kind, call.target.res.api_version)
    content_type = APPLY if call.content_type in ("application/yaml", APPLY) else call.content_type
    if content_type not in (JSON, APPLY, *PATCH_TYPES):
        raise ApiError(
            415,
            "UnsupportedMediaType",
            f'the body of the request was in an unknown format "{call.content_type}" - accepted media types '
            "include: application/json, application/yaml",
        )
    parsed, call.duplicates = parse_body_fields(call.body, content_type)
    return parsed


def _collection(call: Call) -> Reply:
    target, res, cluster = call.target, call.target.res, call.cluster
    if call.method == "GET":
        if not res.allows("list"):
            raise method_not_allowed("list", res.qualified)
        labels = LabelSelector.parse(call.params.get("labelSelector"))
        fields = FieldSelector.parse(call.params.get("fieldSelector"), res.kind)
        limit = paging.limit_of(call.params.get("limit"))
        token = call.params.get("continue")
        resume = paging.decode(token) if token else None
        try:
            at = resume.rv if resume is not None and resume.rv > 0 else None
            objects, rv = list_objects(cluster, res, target.namespace, labels, fields, at)
        except store.LogGap:
            assert resume is not None
            raise paging.expired(resume.start) from None
        list_meta: Obj = {"resourceVersion": rv}
        if limit or resume is not None:
            selected = bool(call.params.get("labelSelector") or call.params.get("fieldSelector"))
            after = resume.start if resume is not None else None
            objects, list_meta = paging.page(objects, rv, limit, after, selected)
        version = table_version(call.accept)
        if version is not None:
            include = call.params.get("includeObject", "Metadata")
            listed = table(res, objects, rv, include, version)
            listed["metadata"] = list_meta
            return Reply(200, listed)
        return Reply(
            200,
            {"kind": res.list_kind, "apiVersion": res.api_version, "metadata": list_meta, "items": objects},
        )
    if call.method == "POST":
        if not res.allows("create"):
            raise method_not_allowed("create", res.qualified)
        if res.namespaced and target.namespace is None:
            raise method_not_allowed("create", f"{res.qualified} across all namespaces")
        body = _body(call)
        created = writes.create(
            cluster, res, target.namespace or "", body, call.dry_run, call.fields, call.duplicates, manager=call.manager
        )
        return Reply(201, presenter(cluster, res)([created])[0], wrote=not call.dry_run)
    raise method_not_allowed(call.method.lower(), res.qualified)


def _object(call: Call) -> Reply:
    target, res, cluster = call.target, call.target.res, call.cluster
    assert target.name is not None
    name, namespace = target.name, target.namespace or ""
    if call.method == "GET":
        return Reply(200, _encode_one(call, get_object(cluster, res, target.namespace, name)))
    verb = {"PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(call.method)
    if verb is None or not res.allows(verb):
        raise method_not_allowed(verb or call.method.lower(), res.qualified)
    if call.method == "DELETE":
        deleted = writes.delete(cluster, res, namespace, name, call.options.delete, call.dry_run)
        return Reply(200, presenter(cluster, res)([deleted])[0], wrote=not call.dry_run)
    body = _body(call)
    if call.method == "PUT":
        updated = writes.replace(
            cluster,
            res,
            namespace,
            name,
            body,
            target.subresource,
            call.dry_run,
            call.fields,
            call.duplicates,
            call.manager,
        )
        return Reply(200, presenter(cluster, res)([updated])[0], wrote=not call.dry_run)
    if call.content_type not in PATCH_TYPES:
        raise ApiError(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: "
            + ", ".join(PATCH_TYPES),
        )
    patched, created = writes.patch(
        cluster,
        res,
        namespace,
        name,
        call.content_type,
        body,
        target.subresource,
        call.dry_run,
        call.fields,
        call.params.get("fieldManager") if call.content_type == APPLY else call.manager,
        call.params.get("force") in ("true", "1"),
    )
    return Reply(201 if created else 200, presenter(cluster, res)([patched])[0], wrote=not call.dry_run)


def _scale(call: Call) -> Reply:
    target, res, cluster = call.target, call.target.res, call.cluster
    assert target.name is not None
    namespace = target.namespace or ""
    if call.method == "GET":
        return Reply(200, scale_of(res, store.get(cluster, res.kind, namespace, target.name)))
    if call.method not in ("PUT", "PATCH"):
        raise method_not_allowed(call.method.lower(), f"{res.qualified}/scale")
    content_type = call.content_type if call.method == "PATCH" else None
    scale = writes.update_scale(cluster, res, namespace, target.name, content_type, _body(call), call.dry_run)
    return Reply(200, scale, wrote=not call.dry_run)


def _evict(call: Call) -> Reply:
    """POST pods/<name>/eviction (policy/v1 Eviction, v1beta1 accepted), honouring PodDisruptionBudgets."""
    target, res = call.target, call.target.res
    assert target.name is not None
    if call.method != "POST":
        raise method_not_allowed(call.method.lower(), f"{res.qualified}/eviction")
    dry_run = evict(call.cluster, res, target.namespace or "", target.name, _body(call), call.params.getlist("dryRun"))
    return Reply(201, success_body(201), wrote=not dry_run)


def handle(call: Call) -> Reply:
    """A non-watch resource request (synchronous: runs in a worker thread). A write is a step of the
    lesson being recorded on the cluster, if one is (the object before and after it tell which)."""
    target = call.target
    recordable = call.method in ("POST", "PUT", "PATCH", "DELETE") and target.subresource in (None, "scale", "eviction")
    if not recordable or target.res.kind in REVIEW_KINDS:
        return _handle(call)
    with lesson_recording.step(call.cluster) as recorder:
        before = _stored(call, target.name) if recorder.active and target.name else None
        reply = _handle(call)
        if recorder.active and reply.wrote:
            name = target.name or (reply.body.get("metadata") or {}).get("name")
            after = _stored(call, name) if name else None
            recorder.record(recorded_steps.from_write(target.res.kind, before, after))
    return reply


def _stored(call: Call, name: str) -> Obj | None:
    try:
        return store.get(call.cluster, call.target.res.kind, call.target.namespace or "", name)
    except store.NotFound:
        return None


def _handle(call: Call) -> Reply:
    target = call.target
    sub = target.subresource
    if sub is not None and sub not in target.res.subresources:
        if target.res.kind == "Pod" and sub in NO_CONTAINERS and target.name:
            what = "logs" if sub == "log" else "processes or ports"
            raise ApiError(
                400,
                "BadRequest",
                f'pods "{target.name}": clusterviz simulates its containers, they have no {what} ({sub} is not served)',
            )
        raise not_served(sub)
    if sub == "eviction" and target.name:
        return _evict(call)
    if call.method in ("POST", "PUT", "PATCH", "DELETE"):
        call.options  # noqa: B018 - a bad dryRun (or DeleteOptions) is refused before anything else
    if call.method in ("POST", "PUT", "PATCH"):
        call.fields  # noqa: B018 - and so is a bad fieldValidation
    if target.res.kind in REVIEW_KINDS:
        if call.method != "POST" or target.name is not None:
            raise method_not_allowed(call.method.lower(), target.res.qualified)
        return _review(call)
    if target.name is None:
        reply = _collection(call)
    elif sub == "scale":
        reply = _scale(call)
    elif sub == "status" and call.method == "GET":
        reply = Reply(200, get_object(call.cluster, target.res, target.namespace, target.name))
    else:
        reply = _object(call)
    if call.method in ("POST", "PUT", "PATCH") and call.fields.warnings:
        reply.headers["Warning"] = ", ".join(f"299 - {json.dumps(text)}" for text in call.fields.warnings)
    return reply


def _watch(call: Call) -> StreamingHttpResponse:
    res, target, params = call.target.res, call.target, call.params
    if not res.allows("watch"):
        raise method_not_allowed("watch", res.qualified)
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
        return presenter(cluster, res)(bodies)

    def matches(obj: Obj) -> bool:
        return labels.matches(obj) and fields.matches(obj)

    def encode(obj: Obj) -> Obj:
        if version is None:
            return obj
        return table(res, [obj], obj.get("metadata", {}).get("resourceVersion", ""), include, version)

    # a typed client (Accept: protobuf first) gets the stream kube-apiserver sends it
    as_protobuf = version is None and wants_protobuf(call.accept) and protobuf.has_message(res.api_version, res.kind)
    frame = protobuf.watch_frame if as_protobuf else None

    events = stream(
        cluster,
        res.kind,
        target.namespace if res.namespaced else None,
        int(since_text) if since_text else None,
        prepare,
        matches,
        encode,
        timeout,
        frame,
    )
    response = StreamingHttpResponse(events, content_type=protobuf.WATCH_MEDIA_TYPE if frame else JSON)
    response["Cache-Control"] = "no-cache, private"
    response["X-Accel-Buffering"] = "no"
    return response


def wants_protobuf(accept: str) -> bool:
    """Whether the client prefers protobuf: it names it before JSON (`application/vnd.kubernetes.protobuf,
    */*`, as client-go's typed clients send), not as a Table."""
    for entry in accept.split(","):
        media, _, params = entry.strip().partition(";")
        media = media.strip().lower()
        if media == PROTOBUF:
            return "as=" not in params
        if media in (JSON, "application/yaml"):
            return False
    return False


def _answered(call: Call) -> Reply:
    """`handle`, its object in protobuf when the client prefers it and the kind has a message."""
    reply = handle(call)
    if reply.content_type == JSON and isinstance(reply.body, dict) and wants_protobuf(call.accept):
        encoded = protobuf.encode(reply.body)
        if encoded is not None:
            reply.body, reply.content_type = encoded, PROTOBUF
    return reply


def _respond(reply: Reply) -> HttpResponse:
    if isinstance(reply.body, (dict, list)):
        content: str | bytes = json.dumps(reply.body, separators=(",", ":"))
    elif isinstance(reply.body, bytes):
        content = reply.body
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
    retry_after = (error.details or {}).get("retryAfterSeconds")
    if retry_after:  # as the apiserver's response writer sets it
        response["Retry-After"] = str(retry_after)
    return response


def _meta(what: str, details: Any, request: HttpRequest, prefix: str, cluster: Cluster | None) -> Reply:
    """Discovery, OpenAPI, /version and the root paths, as the cluster's release serves them."""
    accept = request.headers.get("Accept", "")
    served = served_version(cluster)
    if what == "version":
        return Reply(200, discovery.version(served))
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
            raise not_served(request.path)
        return Reply(200, body)
    if what == "openapi":
        return Reply(200, openapi.index(prefix, schema_of(served.minor), served.git_version))
    if what == "openapi-v2":
        content, content_type = openapi.v2_document(accept, served.git_version)
        return Reply(200, content, content_type)
    if what == "openapi-group":
        body = openapi.group_document(*details, schema_of(served.minor), served.git_version)
        if body is None:
            raise not_served(request.path)
        return Reply(200, body)
    raise not_served(request.path)


# SelfSubjectRulesReview status (`kubectl auth can-i --list`): the owner may do anything; anyone
# else may read every resource, ask these reviews, and read what system:discovery and
# system:public-info-viewer open to everyone
OWNER_RULES: Obj = {
    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
    "incomplete": False,
}
READER_RULES: Obj = {
    "resourceRules": [
        {
            "verbs": ["create"],
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
        },
        {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]},
        {"verbs": ["get", "list", "watch"], "apiGroups": ["*"], "resources": ["*"]},
    ],
    "nonResourceRules": [
        {
            "verbs": ["get"],
            "nonResourceURLs": [
                "/api",
                "/api/*",
                "/apis",
                "/apis/*",
                "/healthz",
                "/livez",
                "/openapi",
                "/openapi/*",
                "/readyz",
                "/version",
                "/version/",
            ],
        }
    ],
    "incomplete": False,
}
IMPERSONATION = (  # header, resource, API group (apiserver endpoints/filters/impersonation.go)
    ("Impersonate-User", "users", ""),
    ("Impersonate-Group", "groups", ""),
    ("Impersonate-Uid", "uids", "authentication.k8s.io"),
)
OWNER_USER = ("clusterviz:owner", ["system:authenticated"])
ANONYMOUS_USER = ("system:anonymous", ["system:unauthenticated"])
VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


def _authenticate(cluster: Cluster, request: HttpRequest, key: str | None) -> bool | None:
    """True for the owner token (in the kubeconfig's server path `/k8s/<slug>/key/<token>/` or as a
    bearer token), None without a token (the anonymous user); a wrong token is 401, as upstream."""
    token = key if key is not None else access.token_from_headers(request.META)
    if token is None:
        return None
    if not access.holds_token(cluster, token):
        raise ApiError(401, "Unauthorized", "Unauthorized")
    return True


def _forbidden(method: str, target: Target) -> ApiError:
    """The authorizer's 403 for a writer without the owner token (reads are open: a follower's
    kubectl may watch): `pods is forbidden: User "system:anonymous" cannot create resource ...`."""
    res = target.res
    verb = VERBS.get(method, method.lower())
    if verb == "delete" and target.name is None:
        verb = "deletecollection"
    resource = f"{res.plural}/{target.subresource}" if target.subresource else res.plural
    scope = f"in the namespace {json.dumps(target.namespace)}" if target.namespace else "at the cluster scope"
    reason = f'User "{ANONYMOUS_USER[0]}" cannot {verb} resource "{resource}" in API group "{res.group}" {scope}'
    subject = f'{res.qualified} "{target.name}"' if target.name else res.qualified
    details: dict[str, Any] = {"kind": res.plural}
    if target.name:
        details["name"] = target.name
    if res.group:
        details["group"] = res.group
    return ApiError(403, "Forbidden", f"{subject} is forbidden: {reason}", details)


def _review(call: Call) -> Reply:
    """SelfSubjectAccessReview (`kubectl auth can-i`: the owner may do anything, anyone may read) and
    SelfSubjectReview (`kubectl auth whoami`), answered for the requester and never stored."""
    res = call.target.res
    body = _body(call) if call.body.strip() else {}
    spec = (body.get("spec") if isinstance(body, dict) else None) or {}
    if not isinstance(spec, dict):
        raise ApiError(400, "BadRequest", f"{res.kind}.spec: must be an object")
    if res.kind == "SelfSubjectReview":
        username, groups = OWNER_USER if call.owner else ANONYMOUS_USER
        status: Obj = {"userInfo": {"username": username, "groups": groups}}
    elif res.kind == "SelfSubjectRulesReview":
        status = OWNER_RULES if call.owner else READER_RULES
    else:
        attributes = spec.get("resourceAttributes") or spec.get("nonResourceAttributes") or {}
        verb = attributes.get("verb", "") if isinstance(attributes, dict) else ""
        allowed = bool(call.owner) or verb in ("get", "list", "watch")
        status = {"allowed": allowed}
    review = {"kind": res.kind, "apiVersion": res.api_version, "metadata": {"creationTimestamp": None}, "spec": spec}
    return Reply(201, {**review, "status": status})


def _too_large() -> ApiError:
    # kube-apiserver's limitedReadBody: errors.NewRequestEntityTooLargeError("limit is N")
    return ApiError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_BODY_BYTES}")


def _request_body(request: HttpRequest) -> bytes:
    """The body of a write, refused (413) past MAX_BODY_BYTES — by its declared length before it is read."""
    if request.method not in ("POST", "PUT", "PATCH", "DELETE"):
        return b""
    declared = request.META.get("CONTENT_LENGTH") or "0"
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _too_large()
    try:
        body = request.body
    except RequestDataTooBig:
        raise _too_large() from None
    if len(body) > MAX_BODY_BYTES:
        raise _too_large()
    return body


def _refuse_impersonation(cluster: Cluster, request: HttpRequest, key: str | None) -> None:
    """`kubectl --as/--as-group/--as-uid`: no user here may impersonate (nothing grants the
    `impersonate` verb), so it is the impersonation filter's 403, naming the requester."""
    for header, resource, group in IMPERSONATION:
        value = request.headers.get(header)
        if value is None:
            continue
        username = (OWNER_USER if _authenticate(cluster, request, key) else ANONYMOUS_USER)[0]
        where = f'in API group "{group}"' if group else 'in API group ""'
        details: Obj = {"name": value, "kind": resource}
        if group:
            details["group"] = group
        qualified = f"{resource}.{group}" if group else resource
        raise ApiError(
            403,
            "Forbidden",
            f'{qualified} "{value}" is forbidden: User "{username}" cannot impersonate resource "{resource}" '
            f"{where} at the cluster scope",
            details,
        )


ROOT_PATHS = ("version", "livez", "readyz", "openapi")


@csrf_exempt
async def root_endpoint(request: HttpRequest, path: str) -> HttpResponse:
    """The cluster-independent documents at the host's root, where `kubectl get --raw /version`
    (`/livez`, `/readyz`, `/openapi/v3`, …) sends them: kubectl's --raw path is absolute, it does not
    carry the kubeconfig server's `/k8s/<slug>` prefix. (`/healthz` there is the load balancer's check.)"""
    try:
        what, details = route(path)
        if what not in ("version", "health", "openapi", "openapi-v2", "openapi-group"):
            raise not_served(request.path)
        if request.method not in ("GET", "HEAD"):
            raise method_not_allowed(str(request.method).lower(), path)
        return _respond(await sync_to_async(_root_meta)(what, details, request))
    except ApiError as error:
        return _error(error)


def _root_meta(what: str, details: Any, request: HttpRequest) -> Reply:
    """A root path carries no `/k8s/<slug>`: the owner token, when sent, names the cluster whose
    release answers; without one the reference release does."""
    token = access.token_from_headers(request.META)
    cluster = Cluster.objects.filter(owner_token=token).first() if token else None
    return _meta(what, details, request, "", cluster)


@csrf_exempt
async def endpoint(request: HttpRequest, slug: str, path: str = "", key: str | None = None) -> HttpResponse:
    """Every request under `/k8s/<slug>/`."""
    target: Target | None = None
    try:
        if dns1123_label_error(slug):  # no such cluster can exist: answer without asking the database
            raise not_served(request.path)
        cluster = await Cluster.objects.filter(slug=slug).afirst()
        if cluster is None:
            raise ApiError(404, "NotFound", f'cluster "{slug}" not found (create it first)', {"name": slug})
        await retention.atouch(cluster)
        what, details = route(path)
        if what == "resource":
            # upstream's filter refuses discovery too; kubectl's aggregated-discovery client cannot
            # read that Status ("unknown"), so, as against a cluster whose discovery kubectl has cached,
            # the refusal it prints is the resource request's
            _refuse_impersonation(cluster, request, key)
        if what != "resource":
            if request.method not in ("GET", "HEAD"):
                raise method_not_allowed(str(request.method).lower(), path or "/")
            prefix = request.path[: len(request.path) - len(path)].rstrip("/")
            if what == "openapi":
                prefix = request.path[: -len("/openapi/v3")] if request.path.endswith("/openapi/v3") else prefix
            return _respond(_meta(what, details, request, prefix, cluster))
        target = details
        owner = _authenticate(cluster, request, key) is True  # before the body is read, as upstream
        if request.method not in ("GET", "HEAD") and not owner and target.res.kind not in REVIEW_KINDS:
            raise _forbidden(str(request.method), target)
        call = Call(
            cluster,
            str(request.method),
            target,
            request.GET,
            request.headers.get("Accept", ""),
            (request.content_type or "").split(";")[0].strip().lower(),
            _request_body(request),
            owner=owner,
            user_agent=request.headers.get("User-Agent", ""),
        )
        watching = call.method == "GET" and (target.watch_path or call.params.get("watch") in ("true", "1"))
        if watching:
            ensure_runner(cluster.pk)  # a watcher expects things to happen: make sure the controllers run
            return await sync_to_async(_watch)(call)
        reply = await sync_to_async(_answered)(call)
        if reply.wrote:
            ensure_runner(cluster.pk)
        return _respond(reply)
    except Exception as exc:  # every refusal becomes a Status; an unexpected failure a 500 Status
        name = target.name if target is not None and target.name else ""
        error = from_exception(exc, target.res if target is not None else None, name)
        if error.code >= 500:
            log.exception("kube API request failed: %s %s", request.method, request.path)
        return _error(error)
