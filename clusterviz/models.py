"""The persisted cluster: rooms, Kubernetes objects as JSON, the change log, scheduling cycles."""

from __future__ import annotations

import secrets
from datetime import UTC
from typing import Any

from django.db import models
from django.utils import timezone


def new_token() -> str:
    return secrets.token_urlsafe(24)


PACE_INSTANT = "instant"
PACE_SLOW = "slow"
PACE_PAUSED = "paused"
PACE_CHOICES = [(PACE_INSTANT, "instant"), (PACE_SLOW, "slow"), (PACE_PAUSED, "paused")]


class Cluster(models.Model):
    """One independent cluster ("room"), addressed by its slug."""

    slug = models.SlugField(max_length=64, unique=True)
    title = models.CharField(max_length=200, blank=True)
    resource_version = models.BigIntegerField(default=0)
    cycle = models.BigIntegerField(default=0)
    pace = models.CharField(max_length=16, choices=PACE_CHOICES, default=PACE_INSTANT)
    pace_delay_ms = models.PositiveIntegerField(default=800)
    lesson = models.CharField(max_length=64, blank=True)
    # A teacher's own lesson (an imported lesson file's YAML); empty: `lesson` names a built-in one.
    lesson_yaml = models.TextField(blank=True)
    lesson_step = models.PositiveIntegerField(default=0)
    # The presenter's last view (cycle, step, speed, what-if, selection, tab): late followers start there.
    presenter_view = models.JSONField(default=dict, blank=True)
    # The cluster's KubeSchedulerConfiguration (as JSON); empty: upstream's default profile.
    scheduler_config = models.JSONField(default=dict, blank=True)
    # The kube-scheduler version it answers as (scheduler_core/versions) and the feature gates set
    # on it, as `--feature-gates` spells them ("" : the version's defaults).
    kubernetes_version = models.CharField(max_length=16, default="1.34")
    feature_gates = models.CharField(max_length=2000, blank=True)
    # What an imported snapshot's kubelets suggested ({version, why, kubelets}), shown beside the
    # version until the owner chooses one; {} otherwise.
    version_hint = models.JSONField(default=dict, blank=True)
    # The secret of the edit link (and of the kubeconfig's bearer token): whoever holds it may write.
    owner_token = models.CharField(max_length=64, default=new_token)
    owner = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL)
    # The class's join code (clusterviz/join_codes.py): what students type at /join; "" until issued.
    join_code = models.CharField(max_length=8, blank=True, db_index=True)
    join_code_expires = models.FloatField(default=0.0)  # epoch seconds
    lease_owner = models.CharField(max_length=64, blank=True)
    lease_until = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)
    # When someone last opened it (its page, its stream, kubectl): clusterviz/retention.py removes the
    # clusters nobody opened for CLUSTERVIZ_RETENTION_DAYS.
    last_opened_at = models.DateTimeField(default=timezone.now, db_index=True)

    def __str__(self) -> str:
        return self.slug

    def created_rfc3339(self) -> str:
        """When it was created, as a creationTimestamp: the built-in objects it serves were made then."""
        return self.created_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def to_dict(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "title": self.title,
            "resourceVersion": str(self.resource_version),
            "pace": self.pace,
            "paceDelayMs": self.pace_delay_ms,
            "lesson": self.lesson,
            "lessonStep": self.lesson_step,
            "presenterView": self.presenter_view,
        }


class LessonRecording(models.Model):
    """A lesson being recorded on a cluster (clusterviz/lesson_recording.py): the objects it starts
    from, each action a teacher took (as a lesson step's `do` and kubectl command, with where the
    pods were after it) and the teacher's edits (texts, questions)."""

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, related_name="recording")
    active = models.BooleanField(default=True)
    started_at = models.DateTimeField(auto_now_add=True)
    objects_yaml = models.TextField(blank=True)  # the cluster when recording started (a lesson's objects)
    start_pods = models.JSONField(default=dict)  # "namespace/name" → where it was then (`placements`)
    pace = models.CharField(max_length=16, blank=True)
    profile_yaml = models.TextField(blank=True)
    steps = models.JSONField(default=list)  # [{id, do, command, pods (after it, once known)}]
    draft = models.JSONField(default=dict)  # the editor's texts: lesson fields and per-step texts


