"""The `pods/eviction` subresource as kube-apiserver v1.32 answers it
(pkg/registry/core/pod/storage/eviction.go): a pod that is terminal, pending or already terminating
is deleted at once; otherwise its one PodDisruptionBudget must allow the disruption — the budget's
`disruptionsAllowed` is decremented and the pod recorded in `disruptedPods` (not on a dry run) —
or the request is refused with 429 TooManyRequests and a `DisruptionBudget` cause; more than one
budget is a 500. The pod is then deleted gracefully, as its DeleteOptions say."""

from __future__ import annotations

from typing import Any

from .. import store
from ..controllers.disruption import budgets_covering, disruption_allowed_condition
from ..controllers.owners import is_ready
from ..models import Cluster
from . import writes
from .options import dry_run_of
from .resources import Resource
from .status import ApiError

__all__ = ["evict"]

Obj = dict[str, Any]
API_VERSIONS = ("policy/v1", "policy/v1beta1")  # EvictionREST.AcceptsGroupVersion
MAX_DISRUPTED_PODS = 2000  # eviction.go MaxDisruptedPodSize
VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
MORE_THAN_ONE = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."


def _too_many_requests(cause: str, retry_after: int) -> ApiError:
    """errors.NewTooManyRequests with the policy/v1 DisruptionBudget cause."""
    details: Obj = {"causes": [{"reason": "DisruptionBudget", "message": cause}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return ApiError(429, "TooManyRequests", VIOLATION, details)


def _forbidden(pdb: Obj, why: str) -> ApiError:
    name = pdb["metadata"]["name"]
    details = {"name": name, "group": "policy", "kind": "poddisruptionbudget"}
    return ApiError(403, "Forbidden", f'poddisruptionbudget.policy "{name}" is forbidden: {why}', details)


def _options(eviction: Any, name: str, query_dry_run: list[str]) -> tuple[Obj, bool]:
    """The Eviction's DeleteOptions with the request's dryRun propagated (propagateDryRun)."""
    if not isinstance(eviction, dict) or eviction.get("kind", "Eviction") != "Eviction":
        raise ApiError(400, "BadRequest", "the body of the request must be an Eviction object")
    if eviction.get("apiVersion", "policy/v1") not in API_VERSIONS:
        raise ApiError(400, "BadRequest", f"not a Eviction object: apiVersion {eviction.get('apiVersion')}")
    meta = eviction.get("metadata") or {}
    if not isinstance(meta, dict) or meta.get("name", "") != name:
        raise ApiError(400, "BadRequest", "name in URL does not match name in Eviction object")
    options = eviction.get("deleteOptions") or {}
    if not isinstance(options, dict):
        raise ApiError(400, "BadRequest", "Eviction.deleteOptions: must be a DeleteOptions object")
    requested = options.get("dryRun") or []
    if not isinstance(requested, list):
        raise ApiError(400, "BadRequest", "DeleteOptions.dryRun: must be a list of strings")
    if requested and query_dry_run and requested != query_dry_run:
        message = f"Non-matching dry-run options in request and content: {query_dry_run} and {requested}"
        raise ApiError(500, "InternalError", f"Internal error occurred: {message}")
    return options, dry_run_of(requested or query_dry_run, "DeleteOptions")


def _can_ignore_budgets(pod: Obj) -> bool:
    """canIgnorePDB: a terminal, pending or terminating pod has caused its disruption already."""
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed", "Pending") or bool(pod["metadata"].get("deletionTimestamp"))


def _check_and_decrement(cluster: Cluster, pdb: Obj, pod_name: str, dry_run: bool) -> None:
    """checkAndDecrement: refuse, or take one allowed disruption from the budget."""
    status = pdb.get("status") or {}
    name = pdb["metadata"]["name"]
    if int(status.get("observedGeneration", 0)) < int(pdb["metadata"].get("generation") or 1):
        raise _too_many_requests(f"The disruption budget {name} is still being processed by the server.", 10)
    allowed = int(status.get("disruptionsAllowed", 0))
    if allowed < 0:
        raise _forbidden(pdb, "pdb disruptions allowed is negative")
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
        raise _forbidden(pdb, "DisruptedPods map too big - too many evictions not confirmed by PDB controller")
    if allowed == 0:
        needs = (
            f"needs {status.get('desiredHealthy', 0)} healthy pods and has {status.get('currentHealthy', 0)} currently"
        )
        raise _too_many_requests(f"The disruption budget {name} {needs}", 0)
    if dry_run:
        return
    now = store.now_rfc3339()

    def decrement(body: Obj) -> None:
        current = body.setdefault("status", {})
        current["disruptionsAllowed"] = int(current.get("disruptionsAllowed", 0)) - 1
        if current["disruptionsAllowed"] == 0:
            generation = int(current.get("observedGeneration", 0))
            current["conditions"] = disruption_allowed_condition(current.get("conditions") or [], 0, generation, now)
        current["disruptedPods"] = {**(current.get("disruptedPods") or {}), pod_name: now}

    expected = pdb["metadata"].get("resourceVersion")
    store.patch(
        cluster, "PodDisruptionBudget", pdb["metadata"]["namespace"], name, decrement, writes.COMPONENT, expected
    )


def evict(cluster: Cluster, res: Resource, namespace: str, name: str, eviction: Any, query_dry_run: list[str]) -> bool:
    """POST pods/<name>/eviction; returns whether it was a dry run (the answer is a Success Status, 201)."""
    options, dry_run = _options(eviction, name, query_dry_run)
    pod = store.get(cluster, "Pod", namespace, name)
    if not _can_ignore_budgets(pod):
        budgets = budgets_covering(cluster, pod)
        if len(budgets) > 1:
            raise ApiError(500, "", MORE_THAN_ONE)
        if budgets:
            pdb = budgets[0]
            status = pdb.get("status") or {}
            unhealthy_may_go = not is_ready(pod) and (
                (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") == "AlwaysAllow"
                or 0 < int(status.get("desiredHealthy", 0)) <= int(status.get("currentHealthy", 0))
            )
            if not unhealthy_may_go:
                _check_and_decrement(cluster, pdb, name, dry_run)
    writes.delete(cluster, res, namespace, name, options, dry_run)
    return dry_run
