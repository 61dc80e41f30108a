"""Lessons: small clusters with narrated steps, from the seed notes (clusterviz/lessons/*.yaml)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

from scheduler_core.api.loading import InputError
from scheduler_core.api.text import quote
from scheduler_core.api.yaml_reading import format_validation_error, line_of, load_yaml_documents, locate
from scheduler_core.versions import SUPPORTED, get_version

from . import profiles, services, store
from .cluster_versions import set_version
from .kube_api.tables import pod_status as pod_status_column  # kubectl get pods' STATUS (printPod)
from .messages import parse_action, perform
from .models import Cluster
from .recorded_steps import created_objects

LESSONS_DIR = Path(__file__).parent / "lessons"
_NAME = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
POD_KEY = rf"{_NAME}/{_NAME}(\.{_NAME})*"  # namespace/name


class Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _one_line(value: str) -> str:
    value = value.strip()
    if "\n" in value:
        raise ValueError("must be one line (the catalog shows it beside the title)")
    return value


# A step's text, trimmed (a folded block ends with a newline); a summary, one line for the catalog.
Text = Annotated[str, Field(min_length=1), AfterValidator(str.strip)]
Summary = Annotated[str, Field(max_length=200), AfterValidator(_one_line)]


class Predict(Spec):
    """A question the class answers before the step runs: where `pod` goes (`node`: a node, or
    Pending) or whether it is scheduled at all (`schedules`)."""

    question: str = Field(min_length=1)
    pod: str
    ask: Literal["node", "schedules"]

    @field_validator("pod")
    @classmethod
    def _namespaced(cls, value: str) -> str:
        if not re.fullmatch(POD_KEY, value):
            raise ValueError(f"Invalid value: {quote(value)}: must be <namespace>/<name>, e.g. default/pod-example")
        return value


class LessonStep(Spec):
    """One step: `say` is what the class is told before it runs (what to do, never what will happen);
    `after` is what happened, shown once the step has run — and, for a step that asks the class
    (`predict`), only once the question is revealed (`lesson_view`)."""

    say: Text
    command: str = ""
    action: dict[str, Any] | None = Field(default=None, alias="do")
    after: Text
    expect: dict[str, Any] = Field(default_factory=dict)
    wait: float = Field(default=0, ge=0, le=3600)  # seconds the class lets pass after the step
    predict: Predict | None = None

    def instruction(self) -> dict[str, Any]:
        """What may be shown before the step runs: its instruction, command and question."""
        out: dict[str, Any] = {"say": self.say, "command": self.command}
        if self.predict is not None:
            out["predict"] = self.predict.model_dump()
        return out


# The catalog's groups, in the order of the lesson notes (../seeds: the List-Watch flow, predicates
# and priorities, nodeName and nodeSelector, affinity, taints, pod phases, kubectl), then devices.
TOPICS: dict[str, Promise] = {
    "list-watch": _("The List-Watch flow"),
    "predicates-priorities": _("Predicates and priorities"),
    "nodename-nodeselector": _("nodeName and nodeSelector"),
    "node-affinity": _("Node affinity"),
    "pod-affinity": _("Pod affinity and anti-affinity"),
    "taints-tolerations": _("Taints and tolerations"),
    "pod-phases": _("Pod phases"),
    "kubectl": _("kubectl"),
    "devices": _("Devices (Dynamic Resource Allocation)"),
}
OTHER_TOPIC = _("Other lessons")  # a lesson without a topic (topic "")


class Lesson(Spec):
    name: str = Field(pattern=rf"^{_NAME}$")
    topic: str = ""  # its group in the catalog: one of TOPICS ("": a teacher's own, under OTHER_TOPIC)
    title: str = Field(min_length=1)
    summary: Summary = ""  # for the catalog: what it teaches, not what happens
    pace: Literal["instant", "slow"] | None = None  # the pace a cluster starts at (slow: phases last)
    objects: str = ""
    # the KubeSchedulerConfiguration the lesson's cluster runs (empty: upstream's default profile)
    profile: str = ""
    # the Kubernetes version the lesson's cluster starts at (empty: the cluster's own, v1.34 by default)
    version: str = ""
    steps: list[LessonStep] = Field(min_length=1)
    expect: dict[str, Any] = Field(default_factory=dict)

    @field_validator("version")
    @classmethod
    def _supported_version(cls, value: str) -> str:
        if value:
            try:
                get_version(value, flag="version")
            except InputError:  # the field's error, with its line
                supported = ", ".join(f"1.{minor}" for minor in SUPPORTED)
                raise ValueError(f"Unsupported value: {quote(value)}: supported values: {supported}") from None
        return value

    @field_validator("topic")
    @classmethod
    def _known_topic(cls, value: str) -> str:
        if value and value not in TOPICS:
            raise ValueError(f"Unsupported value: {quote(value)}: supported values: {', '.join(TOPICS)}")
        return value

    def to_dict(self) -> dict[str, Any]:
        """The lesson as a catalog shows it: no step's text (`lesson_view` gives those, as revealed)."""
        return {
            "name": self.name,
            "topic": self.topic,
            "title": self.title,
            "summary": self.summary,
            "pace": self.pace,
            "steps": len(self.steps),
            "questions": sum(1 for step in self.steps if step.predict is not None),
        }


