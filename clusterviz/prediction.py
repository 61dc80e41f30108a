"""Prediction mode: the presenter poses a pending pod ("which node wins?", "will it schedule?"), the
scheduler holds that pod back while followers answer, and "reveal" lets the scheduler run its cycle:
the right answer is that cycle's outcome, never computed anywhere else.

A question is `open` (answers taken; `held_pods` keeps the pod out of the scheduler's queue, so it
stays Pending), then `revealing` (released; the scheduler's next cycle of the pod calls `settle`),
then `revealed`; or `cancelled`. One question at a time per cluster.

Everyone on the stream gets `prediction.question` (the question, without anybody's answers; after
the reveal also the tally and the class score); only the presenters' group gets `prediction.tally`
as answers come in, so a follower never sees the others' picks before the reveal. Each follower is
the viewer id of their session (`ensure_viewer`, set when the page is opened): one answer each.
"""

from __future__ import annotations

import asyncio
import csv
import io
import secrets
from typing import Any, Literal

from asgiref.sync import sync_to_async
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Max
from django.utils import timezone
from django.utils.translation import gettext as _
from pydantic import BaseModel, ConfigDict, Field

from scheduler_core.api.loading import InputError
from scheduler_core.api.text import quote
from scheduler_core.api.validation import dns1123_label_error, dns1123_subdomain_error

from . import store
from .models import (
    QUESTION_CANCELLED,
    QUESTION_OPEN,
    QUESTION_REVEALED,
    QUESTION_REVEALING,
    Answer,
    Cluster,
    KubeObject,
    Question,
    SchedulingCycle,
)
from .publish import publish
from .scheduling_queue import activate_pod

__all__ = [
    "ACTIONS",
    "PENDING",
    "SCHEDULED",
    "VIEWER_KEY",
    "csv_export",
    "ensure_viewer",
    "held_pods",
    "messages_for",
    "perform",
    "presenters_group",
    "settle",
]

VIEWER_KEY = "clusterviz.viewer"  # the session's follower identity
PENDING = "@pending"  # "stays Pending" (no node name starts with @)
SCHEDULED = "@scheduled"  # "schedules" (for ask: schedules)
LIVE = (QUESTION_OPEN, QUESTION_REVEALING)


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str | int | None = None


class Pose(_Action):
    """Presenter: ask the class about a pod (it may not exist yet: a lesson creates it next)."""

    action: Literal["predict.pose"]
    question: str = Field(default="", max_length=300)
    pod: str = Field(min_length=1, max_length=507)  # namespace/name, or name in default
    ask: Literal["node", "schedules"] = "node"


class AnswerAction(_Action):
    """Follower: one pick — a node name, "@pending" or "@scheduled" — once per question."""

    action: Literal["predict.answer"]
    pick: str = Field(min_length=1, max_length=253)
    name: str = Field(default="", max_length=64)
    question: int | None = None  # the question answered (refused when another one is open)


class Reveal(_Action):
    action: Literal["predict.reveal"]


class Cancel(_Action):
    action: Literal["predict.cancel"]


ACTIONS = frozenset({"predict.pose", "predict.answer", "predict.reveal", "predict.cancel"})
PredictAction = Pose | AnswerAction | Reveal | Cancel


def presenters_group(cluster_id: int) -> str:
    return f"cluster_{cluster_id}_presenters"


def ensure_viewer(session: Any) -> str:
    """The session's follower identity, made on first use (the page view calls this)."""
    viewer = session.get(VIEWER_KEY)
    if not viewer:
        viewer = session[VIEWER_KEY] = secrets.token_hex(8)
    return str(viewer)


def _pod_key(text: str) -> str:
    """ "namespace/name" (or "name" in default), each part a valid name."""
    namespace, _, name = text.strip().rpartition("/")
    namespace = namespace or "default"
    error = dns1123_label_error(namespace) or dns1123_subdomain_error(name)
    if error:
        raise InputError(f"pod: Invalid value: {quote(text)}: expected namespace/name or name: {error}")
    return f"{namespace}/{name}"


