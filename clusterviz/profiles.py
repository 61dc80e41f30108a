"""A cluster's scheduler configuration: stored, validated by the core, resolved per schedulerName,
described for the browser's editor, and the Compare of one pod under two profiles.

The stored form is the `KubeSchedulerConfiguration` as JSON (`Cluster.scheduler_config`); an empty
one is upstream's default profile. Every check is the core's (`scheduler_core.framework.profile`).
"""

from __future__ import annotations

import functools
import json
from typing import Any

import yaml

from scheduler_core.api.loading import InputError, load_yaml_documents
from scheduler_core.framework.profile import (
    API_VERSION,
    EXTENSION_POINTS,
    Profile,
    default_profile,
    profiles_from_config,
)
from scheduler_core.framework.runtime import _POINT_METHODS
from scheduler_core.plugins.registry import IN_TREE_REGISTRY, new_framework, registry_for
from scheduler_core.versions import Version, get_version, reference_version

from . import scheduler_cache, services
from .models import Cluster

__all__ = ["DEFAULT_CONFIG", "compare", "config_of", "describe", "parse", "profile_for", "store", "to_yaml"]

SOURCE = "profile.yaml"
DEFAULT_CONFIG: dict[str, Any] = {
    "apiVersion": API_VERSION,
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler"}],
}
MAX_CONFIG_CHARS = 256 * 1024


def config_of(cluster: Cluster | int) -> dict[str, Any]:
    """The stored configuration, read fresh (another process may have changed it)."""
    return settings_of(cluster)[0]


def settings_of(cluster: Cluster | int) -> tuple[dict[str, Any], Version]:
    """The stored configuration and the version it runs under, read fresh in one query."""
    pk = cluster.pk if isinstance(cluster, Cluster) else cluster
    row = Cluster.objects.filter(pk=pk).values_list("scheduler_config", "kubernetes_version", "feature_gates").first()
    if row is None:
        return DEFAULT_CONFIG, reference_version()
    config, version, gates = row
    return config or DEFAULT_CONFIG, _version(version, gates)


@functools.lru_cache(maxsize=64)
def _version(text: str, gates: str) -> Version:
    return get_version(text, gates)


def version_of(cluster: Cluster | int) -> Version:
    return settings_of(cluster)[1]


def loaded_version(cluster: Cluster) -> Version:
    """The version of a cluster row already read (no query): what its API server serves."""
    return _version(cluster.kubernetes_version, cluster.feature_gates)


def to_yaml(config: dict[str, Any]) -> str:
    """The configuration as a file kube-scheduler's `--config` reads."""
    head = {"apiVersion": API_VERSION, "kind": "KubeSchedulerConfiguration"}
    body = {k: v for k, v in config.items() if k not in head}
    return yaml.safe_dump({**head, **body}, sort_keys=False, default_flow_style=False)


def parse(payload: Any, version: Version | None = None) -> dict[str, Any]:
    """A configuration sent as `{"yaml": text}` or `{"config": object}`, validated as kube-scheduler
    validates it; InputError names `profile.yaml:<line>: <field path>: <upstream's message>` (an
    object is written as YAML first, so the line is the one the YAML view shows)."""
    if not isinstance(payload, dict) or ("yaml" in payload) == ("config" in payload):
        raise InputError('send {"yaml": "<KubeSchedulerConfiguration>"} or {"config": {...}}')
    if "config" in payload:
        if not isinstance(payload["config"], dict):
            raise InputError("config: must be an object")
        text = to_yaml(payload["config"])
    else:
        text = payload["yaml"]
        if not isinstance(text, str):
            raise InputError("yaml: must be a string")
    if len(text) > MAX_CONFIG_CHARS:
        raise InputError(f"{SOURCE}: too large ({len(text)} characters > {MAX_CONFIG_CHARS})")
    documents = load_yaml_documents(text, SOURCE)
    if len(documents) != 1:
        raise InputError(f"{SOURCE}: expected one KubeSchedulerConfiguration document, found {len(documents)}")
    profiles_from_config(documents[0].data, SOURCE, documents[0].node, version=version)
    return documents[0].data


@functools.lru_cache(maxsize=64)
def _profiles(key: str, version: Version) -> dict[str, Profile]:
    return profiles_from_config(json.loads(key), SOURCE, version=version)


def profiles_of(config: dict[str, Any], version: Version | None = None) -> dict[str, Profile]:
    """Every profile by schedulerName in `version` (the reference v1.34 when None); validated configs
    only are stored; resolved once per config and version."""
    return _profiles(json.dumps(config, sort_keys=True), version or reference_version())


