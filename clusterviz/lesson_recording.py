"""Recording a lesson: what a cluster holds when the teacher starts (the lesson's objects), then
every change a teacher makes through a door — a board drag, pasted YAML, a kubectl command — as a
step, with where the pods were once it had done its work (taken when the next step starts, or when
recording stops). Controllers' writes are consequences, not steps; imports are not recorded.

The editor (views/recorder.js) reads `public_state`; `lesson_export` turns the recording and the
teacher's texts into a lesson file."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import yaml
from django.db import transaction

from scheduler_core.api.loading import InputError

from . import recorded_steps, store
from .controllers.owners import controller_of, is_terminating
from .models import PACE_INSTANT, PACE_SLOW, Cluster, KubeObject, LessonRecording
from .prediction import presenters_group
from .publish import publish
from .recorded_steps import Recorded

__all__ = [
    "MAX_NODES",
    "MAX_PODS",
    "MAX_STEPS",
    "Walked",
    "active",
    "placements",
    "public_state",
    "start",
    "step",
    "stop",
    "walk",
]

Obj = dict[str, Any]
Placements = tuple[dict[str, str], dict[str, str]]  # "ns/name" → node ("" Pending); Pending → message

# A lesson is a small cluster a class can follow: larger ones are refused (their objects would make
# a lesson file of megabytes and each step's placements a large row).
MAX_NODES = 200
MAX_PODS = 2_000
MAX_STEPS = 200

# The kinds a lesson's objects hold, in the order they are created (what a pod refers to first).
STARTING_KINDS = (
    "PriorityClass",
    "Namespace",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "DeviceClass",
    "ResourceSlice",
    "ResourceClaimTemplate",
    "ResourceClaim",
    "Node",
    "ConfigMap",
    "Secret",
    "ServiceAccount",
    "LimitRange",
    "ResourceQuota",
    "Service",
    "PodDisruptionBudget",
    "Deployment",
    "ReplicaSet",
    "DaemonSet",
    "StatefulSet",
    "Job",
    "Pod",
)
BUILT_IN_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def active(cluster: Cluster) -> LessonRecording | None:
    return LessonRecording.objects.filter(cluster=cluster, active=True).first()


def _scheduled_message(body: Obj) -> str:
    for condition in (body.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return str(condition.get("message") or "")
    return ""


def placements(cluster: Cluster) -> Placements:
    """Where every pod is now ("" while Pending) and the Pending pods' scheduling messages; pods
    on their way out (Terminating) are left out."""
    pods: dict[str, str] = {}
    messages: dict[str, str] = {}
    for row in KubeObject.objects.filter(cluster=cluster, kind="Pod").only("namespace", "name", "node_name", "body"):
        if is_terminating(row.body):
            continue
        key = f"{row.namespace or 'default'}/{row.name}"
        pods[key] = row.node_name or (row.body.get("spec") or {}).get("nodeName") or ""
        if not pods[key]:
            messages[key] = _scheduled_message(row.body)
    return pods, messages


def starting_objects(cluster: Cluster) -> list[Obj]:
    """The objects a replay starts from: what a teacher made, not what controllers made from it."""
    out: list[Obj] = []
    for kind in STARTING_KINDS:
        for body in store.list_objects(cluster, kind):
            meta = body["metadata"]
            if controller_of(body) is not None or meta.get("deletionTimestamp"):
                continue
            if kind == "Namespace" and meta.get("name") in BUILT_IN_NAMESPACES:
                continue
            out.append(body)
    return out


def _check_size(cluster: Cluster) -> None:
    nodes = KubeObject.objects.filter(cluster=cluster, kind="Node").count()
    pods = KubeObject.objects.filter(cluster=cluster, kind="Pod").count()
    if nodes > MAX_NODES or pods > MAX_PODS:
        raise InputError(
            f"recording: this cluster has {nodes} nodes and {pods} pods; a lesson is recorded on a cluster of at "
            f"most {MAX_NODES} nodes and {MAX_PODS} pods"
        )


def start(cluster: Cluster) -> LessonRecording:
    """Start recording from the cluster as it is (a previous recording of it is replaced)."""
    _check_size(cluster)
    pods, _messages = placements(cluster)
    config = cluster.scheduler_config or {}
    with transaction.atomic():
        LessonRecording.objects.filter(cluster=cluster).delete()
        recording = LessonRecording.objects.create(
            cluster=cluster,
            objects_yaml=recorded_steps.manifest(starting_objects(cluster)),
            start_pods=pods,
            pace=cluster.pace if cluster.pace in (PACE_INSTANT, PACE_SLOW) else "",
            profile_yaml=yaml.safe_dump(config, sort_keys=False) if config else "",
        )
    _announce(cluster)
    return recording


def stop(cluster: Cluster) -> LessonRecording:
    """Stop recording: the last step's outcome is the cluster now."""
    with transaction.atomic():
        recording = LessonRecording.objects.select_for_update().filter(cluster=cluster).first()
        if recording is None:
            raise InputError("recording: this cluster is not being recorded")
        if recording.active:
            _settle_last(recording, placements(cluster))
            recording.active = False
            recording.save(update_fields=["active", "steps"])
    _announce(cluster)
    return recording


