"""Views: thin wrappers over the services. JSON API errors are Kubernetes-style Status objects."""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import logging
import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.translation import get_language
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import condition, require_GET, require_POST

from scheduler_core.api.limits import MAX_YAML_BYTES, MAX_YAML_CHARS
from scheduler_core.api.loading import InputError
from scheduler_core.versions import SUPPORTED

from . import access, actions, cycle_traces, join_codes, join_views, prediction, retention, services, store
from .controllers.scheduler import CYCLES_KEPT
from .kube_api.status import status_body
from .lesson_translations import card as lesson_card
from .lesson_view import lesson_messages
from .lessons import all_lessons, catalog, load_lesson, load_lesson_file, parse_lesson, topic_title
from .models import STAGING_PREFIX, Cluster, SchedulingCycle
from .state_text import gzipped_state

COMPONENT = "browser"
ACCEPTS_GZIP = re.compile(r"\bgzip\b")  # as GZipMiddleware reads Accept-Encoding
log = logging.getLogger(__name__)


def _status(exc: Exception, code: int | None = None, reason: str | None = None) -> JsonResponse:
    reason = reason or (exc.reason if isinstance(exc, store.StoreError) else "Invalid")
    status = code or (exc.code if isinstance(exc, store.StoreError) else 400)
    return JsonResponse(status_body(status, reason, str(exc)), status=status)


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


FAVICON = settings.BASE_DIR / "static" / "favicon.ico"


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    """`/favicon.ico`, which browsers ask for on every page whatever the page links to."""
    response = HttpResponse(FAVICON.read_bytes(), content_type="image/vnd.microsoft.icon")
    response["Cache-Control"] = "public, max-age=86400"
    return response


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return _home(request)


def _home(request: HttpRequest, error: str = "", status: int = 200, error_at: str = "create") -> HttpResponse:
    """The home page; `error` is shown beside the form it concerns (`error_at`: create, lesson_file)."""
    language = get_language()
    context = {
        "clusters": _clusters_of(request),
        "lessons": [lesson_card(lesson, language) for lesson in all_lessons().values()],
        "catalog": [
            (
                {"key": key, "title": topic_title(key)},
                [{**lesson_card(lesson, language), "slug": _fresh_slug(lesson.name)} for lesson in group],
            )
            for key, group in catalog()
        ],
        "demo_slug": _fresh_slug("demo"),
    }
    if error:
        context["error"], context["error_at"] = error, error_at
    return render(request, "clusterviz/home.html", context, status=status)


def _clusters_of(request: HttpRequest) -> list[Cluster]:
    """The clusters this browser may see listed: those it holds the edit link of, owns (signed in) or
    joined, newest first; never every cluster on the server."""
    granted = set(access.granted_slugs(request.session))
    joined = set(join_views.joined_slugs(request.session))
    visible = Q(slug__in=granted | joined)
    if request.user.is_authenticated:
        visible |= Q(owner=request.user)
    listed = list(Cluster.objects.exclude(slug__startswith=STAGING_PREFIX).filter(visible).order_by("-created_at")[:50])
    for cluster in listed:
        owned = request.user.is_authenticated and cluster.owner_id == request.user.pk
        cluster.joined_only = cluster.slug not in granted and not owned
    return listed


def _fresh_slug(lesson: str) -> str:
    """A fresh name for a lesson's cluster ("try the demo", the catalog): every visitor gets their own."""
    return f"{lesson[:50]}-{secrets.token_hex(3)}"


@require_POST
def create_cluster(request: HttpRequest) -> HttpResponse:
    if "lesson_file" in request.FILES:
        return _create_from_lesson_file(request, request.FILES["lesson_file"])
    slug = (request.POST.get("slug") or "").strip()
    lesson = (request.POST.get("lesson") or "").strip()
    title = request.POST.get("title", "")
    try:
        if len(title) > 200:  # Cluster.title's max_length (PostgreSQL would refuse it with a 500)
            raise InputError("title: must be no more than 200 characters")
        cluster = _created(request, slug, title, lambda made: load_lesson(made, lesson) if lesson else None)
    except (InputError, store.StoreError) as exc:
        return _home(request, str(exc), 400)
    return _opened(request, cluster, has_lesson=bool(lesson))


def _created(request: HttpRequest, slug: str, title: str, fill: Callable[[Cluster], object]) -> Cluster:
    """A new cluster, the signed-in user's, filled by `fill`; all or nothing (an unknown or invalid
    lesson must not leave an empty cluster behind)."""
    with transaction.atomic():
        cluster = services.create_cluster(slug, title)
        if request.user.is_authenticated:
            cluster.owner = request.user
            cluster.save(update_fields=["owner"])
        fill(cluster)
    return cluster


