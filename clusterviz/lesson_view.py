"""What each viewer of a lesson cluster may see of its lesson: no step's outcome before it is shown.

A step's `say` and `command` are its instruction; its `after` (what happened) is sent only once the
step has run and, for a step that asks the class (`predict`), once its question is revealed (or
cancelled). Followers get the steps that ran and the next one's instruction (its question arrives
when it is asked, as `prediction.question`); a presenter also gets the instructions further on, to
look ahead. The server decides; the browser only draws what it was sent.

The view travels as `lesson.view` messages: on connect, and after every change that reveals more
(a step run, a question revealed or cancelled) — the class's view to the cluster's group, the
presenters' view to theirs (`audience` says which; a presenter ignores the class's copy).
"""

from __future__ import annotations

from typing import Any, Literal

from .lesson_translations import step_texts, view_texts
from .lessons import Lesson, LessonStep, created_objects, lesson_of
from .models import QUESTION_CANCELLED, QUESTION_REVEALED, Cluster, Question
from .prediction import presenters_group
from .publish import publish

__all__ = ["lesson_messages", "lesson_view", "publish_lesson", "step_question", "touches"]

Audience = Literal["class", "presenter"]


def step_question(cluster: Cluster, step: LessonStep) -> Question | None:
    """The latest class question asked for a step (same pod and text), if any."""
    if step.predict is None:
        return None
    text = step.predict.question.strip()
    return Question.objects.filter(cluster=cluster, pod=step.predict.pod, text=text).order_by("-number").first()


def _outcome_state(cluster: Cluster, step: LessonStep) -> Literal["shown", "reveal"]:
    """A step that ran: its outcome is shown unless its question is still open or being revealed
    (a step run without asking has nothing to wait for)."""
    question = step_question(cluster, step)
    if question is None or question.state in (QUESTION_REVEALED, QUESTION_CANCELLED):
        return "shown"
    return "reveal"


def touches(step: LessonStep) -> dict[str, list[str]]:
    """The nodes and pods a step acts on, for the board to highlight: never where a pod will go.
    Pods are "namespace/name", or "namespace/name-*" for a workload's pods."""
    nodes: list[str] = []
    pods: list[str] = []
    action = step.action or {}
    kind = action.get("action")
    if kind in ("label", "taint", "cordon", "uncordon") and action.get("node"):
        nodes.append(str(action["node"]))
    elif kind == "create":
        for object_kind, key in created_objects(str(action.get("yaml", ""))):
            pods.append(key if object_kind == "Pod" else f"{key}-*")
    elif kind == "delete":
        namespace = action.get("namespace") or "default"
        if action.get("kind") == "Node":
            nodes.append(str(action.get("name")))
        else:
            pods.append(f"{namespace}/{action.get('name')}" + ("" if action.get("kind") == "Pod" else "-*"))
    elif kind == "scale":
        pods.append(f"{action.get('namespace') or 'default'}/{action.get('name')}-*")
    if step.predict is not None and step.predict.pod not in pods:
        pods.append(step.predict.pod)
    return {"nodes": nodes, "pods": pods}


def _entry(cluster: Cluster, lesson: Lesson, index: int, ran: int, presenter: bool) -> dict[str, Any]:
    step = lesson.steps[index]
    entry: dict[str, Any] = {
        "number": index + 1,
        "ran": index < ran,
        **step.instruction(),
        "touches": touches(step),
    }
    if index >= ran and not presenter:
        entry.pop("predict", None)  # the class hears the question when it is asked
    if index < ran:
        if _outcome_state(cluster, step) == "shown":
            entry["after"] = step.after
        else:
            entry["awaiting"] = "reveal"
    # the same texts in every other language, as far as this viewer may see them (never more)
    keys = ("say", *(("question",) if "predict" in entry else ()), *(("after",) if "after" in entry else ()))
    translated = step_texts(lesson, index, keys)
    if translated:
        entry["i18n"] = translated
    return entry


def lesson_view(cluster: Cluster, presenter: bool) -> dict[str, Any] | None:
    """The cluster's lesson as far as this viewer may see it (module docstring); None when the
    cluster has no (known) lesson."""
    lesson = lesson_of(cluster)
    if lesson is None:
        return None
    ran = min(cluster.lesson_step, len(lesson.steps))
    shown = len(lesson.steps) if presenter else min(ran + 1, len(lesson.steps))
    items = [_entry(cluster, lesson, index, ran, presenter) for index in range(shown)]
    view = {**lesson.to_dict(), "ran": ran, "done": ran >= len(lesson.steps), "items": items}
    translated = view_texts(lesson)
    if translated:
        view["i18n"] = translated
    return view


def _message(cluster: Cluster, audience: Audience) -> dict[str, Any] | None:
    view = lesson_view(cluster, presenter=audience == "presenter")
    return None if view is None else {"type": "lesson.view", "audience": audience, "lesson": view}


def _refresh(cluster: Cluster) -> None:
    """The lesson's place as stored now: the caller's copy may predate a step another request ran."""
    cluster.refresh_from_db(fields=["lesson", "lesson_yaml", "lesson_step"])


def lesson_messages(cluster: Cluster, presenter: bool) -> list[dict[str, Any]]:
    """For a client that connects: its view of the cluster's lesson (none without a lesson)."""
    _refresh(cluster)
    message = _message(cluster, "presenter" if presenter else "class")
    return [] if message is None else [message]


def publish_lesson(cluster: Cluster) -> None:
    """After a change that may reveal more: the class's view to everyone, the presenters' to them."""
    _refresh(cluster)
    if not cluster.lesson:
        return
    audiences: tuple[tuple[Audience, str | None], ...] = (("class", None), ("presenter", presenters_group(cluster.pk)))
    for audience, group in audiences:
        message = _message(cluster, audience)
        if message is not None:
            publish(cluster.pk, message, group=group)