def _pod_row(cluster: Cluster, key: str) -> KubeObject | None:
    namespace, name = key.split("/", 1)
    return KubeObject.objects.filter(cluster=cluster, kind="Pod", namespace=namespace, name=name).first()


def _live(cluster: Cluster) -> Question | None:
    return Question.objects.filter(cluster=cluster, state__in=LIVE).order_by("-number").first()


def held_pods(cluster: Cluster) -> set[str]:
    """The pods the scheduler must not take yet: those of an open question."""
    return set(Question.objects.filter(cluster=cluster, state=QUESTION_OPEN).values_list("pod", flat=True))


def questioned_pods(cluster: Cluster) -> tuple[set[str], set[str]]:
    """The pods of open questions (held back), and those of revealing ones (their next cycle settles
    the question): what a scheduling cycle needs, in one read."""
    held: set[str] = set()
    revealing: set[str] = set()
    for pod, state in Question.objects.filter(cluster=cluster, state__in=LIVE).values_list("pod", "state"):
        (held if state == QUESTION_OPEN else revealing).add(pod)
    return held, revealing


def _tally(question: Question) -> dict[str, int]:
    rows = question.answers.values("pick").annotate(n=Count("id"))
    return {row["pick"]: row["n"] for row in rows}


def public(question: Question) -> dict[str, Any]:
    """What everyone may see: the question; once revealed, the outcome, tally and class score."""
    data: dict[str, Any] = {
        "number": question.number,
        "text": question.text,
        "pod": question.pod,
        "ask": question.ask,
        "options": question.options,
        "state": question.state,
    }
    if question.state == QUESTION_REVEALED:
        counts = _tally(question)
        data.update(
            outcome=question.outcome,
            cycle=question.cycle,
            nominated=question.nominated or None,
            message=question.message,
            counts=counts,
            score={"right": counts.get(question.outcome, 0), "answered": sum(counts.values())},
        )
    return data


def _question_message(question: Question) -> dict[str, Any]:
    return {"type": "prediction.question", "question": public(question)}


def _tally_message(question: Question) -> dict[str, Any]:
    counts = _tally(question)
    return {"type": "prediction.tally", "number": question.number, "counts": counts, "answered": sum(counts.values())}


def _announce(cluster: Cluster, question: Question) -> None:
    publish(cluster.pk, _question_message(question))
    if question.state in (QUESTION_REVEALED, QUESTION_CANCELLED):
        from .lesson_view import publish_lesson  # a lesson step's outcome may be shown now

        publish_lesson(cluster)


def pose(cluster: Cluster, action: Pose) -> dict[str, Any]:
    key = _pod_key(action.pod)
    with transaction.atomic():
        Cluster.objects.select_for_update().filter(pk=cluster.pk).first()  # one pose at a time
        live = _live(cluster)
        if live is not None:
            message = _("question %(number)s is still %(state)s: reveal or cancel it first")
            raise store.Conflict(message % {"number": live.number, "state": live.state})
        row = _pod_row(cluster, key)
        if row is not None and row.node_name:
            message = _('pod: "%(pod)s" is already bound to %(node)s: ask about a pending pod')
            raise InputError(message % {"pod": key, "node": row.node_name})
        if action.ask == "node":
            nodes = KubeObject.objects.filter(cluster=cluster, kind="Node").order_by("name")
            options = [*nodes.values_list("name", flat=True), PENDING]
        else:
            options = [SCHEDULED, PENDING]
        last = Question.objects.filter(cluster=cluster).aggregate(n=Max("number"))["n"] or 0
        default = f"Which node will {key} land on?" if action.ask == "node" else f"Will {key} schedule?"
        question = Question.objects.create(
            cluster=cluster,
            number=last + 1,
            text=action.question.strip() or default,
            pod=key,
            ask=action.ask,
            options=options,
        )
    _announce(cluster, question)
    publish(cluster.pk, _tally_message(question), group=presenters_group(cluster.pk))
    return {"question": public(question)}


