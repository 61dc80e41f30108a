"""Views: thin wrappers over the services. JSON API errors are Kubernetes-style Status objects."""

from __future__ import annotations

import json
from typing import Any

from asgiref.sync import sync_to_async
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from scheduler_core.api.loading import InputError

from . import services, store
from .controllers.runner import ensure_runner
from .lessons import all_lessons, load_lesson
from .messages import MAX_YAML_CHARS, Step, parse_action, perform
from .models import Cluster, SchedulingCycle
from .publish import publish

COMPONENT = "browser"


def _status(exc: Exception, code: int | None = None) -> JsonResponse:
    reason = exc.reason if isinstance(exc, store.StoreError) else "Invalid"
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


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    clusters = Cluster.objects.order_by("-created_at")[:50]
    return render(request, "clusterviz/home.html", {"clusters": clusters, "lessons": list(all_lessons().values())})


@require_POST
def create_cluster(request: HttpRequest) -> HttpResponse:
    slug = (request.POST.get("slug") or "").strip()
    lesson = (request.POST.get("lesson") or "").strip()
    try:
        cluster = services.create_cluster(slug, request.POST.get("title", ""))
        if lesson:
            load_lesson(cluster, lesson)
    except (InputError, store.StoreError) as exc:
        clusters = Cluster.objects.order_by("-created_at")[:50]
        context = {"clusters": clusters, "lessons": list(all_lessons().values()), "error": str(exc)}
        return render(request, "clusterviz/home.html", context, status=400)
    return HttpResponseRedirect(reverse("clusterviz-cluster", args=[cluster.slug]))


@require_GET
def cluster_page(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = _cluster(slug)
    return render(request, "clusterviz/cluster.html", {"cluster": cluster, "state": services.state(cluster)})


@require_GET
def api_state(request: HttpRequest, slug: str) -> JsonResponse:
    return JsonResponse(services.state(_cluster(slug)))


async def api_action(request: HttpRequest, slug: str) -> JsonResponse:
    """POST one action (the same JSON the WebSocket takes)."""
    if request.method != "POST":
        return JsonResponse({"message": "POST an action"}, status=405)
    cluster = await sync_to_async(_cluster)(slug)
    if len(request.body) > MAX_YAML_CHARS + 4096:
        return _status(InputError("request body too large"), 413)
    try:
        data: Any = json.loads(request.body or b"null")
        action = parse_action(data)
        result = await sync_to_async(perform)(cluster, action, COMPONENT)
        if isinstance(action, Step):
            await sync_to_async(publish)(cluster.pk, {"type": "control.step", "steps": action.steps})
        elif getattr(action, "action", "") == "pace":
            await sync_to_async(publish)(cluster.pk, {"type": "cluster.updated", "cluster": cluster.to_dict()})
    except json.JSONDecodeError as exc:
        return _status(InputError(f"body: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"))
    except (InputError, store.StoreError) as exc:
        return _status(exc)
    ensure_runner(cluster.pk)
    return JsonResponse({"ok": True, **result})


@require_GET
def api_export(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = _cluster(slug)
    response = HttpResponse(services.export_yaml(cluster), content_type="application/yaml")
    response["Content-Disposition"] = f'attachment; filename="{cluster.slug}.yaml"'
    return response


@require_POST
def api_import(request: HttpRequest, slug: str) -> JsonResponse:
    cluster = _cluster(slug)
    text = request.FILES["file"].read() if "file" in request.FILES else request.body
    try:
        count = services.import_snapshot(cluster, text, "kubectl", source="snapshot")
    except (InputError, store.StoreError) as exc:
        return _status(exc)
    return JsonResponse({"ok": True, "imported": count})


@require_GET
def api_cycle(request: HttpRequest, slug: str, number: int) -> JsonResponse:
    cycle = SchedulingCycle.objects.filter(cluster=_cluster(slug), number=number).first()
    if cycle is None:
        raise Http404(f"cycle {number} not found")
    return JsonResponse(cycle.to_dict())


@require_GET
def api_lessons(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"lessons": [lesson.to_dict() for lesson in all_lessons().values()]})