def _opened(request: HttpRequest, cluster: Cluster, has_lesson: bool) -> HttpResponse:
    """The creator holds the edit link; "start a class" opens a lesson in presenter mode (its rail,
    the join code), anything else the board."""
    access.grant(request.session, cluster)
    suffix = "?present=1" if request.POST.get("then") == "present" and has_lesson else ""
    return HttpResponseRedirect(reverse("clusterviz-cluster", args=[cluster.slug]) + suffix)


def _lesson_file_text(upload: UploadedFile) -> tuple[str, str]:
    """(its name as errors cite it, its text) of an uploaded lesson file, or InputError."""
    source = re.sub(r"[^\w.-]", "_", Path(upload.name or "lesson.yaml").name)[:100] or "lesson.yaml"
    if (upload.size or 0) > MAX_YAML_CHARS:
        raise InputError(f"{source}: the file is {upload.size} bytes; a lesson file holds at most {MAX_YAML_CHARS}")
    try:
        return source, upload.read().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}: not UTF-8 text (byte {exc.start})") from None


def _create_from_lesson_file(request: HttpRequest, upload: UploadedFile) -> HttpResponse:
    """A new cluster running a teacher's own lesson file (validated as the built-in lessons are)."""
    try:
        source, text = _lesson_file_text(upload)
        lesson = parse_lesson(text, source)
        slug, title = _fresh_slug(lesson.name), lesson.title[:200]
        cluster = _created(request, slug, title, lambda made: load_lesson_file(made, lesson, text))
    except (InputError, store.StoreError) as exc:
        return _home(request, str(exc), 400, error_at="lesson_file")
    return _opened(request, cluster, has_lesson=True)


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
    retention.touch(cluster)
    can_write = _may_write(request, cluster)
    prediction.ensure_viewer(request.session)  # who answers a class question, once
    context = {
        "cluster": cluster,
        "state": {"resourceVersion": cluster.resource_version},  # the page loads the state itself (api_state)
        "can_write": can_write,
        "edit_url": request.build_absolute_uri(access.edit_url(cluster)) if can_write else "",
        "nickname": request.session.get(join_views.NICKNAME_KEY, ""),
        "versions": [f"1.{minor}" for minor in SUPPORTED],  # the board's kube-scheduler version choice
        # an imported snapshot's kubelets, until the owner chooses a version ("v1.35 ×12, v1.34 ×3")
        "version_hint": ", ".join(f"{v} ×{n}" for v, n in (cluster.version_hint or {}).get("kubelets", [])),
        # or the API server a `kubectl version` document in the dump named ("v1.35.2"), which wins
        "version_server": (cluster.version_hint or {}).get("server", ""),
    }
    if can_write:  # the presenter's screen shows the class's join code and a QR code of the follower link
        code = join_codes.issue(cluster)
        follower_url = request.build_absolute_uri(reverse("clusterviz-cluster", args=[cluster.slug])) + "?role=follower"
        context["join"] = {
            "code": join_codes.shown(code),
            "url": request.build_absolute_uri(reverse("clusterviz-join")),
            "follower_url": follower_url,
            "qr": join_codes.qr_svg(follower_url),
        }
    elif request.GET.get("role") == "follower":
        join_views.remember_joined(request.session, cluster)
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


def _state_etag(cluster: Cluster, resource_version: int | str) -> str:
    """The state's validator: the cluster (a re-created slug is another one), its resourceVersion, and
    its settings (pace, lesson step), which change without a resourceVersion."""
    shown = {k: v for k, v in cluster.to_dict().items() if k != "resourceVersion"}
    settings = hashlib.sha256(json.dumps(shown, sort_keys=True).encode()).hexdigest()[:12]
    return f'"{cluster.pk}-{resource_version}-{settings}"'


def _current_state_etag(request: HttpRequest, slug: str) -> str | None:
    cluster = Cluster.objects.filter(slug=slug).first()
    return None if cluster is None else _state_etag(cluster, cluster.resource_version)


