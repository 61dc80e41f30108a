"""Lessons in other languages: `clusterviz/lessons/<language>/<name>.yaml` holds a lesson's texts
only — its title, summary, and per step `say`, `after` and (for a step that asks) `question` —
while commands, objects, actions and expectations stay the English file's. kube-scheduler's own
words (plugin names, FailedScheduling messages, kubectl commands) stay as upstream prints them.

A translation is validated as the lesson is: the same steps, a question exactly where the lesson
asks one, one-line summaries, and no `say` that names where a prediction's pod goes.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from scheduler_core.api.loading import InputError
from scheduler_core.api.yaml_reading import format_validation_error, load_yaml_documents, locate

from .lessons import LESSONS_DIR, Lesson, Spec, Summary, Text, all_lessons, check_no_spoiler

__all__ = [
    "LANGUAGES",
    "StepText",
    "Translation",
    "all_translations",
    "card",
    "parse_translation",
    "step_texts",
    "translation_of",
    "view_texts",
]

# The languages lessons are translated into (Django's language codes), beside English.
LANGUAGES = ("zh-hans",)


class StepText(Spec):
    say: Text
    after: Text
    question: Text | None = None


class Translation(Spec):
    title: str = Field(min_length=1)
    summary: Summary = ""
    steps: list[StepText] = Field(min_length=1)


def _directory(language: str) -> Path:
    return LESSONS_DIR / {"zh-hans": "zh-Hans"}.get(language, language)


def parse_translation(text: str, source: str, lesson: Lesson) -> Translation:
    """A translation of `lesson`, or InputError naming the line and field."""
    documents = load_yaml_documents(text, source)
    if len(documents) != 1:
        raise InputError(f"{source}: expected one document, found {len(documents)}")
    node = documents[0].node
    try:
        translation = Translation.model_validate(documents[0].data)
    except ValidationError as exc:
        raise InputError(format_validation_error(exc, source, node)) from exc

    def fail(loc: tuple[int | str, ...], message: str) -> InputError:
        return InputError(f"{locate(source, node, loc)}: {message}")

    if len(translation.steps) != len(lesson.steps):
        raise fail(("steps",), f"has {len(translation.steps)} steps; the lesson {lesson.name} has {len(lesson.steps)}")
    for index, (step, text_of) in enumerate(zip(lesson.steps, translation.steps, strict=True)):
        at: tuple[int | str, ...] = ("steps", index)
        if step.predict is not None and text_of.question is None:
            raise fail((*at, "say"), "Required value: question (the lesson asks the class at this step)")
        if step.predict is None and text_of.question is not None:
            raise fail((*at, "question"), "the lesson asks no question at this step")
        check_no_spoiler(step, text_of.say, text_of.question or "", at, fail)
    return translation


@lru_cache(maxsize=1)
def all_translations() -> dict[str, dict[str, Translation]]:
    """language → lesson name → its translation (every built-in lesson's, validated)."""
    lessons = all_lessons()
    out: dict[str, dict[str, Translation]] = {}
    for language in LANGUAGES:
        out[language] = {}
        for path in sorted(_directory(language).glob("*.yaml")):
            lesson = lessons.get(path.stem)
            source = f"clusterviz/lessons/{path.parent.name}/{path.name}"
            if lesson is None:
                raise InputError(f"{source}: no lesson {path.stem!r} to translate (clusterviz/lessons/{path.name})")
            out[language][lesson.name] = parse_translation(path.read_text(), source, lesson)
    return out


def translation_of(lesson: Lesson, language: str) -> Translation | None:
    """A built-in lesson's translation (a teacher's own lesson of the same name has none)."""
    if all_lessons().get(lesson.name) is not lesson:
        return None
    return all_translations().get(language, {}).get(lesson.name)


def card(lesson: Lesson, language: str) -> dict[str, Any]:
    """The lesson's catalog entry (`Lesson.to_dict`), its title and summary in `language` if translated."""
    entry = lesson.to_dict()
    translation = translation_of(lesson, language)
    if translation is not None:
        entry.update(title=translation.title, summary=translation.summary or entry["summary"])
    return entry


def view_texts(lesson: Lesson) -> dict[str, dict[str, str]]:
    """language → the lesson's title and summary there (for a lesson view that carries every language)."""
    out = {}
    for language in LANGUAGES:
        translation = translation_of(lesson, language)
        if translation is not None:
            out[language] = {"title": translation.title, "summary": translation.summary}
    return out


def step_texts(lesson: Lesson, index: int, keys: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """language → the texts `keys` (say, after, question) of step `index`: only those the viewer may see."""
    out = {}
    for language in LANGUAGES:
        translation = translation_of(lesson, language)
        if translation is None:
            continue
        text_of = translation.steps[index]
        texts = {key: getattr(text_of, key) for key in keys if getattr(text_of, key) is not None}
        if texts:
            out[language] = texts
    return out
