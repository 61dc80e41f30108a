"""The node-declared-features registry kube-scheduler infers a pod's needs from
(staging/src/k8s.io/component-helpers/nodedeclaredfeatures/features/registry.go `AllFeatures`).

Each feature: its declared name, the first minor version whose registry has it, its MaxVersion (a
scheduler newer than that assumes every node has it and requires nothing), and
`InferForScheduling` — which pod fields need it. Features that only matter for updates (in-place
resize) infer nothing for scheduling and are listed for completeness.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..api.objects import Container, Pod

__all__ = ["FEATURES", "DeclaredFeature", "required_features"]


def _extra(model: Any, key: str) -> Any:
    return (model.model_extra or {}).get(key)


def _never(pod: Pod) -> bool:
    return False


def _restart_all_containers(pod: Pod) -> bool:
    """restartallcontainers: a container rule whose action is RestartAllContainers."""
    containers: list[Container] = [*pod.spec.containers, *pod.spec.init_containers]
    return any(
        isinstance(rule, dict) and rule.get("action") == "RestartAllContainers"
        for container in containers
        for rule in (_extra(container, "restartPolicyRules") or [])
    )


def _user_namespaces_host_network(pod: Pod) -> bool:
    """usernamespaceshostnetwork: hostNetwork with hostUsers false."""
    return bool(pod.spec.host_network) and _extra(pod.spec, "hostUsers") is False


def _volume_bind_mount_options(pod: Pod) -> bool:
    """volumebindmountoptions: a volume mount with bindMountOptions (containers, init, ephemeral)."""
    containers: list[Any] = [*pod.spec.containers, *pod.spec.init_containers]
    containers += [c for c in (_extra(pod.spec, "ephemeralContainers") or []) if isinstance(c, dict)]
    for container in containers:
        mounts = container.get("volumeMounts") if isinstance(container, dict) else _extra(container, "volumeMounts")
        if any(isinstance(m, dict) and m.get("bindMountOptions") for m in mounts or []):
            return True
    return False


@dataclass(frozen=True)
class DeclaredFeature:
    name: str
    since: int  # first minor whose registry lists it
    until: int | None  # first minor whose registry no longer lists it
    infer_for_scheduling: Callable[[Pod], bool]
    # MaxVersion is nil for every feature in v1.35–v1.37, so no version skips one.


# component-helpers v0.35.0 / v0.36.0 / master (1.37) `AllFeatures`, in the registry's order (by
# name, as ndf.New sorts it); update-only features infer nothing at scheduling time.
FEATURES: tuple[DeclaredFeature, ...] = tuple(
    sorted(
        (
            DeclaredFeature("DRANodeAllocatableResources", 37, None, _never),
            DeclaredFeature("DRAOptionalNodeOperations", 37, None, _never),
            DeclaredFeature("ExtendWebSocketsToKubelet", 36, None, _never),
            DeclaredFeature("GuaranteedQoSPodCPUResize", 35, 36, _never),
            DeclaredFeature("InPlacePodLevelResourcesVerticalScaling", 35, None, _never),
            DeclaredFeature("InPlacePodVerticalScalingInitContainers", 36, None, _never),
            DeclaredFeature("InPlacePodVerticalScalingMemoryBackedVolumes", 37, None, _never),
            DeclaredFeature("RestartAllContainersOnContainerExits", 35, None, _restart_all_containers),
            DeclaredFeature("UserNamespacesHostNetworkSupport", 36, None, _user_namespaces_host_network),
            DeclaredFeature("VolumeBindMountOptions", 37, None, _volume_bind_mount_options),
        ),
        key=lambda f: f.name,
    )
)


@functools.cache
def _schedulable_features(minor: int) -> tuple[DeclaredFeature, ...]:
    """The registry of v1.<minor> without the features that never infer anything at scheduling."""
    return tuple(
        f
        for f in FEATURES
        if f.since <= minor and (f.until is None or minor < f.until) and f.infer_for_scheduling is not _never
    )


# The pod fields some feature's inference reads: a pod with none of them needs no feature (checked
# first, in one pass: every pod is inferred once per cycle)
_SPEC_FIELDS = ("ephemeralContainers",)
_CONTAINER_FIELDS = ("restartPolicyRules", "volumeMounts")


def _reads_nothing(pod: Pod) -> bool:
    spec = pod.spec.model_extra or {}
    if pod.spec.host_network or any(spec.get(key) for key in _SPEC_FIELDS):
        return False
    for container in (*pod.spec.containers, *pod.spec.init_containers):
        extra = container.model_extra
        if extra and any(extra.get(key) for key in _CONTAINER_FIELDS):
            return False
    return True


def required_features(pod: Pod, minor: int) -> tuple[str, ...]:
    """`InferForPodScheduling` with the scheduler at v1.<minor>: the features the pod needs."""
    features = _schedulable_features(minor)
    if not features or _reads_nothing(pod):
        return ()
    return tuple(f.name for f in features if f.infer_for_scheduling(pod))
