"""A recorded lesson as a lesson file: the recording's objects and steps, the teacher's texts and
questions (the draft), and each step's `expect` from where the pods went — validated as the
built-in lessons are (lessons.parse_lesson), so that a file this writes loads and replays."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scheduler_core.api.loading import InputError

from . import lesson_recording
from .lessons import parse_lesson
from .models import Cluster, LessonRecording

__all__ = ["Draft", "ExportError", "export", "parse_draft"]

Obj = dict[str, Any]
MAX_TEXT = 4_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DraftQuestion(_Strict):
    question: str = Field(max_length=MAX_TEXT)
    pod: str = Field(max_length=600)
    ask: str = Field(max_length=16)


class DraftStep(_Strict):
    """The teacher's texts for one recorded step (None: the recorded default)."""

    say: str | None = Field(default=None, max_length=MAX_TEXT)
    after: str | None = Field(default=None, max_length=MAX_TEXT)
    command: str | None = Field(default=None, max_length=1_000)
    wait: float = 0
    predict: DraftQuestion | None = None


class Draft(_Strict):
    name: str = Field(default="", max_length=64)
    title: str = Field(default="", max_length=200)
    summary: str = Field(default="", max_length=400)
    topic: str = Field(default="", max_length=64)
    steps: dict[str, DraftStep] = Field(default_factory=dict)  # by recorded step id


def parse_draft(data: Any) -> Draft:
    """The editor's draft, or InputError naming the field (`draft.steps.3.say: …`)."""
    try:
        return Draft.model_validate(data if data is not None else {})
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = ".".join(str(part) for part in ("draft", *error["loc"]))
        raise InputError(f"{loc}: {error['msg']}") from None


@dataclass
class ExportError(Exception):
    """A lesson file that does not validate: the message (file, line, field) and, where it is a
    step's, which recorded step and field the editor marks."""

    message: str
    step: int | None = None
    field: str | None = None

    def __str__(self) -> str:
        return self.message


class _LessonDumper(yaml.SafeDumper):
    """Multi-line texts (a step's YAML, the objects) as literal blocks, as a person writes them."""


def _text(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data else None)


_LessonDumper.add_representer(str, _text)


def _placed(pods: dict[str, str], keys: set[str]) -> Obj:
    return {key: ({"node": pods[key]} if pods[key] else {"pending": True}) for key in sorted(keys) if key in pods}


def _step_expect(named: set[str], before: dict[str, str], after: dict[str, str], asked: str | None) -> Obj:
    """Where the named pods this step moved (created, scheduled, removed) and its question's pod went."""
    moved = {key for key in named if key in after and before.get(key) != after[key]}
    if asked:
        moved.add(asked)
    expect: Obj = {}
    if pods := _placed(after, moved):
        expect["pods"] = pods
    if gone := sorted(key for key in named if key in before and key not in after):
        expect["absent_pods"] = gone
    return expect


def _default_name(cluster: Cluster) -> str:
    name = re.sub(r"[^a-z0-9-]+", "-", cluster.slug.lower()).strip("-")[:60].strip("-")
    return name or "recorded-lesson"


def build(cluster: Cluster, recording: LessonRecording, draft: Draft) -> Obj:
    """The lesson file's data (not yet validated)."""
    named = lesson_recording.named_pods(recording)
    walked = lesson_recording.walk(cluster, recording)
    steps: list[Obj] = []
    for recorded in walked:
        entry = recorded.entry
        edit = draft.steps.get(str(entry["id"])) or DraftStep()
        step: Obj = {
            "say": edit.say if edit.say is not None else recorded.say(),
            "command": edit.command if edit.command is not None else entry["command"],
        }
        if edit.predict is not None:
            step["predict"] = edit.predict.model_dump()
        step["do"] = entry["do"]
        step["after"] = edit.after if edit.after is not None else recorded.outcome(named)
        if edit.wait:
            step["wait"] = edit.wait
        asked = edit.predict.pod if edit.predict else None
        expect = _step_expect(named, recorded.before, recorded.after, asked)
        if expect:
            step["expect"] = expect
        steps.append(step)
    final = walked[-1].after if walked else recording.start_pods
    lesson: Obj = {
        "name": draft.name or _default_name(cluster),
        "title": draft.title or cluster.title or cluster.slug,
    }
    if draft.topic:
        lesson["topic"] = draft.topic
    if draft.summary:
        lesson["summary"] = draft.summary
    if recording.pace:
        lesson["pace"] = recording.pace
    if recording.profile_yaml:
        lesson["profile"] = recording.profile_yaml
    lesson["objects"] = recording.objects_yaml
    lesson["steps"] = steps
    expect: Obj = {"pending_count": sum(1 for node in final.values() if not node)}
    if pods := _placed(final, named):
        expect["pods"] = pods
    lesson["expect"] = expect
    return lesson


def to_yaml(lesson: Obj) -> str:
    return yaml.dump(lesson, Dumper=_LessonDumper, sort_keys=False, allow_unicode=True, width=100)


STEP_ERROR = re.compile(r": steps\[(\d+)\](?:\.(\w+))?")


def export(cluster: Cluster, draft: Draft) -> tuple[str, str]:
    """(file name, text) of the recorded lesson, validated; ExportError says where it fails."""
    recording = LessonRecording.objects.filter(cluster=cluster).first()
    if recording is None:
        raise ExportError("recording: nothing was recorded on this cluster (start recording first)")
    lesson = build(cluster, recording, draft)
    file_name = f"{lesson['name']}.yaml"
    text = to_yaml(lesson)
    try:
        parse_lesson(text, file_name)
    except InputError as exc:
        message = str(exc)
        match = STEP_ERROR.search(message)
        if match and int(match[1]) < len(recording.steps):
            raise ExportError(message, recording.steps[int(match[1])]["id"], match[2]) from None
        raise ExportError(message) from None
    return file_name, text
