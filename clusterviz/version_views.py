"""HTTP API of the kube-scheduler version a cluster answers as (thin: scheduler_core.versions decides).

- `GET api/clusters/<slug>/version`  the version, its feature gates, the changes it carries
- `PUT api/clusters/<slug>/version`  `{"version": "1.36", "featureGates": "A=true"}` (owner only):
                                     validated, the stored profile checked against it, then every
                                     pending pod is tried again under it
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from scheduler_core.api.loading import InputError
from scheduler_core.versions import SUPPORTED, Version, get_version
from scheduler_core.versions.gates import known_at

from . import profiles
from .cluster_versions import set_version
from .profile_views import _json_body
from .views import _api, _api_cluster, _forbidden, _may_write


def describe(version: Version) -> dict[str, Any]:
    """The version as the board shows it: gates (default, stage, value), changes, what is not modelled."""
    gates = {
        name: {
            "default": spec.default,
            "stage": spec.stage.value or "GA",
            "locked": spec.locked,
            "enabled": version.gates.enabled(name),
        }
        for name, spec in sorted(known_at(version.minor).items())
    }
    return {
        "version": version.name,
        "gitVersion": version.git_version,
        "featureGates": version.gates.spec_text(),
        "supported": [f"1.{minor}" for minor in SUPPORTED],
        "gates": gates,
        "changes": [
            {"change": c.key, "since": f"1.{c.since}", "source": c.source, "summary": c.summary}
            for c in version.changes()
        ],
        "notModelled": version.unmodelled_gates(),
    }


def _requested(data: Any) -> Version:
    if not isinstance(data, dict) or not isinstance(data.get("version"), str):
        raise InputError('version: Required value: send {"version": "1.36", "featureGates": "A=true,B=false"}')
    gates = data.get("featureGates") or ""
    if not isinstance(gates, str):
        raise InputError('featureGates: must be a string such as "A=true,B=false"')
    return get_version(data["version"], gates, flag="version:", gates_flag="featureGates")


@csrf_exempt
@require_http_methods(["GET", "PUT"])
@_api
def api_version(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = _api_cluster(slug)
    if request.method == "GET":
        return JsonResponse(describe(profiles.version_of(cluster)))
    if not _may_write(request, cluster):
        return _forbidden(cluster)
    version = _requested(_json_body(request))
    set_version(cluster, version)
    return JsonResponse(describe(version))
