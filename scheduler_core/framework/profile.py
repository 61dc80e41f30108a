"""Scheduling profiles from a real `KubeSchedulerConfiguration` (kubescheduler.config.k8s.io/v1).

Upstream: pkg/scheduler/apis/config/v1/default_plugins.go (`getDefaultPlugins`, `mergePlugins`),
framework/runtime/framework.go (`expandMultiPointPlugins`: specific-point plugins that override a
MultiPoint one keep their order first, then MultiPoint-only ones, then the remaining specific ones).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..api.errors import path_text
from ..api.loading import InputError, load_yaml_documents, locate
from ..versions import Version, reference_version
from .config_fields import unknown_field
from .plugin_args import REMOVED_PLUGINS, go_value, validate_plugin_args

__all__ = [
    "EXTENSION_POINTS",
    "PluginRef",
    "Profile",
    "default_profile",
    "load_config",
    "load_profile",
    "profile_from_config",
    "profiles_from_config",
]

API_VERSION = "kubescheduler.config.k8s.io/v1"
EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "preBind",
    "bind",
)


@dataclass(frozen=True)
class PluginRef:
    name: str
    weight: int = 0
    where: str = field(default="", compare=False)  # "file:line: profiles[0].plugins.score.enabled[1]"


# The Go interface each extension point's plugins implement, as upstream's errors name them.
PLUGIN_TYPES = {
    "preEnqueue": "PreEnqueuePlugin",
    "queueSort": "QueueSortPlugin",
    "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin",
    "postFilter": "PostFilterPlugin",
    "preScore": "PreScorePlugin",
    "score": "ScorePlugin",
    "reserve": "ReservePlugin",
    "preBind": "PreBindPlugin",
    "bind": "BindPlugin",
}
INT32_MAX = 2**31 - 1


@dataclass
class PluginSet:
    enabled: list[PluginRef] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)


@dataclass
class Profile:
    """A resolved profile: per extension point, the plugin references in run order."""

    scheduler_name: str = "default-scheduler"
    multi_point: PluginSet = field(default_factory=PluginSet)  # empty: the version's default plugins
    points: dict[str, PluginSet] = field(default_factory=dict)
    plugin_args: dict[str, dict[str, Any]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None
    version: Version = field(default_factory=reference_version)

    def __post_init__(self) -> None:
        if not self.multi_point.enabled and not self.multi_point.disabled:
            self.multi_point = default_plugin_set(self.version)

    def plugins_for(self, point: str, implements: dict[str, set[str]]) -> list[PluginRef]:
        """The plugins at `point`, ordered as upstream's MultiPoint expansion orders them.

        `implements[name]` lists the extension points plugin `name` implements.
        """
        specific = self.points.get(point, PluginSet())
        disabled = set(specific.disabled)
        for ref in specific.enabled:
            if point not in implements.get(ref.name, set()):
                raise InputError(
                    f'{ref.where or "profile"}: plugin "{ref.name}" does not extend {PLUGIN_TYPES[point]} plugin'
                )
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
                raise InputError(
                    f'{ref.where or "profile"}: plugin "{ref.name}" already registered as "{PLUGIN_TYPES[point]}"'
                )
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


def default_plugin_set(version: Version) -> PluginSet:
    """The default profile's MultiPoint plugins in `version` (default_plugins.go)."""
    return PluginSet([PluginRef(name, weight) for name, weight in version.default_plugins()])


def default_profile(version: Version | None = None) -> Profile:
    """Upstream's default profile in `version` (the reference v1.34 when None)."""
    return Profile(version=version or reference_version())


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


class _Config:
    """Where the configuration came from, to name file, line and field path in errors."""

    def __init__(self, source: str, node: yaml.Node | None) -> None:
        self.source = source
        self.node = node

    def where(self, loc: tuple[int | str, ...]) -> str:
        return locate(self.source, self.node, loc)

    def error(self, loc: tuple[int | str, ...], message: str) -> InputError:
        return InputError(f"{self.where(loc)}: {message}")