@require_GET
@condition(etag_func=_current_state_etag)
@_api
def api_state(request: HttpRequest, slug: str) -> HttpResponse:
    """The whole state with its resourceVersion (the stream resumes from it: `?resourceVersion=N`).
    gzip-compressed (encoded once per state: `state_text.gzipped_state`); revalidated by ETag (304
    while nothing changed)."""
    cluster = _api_cluster(slug)
    etag, body = gzipped_state(cluster, _state_etag)
    if ACCEPTS_GZIP.search(request.headers.get("Accept-Encoding", "")):
        response = HttpResponse(body, content_type="application/json")
        response["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(gzip.decompress(body), content_type="application/json")
    patch_vary_headers(response, ("Accept-Encoding",))
    response["ETag"] = etag
    response["Cache-Control"] = "no-cache"
    return response


@require_GET
@_api
def api_requested(request: HttpRequest, slug: str) -> JsonResponse:
    """Per node, requested and allocatable as the scheduler counts them (the board's bars)."""
    return JsonResponse(services.node_requests(_api_cluster(slug)))


@csrf_exempt
async def api_action(request: HttpRequest, slug: str) -> JsonResponse:
    """POST one action (the same JSON the WebSocket takes; clusterviz/actions.py runs both).

    Not CSRF-protected (scripts and other tools call it), so it insists on a JSON content type: a
    cross-site HTML form cannot send one without a CORS preflight, which this server never grants.
    Rate limits are per client address and cluster, as the WebSocket's are per connection.
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
        body = b"x" * (actions.MAX_ACTION_BYTES + 1)
    if len(body) > actions.MAX_ACTION_BYTES:
        limit = actions.MAX_ACTION_BYTES
        too_large = f"request body too large ({len(body) / 1e6:.1f} MB > {limit / 2**20:g} MiB)"
        return _status(InputError(too_large), 413, "RequestEntityTooLarge")

    async def may_write() -> bool:
        return bool(await sync_to_async(_may_write)(request, cluster))

    limits = actions.limits_for(request.META.get("REMOTE_ADDR") or "", cluster.slug)
    viewer = await sync_to_async(request.session.get)(prediction.VIEWER_KEY)
    outcome = await actions.handle(
        cluster, body, may_write=may_write, limits=limits, component=COMPONENT, viewer=viewer
    )
    if not outcome.ok:
        response = _status(store.StoreError(outcome.message), outcome.code, outcome.reason)
        if outcome.code == 429:
            response["Retry-After"] = str(int(actions.WINDOW_SECONDS))
        return response
    return JsonResponse({"ok": True, **(outcome.result or {})})


@require_GET
@_api
def api_snapshot(request: HttpRequest, slug: str) -> HttpResponse:
    """Everything the scheduler reads, for `python -m scheduler_core explain --cluster`."""
    cluster = _api_cluster(slug)
    return _download(services.snapshot_yaml(cluster), f"{cluster.slug}-snapshot.yaml")


@require_GET
@_api
def api_export(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = _api_cluster(slug)
    return _download(services.export_yaml(cluster), f"{cluster.slug}.yaml")


def _download(text: str, filename: str, content_type: str = "application/yaml") -> HttpResponse:
    """A file to save (YAML unless `content_type` says otherwise)."""
    response = HttpResponse(text, content_type=content_type)
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


def _cycle_etag(request: HttpRequest, slug: str, number: int) -> str | None:
    pk = SchedulingCycle.objects.filter(cluster__slug=slug, number=number).values_list("pk", flat=True).first()
    return None if pk is None else f'"cycle-{pk}"'  # a kept cycle never changes


@require_GET
@gzip_page
@condition(etag_func=_cycle_etag)
@_api
def api_cycle(request: HttpRequest, slug: str, number: int) -> JsonResponse:
    """One kept cycle with its (compact) events, for replay; gzip-compressed, revalidated by ETag."""
    cycle = SchedulingCycle.objects.filter(cluster=_api_cluster(slug), number=number).first()
    if cycle is None:
        raise store.NotFound(f"cycle {number} not found (kept: the last {CYCLES_KEPT})")
    if not cycle_traces.resolve(cycle):  # a batched cycle's trace is stored lazily
        raise store.NotFound(
            f"cycle {number}'s trace was not kept: the process that ran it has not stored it yet, "
            "or stopped before it could"
        )
    response = JsonResponse(cycle.to_dict())
    response["Cache-Control"] = "no-cache"
    return response


@require_GET
@_api
def api_predictions(request: HttpRequest, slug: str) -> HttpResponse:
    """Every answer to the cluster's prediction questions as CSV (presenter only)."""
    cluster = _api_cluster(slug)
    if not _may_write(request, cluster):
        return _forbidden(cluster)
    return _download(prediction.csv_export(cluster), f"{cluster.slug}-predictions.csv", "text/csv; charset=utf-8")


@require_GET
@_api
def api_prediction(request: HttpRequest, slug: str) -> JsonResponse:
    """The latest class question as the stream sends it to this browser (its own answer; the tally
    for a presenter): what a board asks for when a stream message was lost."""
    cluster = _api_cluster(slug)
    viewer = request.session.get(prediction.VIEWER_KEY)
    return JsonResponse({"messages": prediction.messages_for(cluster, viewer, _may_write(request, cluster))})


@require_GET
@_api
def api_lesson(request: HttpRequest, slug: str) -> JsonResponse:
    """The cluster's lesson as the stream sends it to this browser (`lesson_view`: a presenter's
    look-ahead, or with `?role=follower` the class's view; no outcome before it is shown)."""
    cluster = _api_cluster(slug)
    presenter = _may_write(request, cluster) and request.GET.get("role") != "follower"
    return JsonResponse({"messages": lesson_messages(cluster, presenter)})


@require_GET
def api_lessons(request: HttpRequest) -> JsonResponse:
    """The lesson catalog: titles and one-line summaries, no step's text."""
    return JsonResponse({"lessons": [lesson.to_dict() for lesson in all_lessons().values()]})
