"""Lessons: small clusters with narrated steps, from the seed notes (clusterviz/lessons/*.yaml)."""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from scheduler_core.api.loading import InputError

from . import profiles, services, store
from .messages import parse_action, perform
from .models import Cluster

LESSONS_DIR = Path(__file__).parent / "lessons"


@dataclass(frozen=True)
class LessonStep:
    say: str
    command: str = ""
    action: dict[str, Any] | None = None


@dataclass(frozen=True)
class Lesson:
    name: str
    title: str
    summary: str
    objects: str
    steps: tuple[LessonStep, ...]
    expect: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "summary": self.summary,
            "steps": [{"say": s.say, "command": s.command} for s in self.steps],
        }


@lru_cache(maxsize=1)
def all_lessons() -> dict[str, Lesson]:
    lessons: dict[str, Lesson] = {}
    for path in sorted(LESSONS_DIR.glob("*.yaml")):
        raw = yaml.safe_load(path.read_text())
        steps = tuple(LessonStep(s["say"], s.get("command", ""), s.get("do")) for s in raw.get("steps", []))
        lessons[raw["name"]] = Lesson(
            raw["name"], raw["title"], raw.get("summary", ""), raw.get("objects", ""), steps, raw.get("expect") or {}
        )
    return lessons


def get_lesson(name: str) -> Lesson:
    lesson = all_lessons().get(name)
    if lesson is None:
        known = ", ".join(all_lessons())
        raise InputError(f'lesson "{name}" not found (known: {known})')
    return lesson


def load_lesson(cluster: Cluster, name: str) -> Lesson:
    """Put a lesson's starting objects into an empty cluster."""
    lesson = get_lesson(name)
    if lesson.objects.strip():
        services.create_from_yaml(cluster, lesson.objects, "kubectl", source=f"lesson {name}")
    profiles.store(cluster, lesson_profile(name))
    cluster.lesson = name
    cluster.lesson_step = 0
    cluster.save(update_fields=["lesson", "lesson_step"])
    return lesson


def lesson_profile(name: str) -> dict[str, Any]:
    """A lesson's `profile:` (the KubeSchedulerConfiguration its cluster runs, validated as the
    editor's); {} (upstream's default profile) when it has none."""
    text = yaml.safe_load((LESSONS_DIR / f"{name}.yaml").read_text()).get("profile")
    return profiles.parse({"yaml": text}) if text else {}


def play_step(cluster: Cluster) -> LessonStep | None:
    """Carry out the lesson's next step (as kubectl would); None when the lesson is over."""
    lesson = get_lesson(cluster.lesson)
    if cluster.lesson_step >= len(lesson.steps):
        return None
    step = lesson.steps[cluster.lesson_step]
    if step.action is not None:
        perform(cluster, parse_action(step.action), "kubectl")
    cluster.lesson_step += 1
    cluster.save(update_fields=["lesson_step"])
    return step


# --- expectations: what a lesson's end state (or a step's) must look like ---------------------------

EXPECT_KEYS = ("pods", "absent_pods", "events", "no_events", "deployments", "running_on", "pending_count")
POD_FIELDS = ("node", "phase", "pending", "message", "nominatedNode", "reason")
EVENT_FIELDS = ("object", "reason", "message", "message_glob", "count", "type")


@lru_cache(maxsize=1)
def _raw_steps() -> dict[str, tuple[dict[str, Any], ...]]:
    out: dict[str, tuple[dict[str, Any], ...]] = {}
    for path in sorted(LESSONS_DIR.glob("*.yaml")):
        raw = yaml.safe_load(path.read_text())
        out[raw["name"]] = tuple(raw.get("steps") or ())
    return out


def step_expectations(name: str) -> tuple[dict[str, Any], ...]:
    """Each step's own `expect` block ({} when it has none), in step order."""
    get_lesson(name)
    return tuple(step.get("expect") or {} for step in _raw_steps()[name])


def step_waits(name: str) -> tuple[float, ...]:
    """Each step's `wait`: seconds the class lets pass after the step (0 when none)."""
    get_lesson(name)
    return tuple(float(step.get("wait") or 0) for step in _raw_steps()[name])


def _pod_key(body: dict[str, Any]) -> str:
    meta = body["metadata"]
    return f"{meta.get('namespace') or 'default'}/{meta['name']}"


def _matching(pattern: str, keys: list[str]) -> list[str]:
    if any(ch in pattern for ch in "*?["):
        return [k for k in keys if fnmatchcase(k, pattern)]
    return [pattern] if pattern in keys else []


def _scheduled_condition(body: dict[str, Any]) -> dict[str, Any]:
    return next((c for c in body.get("status", {}).get("conditions", []) if c.get("type") == "PodScheduled"), {})


