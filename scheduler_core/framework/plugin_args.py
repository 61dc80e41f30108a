"""Validation of a profile's `pluginConfig` args, with upstream's field paths and messages.

Upstream: pkg/scheduler/apis/config/validation/validation_pluginargs.go (the `Validate*Args`
functions), v1/defaults.go (what is defaulted before validation: an absent scoringStrategy is
LeastAllocated on cpu and memory, a resource weight of 0 is 1, an empty defaultingType is System).
NodeResourcesFit's args are validated by the plugin's constructor (validation.go maps the key
"NodeResourcesFitArgs", which names no plugin), with the same texts; here every error is located
at its full path under `args`.

Each check returns `(path under args, message)` pairs in upstream's `field.Error` wording.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..versions import Version, reference_version

__all__ = ["REMOVED_PLUGINS", "go_value", "validate_plugin_args"]

Loc = tuple[int | str, ...]
Problem = tuple[Loc, str]

# invalidPluginsByVersion (validation.go): removed in kubescheduler.config.k8s.io/v1.
REMOVED_PLUGINS = frozenset({"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"})
SCORING_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
MAX_CUSTOM_PRIORITY_SCORE = 10
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


def go_value(value: Any) -> str:
    """A bad value as `field.Error` prints it: strings quoted, numbers and booleans bare."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def invalid(value: Any, detail: str) -> str:
    return f"Invalid value: {go_value(value)}: {detail}"


def unsupported(value: Any, supported: tuple[str, ...]) -> str:
    return f"Unsupported value: {go_value(value)}: supported values: " + ", ".join(f'"{s}"' for s in supported)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _integer(args: dict[str, Any], key: str, default: int, out: list[Problem]) -> int | None:
    """An int32 field; a value of another type cannot be decoded (upstream: a strict decoding error)."""
    value = args.get(key, default)
    if value is None:
        return default
    if not _int(value):
        out.append(((key,), invalid(value, "must be an integer")))
        return None
    return int(value)


def _label_name(value: Any, loc: Loc) -> list[Problem]:
    """metav1validation.ValidateLabelName (the name part of a qualified name, as upstream words it)."""
    if not isinstance(value, str):
        return [(loc, invalid(value, "must be a string"))]
    prefix, _, name = value.rpartition("/")
    if not name or len(name) > 63 or not _LABEL_NAME.match(name) or (prefix == "" and "/" in value):
        return [
            (
                loc,
                invalid(
                    value,
                    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                ),
            )
        ]
    return []


