"""The in-tree plugin registry and the default framework (pkg/scheduler/framework/plugins/registry.go)."""

from __future__ import annotations

import functools

from ..framework.profile import Profile, default_profile
from ..framework.runtime import Framework, PluginFactory
from ..versions import SUPPORTED, Version
from . import (
    dynamic_resources,
    image_locality,
    names,
    node_affinity,
    node_declared_features,
    node_name,
    node_ports,
    node_unschedulable,
    node_volume_limits,
    queue_and_bind,
    taint_toleration,
    volume_binding,
    volume_restrictions,
    volume_zone,
)
from .default_preemption import plugin as default_preemption
from .inter_pod_affinity import plugin as inter_pod_affinity
from .node_resources import balanced_allocation, fit
from .pod_topology_spread import plugin as pod_topology_spread

__all__ = ["IN_TREE_REGISTRY", "new_framework", "plugin_versions", "registry_for"]

IN_TREE_REGISTRY: dict[str, PluginFactory] = {
    names.SCHEDULING_GATES: queue_and_bind.new_scheduling_gates,
    names.PRIORITY_SORT: queue_and_bind.new_priority_sort,
    names.NODE_UNSCHEDULABLE: node_unschedulable.new,
    names.NODE_NAME: node_name.new,
    names.TAINT_TOLERATION: taint_toleration.new,
    names.NODE_AFFINITY: node_affinity.new,
    names.NODE_DECLARED_FEATURES: node_declared_features.new,
    names.NODE_PORTS: node_ports.new,
    names.NODE_RESOURCES_FIT: fit.new,
    names.VOLUME_RESTRICTIONS: volume_restrictions.new,
    names.NODE_VOLUME_LIMITS: node_volume_limits.new,
    names.VOLUME_BINDING: volume_binding.new,
    names.VOLUME_ZONE: volume_zone.new,
    names.POD_TOPOLOGY_SPREAD: pod_topology_spread.new,
    names.INTER_POD_AFFINITY: inter_pod_affinity.new,
    names.DYNAMIC_RESOURCES: dynamic_resources.new,
    names.DEFAULT_PREEMPTION: default_preemption.new,
    names.NODE_RESOURCES_BALANCED_ALLOCATION: balanced_allocation.new,
    names.IMAGE_LOCALITY: image_locality.new,
    names.DEFAULT_BINDER: queue_and_bind.new_default_binder,
}


# Plugins a version's registry gains (the first minor that registers them).
_ADDED_IN: dict[str, int] = {names.NODE_DECLARED_FEATURES: 35}


def registry_for(version: Version) -> dict[str, PluginFactory]:
    """The in-tree registry of kube-scheduler `version` (one shared dict per minor: read, never changed)."""
    return _registry_of(version.minor)


@functools.cache
def _registry_of(minor: int) -> dict[str, PluginFactory]:
    return {name: f for name, f in IN_TREE_REGISTRY.items() if _ADDED_IN.get(name, 0) <= minor}


def plugin_versions(name: str) -> list[int]:
    """The supported minors whose registry has plugin `name` (all of them for the classic plugins)."""
    if name not in IN_TREE_REGISTRY:
        return []
    return [minor for minor in SUPPORTED if _ADDED_IN.get(name, 0) <= minor]


def new_framework(profile: Profile | None = None) -> Framework:
    """A framework for `profile` (upstream's default profile when None)."""
    profile = profile or default_profile()
    return Framework(profile, registry_for(profile.version))
