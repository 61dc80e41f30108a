"""The actions clients send (over the WebSocket or HTTP), validated, and their dispatch."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from scheduler_core.api.limits import MAX_YAML_CHARS
from scheduler_core.api.loading import InputError
from scheduler_core.api.text import quote
from scheduler_core.versions import get_version

from . import lesson_recording, recorded_steps, services
from .cluster_versions import set_version
from .models import Cluster
from .prediction import PredictAction
from .publish import publish

__all__ = ["MAX_YAML_CHARS", "Action", "data_error_message", "parse_action", "perform"]


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    id: str | int | None = None


class Create(_Action):
    action: Literal["create"]
    yaml: str = Field(max_length=MAX_YAML_CHARS)


class Replace(_Action):
    """Replace existing objects with the YAML's (as `kubectl replace -f`)."""

    action: Literal["replace"]
    yaml: str = Field(max_length=MAX_YAML_CHARS)


# What a delete action (a lesson step's, a recorded kubectl delete's) may remove.
DeletableKind = Literal[
    "Pod",
    "Deployment",
    "ReplicaSet",
    "DaemonSet",
    "StatefulSet",
    "Job",
    "Node",
    "PriorityClass",
    "Namespace",
    "Service",
    "ConfigMap",
    "Secret",
    "PodDisruptionBudget",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "DeviceClass",
    "ResourceSlice",
]


class Delete(_Action):
    action: Literal["delete"]
    kind: DeletableKind
    name: str = Field(min_length=1, max_length=253)
    namespace: str = "default"


class Label(_Action):
    action: Literal["label"]
    node: str = Field(min_length=1, max_length=253)
    key: str = Field(min_length=1, max_length=317)
    value: str | None = Field(default=None, max_length=63)
    overwrite: bool = True


class TaintAction(_Action):
    action: Literal["taint"]
    node: str = Field(min_length=1, max_length=253)
    key: str = Field(min_length=1, max_length=317)
    value: str = Field(default="", max_length=63)
    effect: str = "NoSchedule"
    remove: bool = False


class Cordon(_Action):
    action: Literal["cordon", "uncordon"]
    node: str = Field(min_length=1, max_length=253)


class Scale(_Action):
    action: Literal["scale"]
    kind: Literal["Deployment", "ReplicaSet"] = "Deployment"
    name: str = Field(min_length=1, max_length=253)
    namespace: str = "default"
    replicas: int


class Explain(_Action):
    """`form: "cycle"` answers what the board plays (`services.explain_cycle`), not the full explanation."""

    action: Literal["explain"]
    yaml: str = Field(max_length=MAX_YAML_CHARS)
    seed: int = 0
    form: Literal["full", "cycle"] = "full"


class Fixes(_Action):
    """Per rejected node, the fixes for a pod, each verified by scheduling again (a what-if)."""

    action: Literal["fixes"]
    yaml: str = Field(max_length=MAX_YAML_CHARS)
    seed: int = 0


class Pace(_Action):
    action: Literal["pace"]
    pace: Literal["instant", "slow", "paused"]
    delay_ms: int | None = Field(default=None, alias="delayMs")


class SetVersion(_Action):
    """Run the cluster as another Kubernetes version (`featureGates` as kube-scheduler's flag takes them)."""

    action: Literal["version"]
    version: str = Field(min_length=1, max_length=16)
    feature_gates: str = Field(default="", max_length=4096, alias="featureGates")


class Step(_Action):
    action: Literal["step"]
    steps: int = Field(default=1, ge=1, le=100)


class LessonNext(_Action):
    """Run the next step of the cluster's lesson (as the lesson's kubectl command would)."""

    action: Literal["lesson.next"]


class WhatIfView(BaseModel):
    """A what-if the presenter shows: followers re-run it (explain, or the fixes for one node)."""

    model_config = ConfigDict(extra="forbid")
    yaml: str = Field(max_length=MAX_YAML_CHARS)
    fix_for: str | None = Field(default=None, alias="fixFor", max_length=253)
    reexplained: bool = False


