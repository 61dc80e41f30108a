"""The Deployment controller (pkg/controller/deployment), one action per step.

A Deployment owns ReplicaSets `<name>-<pod-template-hash>`; the one whose template equals the
Deployment's (ignoring the hash label) is the new one, the others are old. Each ReplicaSet carries
`deployment.kubernetes.io/revision` (a new or revived template gets max(old revisions)+1, sync.go
getNewReplicaSet), so `kubectl rollout history/undo` work. RollingUpdate scales the new
ReplicaSet up to `replicas + maxSurge` pods in total and the old ones down while
`replicas - maxUnavailable` pods stay available (rolling.go; percentages: surge rounds up,
unavailable down, both 0 → 1 unavailable); Recreate scales the old ones to 0 and waits for their
pods to go first (recreate.go). Old ReplicaSets beyond `revisionHistoryLimit` are deleted.
Status carries the counts and the Available/Progressing conditions (progress.go, sync.go).
"""

from __future__ import annotations

import copy
import math
from typing import Any

from .. import scheduler_cache, store
from ..kube_events import record_event
from ..models import Cluster
from .owners import owned_by, owner_ref
from .replicaset import HASH_LABEL, template_hash

COMPONENT = "deployment-controller"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
# annotations not copied from a Deployment to its ReplicaSets (util/deployment_util.go annotationsToSkip)
SKIPPED_ANNOTATIONS = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        REVISION,
        REVISION_HISTORY,
        DESIRED_REPLICAS,
        MAX_REPLICAS,
        "deprecated.deployment.rollback.to",
    }
)
Obj = dict[str, Any]


def revision(rs: Obj) -> int:
    try:
        return int(rs["metadata"].get("annotations", {}).get(REVISION, "0"))
    except ValueError:
        return 0


def equal_ignore_hash(rs_template: Obj, template: Obj) -> bool:
    """EqualIgnoreHash: the templates are equal once the pod-template-hash label is dropped."""
    ours, theirs = copy.deepcopy(rs_template), copy.deepcopy(template)
    for candidate in (ours, theirs):
        labels = candidate.get("metadata", {}).get("labels", {})
        labels.pop(HASH_LABEL, None)
        if not labels and "metadata" in candidate:
            candidate["metadata"].pop("labels", None)
    return ours == theirs