def _plugin_set(raw: Any, loc: tuple[int | str, ...], config: _Config) -> PluginSet:
    if raw is None:
        return PluginSet()
    if not isinstance(raw, dict):
        raise config.error(loc, "must be an object with enabled/disabled lists")
    out = PluginSet()
    for key in ("enabled", "disabled"):
        items = raw.get(key) or []
        if not isinstance(items, list):
            raise config.error((*loc, key), "must be a list")
        for index, item in enumerate(items):
            item_loc = (*loc, key, index)
            if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
                raise config.error((*item_loc, "name"), "Required value")
            if key == "enabled":
                weight = item.get("weight", 0)
                if weight is None:
                    weight = 0
                if not isinstance(weight, int) or isinstance(weight, bool) or not 0 <= weight <= INT32_MAX:
                    raise config.error(
                        (*item_loc, "weight"), f"Invalid value: {weight!r}: must be an integer in [0, {INT32_MAX}]"
                    )
                out.enabled.append(PluginRef(item["name"], weight, config.where(item_loc)))
            else:
                out.disabled.append(item["name"])
    return out


_IGNORED_POINTS = ("permit", "postBind")
# The first point upstream expands MultiPoint plugins into (getExtensionPoints order).
_FIRST_EXPANDED_POINT = "preFilter"


def _percentage(raw: Any, loc: tuple[int | str, ...], config: _Config) -> int | None:
    """`validatePercentageOfNodesToScore`."""
    if raw is None:
        return None
    if not isinstance(raw, int) or isinstance(raw, bool) or not 0 <= raw <= 100:
        raise config.error(loc, f"Invalid value: {raw!r}: not in valid range [0-100]")
    return raw


def _in_version(ref: PluginRef, profile: Profile) -> str:
    """` in kube-scheduler v1.34` when the plugin belongs to another supported version."""
    from ..plugins.registry import plugin_versions  # late: the registry imports this module

    versions = plugin_versions(ref.name)
    if not versions:
        return ""
    return f" in kube-scheduler {profile.version} (it is in v1.{versions[0]} and later)"


def _check_registered(profile: Profile, registry: Mapping[str, Any]) -> None:
    """Upstream `updatePluginList` / `expandMultiPointPlugins`: `<Type>Plugin "X" does not exist`."""
    for ref in profile.multi_point.enabled:
        if ref.name not in registry:
            where = ref.where or "profile"
            raise InputError(
                f'{where}: {PLUGIN_TYPES[_FIRST_EXPANDED_POINT]} "{ref.name}" does not exist{_in_version(ref, profile)}'
            )
    for point, plugin_set in profile.points.items():
        for ref in plugin_set.enabled:
            if ref.name not in registry:
                raise InputError(
                    f'{ref.where or "profile"}: {PLUGIN_TYPES[point]} "{ref.name}" does not exist'
                    f"{_in_version(ref, profile)}"
                )


def _check_config(config: Any, located: _Config) -> tuple[int | None, list[Any]]:
    """The top level: kind, apiVersion, percentageOfNodesToScore, the profiles list."""
    if not isinstance(config, dict):
        raise located.error((), "expected a KubeSchedulerConfiguration (a mapping)")
    if config.get("kind") != "KubeSchedulerConfiguration":
        raise located.error(("kind",), f"Invalid value: {config.get('kind')!r}: expected KubeSchedulerConfiguration")
    api_version = config.get("apiVersion")
    if api_version is not None and api_version != API_VERSION:
        raise located.error(("apiVersion",), f"Invalid value: {api_version!r}: expected {API_VERSION}")
    unknown = unknown_field(config)
    if unknown:
        # kube-scheduler decodes its config strictly (the field named with its path)
        raise located.error(unknown, f'strict decoding error: unknown field "{path_text(unknown)}"')
    _check_top_level(config, located)
    global_pct = _percentage(config.get("percentageOfNodesToScore"), ("percentageOfNodesToScore",), located)
    profiles = config.get("profiles") or [{}]
    if not isinstance(profiles, list):
        raise located.error(("profiles",), "must be a list")
    for index, raw in enumerate(profiles):
        if not isinstance(raw, dict):
            raise located.error(("profiles", index), "must be an object")
    return global_pct, profiles