def _shape(raw: Any, loc: Loc) -> list[Problem]:
    """validateFunctionShape."""
    if not isinstance(raw, list) or not raw:
        return [(loc, "Required value: at least one point must be specified")]
    out: list[Problem] = []
    points: list[tuple[Any, Any]] = []
    for item in raw:
        item = item if isinstance(item, dict) else {}
        points.append((item.get("utilization", 0), item.get("score", 0)))
    for k, (utilization, score) in enumerate(points):
        for key, value in (("utilization", utilization), ("score", score)):
            if not _int(value):
                out.append(((*loc, k, key), invalid(value, "must be an integer")))
    if out:
        return out
    for k in range(1, len(points)):
        if points[k - 1][0] >= points[k][0]:
            out.append(((*loc, k, "utilization"), invalid(points[k][0], "values must be sorted in increasing order")))
            break
    for k, (utilization, score) in enumerate(points):
        if not 0 <= utilization <= 100:
            out.append(((*loc, k, "utilization"), invalid(utilization, "not in valid range [0, 100]")))
        if not 0 <= score <= MAX_CUSTOM_PRIORITY_SCORE:
            out.append(((*loc, k, "score"), invalid(score, f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]")))
    return out


def _resources(raw: Any, loc: Loc) -> list[Problem]:
    """validateResources, after defaulting (a weight of 0 or none is 1)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        return [(loc, invalid(raw, "must be a list of {name, weight}"))]
    out: list[Problem] = []
    for k, item in enumerate(raw):
        if not isinstance(item, dict):
            out.append(((*loc, k), invalid(item, "must be an object {name, weight}")))
            continue
        weight = item.get("weight") or 1
        if not _int(weight):
            out.append(((*loc, k, "weight"), invalid(weight, "must be an integer")))
        elif not 0 < weight <= 100:
            detail = f"resource weight of {item.get('name', '')} not in valid range (0, 100]"
            out.append(((*loc, k, "weight"), invalid(weight, detail)))
    return out


def node_resources_fit(args: dict[str, Any]) -> list[Problem]:
    """ValidateNodeResourcesFitArgs (after SetDefaults_NodeResourcesFitArgs)."""
    out: list[Problem] = []
    for k, name in enumerate(args.get("ignoredResources") or []):
        out += _label_name(name, ("ignoredResources", k))
    for k, group in enumerate(args.get("ignoredResourceGroups") or []):
        if isinstance(group, str) and "/" in group:
            out.append((("ignoredResourceGroups", k), invalid(group, "resource group name can't contain '/'")))
        out += _label_name(group, ("ignoredResourceGroups", k))
    strategy = args.get("scoringStrategy")
    if strategy is None:
        return out  # defaulted to LeastAllocated
    loc: Loc = ("scoringStrategy",)
    if not isinstance(strategy, dict):
        return [*out, (loc, invalid(strategy, "must be an object"))]
    kind = strategy.get("type") or ""
    if kind not in SCORING_STRATEGIES:
        out.append(((*loc, "type"), unsupported(kind, SCORING_STRATEGIES)))
    out += _resources(strategy.get("resources"), (*loc, "resources"))
    ratio = strategy.get("requestedToCapacityRatio")
    if kind == "RequestedToCapacityRatio":
        if ratio is None:
            detail = "Required value: must be specified when type is RequestedToCapacityRatio"
            out.append(((*loc, "requestedToCapacityRatio"), detail))
        else:
            shape = ratio.get("shape") if isinstance(ratio, dict) else None
            out += _shape(shape, (*loc, "requestedToCapacityRatio", "shape"))
    elif ratio is not None:
        detail = "Forbidden: must be nil when type is not RequestedToCapacityRatio"
        out.append(((*loc, "requestedToCapacityRatio"), detail))
    return out


def pod_topology_spread(args: dict[str, Any]) -> list[Problem]:
    """ValidatePodTopologySpreadArgs (after SetDefaults_PodTopologySpreadArgs: defaultingType System)."""
    out: list[Problem] = []
    constraints = args.get("defaultConstraints") or []
    if not isinstance(constraints, list):
        return [(("defaultConstraints",), invalid(constraints, "must be a list"))]
    defaulting = args.get("defaultingType") or "System"
    if defaulting not in ("System", "List"):
        out.append((("defaultingType",), unsupported(defaulting, ("System", "List"))))
    elif defaulting == "System" and constraints:
        out.append((("defaultingType",), invalid(defaulting, "when .defaultConstraints are not empty")))
    seen: list[tuple[Any, Any]] = []
    for k, raw in enumerate(constraints):
        loc: Loc = ("defaultConstraints", k)
        c = raw if isinstance(raw, dict) else {}
        skew = c.get("maxSkew", 0)
        if not _int(skew):
            out.append(((*loc, "maxSkew"), invalid(skew, "must be an integer")))
        elif skew <= 0:
            out.append(((*loc, "maxSkew"), invalid(skew, "not in valid range (0, inf)")))
        key = c.get("topologyKey") or ""
        if not key:
            out.append(((*loc, "topologyKey"), "Required value: can not be empty"))
        else:
            out += _label_name(key, (*loc, "topologyKey"))
        when = c.get("whenUnsatisfiable") or ""
        if not when:
            out.append(((*loc, "whenUnsatisfiable"), "Required value: can not be empty"))
        elif when not in ("DoNotSchedule", "ScheduleAnyway"):
            out.append(((*loc, "whenUnsatisfiable"), unsupported(when, ("DoNotSchedule", "ScheduleAnyway"))))
        if c.get("labelSelector") is not None:
            detail = "Forbidden: constraint must not define a selector, as they deduced for each pod"
            out.append(((*loc, "labelSelector"), detail))
        if (key, when) in seen:
            out.append(((("defaultConstraints", k)), f'Duplicate value: "{{{key}, {when}}}"'))
        seen.append((key, when))
    return out


def inter_pod_affinity(args: dict[str, Any]) -> list[Problem]:
    """validateHardPodAffinityWeight (defaulted to 1)."""
    out: list[Problem] = []
    weight = _integer(args, "hardPodAffinityWeight", 1, out)
    if weight is not None and not 0 <= weight <= 100:
        out.append((("hardPodAffinityWeight",), invalid(weight, "not in valid range [0, 100]")))
    return out


def balanced_allocation(args: dict[str, Any]) -> list[Problem]:
    """ValidateNodeResourcesBalancedAllocationArgs (a weight of 0 defaulted to 1)."""
    out: list[Problem] = []
    seen: set[Any] = set()
    for k, item in enumerate(args.get("resources") or []):
        item = item if isinstance(item, dict) else {}
        name = item.get("name")
        if name in seen:
            out.append((("resources", k, "name"), f"Duplicate value: {go_value(name)}"))
        seen.add(name)
        weight = item.get("weight") or 1
        if weight != 1:
            out.append((("resources", k, "weight"), invalid(weight, "must be 1")))
    return out


def default_preemption(args: dict[str, Any]) -> list[Problem]:
    """ValidateDefaultPreemptionArgs (defaults: 10 %, 100 nodes)."""
    out: list[Problem] = []
    percentage = _integer(args, "minCandidateNodesPercentage", 10, out)
    absolute = _integer(args, "minCandidateNodesAbsolute", 100, out)
    if percentage is not None and not 0 <= percentage <= 100:
        out.append((("minCandidateNodesPercentage",), invalid(percentage, "not in valid range [0, 100]")))
    if absolute is not None and absolute < 0:
        out.append((("minCandidateNodesAbsolute",), invalid(absolute, "not in valid range [0, inf)")))
    if percentage == 0 and absolute == 0:
        out.append(
            (
                ("minCandidateNodesPercentage",),
                invalid(0, "cannot be zero at the same time as minCandidateNodesAbsolute"),
            )
        )
        out.append(
            (
                ("minCandidateNodesAbsolute",),
                invalid(0, "cannot be zero at the same time as minCandidateNodesPercentage"),
            )
        )
    return out


def volume_binding(args: dict[str, Any], version: Version) -> list[Problem]:
    """ValidateVolumeBindingArgs: with StorageCapacityScoring off (v1.34–v1.36's default) no `shape`."""
    out: list[Problem] = []
    timeout = _integer(args, "bindTimeoutSeconds", 600, out)
    if timeout is not None and timeout < 0:
        detail = "invalid BindTimeoutSeconds, should not be a negative value"
        out.append((("bindTimeoutSeconds",), invalid(timeout, detail)))
    shape = args.get("shape")
    if shape is not None and version.gates.enabled("StorageCapacityScoring"):
        out.extend(_shape(shape, ("shape",)))
    elif shape is not None:
        points = shape if isinstance(shape, list) else []
        # the bad value as Go's %#v prints the []UtilizationShapePoint
        value = ", ".join(
            f"config.UtilizationShapePoint{{Utilization:{p.get('utilization', 0)}, Score:{p.get('score', 0)}}}"
            for p in points
            if isinstance(p, dict)
        )
        detail = "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"
        out.append((("shape",), f"Invalid value: []config.UtilizationShapePoint{{{value}}}: {detail}"))
    return out


VALIDATORS: dict[str, Callable[[dict[str, Any]], list[Problem]]] = {
    "NodeResourcesFit": node_resources_fit,
    "PodTopologySpread": pod_topology_spread,
    "InterPodAffinity": inter_pod_affinity,
    "NodeResourcesBalancedAllocation": balanced_allocation,
    "DefaultPreemption": default_preemption,
}


def validate_plugin_args(name: str, args: dict[str, Any], version: Version | None = None) -> list[Problem]:
    """Every problem of one plugin's args in `version` (the reference v1.34 when None), as
    `(path under args, message)`; [] when valid."""
    if name == "VolumeBinding":
        return volume_binding(args, version or reference_version())
    validator = VALIDATORS.get(name)
    return validator(args) if validator else []