def _resolve(value: Any, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if isinstance(value, str) and value.endswith("%"):
        exact = int(value[:-1]) * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    return int(value or 0)


def surge_and_unavailable(deployment: Obj) -> tuple[int, int]:
    """ResolveFenceposts (Recreate: no surge, all may be unavailable)."""
    spec = deployment["spec"]
    desired = int(spec.get("replicas", 1))
    strategy = spec.get("strategy", {})
    if strategy.get("type") == "Recreate":
        return 0, desired
    rolling = strategy.get("rollingUpdate", {})
    surge = _resolve(rolling.get("maxSurge", "25%"), desired, True)
    unavailable = _resolve(rolling.get("maxUnavailable", "25%"), desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _replicas(rs: Obj) -> int:
    return int(rs["spec"].get("replicas", 0))


def _available(rs: Obj) -> int:
    return int(rs.get("status", {}).get("availableReplicas", 0))


def sync_deployments(cluster: Cluster) -> bool:
    """One action for the first Deployment that needs one."""
    deployments = scheduler_cache.listed(cluster, "Deployment")
    if not deployments:
        return False
    replica_sets = [row.body for row in scheduler_cache.listed(cluster, "ReplicaSet")]
    for row in deployments:
        deployment = row.body
        if deployment["metadata"].get("deletionTimestamp"):
            continue
        owned = [rs for rs in replica_sets if owned_by(rs, deployment["metadata"]["uid"])]
        if _sync_one(cluster, deployment, owned):
            return True
    return False


def _sync_one(cluster: Cluster, deployment: Obj, owned: list[Obj]) -> bool:
    spec = deployment["spec"]
    new = next((rs for rs in owned if equal_ignore_hash(rs["spec"]["template"], spec["template"])), None)
    old = [rs for rs in owned if rs is not new]
    next_revision = max((revision(rs) for rs in old), default=0) + 1
    if _check_paused_condition(cluster, deployment):
        return True
    if spec.get("paused"):
        return _sync_paused(cluster, deployment, new, old, next_revision)
    if _is_scaling_event(deployment, new, old) and _scale_sync(cluster, deployment, new, old):
        return True  # syncDeployment: a scaling event is sync(), before any rollout
    if new is None:
        _create_new(cluster, deployment, old, next_revision)
        return True
    if revision(new) < next_revision:
        _set_revision(cluster, new, next_revision)  # a revived template (rollout undo) gets the next revision
        return True
    if _sync_deployment_revision(cluster, deployment, revision(new)):
        return True
    acted = (
        _recreate(cluster, deployment, new, old) if _is_recreate(deployment) else _roll(cluster, deployment, new, old)
    )
    if acted:
        return True
    if _cleanup(cluster, deployment, old):
        return True
    return _sync_status(cluster, deployment, new, old)


def _sync_paused(cluster: Cluster, deployment: Obj, new: Obj | None, old: list[Obj], next_revision: int) -> bool:
    """sync() for a paused Deployment: no new ReplicaSet and no rollout; only scaling (proportional
    across the active ReplicaSets), clean-up and the status (the Progressing condition left as
    checkPausedConditions set it)."""
    if new is not None and revision(new) < next_revision:
        _set_revision(cluster, new, next_revision)
        return True
    if new is not None and _sync_deployment_revision(cluster, deployment, revision(new)):
        return True
    if _scale_sync(cluster, deployment, new, old):
        return True
    if _cleanup(cluster, deployment, old):
        return True
    return _sync_status(cluster, deployment, new, old, progressing=False)


def _is_scaling_event(deployment: Obj, new: Obj | None, old: list[Obj]) -> bool:
    """isScalingEvent: an active ReplicaSet's desired-replicas annotation is not spec.replicas."""
    desired = str(deployment["spec"].get("replicas", 1))
    for rs in [*old, new]:
        if rs is None or _replicas(rs) == 0:
            continue
        annotated = rs["metadata"].get("annotations", {}).get(DESIRED_REPLICAS)
        if annotated is not None and annotated != desired:
            return True
    return False


PAUSED_REASON = "DeploymentPaused"
RESUMED_REASON = "DeploymentResumed"


def _check_paused_condition(cluster: Cluster, deployment: Obj) -> bool:
    """checkPausedConditions: Progressing Unknown `DeploymentPaused` ("Deployment is paused") when
    paused, `DeploymentResumed` ("Deployment is resumed") once resumed; not over a timed-out one."""
    if deployment["spec"].get("progressDeadlineSeconds") is None:
        return False
    conditions = deployment.get("status", {}).get("conditions", [])
    current = next((c for c in conditions if c.get("type") == "Progressing"), None)
    if current is not None and current.get("reason") == "ProgressDeadlineExceeded":
        return False
    paused_before = current is not None and current.get("reason") == PAUSED_REASON
    paused = bool(deployment["spec"].get("paused"))
    if paused == paused_before:
        return False
    reason, message = (PAUSED_REASON, "Deployment is paused") if paused else (RESUMED_REASON, "Deployment is resumed")
    condition = _condition(conditions, "Progressing", "Unknown", reason, message, store.now_rfc3339())
    meta = deployment["metadata"]

    def update(body: Obj) -> None:
        status = body.setdefault("status", {})
        kept = [c for c in status.get("conditions", []) if c.get("type") != "Progressing"]
        status["conditions"] = [*kept, condition]

    store.patch(cluster, "Deployment", meta.get("namespace", "default"), meta["name"], update, COMPONENT)
    return True


def _created(rs: Obj) -> tuple[str, str]:
    return rs["metadata"].get("creationTimestamp", ""), rs["metadata"]["name"]


def _scale_sync(cluster: Cluster, deployment: Obj, new: Obj | None, old: list[Obj]) -> bool:
    """scale() (sync.go): the only active (or the newest) ReplicaSet takes the whole count; a
    saturated new one makes the old ones go to 0; else, for RollingUpdate, the difference to
    replicas + maxSurge is spread over the active ReplicaSets in proportion to their size."""
    if new is None and not old:
        return False
    desired = int(deployment["spec"].get("replicas", 1))
    newest_first = sorted(old, key=_created, reverse=True)
    active = [rs for rs in [*newest_first, new] if rs is not None and _replicas(rs) > 0]
    if len(active) <= 1:  # FindActiveOrLatest
        only = active[0] if active else (new if new is not None else newest_first[0])
        if _replicas(only) == desired:
            return False
        _scale(cluster, deployment, only, desired)
        return True
    annotations = (new or {}).get("metadata", {}).get("annotations", {})
    if (
        new is not None
        and _replicas(new) == desired
        and annotations.get(DESIRED_REPLICAS) == str(desired)
        and _available(new) == desired
    ):
        for rs in active:
            if rs is not new:
                _scale(cluster, deployment, rs, 0)
        return bool([rs for rs in active if rs is not new])
    if _is_recreate(deployment):
        return False
    surge, _ = surge_and_unavailable(deployment)
    allowed = desired + surge if desired > 0 else 0
    to_add = allowed - sum(_replicas(rs) for rs in active)
    if to_add:  # ReplicaSetsBySizeNewer (up) / ReplicaSetsBySizeOlder (down): larger first, then by age
        active.sort(key=_created, reverse=to_add > 0)
        active.sort(key=_replicas, reverse=True)
    sizes, added = {}, 0
    for rs in active:
        proportion = _proportion(rs, deployment, to_add, added, desired + surge)
        sizes[rs["metadata"]["name"]] = _replicas(rs) + proportion
        added += proportion
    changed = False
    for index, rs in enumerate(active):
        name = rs["metadata"]["name"]
        if index == 0 and to_add:
            sizes[name] = max(sizes[name] + to_add - added, 0)  # leftovers to the largest
        changed |= _scale(cluster, deployment, rs, sizes[name], "up" if to_add > 0 else "down")
    return changed


def _proportion(rs: Obj, deployment: Obj, to_add: int, added: int, max_replicas: int) -> int:
    """GetReplicaSetProportion / getReplicaSetFraction (util/deployment_util.go)."""
    if _replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    desired = int(deployment["spec"].get("replicas", 1))
    if desired == 0:
        fraction = -_replicas(rs)
    else:
        try:
            before = int(rs["metadata"].get("annotations", {})[MAX_REPLICAS])
        except (KeyError, ValueError):
            before = int(deployment.get("status", {}).get("replicas", 0))
        exact = _replicas(rs) * max_replicas / before if before else 0.0
        fraction = math.floor(exact + 0.5) - _replicas(rs)  # integer.RoundToInt32 (half up; sizes >= 0)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def _is_recreate(deployment: Obj) -> bool:
    return deployment["spec"].get("strategy", {}).get("type") == "Recreate"


def _new_replicas(deployment: Obj, new: Obj | None, old: list[Obj]) -> int:
    """NewRSNewReplicas: how far the new ReplicaSet may grow now."""
    desired = int(deployment["spec"].get("replicas", 1))
    current_new = _replicas(new) if new else 0
    if _is_recreate(deployment):
        return desired
    surge, _ = surge_and_unavailable(deployment)
    total = sum(_replicas(rs) for rs in old) + current_new
    max_total = desired + surge
    if total >= max_total:
        return current_new
    return current_new + min(max_total - total, desired - current_new)


def _create_new(cluster: Cluster, deployment: Obj, old: list[Obj], next_revision: int) -> None:
    meta, spec = deployment["metadata"], deployment["spec"]
    pod_hash = template_hash(spec["template"])
    template = copy.deepcopy(spec["template"])
    template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = pod_hash
    selector = copy.deepcopy(spec["selector"])
    selector.setdefault("matchLabels", {})[HASH_LABEL] = pod_hash
    replicas = (
        0 if _is_recreate(deployment) and any(_replicas(rs) for rs in old) else _new_replicas(deployment, None, old)
    )
    surge, _ = surge_and_unavailable(deployment)
    annotations = {k: v for k, v in meta.get("annotations", {}).items() if k not in SKIPPED_ANNOTATIONS}
    annotations.update(
        {
            REVISION: str(next_revision),
            DESIRED_REPLICAS: str(spec.get("replicas", 1)),
            MAX_REPLICAS: str(int(spec.get("replicas", 1)) + surge),
        }
    )
    name = f"{meta['name']}-{pod_hash}"
    store.create(
        cluster,
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "namespace": meta.get("namespace", "default"),
                "labels": dict(template["metadata"]["labels"]),
                "annotations": annotations,
                "ownerReferences": [owner_ref(deployment)],
            },
            "spec": {"replicas": replicas, "selector": selector, "template": template},
        },
        COMPONENT,
    )
    if replicas > 0:
        message = f"Scaled up replica set {name} from 0 to {replicas}"
        record_event(cluster, deployment, "Normal", "ScalingReplicaSet", message, COMPONENT)


