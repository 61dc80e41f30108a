"""HTTP API of recording a lesson (thin: `lesson_recording` and `lesson_export` do the work). Only
whoever may change the cluster records on it.

- `GET  api/clusters/<slug>/recording`         the recording as the editor shows it (`{"recording": null}`: none)
- `POST api/clusters/<slug>/recording`         `{"op": "start"|"stop"|"discard"}`
- `POST api/clusters/<slug>/recording/lesson`  `{"draft": {...}}`: keep the teacher's texts and answer the
                                               lesson file (`{"fileName", "yaml"}`), or a 400 Status naming
                                               the file's line and field and, in `details`, the step
- `GET  api/clusters/<slug>/recording/lesson.yaml`  that file, to save (the draft as kept)
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from scheduler_core.api.loading import InputError

from . import lesson_recording
from .kube_api.status import status_body
from .lesson_export import ExportError, export, parse_draft
from .lessons import TOPICS
from .models import LessonRecording
from .profile_views import _json_body
from .views import _api, _api_cluster, _download, _forbidden, _may_write

OPERATIONS = {"start": lesson_recording.start, "stop": lesson_recording.stop, "discard": lesson_recording.discard}


@csrf_exempt
@require_http_methods(["GET", "POST"])
@_api
def api_recording(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = _api_cluster(slug)
    if not _may_write(request, cluster):
        return _forbidden(cluster)
    if request.method == "POST":
        body = _json_body(request)
        op = body.get("op") if isinstance(body, dict) else None
        if op not in OPERATIONS:
            raise InputError(f'op: Unsupported value: {op!r}: supported values: "start", "stop", "discard"')
        OPERATIONS[op](cluster)
    topics = [{"key": key, "title": str(title)} for key, title in TOPICS.items()]
    return JsonResponse({"recording": lesson_recording.public_state(cluster), "topics": topics})


def _export_failed(error: ExportError) -> JsonResponse:
    """400 with the file's line and field, and the recorded step the editor marks (`details`)."""
    body = {**status_body(400, "Invalid", error.message), "details": {"step": error.step, "field": error.field}}
    return JsonResponse(body, status=400)


@csrf_exempt
@require_POST
@_api
def api_recorded_lesson(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = _api_cluster(slug)
    if not _may_write(request, cluster):
        return _forbidden(cluster)
    body = _json_body(request)
    draft = parse_draft(body.get("draft") if isinstance(body, dict) else None)
    recording = LessonRecording.objects.filter(cluster=cluster).first()
    if recording is not None:
        lesson_recording.save_draft(recording, draft.model_dump(exclude_defaults=True))
    try:
        file_name, text = export(cluster, draft)
    except ExportError as error:
        return _export_failed(error)
    return JsonResponse({"fileName": file_name, "yaml": text})


@require_GET
@_api
def api_recorded_lesson_file(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = _api_cluster(slug)
    if not _may_write(request, cluster):
        return _forbidden(cluster)
    recording = LessonRecording.objects.filter(cluster=cluster).first()
    try:
        file_name, text = export(cluster, parse_draft(recording.draft if recording else {}))
    except ExportError as error:
        return _export_failed(error)
    return _download(text, file_name)