def _created_pods(text: str) -> Iterator[str]:
    """The "namespace/name" of each Pod in a create action's YAML."""
    return (key for kind, key in created_objects(text) if kind == "Pod")


Fail = Callable[[tuple[int | str, ...], str], InputError]


def _check_prediction(
    predict: Predict, step: LessonStep, at: tuple[int | str, ...], created: list[str], existing: set[str], fail: Fail
) -> None:
    """A prediction is about a pod its step creates (or that exists by then, for a step that changes a
    node or frees room), and the step's `expect` records the answer."""
    pod, ask = predict.pod, predict.ask
    if step.action is None:
        raise fail((*at, "predict"), "a prediction needs a step that acts (`do`): nothing would change")
    if step.action.get("action") == "create" and pod not in created:
        made = ", ".join(f"Pod {key}" for key in created) or "no named Pod"
        raise fail((*at, "predict", "pod"), f'"{pod}" is not created by this step (it creates {made})')
    if step.action.get("action") != "create" and pod not in existing:
        raise fail(
            (*at, "predict", "pod"),
            f'"{pod}" does not exist before this step (neither in `objects` nor created by an earlier step)',
        )
    answer = (step.expect.get("pods") or {}).get(pod) or {}
    recorded = isinstance(answer.get("node"), str) or answer.get("pending") is True
    if ask == "schedules":
        recorded = recorded or answer.get("pending") is False
    if not recorded:
        wanted = "{node: <one node>} or {pending: true}" if ask == "node" else "{pending: true|false}"
        raise fail((*at, "predict"), f'the answer is not recorded: the step\'s expect needs pods: "{pod}": {wanted}')


def answer_node(step: LessonStep) -> str | None:
    """The node a step's "which node?" question is answered with (from its expect), if it asks one."""
    predict = step.predict
    answer = ((step.expect.get("pods") or {}).get(predict.pod) or {}).get("node") if predict else None
    return answer if predict is not None and predict.ask == "node" and isinstance(answer, str) else None


def names_answer(step: LessonStep, say: str, question: str) -> bool:
    """Whether `say` (shown before the reveal) names the node the step's pod goes to while the
    question does not: the answer given away."""
    answer = answer_node(step)
    if answer is None:
        return False
    # ASCII word characters only: in "调度到node01上" the Chinese around the name are not part of it
    named = re.compile(rf"(?<![-\w]){re.escape(answer)}(?![-\w])", re.ASCII)
    return bool(named.search(say)) and not named.search(question)


def check_no_spoiler(step: LessonStep, say: str, question: str, at: tuple[int | str, ...], fail: Fail) -> None:
    """A step that asks the class must not give the answer before it is asked: its `say` (shown
    before the reveal, in any language) may not name the node the pod goes to, unless the question
    itself names it."""
    if step.predict is not None and names_answer(step, say, question):
        raise fail(
            (*at, "say"),
            f"gives the answer away: it names {answer_node(step)}, where {step.predict.pod} goes, before the class "
            "answers (say it in `after`, which is shown after the reveal)",
        )


def _check_semantics(lesson: Lesson, source: str, node: yaml.Node | None) -> None:
    """What the schema cannot say: actions valid as actions, known expectation keys, predictions
    about the right pods with their answers recorded."""

    def fail(loc: tuple[int | str, ...], message: str) -> InputError:
        return InputError(f"{locate(source, node, loc)}: {message}")

    def check_keys(expect: dict[str, Any], at: tuple[int | str, ...]) -> None:
        for key in expect:
            if key not in EXPECT_KEYS:
                raise fail((*at, "expect", key), f"unknown expectation (known: {', '.join(EXPECT_KEYS)})")

    check_keys(lesson.expect, ())
    if lesson.profile:
        try:
            profiles.parse({"yaml": lesson.profile})
        except InputError as exc:
            # profile.yaml:<line in the block>: … → the line in the lesson file (the block starts below `profile: |`)
            match = re.match(r"profile\.yaml:(\d+)(?::\d+)?: (.*)", str(exc))
            key_line = line_of(node, ("profile",))
            if match and key_line:
                raise InputError(f"{source}:{key_line + int(match[1])}: profile: {match[2]}") from None
            raise fail(("profile",), str(exc)) from None
    existing = set(_created_pods(lesson.objects))
    for index, step in enumerate(lesson.steps):
        at: tuple[int | str, ...] = ("steps", index)
        check_keys(step.expect, at)
        created: list[str] = []
        if step.action is not None:
            try:
                parse_action(step.action)
            except InputError as exc:
                field_path, _, message = str(exc).partition(": ")
                raise fail((*at, "do", *field_path.split(".")), message) from None
            if step.action.get("action") == "create":
                created = list(_created_pods(str(step.action.get("yaml", ""))))
        if step.predict is not None:
            _check_prediction(step.predict, step, at, created, existing, fail)
            check_no_spoiler(step, step.say, step.predict.question, at, fail)
        existing.update(created)