def _set_revision(cluster: Cluster, rs: Obj, number: int) -> None:
    """A ReplicaSet that becomes new again keeps its older revisions in revision-history."""
    before = revision(rs)

    def update(body: Obj) -> None:
        annotations = body["metadata"].setdefault("annotations", {})
        if before:
            history = [h for h in annotations.get(REVISION_HISTORY, "").split(",") if h]
            annotations[REVISION_HISTORY] = ",".join([*history, str(before)])
        annotations[REVISION] = str(number)

    store.patch(cluster, "ReplicaSet", rs["metadata"]["namespace"], rs["metadata"]["name"], update, COMPONENT)


def _sync_deployment_revision(cluster: Cluster, deployment: Obj, number: int) -> bool:
    if deployment["metadata"].get("annotations", {}).get(REVISION) == str(number):
        return False

    def update(body: Obj) -> None:
        body["metadata"].setdefault("annotations", {})[REVISION] = str(number)

    meta = deployment["metadata"]
    store.patch(cluster, "Deployment", meta.get("namespace", "default"), meta["name"], update, COMPONENT)
    return True


def _scale(cluster: Cluster, deployment: Obj, rs: Obj, replicas: int, direction: str = "") -> bool:
    """scaleReplicaSet: the size and the desired/max-replicas annotations; an event when the size
    changes. Returns whether anything was written."""
    before = _replicas(rs)
    surge, _ = surge_and_unavailable(deployment)
    desired = int(deployment["spec"].get("replicas", 1))

    def scale(body: Obj) -> None:
        body["spec"]["replicas"] = replicas
        annotations = body["metadata"].setdefault("annotations", {})
        annotations[DESIRED_REPLICAS] = str(desired)
        annotations[MAX_REPLICAS] = str(desired + surge)

    rv = rs["metadata"].get("resourceVersion")
    after = store.patch(cluster, "ReplicaSet", rs["metadata"]["namespace"], rs["metadata"]["name"], scale, COMPONENT)
    if replicas != before:
        direction = direction or ("up" if replicas > before else "down")
        message = f"Scaled {direction} replica set {rs['metadata']['name']} from {before} to {replicas}"
        record_event(cluster, deployment, "Normal", "ScalingReplicaSet", message, COMPONENT)
    return after["metadata"].get("resourceVersion") != rv


