"""Classroom views: fork a cluster into a private copy; the recent cycles."""

from __future__ import annotations

import secrets

from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from . import access, services
from .models import QUESTION_OPEN, QUESTION_REVEALING, Cluster, Question, SchedulingCycle

RECENT_CYCLES = 30


def fork_cluster(source: Cluster) -> Cluster:
    """A copy of a cluster's objects (as `export_scenario` writes them) under a new slug."""
    base = source.slug[:50]
    with transaction.atomic():
        for _ in range(20):
            slug = f"{base}-{secrets.token_hex(3)}"
            if not Cluster.objects.filter(slug=slug).exists():
                break
        copy = services.create_cluster(slug, f"fork of {source.slug}")
        copy.lesson, copy.lesson_yaml, copy.lesson_step = source.lesson, source.lesson_yaml, source.lesson_step
        copy.save(update_fields=["lesson", "lesson_yaml", "lesson_step"])
        services.import_snapshot(copy, services.export_yaml(source), "kubectl", source=f"fork of {source.slug}")
        _copy_live_questions(source, copy)
    return copy


def _copy_live_questions(source: Cluster, copy: Cluster) -> None:
    """A question still unanswered in the source stays open in the copy (its pod held there too): a
    fork made during a question does not show the step's outcome before its owner reveals it."""
    live = Question.objects.filter(cluster=source, state__in=(QUESTION_OPEN, QUESTION_REVEALING))
    for question in live.order_by("number"):
        Question.objects.create(
            cluster=copy,
            number=question.number,
            text=question.text,
            pod=question.pod,
            ask=question.ask,
            options=question.options,
        )


@require_POST
def fork(request: HttpRequest, slug: str) -> HttpResponse:
    source = Cluster.objects.filter(slug=slug).first()
    if source is None:
        raise Http404(f'cluster "{slug}" not found')
    copy = fork_cluster(source)
    access.grant(request.session, copy)  # a fork belongs to whoever made it
    return HttpResponseRedirect(reverse("clusterviz-cluster", args=[copy.slug]))


@require_GET
def recent_cycles(request: HttpRequest, slug: str) -> JsonResponse:
    """The latest cycles (summaries; `cycles/<n>` has each one's events), oldest first."""
    cluster = Cluster.objects.filter(slug=slug).first()
    if cluster is None:
        raise Http404(f'cluster "{slug}" not found')
    cycles = SchedulingCycle.objects.filter(cluster=cluster).order_by("-number")[:RECENT_CYCLES]
    return JsonResponse({"cycles": [c.to_dict(with_events=False) for c in reversed(cycles)]})