class CapacityView(BaseModel):
    """A capacity what-if the presenter shows: followers run the same query (capacity_queries.py
    validates it when it runs)."""

    model_config = ConfigDict(extra="forbid")
    query: Literal["fit", "drain", "add"]
    pod: str | None = Field(default=None, max_length=MAX_YAML_CHARS)
    workload: str | None = Field(default=None, max_length=300)
    namespace: str | None = Field(default=None, max_length=63)
    max: int | None = Field(default=None, ge=1, le=100_000)
    nodes: list[Annotated[str, Field(max_length=253)]] | None = Field(default=None, max_length=10_000)
    selector: str | None = Field(default=None, max_length=2_000)
    zone: str | None = Field(default=None, max_length=253)
    instance_type: str | None = Field(default=None, alias="instanceType", max_length=253)
    ignore_daemonsets: bool = Field(default=False, alias="ignoreDaemonsets")
    force: bool = False
    delete_emptydir_data: bool = Field(default=False, alias="deleteEmptydirData")
    like: str | None = Field(default=None, max_length=253)
    count: int | None = Field(default=None, ge=1, le=100_000)
    name_prefix: str | None = Field(default=None, alias="namePrefix", max_length=200)
    seed: int = 0


class View(_Action):
    """The presenter's view, relayed to followers and kept for late joiners: selected pod and node,
    tab, the cycle (or what-if) shown, the player's step, speed and state."""

    action: Literal["view"]
    pod: str | None = Field(default=None, max_length=600)
    node: str | None = Field(default=None, max_length=253)
    tab: Literal["why", "scores", "events", "listwatch", "lesson"] | None = None
    cycle: int | None = None
    step: int | None = Field(default=None, ge=0)
    speed: float | None = Field(default=None, ge=0.25, le=8)
    playing: bool = False
    follow: bool = False
    what_if: WhatIfView | None = Field(default=None, alias="whatIf")
    lesson_focus: int | None = Field(default=None, ge=0, le=10_000, alias="lessonFocus")  # the rail's step
    capacity: CapacityView | None = None  # a capacity what-if on show
    seq: int = Field(default=0, ge=0, le=2**53)  # the presenter's clock: a later view wins


class Freeze(_Action):
    """Hold the followers on what they see now (`frozen`), or let them follow the presenter again."""

    action: Literal["freeze"]
    frozen: bool


Action = Annotated[
    Create
    | Replace
    | Delete
    | Label
    | TaintAction
    | Cordon
    | Scale
    | Explain
    | Fixes
    | Pace
    | SetVersion
    | Step
    | LessonNext
    | View
    | Freeze
    | PredictAction,
    Field(discriminator="action"),
]
_ADAPTER: TypeAdapter[Any] = TypeAdapter(Action)
CHANGES = (Create, Replace, Delete, Label, TaintAction, Cordon, Scale)  # the actions that change the cluster


def parse_action(data: Any) -> Any:
    """A validated action, or InputError naming the bad field."""
    if not isinstance(data, dict):
        raise InputError("action: expected a JSON object")
    for key, value in data.items():
        # PostgreSQL cannot store (or even compare) a NUL character; no name or label holds one.
        # (The YAML of create/explain is checked per field, with its line, by admission.)
        if isinstance(value, str) and "\x00" in value and key != "yaml":
            raise InputError(f"{key}: Invalid value: {quote(value)}: must not contain NUL characters")
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        parts = list(error["loc"])
        if parts and parts[0] == data.get("action"):
            parts = parts[1:]
        message = error["msg"]
        if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
            parts, message = ["action"], f"unknown action {data.get('action')!r}"
        loc = ".".join(str(part) for part in parts) or "action"
        raise InputError(f"{loc}: {message}") from None


