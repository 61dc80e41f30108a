"""Views: thin wrappers over the services. JSON API errors are Kubernetes-style Status objects."""

from __future__ import annotations

import functools
import json
import logging
import secrets
from collections.abc import Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.core.exceptions import RequestDataTooBig
from django.db import DataError, transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from scheduler_core.api.limits import MAX_YAML_BYTES
from scheduler_core.api.loading import InputError

from . import access, services, store
from .controllers.runner import ensure_runner
from .controllers.scheduler import CYCLES_KEPT
from .lessons import all_lessons, load_lesson
from .messages import MAX_YAML_CHARS, Step, data_error_message, parse_action, perform
from .models import Cluster, SchedulingCycle
from .publish import publish

COMPONENT = "browser"
log = logging.getLogger(__name__)


def _status(exc: Exception, code: int | None = None, reason: str | None = None) -> JsonResponse:
    reason = reason or (exc.reason if isinstance(exc, store.StoreError) else "Invalid")
    status = code or (exc.code if isinstance(exc, store.StoreError) else 400)
    return JsonResponse(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "message": str(exc),
            "reason": reason,
            "code": status,
        },
        status=status,
    )


def _cluster(slug: str) -> Cluster:
    cluster = Cluster.objects.filter(slug=slug).first()
    if cluster is None:
        raise Http404(f'cluster "{slug}" not found')
    return cluster


def _api_cluster(slug: str) -> Cluster:
    """The cluster of an API call; a missing one is a NotFound Status (JSON), not an HTML page."""
    cluster = Cluster.objects.filter(slug=slug).first()
    if cluster is None:
        raise store.NotFound(f'clusters "{slug}" not found')
    return cluster


