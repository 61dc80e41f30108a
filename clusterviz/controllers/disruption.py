"""The disruption controller (pkg/controller/disruption/disruption.go), one action per step: every
PodDisruptionBudget's status — expectedPods, desiredHealthy, currentHealthy, disruptionsAllowed,
disruptedPods, observedGeneration and the DisruptionAllowed condition — as upstream's `trySync`
computes it, or its `failSafe` (no disruption allowed, reason SyncFailed) when the expected count
cannot be found. Selectors and budgets are read by scheduler_core's PodDisruptionBudget model, the
one preemption reads.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

from scheduler_core.api.policy import PodDisruptionBudget
from scheduler_core.plugins.default_preemption.pdb import Budgets

from .. import scheduler_cache, store
from ..kube_events import record_event
from ..models import Cluster, KubeObject
from .owners import controller_of, is_ready, is_terminating

__all__ = ["budgets_covering", "disruption_allowed_condition", "sync_disruption_budgets"]

COMPONENT = "controllermanager"
DELETION_TIMEOUT = timedelta(minutes=2)  # disruption.go DeletionTimeout
CONDITION = "DisruptionAllowed"
SCALED_KINDS = {("apps", "Deployment"), ("apps", "ReplicaSet"), ("apps", "StatefulSet")}
Obj = dict[str, Any]


class SyncFailed(Exception):
    """getExpectedPodCount's error: the budget's status falls back to failSafe."""


def _budget(body: Obj) -> tuple[PodDisruptionBudget, Any]:
    """The core's model of a stored budget and its compiled selector (None: an invalid one)."""
    pdb = PodDisruptionBudget.model_validate(body)
    return pdb, Budgets.of([pdb]).selectors[0]


def budgets_covering(cluster: Cluster, pod: Obj) -> list[Obj]:
    """The budgets of the pod's namespace whose selector matches it, as the eviction subresource
    reads them (eviction.go getPodDisruptionBudgets: a nil, empty or invalid selector matches nothing)."""
    labels = pod["metadata"].get("labels") or {}
    rows = KubeObject.objects.filter(
        cluster=cluster, kind="PodDisruptionBudget", namespace=pod["metadata"].get("namespace", "default")
    )
    out = []
    for row in rows.order_by("name"):
        _, selector = _budget(row.body)
        if selector is not None and not selector.empty and selector.matches(labels):
            out.append(row.body)
    return out