def parse_lesson(text: str, source: str) -> Lesson:
    """A lesson from its YAML text, or InputError naming the file, line and field."""
    documents = load_yaml_documents(text, source)
    if len(documents) != 1 or not isinstance(documents[0].data, dict):
        raise InputError(f"{source}: expected one lesson (a mapping)")
    document = documents[0]
    try:
        lesson = Lesson.model_validate(document.data)
    except ValidationError as exc:
        raise InputError(format_validation_error(exc, source, document.node)) from None
    _check_semantics(lesson, source, document.node)
    return lesson


@lru_cache(maxsize=1)
def all_lessons() -> dict[str, Lesson]:
    lessons: dict[str, Lesson] = {}
    for path in sorted(LESSONS_DIR.glob("*.yaml")):
        lesson = parse_lesson(path.read_text(), f"clusterviz/lessons/{path.name}")
        lessons[lesson.name] = lesson
    return lessons


def catalog() -> list[tuple[str, list[Lesson]]]:
    """The lessons grouped by topic key, in TOPICS' order then "" (topics without a lesson left out)."""
    lessons = list(all_lessons().values())
    groups = [(key, [lesson for lesson in lessons if lesson.topic == key]) for key in [*TOPICS, ""]]
    return [(key, members) for key, members in groups if members]


def topic_title(key: str) -> str:
    """The topic's title in the active language."""
    return str(TOPICS.get(key, OTHER_TOPIC))


def get_lesson(name: str) -> Lesson:
    lesson = all_lessons().get(name)
    if lesson is None:
        known = ", ".join(all_lessons())
        raise InputError(f'lesson "{name}" not found (known: {known})')
    return lesson


def load_lesson(cluster: Cluster, name: str) -> Lesson:
    """Put a built-in lesson's starting objects into an empty cluster (at the lesson's pace, if it sets one)."""
    return _load(cluster, get_lesson(name), "")


def load_lesson_file(cluster: Cluster, lesson: Lesson, text: str) -> Lesson:
    """A teacher's own lesson (`text`, already read by parse_lesson as `lesson`) into an empty cluster."""
    return _load(cluster, lesson, text)


def _load(cluster: Cluster, lesson: Lesson, text: str) -> Lesson:
    if lesson.objects.strip():
        services.create_from_yaml(cluster, lesson.objects, "kubectl", source=f"lesson {lesson.name}")
    if lesson.pace is not None:
        services.set_pace(cluster, lesson.pace)
    if lesson.version:
        set_version(cluster, get_version(lesson.version))
    profiles.store(cluster, profiles.parse({"yaml": lesson.profile}) if lesson.profile else {})
    cluster.lesson, cluster.lesson_yaml, cluster.lesson_step = lesson.name, text, 0
    cluster.save(update_fields=["lesson", "lesson_yaml", "lesson_step"])
    return lesson


@lru_cache(maxsize=32)
def _own_lesson(text: str) -> Lesson:
    return parse_lesson(text, "lesson.yaml")


def lesson_of(cluster: Cluster) -> Lesson | None:
    """The cluster's lesson: its own (an imported file's), else the built-in one it names; None
    without a lesson."""
    if cluster.lesson_yaml:
        return _own_lesson(cluster.lesson_yaml)
    return all_lessons().get(cluster.lesson)


def play_step(cluster: Cluster) -> LessonStep | None:
    """Carry out the lesson's next step (as kubectl would); None when the lesson is over."""
    lesson = lesson_of(cluster)
    if lesson is None:
        raise InputError(f'lesson "{cluster.lesson}" not found')
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
POD_FIELDS = ("node", "phase", "status", "pending", "message", "nominatedNode", "reason")
EVENT_FIELDS = ("object", "reason", "message", "message_glob", "count", "type")


def step_expectations(name: str) -> tuple[dict[str, Any], ...]:
    """Each step's own `expect` block ({} when it has none), in step order."""
    return tuple(step.expect for step in get_lesson(name).steps)


def step_waits(name: str) -> tuple[float, ...]:
    """Each step's `wait`: seconds the class lets pass after the step (0 when none)."""
    return tuple(step.wait for step in get_lesson(name).steps)


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
    if "status" in want:
        shown = pod_status_column(body)[0]
        if shown != want["status"]:
            problems.append(f"pod {key}: STATUS {shown!r}, expected {want['status']!r}")
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
    - `pods` {name (glob): {node (name or list), phase, status (the STATUS column of `kubectl get
      pods`: ContainerCreating, Completed, Terminating…), pending (bool: unbound), message and reason
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