def _roll(cluster: Cluster, deployment: Obj, new: Obj, old: list[Obj]) -> bool:
    """rolloutRolling: reconcileNewReplicaSet, then reconcileOldReplicaSets."""
    desired = int(deployment["spec"].get("replicas", 1))
    if _replicas(new) > desired:
        _scale(cluster, deployment, new, desired)
        return True
    wanted = _new_replicas(deployment, new, old)
    if wanted != _replicas(new):
        _scale(cluster, deployment, new, wanted)
        return True
    active_old = [rs for rs in old if _replicas(rs) > 0]
    if not active_old:
        return False
    _, max_unavailable = surge_and_unavailable(deployment)
    all_pods = sum(_replicas(rs) for rs in [new, *old])
    min_available = desired - max_unavailable
    new_unavailable = _replicas(new) - _available(new)
    max_scaled_down = all_pods - min_available - new_unavailable
    if max_scaled_down <= 0:
        return False
    # cleanupUnhealthyReplicas: old pods that are not available go first
    for rs in sorted(active_old, key=lambda r: r["metadata"].get("creationTimestamp", "")):
        unhealthy = _replicas(rs) - _available(rs)
        if unhealthy > 0:
            _scale(cluster, deployment, rs, _replicas(rs) - min(unhealthy, max_scaled_down))
            return True
    available = sum(_available(rs) for rs in [new, *old])
    if available <= min_available:
        return False
    total_down = min(available - min_available, max_scaled_down)
    rs = min(active_old, key=lambda r: r["metadata"].get("creationTimestamp", ""))
    _scale(cluster, deployment, rs, _replicas(rs) - min(_replicas(rs), total_down))
    return True


def _recreate(cluster: Cluster, deployment: Obj, new: Obj, old: list[Obj]) -> bool:
    """rolloutRecreate: old ReplicaSets to 0, wait until their pods are gone, then the new one up."""
    for rs in old:
        if _replicas(rs) > 0:
            _scale(cluster, deployment, rs, 0)
            return True
    if any(int(rs.get("status", {}).get("replicas", 0)) for rs in old):
        return False
    uids = {rs["metadata"]["uid"] for rs in old}
    pods = scheduler_cache.listed(cluster, "Pod", deployment["metadata"].get("namespace"))
    if any(owned_by(row.body, uid) for row in pods for uid in uids):
        return False
    desired = int(deployment["spec"].get("replicas", 1))
    if _replicas(new) != desired:
        _scale(cluster, deployment, new, desired)
        return True
    return False


