"""HTTP API of a cluster's scheduler configuration and of Compare (thin: `profiles` does the work).

- `GET  api/clusters/<slug>/profile`          the stored config, its YAML and the editor's forms
- `PUT  api/clusters/<slug>/profile`          store `{"yaml"}` or `{"config"}` (owner only; validated first)
- `POST api/clusters/<slug>/profile/check`    validate and describe, storing nothing (anyone)
- `GET  api/clusters/<slug>/profile.yaml`     download the stored config as kube-scheduler's `--config`
- `POST api/clusters/<slug>/compare`          `{"pod": yaml, "a": {...}|null, "b": {...}|null}`: the pod
                                              explained under two configs (null: the stored one)
"""

from __future__ import annotations

from typing import Any

import yaml
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from scheduler_core.api.loading import InputError
from scheduler_core.framework.profile import Profile
from scheduler_core.versions import Version

from . import actions, profiles, scheduling_queue, store
from .publish import publish
from .views import _api, _api_cluster, _download, _forbidden, _may_write, _status


def _json_body(request: HttpRequest) -> Any:
    """The JSON body (a JSON content type only: no cross-site form can send one without a preflight)."""
    if request.content_type != "application/json":
        raise InputError(f'Content-Type: must be "application/json", not "{request.content_type}"')
    return actions.decode(request.body)


@csrf_exempt
@require_http_methods(["GET", "PUT"])
@_api
def api_profile(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = _api_cluster(slug)
    stored, version = profiles.settings_of(cluster)
    if request.method == "GET":
        return JsonResponse(profiles.describe(stored, version))
    if not _may_write(request, cluster):
        return _forbidden(cluster)
    config = profiles.parse(_json_body(request), version)
    profiles.store(cluster, config)
    # As a restarted kube-scheduler: every parked pod is tried again under the new profiles.
    scheduling_queue._requeue_all(cluster)
    publish(cluster.pk, {"type": "profile.updated"})  # browsers reload it; the cluster's runner wakes
    return JsonResponse(profiles.describe(config, version))


@csrf_exempt
@require_POST
@_api
def api_profile_check(request: HttpRequest, slug: str) -> HttpResponse:
    version = profiles.version_of(_api_cluster(slug))
    return JsonResponse(profiles.describe(profiles.parse(_json_body(request), version), version))


@require_GET
@_api
def api_profile_yaml(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = _api_cluster(slug)
    return _download(profiles.to_yaml(profiles.config_of(cluster)), f"{cluster.slug}-scheduler-config.yaml")


def _side(stored: dict[str, Any], raw: Any, pod_scheduler: str, version: Version) -> Profile:
    """One side of a compare: null (the stored profile the pod's schedulerName names),
    `{"schedulerName": name}` (a stored profile), or a whole config (`{"yaml"}` / `{"config"}`)."""
    if isinstance(raw, dict) and set(raw) == {"schedulerName"}:
        profile = profiles.profile_for(stored, raw["schedulerName"], fallback=False, version=version)
        if profile is None:
            known = ", ".join(f'"{name}"' for name in profiles.profiles_of(stored, version))
            raise InputError(f'schedulerName: Not found: "{raw["schedulerName"]}" (the profiles: {known})')
        return profile
    config = stored if raw is None else profiles.parse(raw, version)
    found = profiles.profile_for(config, pod_scheduler, version=version)
    assert found is not None
    return found


@csrf_exempt
@require_POST
@_api
def api_compare(request: HttpRequest, slug: str) -> HttpResponse:
    """Both explanations come from the core, on the scheduler's own view of the cluster."""
    cluster = _api_cluster(slug)
    data = _json_body(request)
    if not isinstance(data, dict) or not isinstance(data.get("pod"), str):
        raise InputError('pod: Required value: send {"pod": "<pod YAML>", "a": ..., "b": ...}')
    limits = actions.limits_for(request.META.get("REMOTE_ADDR") or "", cluster.slug)
    if not limits.allow("explain"):
        return _status(store.StoreError("too many compare actions: slow down"), 429, "TooManyRequests")
    stored, version = profiles.settings_of(cluster)
    pod_scheduler = _scheduler_name(data["pod"])
    sides: dict[str, Profile] = {}
    for side in ("a", "b"):
        try:
            sides[side] = _side(stored, data.get(side), pod_scheduler, version)
        except InputError as exc:
            raise InputError(f"{side}: {exc}") from None
    seed = data.get("seed") or 0
    if not isinstance(seed, int):
        raise InputError("seed: must be an integer")
    return JsonResponse(profiles.compare(cluster, data["pod"], sides, seed))


def _scheduler_name(text: str) -> str:
    """The pod's schedulerName, read leniently (the pod is validated, located, when explained)."""
    try:
        body = yaml.safe_load(text)
        spec = body.get("spec") if isinstance(body, dict) else None
        name = spec.get("schedulerName") if isinstance(spec, dict) else None
    except yaml.YAMLError:
        name = None
    return name if isinstance(name, str) and name else "default-scheduler"
