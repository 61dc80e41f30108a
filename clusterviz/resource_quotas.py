"""ResourceQuotas and the ResourceQuota admission plugin (the last one a default kube-apiserver runs:
staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go, the evaluators of
pkg/quota/v1/evaluator/core): a new object's usage, added to what its namespace uses, may not pass a
quota's `hard` — `exceeded quota: compute, requested: requests.cpu=2, used: requests.cpu=1, limited:
requests.cpu=2` — and a quota of cpu or memory requires every container to state it (`failed quota:
compute: must specify limits.cpu for: app`). What a namespace uses is counted from the store when
it is read, so a quota's `status` (hard, used) is always current, as the resourcequota controller
keeps it. Quotas with scopes or a scopeSelector are refused on creation (not modelled)."""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

import yaml

from scheduler_core.api.loading import InputError
from scheduler_core.api.quantity import QuantityError, parse_quantity
from scheduler_core.api.yaml_reading import locate

from . import store
from .models import Cluster

__all__ = ["QuotaExceeded", "admit_resource_quota", "check_quotas", "with_status"]

Obj = dict[str, Any]
Usage = dict[str, Fraction]
COMPUTE = ("cpu", "memory", "ephemeral-storage")
MUST_STATE = frozenset({"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"})
# the legacy object-count names (pkg/quota/v1/evaluator/core), beside `count/<resource>[.<group>]`
LEGACY_COUNTS = {
    "Service": "services",
    "ConfigMap": "configmaps",
    "Secret": "secrets",
    "PersistentVolumeClaim": "persistentvolumeclaims",
    "ResourceQuota": "resourcequotas",
}
PLURALS = {
    "Pod": "pods",
    "Service": "services",
    "ConfigMap": "configmaps",
    "Secret": "secrets",
    "PersistentVolumeClaim": "persistentvolumeclaims",
    "ResourceQuota": "resourcequotas",
    "ServiceAccount": "serviceaccounts",
    "Deployment": "deployments.apps",
    "ReplicaSet": "replicasets.apps",
    "StatefulSet": "statefulsets.apps",
    "DaemonSet": "daemonsets.apps",
    "Job": "jobs.batch",
    "PodDisruptionBudget": "poddisruptionbudgets.policy",
    "ResourceClaim": "resourceclaims.resource.k8s.io",
    "ResourceClaimTemplate": "resourceclaimtemplates.resource.k8s.io",
    "LimitRange": "limitranges",
}


class QuotaExceeded(store.Forbidden):
    """A new object a quota refuses: `pods "p" is forbidden: exceeded quota: …` (403)."""


def admit_resource_quota(body: Obj, source: str, node: yaml.Node | None, prefix: tuple[int | str, ...]) -> Obj:
    """A ResourceQuota validated: each hard value a quantity; scopes are not modelled."""
    spec = body.get("spec") or {}
    for key, value in (spec.get("hard") or {}).items():
        try:
            parse_quantity(value)
        except QuantityError as exc:
            raise InputError(f"{locate(source, node, (*prefix, 'spec', 'hard'))}[{key}]: {exc}") from None
    for field in ("scopes", "scopeSelector"):
        if spec.get(field):
            where = locate(source, node, (*prefix, "spec", field))
            raise InputError(f"{where}: Unsupported value: clusterviz does not model quota scopes")
    out = copy.deepcopy(body)
    out.pop("status", None)  # the resourcequota controller's
    return out


# --- usage ---------------------------------------------------------------------------------


def _amount(text: Any) -> Fraction:
    return parse_quantity(text).amount


def _container_totals(spec: Obj, field: str) -> Usage:
    """A pod's effective requests or limits: the containers' sum, or an init container's if more."""
    totals: Usage = {}
    for container in spec.get("containers") or []:
        for key, value in ((container.get("resources") or {}).get(field) or {}).items():
            totals[key] = totals.get(key, Fraction(0)) + _amount(value)
    for container in spec.get("initContainers") or []:
        for key, value in ((container.get("resources") or {}).get(field) or {}).items():
            totals[key] = max(totals.get(key, Fraction(0)), _amount(value))
    for key, value in (spec.get("overhead") or {}).items():
        totals[key] = totals.get(key, Fraction(0)) + _amount(value)
    return totals


def _compute_usage(requests: Usage, limits: Usage) -> Usage:
    """podComputeUsageHelper: `pods`, then each request (also under its bare name) and limit."""
    out: Usage = {"pods": Fraction(1)}
    for key, value in requests.items():
        if key in COMPUTE:
            out[key] = out[f"requests.{key}"] = value
        elif "/" in key or key.startswith("hugepages-"):
            out[f"requests.{key}"] = value
    for key, value in limits.items():
        if key in COMPUTE or key.startswith("hugepages-"):
            out[f"limits.{key}"] = value
    return out


def _counts_compute(pod: Obj) -> bool:
    """QuotaV1Pod: a pod that has finished, or whose deletion's grace is over, counts no compute."""
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def usage_of(body: Obj) -> Usage:
    """What an object uses of a quota (its kind's evaluator)."""
    kind = str(body.get("kind"))
    out: Usage = {}
    plural = PLURALS.get(kind)
    if plural is not None:
        out[f"count/{plural}"] = Fraction(1)
    if kind in LEGACY_COUNTS:
        out[LEGACY_COUNTS[kind]] = Fraction(1)
    spec = body.get("spec") or {}
    if kind == "Pod" and _counts_compute(body):
        out.update(_compute_usage(_container_totals(spec, "requests"), _container_totals(spec, "limits")))
    if kind == "Service":
        kind_of = spec.get("type") or "ClusterIP"
        if kind_of == "LoadBalancer":
            out["services.loadbalancers"] = Fraction(1)
        if kind_of in ("NodePort", "LoadBalancer"):
            out["services.nodeports"] = Fraction(len(spec.get("ports") or []))
    if kind == "PersistentVolumeClaim":
        storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
        if storage is not None:
            out["requests.storage"] = _amount(storage)
    return out