def profile_for(
    config: dict[str, Any], scheduler_name: str | None, fallback: bool = True, version: Version | None = None
) -> Profile | None:
    """The profile a pod with `scheduler_name` is scheduled by; with `fallback`, the first profile
    when none has that name (a what-if still explains the pod)."""
    profiles = profiles_of(config, version)
    found = profiles.get(scheduler_name or "default-scheduler")
    if found is None and fallback:
        return next(iter(profiles.values()), default_profile(version))
    return found


def store(cluster: Cluster, config: dict[str, Any]) -> None:
    Cluster.objects.filter(pk=cluster.pk).update(scheduler_config=config)
    cluster.scheduler_config = config


# --- the editor's form --------------------------------------------------------------------------


@functools.cache
def _implements() -> dict[str, list[str]]:
    """The extension points each in-tree plugin implements (in EXTENSION_POINTS order)."""
    framework = new_framework(default_profile(get_version()))  # the newest registry: every plugin
    out: dict[str, list[str]] = {}
    for name, factory in IN_TREE_REGISTRY.items():
        instance = framework.plugin(name) or factory({}, framework)
        out[name] = [p for p in EXTENSION_POINTS if p in _POINT_METHODS and hasattr(instance, _POINT_METHODS[p])]
    return out


def form_of(profile: Profile) -> dict[str, Any]:
    """What the form shows of one resolved profile: each plugin's points (on/off) and weight, the
    scoring strategy, percentageOfNodesToScore and PodTopologySpread's defaults."""
    registry = registry_for(profile.version)  # the plugins of the profile's version only
    implements = {name: points for name, points in _implements().items() if name in registry}
    placed = {
        point: [ref.name for ref in profile.plugins_for(point, {k: set(v) for k, v in implements.items()})]
        for point in EXTENSION_POINTS
    }
    weights = {name: profile.weight_of(name) for name in placed["score"]}
    plugins = [
        {
            "name": name,
            "points": {point: name in placed[point] for point in points},
            "weight": weights.get(name, profile.weight_of(name)) if "score" in points else None,
        }
        for name, points in implements.items()
    ]
    fit = profile.plugin_args.get("NodeResourcesFit", {}).get("scoringStrategy") or {}
    spread = profile.plugin_args.get("PodTopologySpread", {})
    return {
        "schedulerName": profile.scheduler_name,
        "plugins": plugins,
        "percentageOfNodesToScore": profile.percentage_of_nodes_to_score,
        "scoringStrategy": {
            "type": fit.get("type") or "LeastAllocated",
            "resources": fit.get("resources") or [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
            "shape": (fit.get("requestedToCapacityRatio") or {}).get("shape") or [],
        },
        "podTopologySpread": {
            "defaultingType": spread.get("defaultingType") or "System",
            "defaultConstraints": spread.get("defaultConstraints") or [],
        },
    }


def describe(config: dict[str, Any], version: Version | None = None) -> dict[str, Any]:
    """Everything the editor shows: the config, its YAML, each profile's form, the default form."""
    return {
        "config": config,
        "yaml": to_yaml(config),
        "forms": [form_of(profile) for profile in profiles_of(config, version).values()],
        "defaultForm": form_of(default_profile(version)),
    }


# --- Compare ------------------------------------------------------------------------------------


def _pod_key(body: Any) -> str | None:
    if not isinstance(body, dict) or not isinstance(body.get("metadata"), dict):
        return None
    meta = body["metadata"]
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def compare(cluster: Cluster, pod_text: str, sides: dict[str, Profile], seed: int = 0) -> dict[str, Any]:
    """The pod explained by the core under each profile of `sides`, on the scheduler's own view.

    A pod of the cluster already bound to a node is explained as if it were being scheduled again:
    it is taken off its node for the comparison (and put back), so it does not compete with itself."""
    try:
        body = yaml.safe_load(pod_text)
    except yaml.YAMLError:
        body = None  # explain_pod names the bad line
    cache = scheduler_cache.synced(cluster)
    info = cache.pods.get(_pod_key(body) or "")
    bound = info is not None and bool(info.pod.spec.node_name) and isinstance(body.get("spec"), dict)
    table = cache.table() if bound else None
    if bound:
        assert info is not None and table is not None
        cache._untrack(table, info)
        pod_text = json.dumps({**body, "spec": {k: v for k, v in body["spec"].items() if k != "nodeName"}})
    try:
        out: dict[str, Any] = {}
        for side, profile in sides.items():
            explanation = services.explain_pod(cluster, pod_text, seed, profile)
            explanation.pop("events", None)
            out[side] = {**explanation, "schedulerName": profile.scheduler_name}
        return out
    finally:
        if bound:
            try:
                cache._track(table, info)
            except Exception:
                cache.drop_table()
                raise
