"""Capacity what-ifs on a cluster (`fit`, `drain`, `add`): the core's queries on a table of their own,
built from the scheduler's view of the cluster; nothing is stored, nothing changes."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from scheduler_core.api.errors import InputError
from scheduler_core.api.loading import load_pod
from scheduler_core.api.workloads import WorkloadIndex
from scheduler_core.capacity import (
    DrainOptions,
    NodeChoice,
    add_nodes,
    drain,
    fit,
    pending_pods,
    pod_template,
    shape_of,
    workload_template,
)
from scheduler_core.versions import Version

from . import profiles, scheduler_cache
from .models import Cluster

__all__ = ["MAX_ADDED_NODES", "MAX_FIT", "run_query"]

MAX_FIT = 20_000  # copies one `fit` may place (a pod that asks for nothing fits 110 per node)
DEFAULT_FIT = 5_000
MAX_ADDED_NODES = 1_000
DEFAULT_SCHEDULER = "default-scheduler"


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(f"{key}: must be a string")
    return value.strip()


def _flag(data: dict[str, Any], key: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise InputError(f"{key}: must be true or false")
    return value


def _count(data: dict[str, Any], key: str, default: int, most: int) -> int:
    value = data.get(key, default)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
        raise InputError(f"{key}: must be a whole number from 1 to {most}")
    return value


def _names(data: dict[str, Any]) -> tuple[str, ...]:
    raw = data.get("nodes") or []
    if isinstance(raw, str):
        raw = [part for part in raw.replace(",", " ").split() if part]
    if not isinstance(raw, list) or not all(isinstance(name, str) for name in raw):
        raise InputError("nodes: must be a list of node names")
    return tuple(raw)


#: The latest answers, by (cluster, its token, resourceVersion, query, profile): a class's followers are shown the
#: presenter's query and each asks it; the cluster unchanged, one process answers it once.
_answers: OrderedDict[tuple[int, str, int, str, str], dict[str, Any]] = OrderedDict()
_answers_guard = threading.Lock()  # held while a query runs
MAX_ANSWERS = 16


def run_query(cluster: Cluster, data: Any) -> dict[str, Any]:
    """`data`: {"query": "fit"|"drain"|"add", …its fields}; the report as the CLI's `-o json` gives it
    (the same question of the same cluster state is answered once per process)."""
    cache = scheduler_cache.synced(cluster)
    config, version = profiles.settings_of(cluster)
    key = (
        cluster.pk,
        cluster.owner_token,  # this cluster, not one made later under a reused id
        cache.rv,
        json.dumps(data, sort_keys=True, default=str),
        json.dumps(config, sort_keys=True, default=str),
        version,
    )
    # One query at a time per process (they are CPU-bound: the GIL would run them in turn anyway), so
    # followers asking together wait for the first answer instead of computing it again each.
    with _answers_guard:
        if key in _answers:
            _answers.move_to_end(key)
            return _answers[key]
        report = _run(cache, config, version, data)
        _answers[key] = report
        while len(_answers) > MAX_ANSWERS:
            _answers.popitem(last=False)
        return report


def _run(cache: scheduler_cache.SchedulerCache, config: dict[str, Any], version: Version, data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise InputError('send {"query": "fit" | "drain" | "add", ...}')
    query = data.get("query")
    if query not in ("fit", "drain", "add"):
        raise InputError(f'query: Unsupported value: {query!r}: supported values: "fit", "drain", "add"')
    seed = data.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise InputError("seed: must be an integer")
    classes = dict(cache.priority_classes)
    if query == "fit":
        pod_text, workload = _text(data, "pod"), _text(data, "workload")
        if bool(pod_text) == bool(workload):
            raise InputError("fit: give exactly one of pod (YAML) and workload (kind/name)")
        if pod_text:
            template = pod_template(load_pod(pod_text, "pod.yaml", classes, {}))
        else:
            namespace = _text(data, "namespace") or "default"
            template = workload_template(workload, namespace, cache.workloads.values(), classes, {})
        limit = _count(data, "max", DEFAULT_FIT, MAX_FIT)
        scheduler_name = template.info.pod.spec.scheduler_name or DEFAULT_SCHEDULER
        profile = profiles.profile_for(config, scheduler_name, version=version)
        return fit(cache.new_table(), template, profile, limit=limit, seed=seed).to_json()
    profile = profiles.profile_for(config, DEFAULT_SCHEDULER, version=version)
    table = cache.new_table()
    if query == "drain":
        choice = NodeChoice(_names(data), _text(data, "selector"), _text(data, "zone"), _text(data, "instanceType"))
        options = DrainOptions(_flag(data, "ignoreDaemonsets"), _flag(data, "force"), _flag(data, "deleteEmptydirData"))
        workloads = WorkloadIndex(cache.workloads.values())
        return drain(table, choice, workloads, options, profile, seed=seed).to_json()
    shape, shape_text = shape_of(table, _text(data, "like"), None)
    count = _count(data, "count", 1, MAX_ADDED_NODES)
    pending = pending_pods((info.pod for info in cache.pods.values()), DEFAULT_SCHEDULER)
    prefix = _text(data, "namePrefix") or None
    report = add_nodes(
        table, shape, shape_text, count, pending, profile, prefix=prefix, seed=seed, baseline=cache.new_table()
    )
    return report.to_json()