def _check_top_level(config: dict[str, Any], located: _Config) -> None:
    """ValidateKubeSchedulerConfiguration's numbers (after v1 defaulting: parallelism 16, pod backoff
    1 s initial, 10 s max); kube-scheduler refuses to start on them, so the simulator does too."""
    numbers = {}
    for key, default in (("parallelism", 16), ("podInitialBackoffSeconds", 1), ("podMaxBackoffSeconds", 10)):
        value = config.get(key)
        if value is None:
            value = default
        if not isinstance(value, int) or isinstance(value, bool):
            raise located.error((key,), f"Invalid value: {go_value(value)}: must be an integer")
        numbers[key] = value
    if numbers["parallelism"] <= 0:
        raise located.error(
            ("parallelism",), f"Invalid value: {numbers['parallelism']}: should be an integer value greater than zero"
        )
    if numbers["podInitialBackoffSeconds"] <= 0:
        initial = numbers["podInitialBackoffSeconds"]
        raise located.error(("podInitialBackoffSeconds",), f"Invalid value: {initial}: must be greater than 0")
    if numbers["podMaxBackoffSeconds"] < numbers["podInitialBackoffSeconds"]:
        raise located.error(
            ("podMaxBackoffSeconds",),
            f"Invalid value: {numbers['podMaxBackoffSeconds']}: "
            "must be greater than or equal to PodInitialBackoffSeconds",
        )


def _removed_plugin(name: str) -> str:
    """validation.go isPluginInvalid."""
    return f"Invalid value: {go_value(name)}: was invalid in version {go_value(API_VERSION)} " + (
        f"(KubeSchedulerConfiguration is version {go_value(API_VERSION)})"
    )


def _resolve(
    raw: dict[str, Any],
    index: int,
    global_pct: int | None,
    located: _Config,
    registry: Mapping[str, Any] | None,
    version: Version,
) -> Profile:
    """One entry of `profiles`, validated as kube-scheduler validates it, then placed in a framework."""
    base: tuple[int | str, ...] = ("profiles", index)
    profile = Profile(scheduler_name=raw.get("schedulerName") or "default-scheduler", version=version)
    plugins = raw.get("plugins") or {}
    if not isinstance(plugins, dict):
        raise located.error((*base, "plugins"), "must be an object")
    for key, value in plugins.items():
        loc = (*base, "plugins", key)
        if key == "multiPoint":
            plugin_set = _plugin_set(value, loc, located)
            profile.multi_point = _merge(profile.multi_point, plugin_set)
        elif key in PLUGIN_TYPES or key in _IGNORED_POINTS:
            plugin_set = _plugin_set(value, loc, located)
            if key in PLUGIN_TYPES:
                profile.points[key] = plugin_set
        else:
            raise located.error(loc, "unknown extension point")
        for k, ref in enumerate(plugin_set.enabled):
            if ref.name in REMOVED_PLUGINS:
                raise located.error((*loc, "enabled", k), _removed_plugin(ref.name))
    seen: set[str] = set()
    entries = raw.get("pluginConfig") or []
    if not isinstance(entries, list):
        raise located.error((*base, "pluginConfig"), "must be a list")
    for k, entry in enumerate(entries):
        loc = (*base, "pluginConfig", k)
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise located.error((*loc, "name"), "Required value")
        name = entry["name"]
        if name in seen:
            raise located.error(loc, f"Duplicate value: {go_value(name)}")
        seen.add(name)
        if name in REMOVED_PLUGINS:
            raise located.error(loc, _removed_plugin(name))
        args = entry.get("args") or {}
        if not isinstance(args, dict):
            raise located.error((*loc, "args"), "must be an object")
        for sub, message in validate_plugin_args(name, args, version)[:1]:
            raise located.error((*loc, "args", *sub), message)
        profile.plugin_args[name] = args
    pct = _percentage(raw.get("percentageOfNodesToScore"), (*base, "percentageOfNodesToScore"), located)
    profile.percentage_of_nodes_to_score = pct if pct is not None else global_pct
    if registry is None:
        from ..plugins.registry import registry_for  # late: the registry imports this module

        registry = registry_for(version)
    _check_registered(profile, registry)
    _check_framework(profile, registry, located.where(base))
    return profile


