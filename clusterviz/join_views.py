"""`/join`: a student types the class's join code (and a nickname for the tally) and follows the class."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from scheduler_core.api.loading import InputError

from . import join_codes
from .models import Cluster

JOINED_KEY = "clusterviz.joined"  # the slugs this browser joined (the home page lists them)
NICKNAME_KEY = "clusterviz.nickname"
MAX_JOINED = 50


@require_http_methods(["GET", "POST"])
def join(request: HttpRequest) -> HttpResponse:
    """GET: the form (`?code=` fills it in). POST: join, or the form again with the located error."""
    if request.method == "GET":
        return _form(request, {"code": request.GET.get("code", "")[:40], "nickname": _nickname(request)})
    code, name = request.POST.get("code", ""), request.POST.get("nickname", "")
    try:
        nickname = join_codes.nickname(name)
        cluster = join_codes.find(code)
    except InputError as exc:
        status = (
            404 if isinstance(exc, join_codes.CodeNotFound) else 410 if isinstance(exc, join_codes.CodeExpired) else 400
        )
        return _form(request, {"code": code[:40], "nickname": name[:200], "error": str(exc)}, status)
    remember_joined(request.session, cluster)
    if nickname:
        request.session[NICKNAME_KEY] = nickname
    return HttpResponseRedirect(reverse("clusterviz-cluster", args=[cluster.slug]) + "?role=follower")


def remember_joined(session: Any, cluster: Cluster) -> None:
    """Remember that this browser follows the cluster (most recent first, at most MAX_JOINED)."""
    joined = [slug for slug in session.get(JOINED_KEY, []) if slug != cluster.slug]
    session[JOINED_KEY] = [cluster.slug, *joined][:MAX_JOINED]


def joined_slugs(session: Any) -> list[str]:
    return list(session.get(JOINED_KEY, []))


def _nickname(request: HttpRequest) -> str:
    return str(request.session.get(NICKNAME_KEY, ""))


def _form(request: HttpRequest, context: dict[str, Any], status: int = 200) -> HttpResponse:
    context["max_nickname"] = join_codes.MAX_NICKNAME
    return render(request, "clusterviz/join.html", context, status=status)