class KubeObject(models.Model):
    """A Kubernetes object of a cluster, stored as its JSON; pods also carry their queue state."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="kube_objects")
    kind = models.CharField(max_length=64)
    namespace = models.CharField(max_length=253, blank=True)
    name = models.CharField(max_length=253)
    uid = models.CharField(max_length=64)
    resource_version = models.BigIntegerField()
    body = models.JSONField()
    # pods only: where it is bound, its priority, and its scheduling-queue state —
    # "" (active), "unschedulable" (parked until a change could help) or "gated"
    node_name = models.CharField(max_length=253, blank=True)
    priority = models.IntegerField(default=0)
    queue_state = models.CharField(max_length=16, blank=True)
    queue_ts = models.FloatField(default=0.0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cluster", "kind", "namespace", "name"], name="unique_object_name"),
        ]
        # The scheduling queue's pods (kind, queue state, unbound) found from the index alone: filtering
        # them by the row's columns reads every object's body first (the columns follow it), 0.2 s a
        # scheduler step at 5,000 nodes.
        indexes = [
            models.Index(fields=["cluster", "kind"]),
            models.Index(fields=["cluster", "kind", "queue_state", "node_name"], name="kubeobject_queue"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


class Change(models.Model):
    """The watch log: every write, in resourceVersion order, for resuming watches."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="changes")
    resource_version = models.BigIntegerField()
    type = models.CharField(max_length=16)  # ADDED, MODIFIED, DELETED
    kind = models.CharField(max_length=64)
    namespace = models.CharField(max_length=253, blank=True)
    name = models.CharField(max_length=253)
    body = models.JSONField()
    component = models.CharField(max_length=64, blank=True)

    class Meta:
        indexes = [models.Index(fields=["cluster", "resource_version"])]

    def to_dict(self) -> dict[str, Any]:
        return {
            "event": self.type,
            "kind": self.kind,
            "object": self.body,
            "resourceVersion": str(self.resource_version),
            "component": self.component,
        }


class SchedulingCycle(models.Model):
    """One scheduling cycle's events, kept for replay."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="cycles")
    number = models.BigIntegerField()
    pod = models.CharField(max_length=512)
    scheduled = models.BooleanField(default=False)
    node = models.CharField(max_length=253, blank=True)
    message = models.TextField(blank=True)
    events = models.JSONField(default=list)
    resource_version = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "number"], name="unique_cycle_number")]

    def to_dict(self, with_events: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "cycle": self.number,
            "pod": self.pod,
            "scheduled": self.scheduled,
            "node": self.node or None,
            "message": self.message,
            "resourceVersion": str(self.resource_version),
        }
        if with_events:
            data["events"] = self.events
        return data


IMPORT_RUNNING = "running"
IMPORT_DONE = "done"
IMPORT_FAILED = "failed"
IMPORT_CANCELLED = "cancelled"
# The slug of an import's staging cluster starts so: "." is in no URL slug or DNS label, so it is never
# addressable, and the lists of clusters leave it out.
STAGING_PREFIX = "import."


class ImportJob(models.Model):
    """A cluster import (`clusterviz/imports.py`): its progress, and the hidden staging cluster it
    fills in batches until one short transaction moves everything into the target at once."""

    slug = models.CharField(max_length=64)  # the target cluster (created at the swap if it does not exist)
    staging = models.OneToOneField(
        Cluster, null=True, blank=True, on_delete=models.SET_NULL, related_name="staged_import"
    )
    source = models.CharField(max_length=256, blank=True)
    state = models.CharField(max_length=16, default=IMPORT_RUNNING)
    phase = models.CharField(max_length=16, default="reading")  # reading, storing, swapping
    total = models.IntegerField(default=0)  # objects in the dump (known once it is parsed)
    read = models.IntegerField(default=0)  # objects validated
    stored = models.IntegerField(default=0)  # objects written to the staging cluster
    skipped = models.JSONField(default=dict)  # kinds clusterviz does not model → how many were left out
    error = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    worker = models.CharField(max_length=64, blank=True)  # the process that runs it
    heartbeat = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.pk,
            "cluster": self.slug,
            "state": self.state,
            "phase": self.phase,
            "total": self.total,
            "read": self.read,
            "stored": self.stored,
            "skipped": self.skipped,
            "error": self.error,
        }


QUESTION_OPEN = "open"  # followers answer; the pod is held back from the scheduler
QUESTION_REVEALING = "revealing"  # released: the scheduler's next cycle of the pod settles it
QUESTION_REVEALED = "revealed"
QUESTION_CANCELLED = "cancelled"


class Question(models.Model):
    """A prediction question the presenter poses about a pending pod (`clusterviz/prediction.py`)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="questions")
    number = models.PositiveIntegerField()  # 1, 2, … per cluster
    text = models.CharField(max_length=300)
    pod = models.CharField(max_length=600)  # namespace/name
    ask = models.CharField(max_length=16)  # "node" (which node wins) or "schedules" (will it schedule)
    options = models.JSONField(default=list)  # the picks offered: node names and/or @scheduled, @pending
    state = models.CharField(max_length=16, default=QUESTION_OPEN)
    outcome = models.CharField(max_length=253, blank=True)  # the right pick, from the scheduler's cycle
    cycle = models.BigIntegerField(null=True, blank=True)
    nominated = models.CharField(max_length=253, blank=True)
    message = models.TextField(blank=True)
    posed_at = models.DateTimeField(auto_now_add=True)
    revealed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "number"], name="unique_question_number")]
        indexes = [models.Index(fields=["cluster", "state"])]


class Answer(models.Model):
    """One follower's pick; at most one per follower (their session's viewer id) and question."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="answers")
    viewer = models.CharField(max_length=64)
    name = models.CharField(max_length=64)
    pick = models.CharField(max_length=253)
    answered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["question", "viewer"], name="one_answer_per_viewer")]