def discard(cluster: Cluster) -> None:
    LessonRecording.objects.filter(cluster=cluster).delete()
    _announce(cluster)


def save_draft(recording: LessonRecording, draft: Obj) -> None:
    recording.draft = draft
    recording.save(update_fields=["draft"])


def _settle_last(recording: LessonRecording, now: Placements) -> None:
    """The last step's outcome is `now` (taken before the next step changes anything)."""
    if recording.steps:
        recording.steps[-1]["pods"], recording.steps[-1]["messages"] = now


class StepRecorder:
    """Around one door's write (`step`): `active` when the cluster is being recorded; `record` makes
    the write the next step, with the placements from before it as the previous step's outcome."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.active = LessonRecording.objects.filter(cluster=cluster, active=True).exists()
        self.before = placements(cluster) if self.active else ({}, {})

    def record(self, recorded: Recorded | None) -> None:
        if self.active and recorded is not None:
            _append(self.cluster, self.before, recorded)


@contextmanager
def step(cluster: Cluster) -> Iterator[StepRecorder]:
    """`with step(cluster) as recorder: <write>; recorder.record(Recorded(...))` (nothing is recorded
    when the write fails)."""
    yield StepRecorder(cluster)


def _append(cluster: Cluster, before: Placements, recorded: Recorded) -> None:
    with transaction.atomic():
        recording = LessonRecording.objects.select_for_update().filter(cluster=cluster, active=True).first()
        if recording is None:
            return
        if len(recording.steps) >= MAX_STEPS:
            raise InputError(f"recording: a lesson has at most {MAX_STEPS} steps; stop recording to export it")
        _settle_last(recording, before)
        number = max((entry["id"] for entry in recording.steps), default=0) + 1
        recording.steps.append({"id": number, "do": recorded.do, "command": recorded.command})
        recording.save(update_fields=["steps"])
    _announce(cluster)


def _announce(cluster: Cluster) -> None:
    """The presenters' editors fetch the recording again (it travels over HTTP, not the stream)."""
    publish(cluster.pk, {"type": "recording.changed"}, group=presenters_group(cluster.pk))


@dataclass(frozen=True)
class Walked:
    """A recorded step with where the pods were before and after it (and the Pending ones' messages),
    and the texts it starts with."""

    entry: Obj
    before: dict[str, str]
    after: dict[str, str]
    messages: dict[str, str]

    def say(self) -> str:
        return recorded_steps.describe(self.entry["do"])

    def outcome(self, named: set[str]) -> str:
        return recorded_steps.outcome(self.before, self.after, self.messages, named)


def walk(cluster: Cluster, recording: LessonRecording) -> list[Walked]:
    """The recorded steps in order; the last one's outcome, while still recording, is the cluster now."""
    now = placements(cluster) if recording.active else ({}, {})
    before: dict[str, str] = recording.start_pods
    out: list[Walked] = []
    for entry in recording.steps:
        after, messages = (entry["pods"], entry.get("messages") or {}) if "pods" in entry else now
        out.append(Walked(entry, before, after, messages))
        before = after
    return out


def named_pods(recording: LessonRecording) -> set[str]:
    """The pods a lesson names (in its objects or a step's YAML): a controller's pods get random
    names, which no lesson can expect or ask about."""
    texts = [recording.objects_yaml, *(str(entry["do"].get("yaml", "")) for entry in recording.steps)]
    return {key for text in texts for kind, key in recorded_steps.created_objects(text) if kind == "Pod"}


def public_state(cluster: Cluster) -> Obj | None:
    """What the editor shows: each step's command, its first texts and the pods a question may be
    about (those it creates, else those there before it), and the teacher's draft."""
    recording = LessonRecording.objects.filter(cluster=cluster).first()
    if recording is None:
        return None
    named = named_pods(recording)
    steps = []
    for step in walk(cluster, recording):
        entry = step.entry
        created = [key for kind, key in recorded_steps.created(entry["do"]) if kind == "Pod"]
        steps.append(
            {
                "id": entry["id"],
                "do": entry["do"].get("action"),
                "command": entry["command"],
                "say": step.say(),
                "after": step.outcome(named),
                "pods": created or sorted(key for key in step.before if key in named),
            }
        )
    return {
        "active": recording.active,
        "startedAt": recording.started_at.isoformat(),
        "objects": len(recorded_steps.objects_of(recording.objects_yaml)),
        "steps": steps,
        "draft": recording.draft,
        "maxSteps": MAX_STEPS,
    }