def answer(cluster: Cluster, action: AnswerAction, viewer: str | None) -> dict[str, Any]:
    if not viewer:
        raise store.Forbidden(_("open the cluster's page to answer: this connection has no session"))
    question = _live(cluster)
    if question is None or question.state != QUESTION_OPEN:
        raise store.Conflict(_("no question is open for answers"))
    if action.question is not None and action.question != question.number:
        message = _("question %(asked)s is closed; question %(open)s is open")
        raise store.Conflict(message % {"asked": action.question, "open": question.number})
    if action.pick not in question.options:
        shown = ", ".join(question.options)
        raise InputError(
            _('pick: "%(pick)s" is not one of the choices (%(choices)s)') % {"pick": action.pick, "choices": shown}
        )
    name = action.name.strip() or f"follower-{viewer[:4]}"
    try:
        with transaction.atomic():
            Answer.objects.create(question=question, viewer=viewer, name=name, pick=action.pick)
    except IntegrityError:
        mine = Answer.objects.filter(question=question, viewer=viewer).values_list("pick", flat=True).first()
        message = _("you already answered question %(number)s (%(pick)s): one answer per question")
        shown = {PENDING: _("stays Pending"), SCHEDULED: _("schedules")}.get(mine or "", mine or "")
        raise store.Conflict(message % {"number": question.number, "pick": shown}) from None
    return {"answered": action.pick, "question": question.number}  # the tally follows (`tally_soon`)


TALLY_EVERY = 0.2  # seconds: at most one tally message per this, however many answers arrive
_tally_tasks: dict[int, asyncio.Task[None]] = {}
_tally_last: dict[int, float] = {}  # cluster → when its last tally was published (loop time)


async def tally_soon(cluster_id: int) -> None:
    """After an answer: the presenters' tally — at once when none went out in the last TALLY_EVERY,
    else once that much has passed (200 followers answering together make a few messages and reads,
    not 200; a lone answer reaches the tally without waiting)."""
    task = _tally_tasks.get(cluster_id)
    if task is None or task.done():
        loop = asyncio.get_running_loop()
        wait = max(0.0, _tally_last.get(cluster_id, -TALLY_EVERY) + TALLY_EVERY - loop.time())
        _tally_tasks[cluster_id] = loop.create_task(_tally_later(cluster_id, wait))


async def _tally_later(cluster_id: int, wait: float) -> None:
    if wait:
        await asyncio.sleep(wait)
    del _tally_tasks[cluster_id]  # an answer stored after this point schedules the next tally
    _tally_last[cluster_id] = asyncio.get_running_loop().time()
    # In a worker thread: not queued behind the answers waiting for the one database thread.
    await sync_to_async(publish_tally, thread_sensitive=False)(cluster_id)


def publish_tally(cluster_id: int) -> None:
    try:
        question = Question.objects.filter(cluster_id=cluster_id, state__in=LIVE).order_by("-number").first()
        if question is not None:
            publish(cluster_id, _tally_message(question), group=presenters_group(cluster_id))
    finally:
        connection.close()  # the worker thread's own connection


def reveal(cluster: Cluster) -> dict[str, Any]:
    """Release the pod: the scheduler's next cycle of it settles the question (at once if the pod was
    bound without the scheduler, by `spec.nodeName`)."""
    with transaction.atomic():
        question = Question.objects.select_for_update().filter(cluster=cluster, state=QUESTION_OPEN).first()
        if question is None:
            raise store.Conflict(_("no question is open to reveal"))
        row = _pod_row(cluster, question.pod)
        if row is None:
            raise store.NotFound(_('pod "%(pod)s" does not exist yet: create it, then reveal') % {"pod": question.pod})
        question.state = QUESTION_REVEALING
        question.save(update_fields=["state"])
        if not row.node_name:
            activate_pod(cluster, row.namespace, row.name)  # a parked pod tries again now
    if row.node_name:  # bound already: by a cycle that was under way when the question was posed, or by spec.nodeName
        cycle = SchedulingCycle.objects.filter(cluster=cluster, pod=question.pod).order_by("-number").first()
        if cycle is not None and cycle.node == row.node_name:
            _settle(cluster, question, cycle.number, True, row.node_name, "", cycle.message)
        else:
            _settle(cluster, question, None, True, row.node_name, "", "bound by spec.nodeName, without the scheduler")
    else:
        _announce(cluster, question)
    return {"revealing": question.number}


