"""Scheduling profiles from a real `KubeSchedulerConfiguration` (kubescheduler.config.k8s.io/v1).

Upstream: pkg/scheduler/apis/config/v1/default_plugins.go (`getDefaultPlugins`, `mergePlugins`),
framework/runtime/framework.go (`expandMultiPointPlugins`: specific-point plugins that override a
MultiPoint one keep their order first, then MultiPoint-only ones, then the remaining specific ones).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..api.loading import InputError, load_yaml_documents

__all__ = [
    "DEFAULT_MULTI_POINT",
    "EXTENSION_POINTS",
    "PluginRef",
    "Profile",
    "default_profile",
    "load_profile",
    "profile_from_config",
]

EXTENSION_POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "bind")


@dataclass(frozen=True)
class PluginRef:
    name: str
    weight: int = 0


# v1.34 default profile; DynamicResources is inserted before DefaultPreemption (DRA is GA, on).
# NodeVolumeLimits, VolumeBinding and VolumeZone are left out: they act only on pods with
# PersistentVolumeClaims, which clusterviz does not model (VolumeRestrictions reports such a
# claim as not found, exactly as upstream does for a missing claim).
DEFAULT_MULTI_POINT: tuple[PluginRef, ...] = (
    PluginRef("SchedulingGates"),
    PluginRef("PrioritySort"),
    PluginRef("NodeUnschedulable"),
    PluginRef("NodeName"),
    PluginRef("TaintToleration", 3),
    PluginRef("NodeAffinity", 2),
    PluginRef("NodePorts"),
    PluginRef("NodeResourcesFit", 1),
    PluginRef("VolumeRestrictions"),
    PluginRef("PodTopologySpread", 2),
    PluginRef("InterPodAffinity", 2),
    PluginRef("DynamicResources"),
    PluginRef("DefaultPreemption"),
    PluginRef("NodeResourcesBalancedAllocation", 1),
    PluginRef("ImageLocality", 1),
    PluginRef("DefaultBinder"),
)


@dataclass
class PluginSet:
    enabled: list[PluginRef] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)


@dataclass
class Profile:
    """A resolved profile: per extension point, the plugin references in run order."""

    scheduler_name: str = "default-scheduler"
    multi_point: PluginSet = field(default_factory=lambda: PluginSet(list(DEFAULT_MULTI_POINT)))
    points: dict[str, PluginSet] = field(default_factory=dict)
    plugin_args: dict[str, dict[str, Any]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None

    def plugins_for(self, point: str, implements: dict[str, set[str]]) -> list[PluginRef]:
        """The plugins at `point`, ordered as upstream's MultiPoint expansion orders them.

        `implements[name]` lists the extension points plugin `name` implements.
        """
        specific = self.points.get(point, PluginSet())
        disabled = set(specific.disabled)
        specific_names = [ref.name for ref in specific.enabled]
        for name in specific_names:
            if point not in implements.get(name, set()):
                raise InputError(f'profile: plugin "{name}" does not extend {point} plugin')
        multi = [
            ref
            for ref in self.multi_point.enabled
            if point in implements.get(ref.name, set()) and "*" not in disabled and ref.name not in disabled
        ]
        multi_names = {ref.name for ref in multi}
        overrides = [ref for ref in specific.enabled if ref.name in multi_names]
        override_names = {ref.name for ref in overrides}
        rest = [ref for ref in specific.enabled if ref.name not in multi_names]
        ordered = overrides + [ref for ref in multi if ref.name not in override_names] + rest
        seen: set[str] = set()
        out: list[PluginRef] = []
        for ref in ordered:
            if ref.name in seen:
                raise InputError(f'profile: plugin "{ref.name}" already registered as "{point}"')
            seen.add(ref.name)
            out.append(ref)
        return out

    def weight_of(self, name: str) -> int:
        for ref in self.points.get("score", PluginSet()).enabled:
            if ref.name == name:
                return ref.weight or 1
        for ref in self.multi_point.enabled:
            if ref.name == name:
                return ref.weight or 1
        return 1


def default_profile() -> Profile:
    return Profile()


def _merge(default: PluginSet, custom: PluginSet) -> PluginSet:
    """`mergePluginSet`: drop disabled defaults, override re-enabled ones in place, append the rest."""
    disabled = set(custom.disabled)
    custom_by_name = {ref.name: (i, ref) for i, ref in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled:
        for ref in default.enabled:
            if ref.name in disabled:
                continue
            if ref.name in custom_by_name:
                index, ref = custom_by_name[ref.name]
                replaced.add(index)
            enabled.append(ref)
    enabled.extend(ref for i, ref in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(enabled, list(custom.disabled))


def _plugin_set(raw: Any, path: str) -> PluginSet:
    if raw is None:
        return PluginSet()
    if not isinstance(raw, dict):
        raise InputError(f"{path}: must be an object with enabled/disabled lists")
    out = PluginSet()
    for key in ("enabled", "disabled"):
        items = raw.get(key) or []
        if not isinstance(items, list):
            raise InputError(f"{path}.{key}: must be a list")
        for index, item in enumerate(items):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
                raise InputError(f"{path}.{key}[{index}].name: Required value")
            if key == "enabled":
                weight = item.get("weight", 0)
                if not isinstance(weight, int) or isinstance(weight, bool) or weight < 0:
                    raise InputError(f"{path}.{key}[{index}].weight: must be a non-negative integer")
                out.enabled.append(PluginRef(item["name"], weight))
            else:
                out.disabled.append(item["name"])
    return out


_POINT_KEYS = {
    "preEnqueue": "preEnqueue",
    "queueSort": "queueSort",
    "preFilter": "preFilter",
    "filter": "filter",
    "postFilter": "postFilter",
    "preScore": "preScore",
    "score": "score",
    "bind": "bind",
}
_IGNORED_POINTS = ("reserve", "permit", "preBind", "postBind")


def profile_from_config(config: Any, source: str = "profile", scheduler_name: str | None = None) -> Profile:
    """Resolve one profile of a KubeSchedulerConfiguration (the first, or the one named)."""
    if not isinstance(config, dict) or config.get("kind") != "KubeSchedulerConfiguration":
        raise InputError(f"{source}: kind: expected KubeSchedulerConfiguration")
    global_pct = config.get("percentageOfNodesToScore")
    profiles = config.get("profiles") or [{}]
    if not isinstance(profiles, list):
        raise InputError(f"{source}: profiles: must be a list")
    chosen: tuple[int, dict[str, Any]] | None = None
    for index, raw in enumerate(profiles):
        if not isinstance(raw, dict):
            raise InputError(f"{source}: profiles[{index}]: must be an object")
        name = raw.get("schedulerName") or "default-scheduler"
        if scheduler_name is None or name == scheduler_name:
            chosen = (index, raw)
            break
    if chosen is None:
        raise InputError(f"{source}: no profile with schedulerName {scheduler_name!r}")
    index, raw = chosen
    base = f"{source}: profiles[{index}]"
    profile = Profile(scheduler_name=raw.get("schedulerName") or "default-scheduler")
    plugins = raw.get("plugins") or {}
    if not isinstance(plugins, dict):
        raise InputError(f"{base}.plugins: must be an object")
    for key, value in plugins.items():
        if key == "multiPoint":
            profile.multi_point = _merge(profile.multi_point, _plugin_set(value, f"{base}.plugins.multiPoint"))
        elif key in _POINT_KEYS:
            profile.points[_POINT_KEYS[key]] = _plugin_set(value, f"{base}.plugins.{key}")
        elif key not in _IGNORED_POINTS:
            raise InputError(f"{base}.plugins.{key}: unknown extension point")
    for k, entry in enumerate(raw.get("pluginConfig") or []):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise InputError(f"{base}.pluginConfig[{k}].name: Required value")
        args = entry.get("args") or {}
        if not isinstance(args, dict):
            raise InputError(f"{base}.pluginConfig[{k}].args: must be an object")
        profile.plugin_args[entry["name"]] = args
    pct = raw.get("percentageOfNodesToScore", global_pct)
    if pct is not None:
        if not isinstance(pct, int) or isinstance(pct, bool) or not 0 <= pct <= 100:
            raise InputError(f"{base}.percentageOfNodesToScore: must be an integer between 0 and 100")
        profile.percentage_of_nodes_to_score = pct
    return profile


def load_profile(text: str | bytes, source: str) -> Profile:
    documents = load_yaml_documents(text, source)
    if len(documents) != 1:
        raise InputError(f"{source}: expected one KubeSchedulerConfiguration document")
    return profile_from_config(documents[0].data, source)