def used_in(cluster: Cluster, namespace: str, names: set[str]) -> Usage:
    """What the namespace's stored objects use of `names`."""
    out: Usage = {name: Fraction(0) for name in names}
    kinds = {kind for kind in PLURALS if any(_tracks(name, kind) for name in names)}
    for kind in kinds:
        for body in store.list_objects(cluster, kind, namespace):
            for key, value in usage_of(body).items():
                if key in out:
                    out[key] += value
    return out


def _tracks(name: str, kind: str) -> bool:
    if kind == "Pod":
        return name == "pods" or name.startswith(("requests.", "limits.")) or name in COMPUTE or name == "count/pods"
    if name == f"count/{PLURALS[kind]}" or name == LEGACY_COUNTS.get(kind):
        return True
    if kind == "Service":
        return name in ("services.loadbalancers", "services.nodeports")
    return kind == "PersistentVolumeClaim" and name == "requests.storage"


# --- what kubectl shows, and admission -------------------------------------------------------


def _show(name: str, amount: Fraction) -> str:
    """A quantity as Quantity.String() writes it for the usual amounts."""
    if amount.denominator == 1:
        whole = int(amount)
        for suffix, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if whole and whole % size == 0 and name.endswith(("memory", "storage", "ephemeral-storage")):
                return f"{whole // size}{suffix}"
        return str(whole)
    milli = amount * 1000
    return f"{int(milli)}m" if milli.denominator == 1 else str(float(amount))


def with_status(cluster: Cluster, quota: Obj) -> Obj:
    """A quota as served: its status (hard, used) as the resourcequota controller keeps it."""
    hard = dict((quota.get("spec") or {}).get("hard") or {})
    if not hard:
        return quota
    used = used_in(cluster, quota["metadata"].get("namespace") or "default", set(hard))
    return {**quota, "status": {"hard": hard, "used": {name: _show(name, used[name]) for name in hard}}}


def _pretty(values: dict[str, str]) -> str:
    return ",".join(f"{key}={values[key]}" for key in sorted(values))


def _missing_statements(pod: Obj, required: set[str]) -> str | None:
    """enforcePodContainerConstraints: each container must state what a quota of cpu or memory limits."""
    required &= MUST_STATE
    if not required:
        return None
    missing: dict[str, list[str]] = {}
    spec = pod.get("spec") or {}
    for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        resources = container.get("resources") or {}
        stated = _compute_usage(
            {k: _amount(v) for k, v in (resources.get("requests") or {}).items()},
            {k: _amount(v) for k, v in (resources.get("limits") or {}).items()},
        )
        for name in sorted(required - set(stated)):
            missing.setdefault(name, []).append(str(container.get("name")))
    if not missing:
        return None
    return "must specify " + "; ".join(f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing))


def check_quotas(cluster: Cluster, body: Obj, alongside: list[Obj] | tuple[Obj, ...] = ()) -> None:
    """The ResourceQuota plugin on a new object: QuotaExceeded unless every quota of its namespace
    still holds with its usage added (`alongside`: objects admitted before it in the same bulk write,
    not stored yet, which count as used)."""
    meta = body.get("metadata") or {}
    namespace = meta.get("namespace")
    if not namespace or body.get("kind") not in PLURALS:
        return
    quotas = store.list_objects(cluster, "ResourceQuota", namespace)
    if not quotas:
        return
    delta = usage_of(body)
    shown = meta.get("name") or meta.get("generateName") or ""
    plural = PLURALS[str(body.get("kind"))].split(".")[0]
    tracked = {key for quota in quotas for key in (quota.get("spec") or {}).get("hard") or {}}
    # what the namespace uses of everything any quota tracks and this object asks: counted once
    used = used_in(cluster, namespace, {key for key, value in delta.items() if key in tracked and value})
    for other in alongside:
        for key, value in usage_of(other).items():
            if key in used:
                used[key] += value
    for quota in quotas:
        hard = (quota.get("spec") or {}).get("hard") or {}
        name = quota["metadata"]["name"]
        if body.get("kind") == "Pod":
            missing = _missing_statements(body, set(hard))
            if missing:
                raise QuotaExceeded(f'{plural} "{shown}" is forbidden: failed quota: {name}: {missing}')
        requested = {key: value for key, value in delta.items() if key in hard and value}
        if not requested:
            continue
        exceeded = sorted(key for key, value in requested.items() if used[key] + value > _amount(hard[key]))
        if exceeded:
            raise QuotaExceeded(
                f'{plural} "{shown}" is forbidden: exceeded quota: {name}, '
                f"requested: {_pretty({k: _show(k, requested[k]) for k in exceeded})}, "
                f"used: {_pretty({k: _show(k, used[k]) for k in exceeded})}, "
                f"limited: {_pretty({k: str(hard[k]) for k in exceeded})}"
            )
