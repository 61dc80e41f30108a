"""Lessons: small clusters with narrated steps, from the seed notes (clusterviz/lessons/*.yaml)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from scheduler_core.api.loading import InputError

from . import services
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
    cluster.lesson = name
    cluster.lesson_step = 0
    cluster.save(update_fields=["lesson", "lesson_step"])
    return lesson


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