def _stamp(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None


def _scaled(value: int | str, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent, rounding up (as the controller asks)."""
    if isinstance(value, str):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value)


def _find(cluster: Cluster, kind: str, namespace: str, ref: Obj) -> Obj | None:
    try:
        body = store.get(cluster, kind, namespace, ref.get("name", ""))
    except store.NotFound:
        return None
    return body if body["metadata"].get("uid") == ref.get("uid") else None


def _controller_scale(cluster: Cluster, ref: Obj, namespace: str) -> tuple[str, int] | None:
    """The finders (getPodReplicaSet, getPodDeployment, getPodStatefulSet, getScaleController):
    (controller uid, scale), None when the controller is not found; SyncFailed for a kind without
    the scale subresource."""
    group = ref.get("apiVersion", "").rpartition("/")[0]
    kind = ref.get("kind", "")
    if (group, kind) not in SCALED_KINDS:
        resource = f"{kind.lower()}s.{group}" if group else f"{kind.lower()}s"
        raise SyncFailed(f"{resource} does not implement the scale subresource")
    owner = _find(cluster, kind, namespace, ref)
    if owner is None:
        return None
    if kind == "ReplicaSet":
        parent = controller_of(owner)
        if parent is not None and parent.get("kind") == "Deployment":
            deployment = _find(cluster, "Deployment", namespace, parent)
            if deployment is None:
                return None
            owner = deployment
    return owner["metadata"]["uid"], int(owner["spec"].get("replicas", 1))


def _expected_scale(cluster: Cluster, pods: list[Obj], namespace: str) -> int:
    """getExpectedScale: the sum of the scales of the pods' controllers (unmanaged pods ignored)."""
    scales: dict[str, int] = {}
    seen: set[str] = set()  # the pods' controller uids already found
    for pod in pods:
        ref = controller_of(pod)
        if ref is None or ref.get("uid") in seen:
            continue
        found = _controller_scale(cluster, ref, namespace)
        if found is None:
            raise SyncFailed(f'found no controllers for pod "{pod["metadata"]["name"]}"')
        seen.add(str(ref.get("uid")))
        scales[found[0]] = found[1]
    return sum(scales.values())


def _expected_and_desired(
    cluster: Cluster, pdb: PodDisruptionBudget, pods: list[Obj], namespace: str
) -> tuple[int, int]:
    """getExpectedPodCount: (expectedPods, desiredHealthy)."""
    spec = pdb.spec
    if spec.max_unavailable is not None:
        expected = _expected_scale(cluster, pods, namespace)
        return expected, max(0, expected - _scaled(spec.max_unavailable, expected))
    if isinstance(spec.min_available, int):
        return len(pods), spec.min_available
    if isinstance(spec.min_available, str):
        expected = _expected_scale(cluster, pods, namespace)
        return expected, _scaled(spec.min_available, expected)
    return 0, 0


def disruption_allowed_condition(conditions: list[Obj], allowed: int, generation: int, now: str) -> list[Obj]:
    """pdbhelper.UpdateDisruptionAllowedCondition (apimeta.SetStatusCondition: the transition time
    changes only with the status)."""
    status, reason = ("True", "SufficientPods") if allowed > 0 else ("False", "InsufficientPods")
    return set_condition(conditions, status, reason, "", generation, now)


def set_condition(
    conditions: list[Obj], status: str, reason: str, message: str, generation: int, now: str
) -> list[Obj]:
    previous = next((c for c in conditions if c.get("type") == CONDITION), None)
    since = previous["lastTransitionTime"] if previous and previous.get("status") == status else now
    condition = {
        "type": CONDITION,
        "status": status,
        "observedGeneration": generation,
        "lastTransitionTime": since,
        "reason": reason,
        "message": message,
    }
    others = [c for c in conditions if c.get("type") != CONDITION]
    return [*others, condition] if previous is None else [condition if c is previous else c for c in conditions]


def _disrupted(pods: list[Obj], recorded: dict[str, str], now: datetime) -> dict[str, str]:
    """buildDisruptedPodMap: entries of pods not yet deleted whose DeletionTimeout has not passed."""
    out = {}
    for pod in pods:
        name = pod["metadata"]["name"]
        if is_terminating(pod) or name not in recorded:
            continue
        when = _stamp(recorded[name])
        if when is not None and when + DELETION_TIMEOUT >= now:
            out[name] = recorded[name]
    return out


def _healthy(pods: list[Obj], disrupted: dict[str, str]) -> int:
    """countHealthyPods: ready pods neither being deleted nor about to be."""
    return sum(
        1 for pod in pods if not is_terminating(pod) and pod["metadata"]["name"] not in disrupted and is_ready(pod)
    )


def _write(cluster: Cluster, body: Obj, status: Obj) -> bool:
    if body.get("status") == status:
        return False

    def update(current: Obj) -> None:
        current["status"] = status

    meta = body["metadata"]
    store.patch(cluster, "PodDisruptionBudget", meta.get("namespace", "default"), meta["name"], update, COMPONENT)
    return True


def _sync_one(cluster: Cluster, body: Obj, now: datetime, namespace_pods: list[Obj]) -> bool:
    namespace = body["metadata"].get("namespace", "default")
    generation = int(body["metadata"].get("generation") or 1)
    current = body.get("status") or {}
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    pdb, selector = _budget(body)
    pods = [p for p in namespace_pods if selector is not None and selector.matches(p["metadata"].get("labels") or {})]
    try:
        if selector is None:
            raise SyncFailed("invalid label selector")
        expected, desired = _expected_and_desired(cluster, pdb, pods, namespace)
    except SyncFailed as failure:  # failSafe: nothing may be disrupted until the count is known
        message = str(failure)
        conditions = set_condition(
            current.get("conditions") or [], "False", "SyncFailed", message, current.get("observedGeneration", 0), stamp
        )
        status = {**current, "disruptionsAllowed": 0, "conditions": conditions}
        for key in ("currentHealthy", "desiredHealthy", "expectedPods"):
            status.setdefault(key, 0)
        if not _write(cluster, body, status):
            return False
        event = f"Failed to calculate the number of expected pods: {message}"
        record_event(cluster, body, "Warning", "CalculateExpectedPodCountFailed", event, "controllermanager")
        return True
    disrupted = _disrupted(pods, current.get("disruptedPods") or {}, now)
    healthy = _healthy(pods, disrupted)
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        allowed = 0
    status: Obj = {"observedGeneration": generation}
    if disrupted:
        status["disruptedPods"] = disrupted
    status.update(
        {"disruptionsAllowed": allowed, "currentHealthy": healthy, "desiredHealthy": desired, "expectedPods": expected}
    )
    status["conditions"] = disruption_allowed_condition(current.get("conditions") or [], allowed, generation, stamp)
    if not _write(cluster, body, status):
        return False
    if not pods:
        record_event(cluster, body, "Normal", "NoPods", "No matching pods found", "controllermanager")
    return True


def sync_disruption_budgets(cluster: Cluster) -> bool:
    """One status write for the first budget whose status is out of date; False when all are current."""
    budgets = [entry.body for entry in scheduler_cache.listed(cluster, "PodDisruptionBudget")]
    if not budgets:
        return False
    now = datetime.now(UTC)
    pods: dict[str, list[Obj]] = {}  # by namespace, read once per step
    namespaces = {b["metadata"].get("namespace", "default") for b in budgets}
    rows = KubeObject.objects.filter(cluster=cluster, kind="Pod", namespace__in=namespaces).order_by("name")
    for row in rows:
        pods.setdefault(row.namespace, []).append(row.body)
    for body in budgets:
        namespace = body["metadata"].get("namespace", "default")
        if not body["metadata"].get("deletionTimestamp") and _sync_one(cluster, body, now, pods.get(namespace, [])):
            return True
    return False