def _check_pod(key: str, body: dict[str, Any], want: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    unknown = set(want) - set(POD_FIELDS)
    if unknown:
        return [f"pod {key}: unknown expectation(s) {sorted(unknown)}"]
    node = body["spec"].get("nodeName") or None
    status = body.get("status", {})
    condition = _scheduled_condition(body)
    if "node" in want:
        allowed = want["node"] if isinstance(want["node"], list) else [want["node"]]
        if node not in allowed:
            problems.append(f"pod {key}: on node {node!r}, expected {' or '.join(map(repr, allowed))}")
    if "phase" in want and status.get("phase") != want["phase"]:
        problems.append(f"pod {key}: phase {status.get('phase')!r}, expected {want['phase']!r}")
    if "pending" in want:
        pending = node is None
        if pending != bool(want["pending"]):
            problems.append(f"pod {key}: {'unscheduled' if pending else f'bound to {node}'}, expected the opposite")
    if "message" in want and condition.get("message") != want["message"]:
        problems.append(f"pod {key}: PodScheduled message {condition.get('message')!r}, expected {want['message']!r}")
    if "reason" in want and condition.get("reason") != want["reason"]:
        problems.append(f"pod {key}: PodScheduled reason {condition.get('reason')!r}, expected {want['reason']!r}")
    if "nominatedNode" in want:
        nominated = status.get("nominatedNodeName")
        allowed = want["nominatedNode"] if isinstance(want["nominatedNode"], list) else [want["nominatedNode"]]
        if nominated not in allowed:
            problems.append(f"pod {key}: nominatedNodeName {nominated!r}, expected {' or '.join(map(repr, allowed))}")
    return problems


def _event_matches(event: dict[str, Any], keys: set[str], want: dict[str, Any]) -> bool:
    involved = event.get("involvedObject", {})
    if f"{involved.get('namespace') or 'default'}/{involved.get('name')}" not in keys:
        return False
    if event.get("reason") != want.get("reason"):
        return False
    if "message" in want and event.get("message") != want["message"]:
        return False
    if "message_glob" in want and not fnmatchcase(event.get("message", ""), want["message_glob"]):
        return False
    if "type" in want and event.get("type") != want["type"]:
        return False
    return "count" not in want or int(event.get("count", 1)) == int(want["count"])


def _event_objects(pattern: str, events: list[dict[str, Any]]) -> set[str]:
    names = sorted(
        {f"{e['involvedObject'].get('namespace') or 'default'}/{e['involvedObject'].get('name')}" for e in events}
    )
    return set(_matching(pattern, names))


def check(cluster: Cluster, expect: dict[str, Any]) -> list[str]:
    """Every way the cluster differs from an `expect` block; [] when it matches.

    Keys (object names are "namespace/name"; `*`, `?` and `[...]` globs are allowed where noted):
    - `pods` {name (glob): {node (name or list), phase, pending (bool: unbound), message and reason
      (of the PodScheduled condition), nominatedNode (name, list or null)}}; every match must fit;
    - `absent_pods` [name (glob)];
    - `events` [{object (glob), reason, message?, message_glob?, count?, type?}]: some event of a
      matching object has all of these; `no_events` [{object (glob), reason}]: none has that reason;
    - `deployments` {name: {status field: value}}, e.g. readyReplicas;
    - `running_on` {node: number of Running pods bound there}; `pending_count`: unbound pods.
    """
    problems = [f"unknown expectation {key!r}" for key in expect if key not in EXPECT_KEYS]
    pods = {_pod_key(body): body for body in store.list_objects(cluster, "Pod")}
    keys = sorted(pods)
    for pattern, want in (expect.get("pods") or {}).items():
        matched = _matching(pattern, keys)
        if not matched:
            problems.append(f"pod {pattern}: not found")
        for key in matched:
            problems.extend(_check_pod(key, pods[key], want or {}))
    for key in expect.get("absent_pods") or []:
        if _matching(key, keys):
            problems.append(f"pod {key}: still exists, expected it gone")
    events = store.list_objects(cluster, "Event")
    for want in expect.get("events") or []:
        unknown = set(want) - set(EVENT_FIELDS)
        if unknown:
            problems.append(f"event {want}: unknown field(s) {sorted(unknown)}")
            continue
        objects = _event_objects(want["object"], events)
        if not any(_event_matches(event, objects, want) for event in events):
            seen = sorted(
                f"{e['message']} (x{e.get('count', 1)}, {e.get('type')})"
                for e in events
                if _event_matches(e, objects, {"reason": want["reason"]})
            )
            problems.append(f"event {want}: not recorded ({want['reason']} events of {want['object']}: {seen})")
    for want in expect.get("no_events") or []:
        objects = _event_objects(want["object"], events)
        found = [e for e in events if _event_matches(e, objects, {"reason": want["reason"]})]
        if found:
            problems.append(f"event {want['reason']} of {want['object']}: recorded ({found[0].get('message')!r})")
    for key, want in (expect.get("deployments") or {}).items():
        namespace, _, name = key.rpartition("/")
        try:
            body = store.get(cluster, "Deployment", namespace or "default", name)
        except store.NotFound:
            problems.append(f"deployment {key}: not found")
            continue
        status = body.get("status", {})
        for field_name, value in (want or {}).items():
            if status.get(field_name, 0) != value:
                problems.append(f"deployment {key}: status.{field_name} {status.get(field_name, 0)}, expected {value}")
    if "running_on" in expect:
        counts: dict[str, int] = {}
        for body in pods.values():
            node = body["spec"].get("nodeName")
            if node and body.get("status", {}).get("phase") == "Running":
                counts[node] = counts.get(node, 0) + 1
        for node, want_count in (expect.get("running_on") or {}).items():
            if counts.get(node, 0) != want_count:
                problems.append(f"node {node}: {counts.get(node, 0)} Running pod(s), expected {want_count}")
    if "pending_count" in expect:
        pending = [key for key, body in pods.items() if not body["spec"].get("nodeName")]
        if len(pending) != expect["pending_count"]:
            problems.append(f"{len(pending)} unscheduled pod(s) {pending}, expected {expect['pending_count']}")
    return problems


def check_expectations(cluster: Cluster, lesson: Lesson) -> list[str]:
    """How the cluster's state differs from the lesson's `expect` block; [] when it matches."""
    return check(cluster, lesson.expect)