def profile_from_config(
    config: Any,
    source: str = "profile",
    scheduler_name: str | None = None,
    node: yaml.Node | None = None,
    registry: Mapping[str, Any] | None = None,
    version: Version | None = None,
) -> Profile:
    """Resolve one profile of a KubeSchedulerConfiguration (the first, or the one named).

    `node` is the parsed YAML document, used to give line numbers in errors; plugin names are
    checked against `registry` (the in-tree registry of `version` by default).
    """
    located = _Config(source, node)
    global_pct, profiles = _check_config(config, located)
    for index, raw in enumerate(profiles):
        name = raw.get("schedulerName") or "default-scheduler"
        if scheduler_name is None or name == scheduler_name:
            return _resolve(raw, index, global_pct, located, registry, version or reference_version())
    raise located.error(("profiles",), f"no profile with schedulerName {scheduler_name!r}")


def profiles_from_config(
    config: Any,
    source: str = "profile",
    node: yaml.Node | None = None,
    registry: Mapping[str, Any] | None = None,
    version: Version | None = None,
) -> dict[str, Profile]:
    """Every profile of a KubeSchedulerConfiguration by schedulerName, each validated (validation.go
    ValidateKubeSchedulerConfiguration: a schedulerName used twice, queueSort differing between profiles)."""
    located = _Config(source, node)
    global_pct, profiles = _check_config(config, located)
    out: dict[str, Profile] = {}
    first_at: dict[str, int] = {}
    for index, raw in enumerate(profiles):
        profile = _resolve(raw, index, global_pct, located, registry, version or reference_version())
        name = profile.scheduler_name
        if name in out:
            raise located.error(
                ("profiles", index, "schedulerName"), f"Duplicate value: profiles[{first_at[name]}].schedulerName"
            )
        first_at[name] = index
        out[name] = profile
        queue_sort = (raw.get("plugins") or {}).get("queueSort")
        first_sort = (profiles[0].get("plugins") or {}).get("queueSort")
        if index and (queue_sort or None) != (first_sort or None):
            raise located.error(
                ("profiles", index, "plugins", "queueSort"),
                f"Invalid value: {json.dumps(queue_sort)}: must be the same for all profiles",
            )
    return out


def _check_framework(profile: Profile, registry: Mapping[str, Any], where: str) -> None:
    """What upstream's NewFramework rejects once the plugins are placed: a plugin at a point it does
    not implement, a double registration, not exactly one QueueSort plugin, no Bind plugin."""
    from .runtime import Framework  # late: the runtime imports this module

    try:
        framework = Framework(profile, dict(registry))
    except InputError as exc:  # plugin args errors say "profile: ..."; name the file instead
        message = str(exc)
        if message.startswith("profile: "):
            raise InputError(f"{where.split(': ', 1)[0]}: {message.removeprefix('profile: ')}") from None
        raise
    name = profile.scheduler_name
    if len(framework.queue_sort) != 1:
        raise InputError(
            f"{where}: only one queue sort plugin required for profile with scheduler name "
            f'"{name}", but got {len(framework.queue_sort)}'
        )
    if not framework.bind_plugins:
        raise InputError(f'{where}: at least one bind plugin is needed for profile with scheduler name "{name}"')


def load_profile(
    text: str | bytes, source: str, scheduler_name: str | None = None, version: Version | None = None
) -> Profile:
    """The profile of a KubeSchedulerConfiguration file (the first, or the one named)."""
    documents = load_yaml_documents(text, source)
    if len(documents) != 1:
        raise InputError(f"{source}: expected one KubeSchedulerConfiguration document, found {len(documents)}")
    return profile_from_config(documents[0].data, source, scheduler_name, documents[0].node, version=version)


def load_config(text: str | bytes, source: str, version: Version | None = None) -> dict[str, Profile]:
    """Every profile of a KubeSchedulerConfiguration file, by schedulerName, in file order."""
    documents = load_yaml_documents(text, source)
    if len(documents) != 1:
        raise InputError(f"{source}: expected one KubeSchedulerConfiguration document, found {len(documents)}")
    return profiles_from_config(documents[0].data, source, documents[0].node, version=version)
