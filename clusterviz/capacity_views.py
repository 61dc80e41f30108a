"""HTTP API of the capacity what-ifs (thin: `capacity_queries` does the work).

- `POST api/clusters/<slug>/capacity`  `{"query": "fit"|"drain"|"add", …}`: the report (anyone who
                                       may view the cluster: nothing changes)
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from . import actions, capacity_queries, store
from .profile_views import _json_body
from .views import _api, _api_cluster, _status


@csrf_exempt
@require_POST
@_api
def api_capacity(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = _api_cluster(slug)
    data = _json_body(request)
    limits = actions.limits_for(request.META.get("REMOTE_ADDR") or "", cluster.slug)
    if not limits.allow("explain"):
        return _status(store.StoreError("too many what-ifs: slow down"), 429, "TooManyRequests")
    return JsonResponse(capacity_queries.run_query(cluster, data))