def _cleanup(cluster: Cluster, deployment: Obj, old: list[Obj]) -> bool:
    """cleanupDeployment: delete the oldest empty old ReplicaSets beyond revisionHistoryLimit."""
    limit = int(deployment["spec"].get("revisionHistoryLimit", 10))
    empty = [rs for rs in old if _replicas(rs) == 0 and not int(rs.get("status", {}).get("replicas", 0))]
    if len(empty) <= limit:
        return False
    victim = min(empty, key=revision)
    store.delete(cluster, "ReplicaSet", victim["metadata"]["namespace"], victim["metadata"]["name"], COMPONENT)
    return True


def _condition(current: list[Obj], kind: str, status: str, reason: str, message: str, now: str) -> Obj:
    """A condition that keeps its lastTransitionTime while its status holds, and its lastUpdateTime
    while nothing about it changes."""
    before = next((c for c in current if c.get("type") == kind), None)
    if before and (before.get("status"), before.get("reason"), before.get("message")) == (status, reason, message):
        return before
    transition = before["lastTransitionTime"] if before and before.get("status") == status else now
    return {
        "type": kind,
        "status": status,
        "lastUpdateTime": now,
        "lastTransitionTime": transition,
        "reason": reason,
        "message": message,
    }


def _sync_status(cluster: Cluster, deployment: Obj, new: Obj | None, old: list[Obj], progressing: bool = True) -> bool:
    """calculateStatus plus the Available condition, and (`progressing`: syncRolloutStatus) the
    Progressing one; syncDeploymentStatus (a paused Deployment) leaves Progressing as it is."""
    all_sets = [rs for rs in [new, *old] if rs is not None]
    desired = int(deployment["spec"].get("replicas", 1))
    _, max_unavailable = surge_and_unavailable(deployment)
    if _is_recreate(deployment) or desired == 0:
        max_unavailable = 0  # deploymentutil.MaxUnavailable
    replicas = sum(int(rs.get("status", {}).get("replicas", 0)) for rs in all_sets)
    updated = int((new or {}).get("status", {}).get("replicas", 0))
    ready = sum(int(rs.get("status", {}).get("readyReplicas", 0)) for rs in all_sets)
    available = sum(_available(rs) for rs in all_sets)
    current = deployment.get("status", {}).get("conditions", [])
    now = store.now_rfc3339()
    if available >= desired - max_unavailable:
        available_condition = _condition(
            current, "Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.", now
        )
    else:
        available_condition = _condition(
            current,
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
            now,
        )
    complete = updated == desired and replicas == desired and available == desired
    kept = next((c for c in current if c.get("type") == "Progressing"), None)
    if not progressing or new is None:
        progressing_condition = kept
    else:
        progressing_condition = _progressing(current, new["metadata"]["name"], complete, now)
    wanted: Obj = {
        "observedGeneration": deployment["metadata"].get("generation", 1),
        "replicas": replicas,
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": available,
        "conditions": [c for c in (available_condition, progressing_condition) if c is not None],
    }
    unavailable = max(desired - available, 0)
    if unavailable:
        wanted["unavailableReplicas"] = unavailable
    wanted = {k: v for k, v in wanted.items() if v != 0}  # int32 fields are omitempty
    if deployment.get("status") == wanted:
        return False
    meta = deployment["metadata"]

    def update(body: Obj) -> None:
        body["status"] = wanted

    store.patch(cluster, "Deployment", meta.get("namespace", "default"), meta["name"], update, COMPONENT)
    return True


def _progressing(current: list[Obj], name: str, complete: bool, now: str) -> Obj:
    """syncRolloutStatus's Progressing condition."""
    if complete:
        progressing = _condition(
            current,
            "Progressing",
            "True",
            "NewReplicaSetAvailable",
            f'ReplicaSet "{name}" has successfully progressed.',
            now,
        )
    elif any(c.get("type") == "Progressing" for c in current):
        progressing = _condition(
            current, "Progressing", "True", "ReplicaSetUpdated", f'ReplicaSet "{name}" is progressing.', now
        )
    else:
        progressing = _condition(
            current, "Progressing", "True", "NewReplicaSetCreated", f'Created new replica set "{name}"', now
        )
    return progressing
