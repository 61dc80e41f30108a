"""HTTP for background imports: start one (owner only), follow its progress, cancel it.

`POST /api/clusters/<slug>/imports` takes the dump as the request body (JSON or YAML, any size up
to `CLUSTERVIZ_IMPORT_MAX_BYTES`; copied into a temporary file for the import's worker process) and
answers 202 with the job; `GET …/imports/<id>` is its progress
(objects read / stored) and outcome; `POST …/imports/<id>/cancel` stops it, leaving nothing behind.
Like the actions endpoint these are not CSRF-protected (scripts call them), so they refuse the
content types an HTML form can send cross-site.
"""

from __future__ import annotations

import tempfile

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from scheduler_core.api.loading import InputError

from . import imports, store
from .models import ImportJob
from .views import _api, _api_cluster, _forbidden, _may_write, _status

FORM_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded", "text/plain")
READ_CHUNK = 1 << 20


def _job(slug: str, number: int) -> ImportJob:
    imports.recover_interrupted()
    job = ImportJob.objects.filter(pk=number, slug=slug).first()
    if job is None:
        raise store.NotFound(f"import {number} not found")
    return job


def _progress_url(job: ImportJob) -> str:
    return reverse("clusterviz-import-job", args=[job.slug, job.pk])


@csrf_exempt
@require_POST
@_api
def start_import(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = _api_cluster(slug)
    if not _may_write(request, cluster):
        return _forbidden(cluster)
    if request.content_type in FORM_TYPES:
        error = InputError(
            f'Content-Type: send the dump as the body ("application/json" or "application/yaml"), '
            f'not "{request.content_type}"'
        )
        return _status(error, 415, "UnsupportedMediaType")
    limit = imports.max_bytes()
    declared = request.META.get("CONTENT_LENGTH") or "0"
    too_large = InputError(f"snapshot: larger than {limit // 2**20} MiB (CLUSTERVIZ_IMPORT_MAX_BYTES)")
    if declared.isdigit() and int(declared) > limit:
        return _status(too_large, 413, "RequestEntityTooLarge")
    with tempfile.TemporaryFile(prefix="clusterviz-import-") as dump:  # the worker process reads it
        size = 0
        while chunk := request.read(READ_CHUNK):
            size += len(chunk)
            if size > limit:
                return _status(too_large, 413, "RequestEntityTooLarge")
            dump.write(chunk)
        job = imports.new_job(cluster.slug, request.headers.get("X-Filename") or "snapshot")
        imports.start(job, dump)
    job.refresh_from_db()
    return JsonResponse({"import": job.to_dict(), "url": _progress_url(job)}, status=202)


@require_GET
@_api
def import_job(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    return JsonResponse({"import": _job(slug, number).to_dict()})


@csrf_exempt
@require_POST
@_api
def cancel_import(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    cluster = _api_cluster(slug)
    if not _may_write(request, cluster):
        return _forbidden(cluster)
    if request.content_type in FORM_TYPES:
        return _status(InputError("Content-Type: must be application/json"), 415, "UnsupportedMediaType")
    return JsonResponse({"import": imports.cancel(_job(slug, number)).to_dict()})