def _api(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Turn the refusals of a (sync) API view into Status objects."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except (InputError, store.StoreError) as exc:
            return _status(exc)

    return wrapper


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    clusters = Cluster.objects.order_by("-created_at")[:50]
    context = {"clusters": clusters, "lessons": list(all_lessons().values()), "demo_slug": _demo_slug()}
    return render(request, "clusterviz/home.html", context)


def _demo_slug() -> str:
    """A fresh name for "try the demo": every visitor gets a demo cluster of their own."""
    return f"demo-{secrets.token_hex(3)}"


@require_POST
def create_cluster(request: HttpRequest) -> HttpResponse:
    slug = (request.POST.get("slug") or "").strip()
    lesson = (request.POST.get("lesson") or "").strip()
    title = request.POST.get("title", "")
    try:
        if len(title) > 200:  # Cluster.title's max_length (PostgreSQL would refuse it with a 500)
            raise InputError("title: must be no more than 200 characters")
        with transaction.atomic():  # an unknown lesson must not leave an empty cluster behind
            cluster = services.create_cluster(slug, title)
            if request.user.is_authenticated:
                cluster.owner = request.user
                cluster.save(update_fields=["owner"])
            if lesson:
                load_lesson(cluster, lesson)
    except (InputError, store.StoreError) as exc:
        clusters = Cluster.objects.order_by("-created_at")[:50]
        context = {"clusters": clusters, "lessons": list(all_lessons().values()), "error": str(exc)}
        context["demo_slug"] = _demo_slug()
        return render(request, "clusterviz/home.html", context, status=400)
    access.grant(request.session, cluster)  # the creator holds the edit link
    return HttpResponseRedirect(reverse("clusterviz-cluster", args=[cluster.slug]))


@require_GET
def cluster_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The cluster's page. `?key=<edit secret>` grants this browser the right to change it (kept in
    the session; the key is then dropped from the address so it is not shared by accident)."""
    cluster = _cluster(slug)
    key = request.GET.get("key")
    if key is not None:
        if not access.holds_token(cluster, key):
            return render(request, "clusterviz/forbidden.html", {"cluster": cluster}, status=403)
        access.grant(request.session, cluster)
        query = request.GET.copy()
        del query["key"]
        suffix = f"?{query.urlencode()}" if query else ""
        return HttpResponseRedirect(reverse("clusterviz-cluster", args=[cluster.slug]) + suffix)
    can_write = _may_write(request, cluster)
    context = {
        "cluster": cluster,
        "state": services.state(cluster),
        "can_write": can_write,
        "edit_url": request.build_absolute_uri(access.edit_url(cluster)) if can_write else "",
    }
    return render(request, "clusterviz/cluster.html", context)


def _may_write(request: HttpRequest, cluster: Cluster) -> bool:
    return access.may_write(
        cluster,
        session=request.session,
        user=request.user,
        token=access.token_from_headers(request.META),
    )


def _forbidden(cluster: Cluster) -> JsonResponse:
    error = store.StoreError(
        f'clusters "{cluster.slug}" is read-only for you: open its edit link, or send Authorization: Bearer <token>'
    )
    return _status(error, 403, "Forbidden")


@require_GET
@_api
def api_state(request: HttpRequest, slug: str) -> JsonResponse:
    return JsonResponse(services.state(_api_cluster(slug)))


@require_GET
@_api
def api_requested(request: HttpRequest, slug: str) -> JsonResponse:
    """Per node, requested and allocatable as the scheduler counts them (the board's bars)."""
    return JsonResponse(services.node_requests(_api_cluster(slug)))


@csrf_exempt
async def api_action(request: HttpRequest, slug: str) -> JsonResponse:
    """POST one action (the same JSON the WebSocket takes).

    Not CSRF-protected (scripts and other tools call it), so it insists on a JSON content type: a
    cross-site HTML form cannot send one without a CORS preflight, which this server never grants.
    """
    if request.method != "POST":
        response = _status(InputError("POST an action"), 405, "MethodNotAllowed")
        response["Allow"] = "POST"
        return response
    try:
        cluster = await sync_to_async(_api_cluster)(slug)
    except store.NotFound as exc:
        return _status(exc)
    if request.content_type != "application/json":
        error = InputError(f'Content-Type: must be "application/json", not "{request.content_type}"')
        return _status(error, 415, "UnsupportedMediaType")
    try:
        body = request.body
    except RequestDataTooBig:
        body = b"x" * (MAX_YAML_CHARS + 4097)
    if len(body) > MAX_YAML_CHARS + 4096:
        return _status(InputError("request body too large"), 413, "RequestEntityTooLarge")
    try:
        try:
            data: Any = json.loads(body or b"null")
        except (RecursionError, ValueError) as exc:
            if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):
                raise
            raise InputError("body: invalid JSON: nested too deeply or a number too long") from None
        action = parse_action(data)
        if action.action not in access.READ_ONLY_ACTIONS and not await sync_to_async(_may_write)(request, cluster):
            return _forbidden(cluster)
        result = await sync_to_async(perform)(cluster, action, COMPONENT)
        if isinstance(action, Step):
            await sync_to_async(publish)(cluster.pk, {"type": "control.step", "steps": action.steps})
        elif getattr(action, "action", "") == "pace":
            await sync_to_async(publish)(cluster.pk, {"type": "cluster.updated", "cluster": cluster.to_dict()})
    except json.JSONDecodeError as exc:
        return _status(InputError(f"body: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"))
    except UnicodeDecodeError as exc:
        return _status(InputError(f"body: invalid JSON: not valid UTF-8 (byte {exc.start})"))
    except (InputError, store.StoreError) as exc:
        return _status(exc)
    except DataError as exc:  # e.g. a NUL character, which PostgreSQL cannot store in JSON
        return _status(InputError(data_error_message(exc)))
    except Exception:
        log.exception("action failed")
        return _status(InputError("the action failed on the server; nothing was changed"), 500, "InternalError")
    ensure_runner(cluster.pk)
    return JsonResponse({"ok": True, **result})


@require_GET
@_api
def api_snapshot(request: HttpRequest, slug: str) -> HttpResponse:
    """Everything the scheduler reads, for `python -m scheduler_core explain --cluster`."""
    cluster = _api_cluster(slug)
    return _yaml_download(services.snapshot_yaml(cluster), f"{cluster.slug}-snapshot.yaml")


@require_GET
@_api
def api_export(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = _api_cluster(slug)
    return _yaml_download(services.export_yaml(cluster), f"{cluster.slug}.yaml")


def _yaml_download(text: str, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type="application/yaml")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@require_POST
@_api
def api_import(request: HttpRequest, slug: str) -> JsonResponse:
    cluster = _api_cluster(slug)
    if not _may_write(request, cluster):
        return _forbidden(cluster)
    try:
        text = request.FILES["file"].read() if "file" in request.FILES else request.body
    except RequestDataTooBig:
        return _status(
            InputError(f"request body larger than {MAX_YAML_BYTES // 2**20} MiB"), 413, "RequestEntityTooLarge"
        )
    count = services.import_snapshot(cluster, text, "kubectl", source="snapshot")
    return JsonResponse({"ok": True, "imported": count})


@require_GET
@_api
def api_cycle(request: HttpRequest, slug: str, number: int) -> JsonResponse:
    cycle = SchedulingCycle.objects.filter(cluster=_api_cluster(slug), number=number).first()
    if cycle is None:
        raise store.NotFound(f"cycle {number} not found (kept: the last {CYCLES_KEPT})")
    return JsonResponse(cycle.to_dict())


@require_GET
def api_lessons(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"lessons": [lesson.to_dict() for lesson in all_lessons().values()]})