def data_error_message(exc: Exception) -> str:
    """What a client is told when the database refuses one of its values (a django DataError, e.g. a
    NUL character in a string, which PostgreSQL cannot store in JSON); nothing was written."""
    text = str(exc).strip()
    return f"a value was refused by the database: {text.splitlines()[0] if text else 'invalid value'}"


def perform(cluster: Cluster, action: Any, component: str) -> dict[str, Any]:
    """Carry out one validated action; returns what the client is told on success. A change of the
    cluster is a step of the lesson being recorded on it, if one is."""
    if not isinstance(action, CHANGES):
        return _perform(cluster, action, component)
    with lesson_recording.step(cluster) as recorder:
        result = _perform(cluster, action, component)
        recorder.record(recorded_steps.from_action(action.model_dump(exclude={"id"}, by_alias=True)))
    return result


def _perform(cluster: Cluster, action: Any, component: str) -> dict[str, Any]:
    if isinstance(action, Create):
        created = services.create_from_yaml(cluster, action.yaml, component, source="yaml", register_nodes=True)
        return {"created": [f"{o['kind']}/{o['metadata']['name']}" for o in created]}
    if isinstance(action, Replace):
        replaced = services.replace_from_yaml(cluster, action.yaml, component, source="yaml")
        return {"replaced": [f"{o['kind']}/{o['metadata']['name']}" for o in replaced]}
    if isinstance(action, Delete):
        services.delete_object(cluster, action.kind, action.namespace, action.name, component)
        return {"deleted": f"{action.kind}/{action.name}"}
    if isinstance(action, Label):
        services.set_label(cluster, action.node, action.key, action.value, component, action.overwrite)
        return {"labelled": action.node}
    if isinstance(action, TaintAction):
        services.set_taint(cluster, action.node, action.key, action.value, action.effect, component, action.remove)
        return {"tainted": action.node}
    if isinstance(action, Cordon):
        services.set_cordon(cluster, action.node, action.action == "cordon", component)
        return {action.action + "ed": action.node}
    if isinstance(action, Scale):
        services.scale(cluster, action.kind, action.namespace, action.name, action.replicas, component)
        return {"scaled": f"{action.kind}/{action.name}", "replicas": action.replicas}
    if isinstance(action, Explain):
        explain = services.explain_cycle if action.form == "cycle" else services.explain_pod
        return {"explanation": explain(cluster, action.yaml, action.seed)}
    if isinstance(action, Fixes):
        return {"fixes": services.fix_pod(cluster, action.yaml, action.seed)}
    if isinstance(action, Pace):
        services.set_pace(cluster, action.pace, action.delay_ms)
        return {"pace": cluster.pace, "delayMs": cluster.pace_delay_ms}
    if isinstance(action, SetVersion):
        version = get_version(action.version, action.feature_gates, flag="version", gates_flag="featureGates")
        set_version(cluster, version)
        return {"version": version.name}
    if isinstance(action, Step):
        return {"steps": action.steps}
    if isinstance(action, LessonNext):
        from .lesson_view import publish_lesson  # lessons perform actions themselves
        from .lessons import play_step

        step = play_step(cluster)
        publish(cluster.pk, {"type": "cluster.updated", "cluster": cluster.to_dict()})
        publish_lesson(cluster)  # what happened is not in the answer: the view shows it when it may
        return {"ran": cluster.lesson_step, "command": step.command if step else "", "done": step is None}
    if isinstance(action, View):
        view = action.model_dump(exclude={"id", "action"}, by_alias=True)
        relayed = services.set_presenter_view(cluster, view)
        if relayed:
            publish(cluster.pk, {"type": "presenter.view", **view})
        return {"view": relayed}
    if isinstance(action, Freeze):
        kept = services.freeze_followers(cluster, action.frozen)
        publish(cluster.pk, {"type": "presenter.view", **kept})
        return {"frozen": action.frozen}
    raise InputError("action: unsupported")