def cancel(cluster: Cluster) -> dict[str, Any]:
    with transaction.atomic():
        question = Question.objects.select_for_update().filter(cluster=cluster, state__in=LIVE).first()
        if question is None:
            raise store.Conflict(_("no question to cancel"))
        question.state = QUESTION_CANCELLED
        question.save(update_fields=["state"])
        row = _pod_row(cluster, question.pod)
        if row is not None and not row.node_name:
            activate_pod(cluster, row.namespace, row.name)
    _announce(cluster, question)
    return {"cancelled": question.number}


def revealing_pods(cluster: Cluster) -> set[str]:
    """The pods ("namespace/name") of the questions waiting for their cycle's outcome (`settle`)."""
    return set(Question.objects.filter(cluster=cluster, state=QUESTION_REVEALING).values_list("pod", flat=True))


def settle(
    cluster: Cluster, pod: str, cycle: int | None, scheduled: bool, node: str | None, nominated: str, message: str
) -> None:
    """Called by the scheduler after each cycle: a revealing question about this pod gets its answer."""
    question = Question.objects.filter(cluster=cluster, state=QUESTION_REVEALING, pod=pod).first()
    if question is not None:
        _settle(cluster, question, cycle, scheduled, node, nominated, message)


def _settle(
    cluster: Cluster,
    question: Question,
    cycle: int | None,
    scheduled: bool,
    node: str | None,
    nominated: str,
    message: str,
) -> None:
    if question.ask == "node":
        question.outcome = node if scheduled and node else PENDING
    else:
        question.outcome = SCHEDULED if scheduled else PENDING
    question.cycle = cycle
    question.nominated = nominated or ""
    question.message = message
    question.state = QUESTION_REVEALED
    question.revealed_at = timezone.now()
    question.save(update_fields=["outcome", "cycle", "nominated", "message", "state", "revealed_at"])
    _announce(cluster, question)


def label(pick: str) -> str:
    return {PENDING: "stays Pending", SCHEDULED: "schedules"}.get(pick, pick)


def messages_for(cluster: Cluster, viewer: str | None, presenter: bool) -> list[dict[str, Any]]:
    """For a client that connects: the latest question (open, being revealed, or revealed) with its
    own answer, and, for a presenter, the tally so far."""
    question = Question.objects.filter(cluster=cluster).exclude(state=QUESTION_CANCELLED).order_by("-number").first()
    if question is None:
        return []
    mine = None
    if viewer:
        mine = Answer.objects.filter(question=question, viewer=viewer).values_list("pick", flat=True).first()
    out = [{**_question_message(question), "mine": mine}]
    if presenter:
        out.append(_tally_message(question))
    return out


def perform(cluster: Cluster, action: Any, viewer: str | None) -> dict[str, Any]:
    if isinstance(action, Pose):
        return pose(cluster, action)
    if isinstance(action, AnswerAction):
        return answer(cluster, action, viewer)
    if isinstance(action, Reveal):
        return reveal(cluster)
    if isinstance(action, Cancel):
        return cancel(cluster)
    raise InputError("action: unsupported")


CSV_COLUMNS = ["question", "text", "pod", "follower", "follower_id", "pick", "correct", "answered_at"]


def csv_export(cluster: Cluster) -> str:
    """Every answer of every question: question, follower, pick, whether it was right (empty until the
    reveal), and when it was given (UTC)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    answers = (
        Answer.objects.filter(question__cluster=cluster)
        .select_related("question")
        .order_by("question__number", "answered_at", "id")
    )
    for a in answers:
        q = a.question
        correct = "" if q.state != QUESTION_REVEALED else ("yes" if a.pick == q.outcome else "no")
        row = [q.number, q.text, q.pod, a.name, a.viewer, label(a.pick), correct, a.answered_at.isoformat()]
        writer.writerow([_cell(value) for value in row])
    return out.getvalue()


def _cell(value: Any) -> Any:
    """A text a spreadsheet would run as a formula (a follower named "=HYPERLINK(…)") is kept as text."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value
