"""Feature gates as kube-scheduler's binary knows them, each with its versioned defaults.

Upstream: `pkg/features/kube_features.go` (`defaultVersionedKubernetesFeatureGates`) and, from
v1.37, `staging/src/k8s.io/kube-scheduler/pkg/features/kube_features.go`; the rules (a gate's
default at version V is the newest spec at or before V; a locked gate refuses the other value;
`AllAlpha`/`AllBeta`) are component-base's `featuregate` package. Only the gates kube-scheduler
reads are listed: the ones pkg/scheduler consults and those behind the default profile.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from ..api.loading import InputError

__all__ = ["GATES", "FeatureGates", "Spec", "Stage", "parse_gate_overrides"]


class Stage(StrEnum):
    ALPHA = "ALPHA"
    BETA = "BETA"
    GA = ""
    DEPRECATED = "DEPRECATED"


@dataclass(frozen=True)
class Spec:
    """One entry of a gate's versioned spec list: from minor `since` on, `default` at `stage`."""

    since: int  # the minor version (1.<since>)
    default: bool
    stage: Stage
    locked: bool = False


A, B, G = Stage.ALPHA, Stage.BETA, Stage.GA

# name → specs in version order, as the stored upstream files list them (1.34–1.37; see
# docs/versions.md for the commit each was read from). `removed`: the first minor without it.
GATES: dict[str, tuple[Spec, ...]] = {
    "DynamicResourceAllocation": (Spec(26, False, A), Spec(32, False, B), Spec(34, True, G), Spec(35, True, G, True)),
    "DRAAdminAccess": (Spec(32, False, A), Spec(34, True, B), Spec(36, True, G, True)),
    "DRAConsumableCapacity": (Spec(34, False, A), Spec(36, True, B)),
    "DRADeviceBindingConditions": (Spec(34, False, A), Spec(36, True, B)),
    "DRADeviceTaintRules": (Spec(35, False, A), Spec(36, False, B), Spec(37, True, G)),
    "DRADeviceTaints": (Spec(33, False, A), Spec(36, True, B), Spec(37, True, G)),
    "DRAExtendedResource": (Spec(34, False, A), Spec(36, True, B), Spec(37, True, G, True)),
    "DRAListTypeAttributes": (Spec(36, False, A),),
    "DRANodeAllocatableResources": (Spec(36, False, A),),
    "DRAOptionalNodeOperations": (Spec(37, False, A),),
    "DRADerivedAttributes": (Spec(37, False, A),),
    "DRADeviceCompatibilityGroups": (Spec(37, False, A),),
    "DRAFractionalCapacityRange": (Spec(37, False, B),),  # true only with compatibility version >= 1.37
    "DRAPartitionableDevices": (Spec(33, False, A), Spec(36, True, B)),
    "DRAPrioritizedList": (Spec(33, False, A), Spec(34, True, B), Spec(36, True, G), Spec(37, True, G, True)),
    "DRAResourceClaimDeviceStatus": (Spec(32, False, A), Spec(33, True, B), Spec(37, True, G, True)),
    "DRASchedulerFilterTimeout": (Spec(34, True, B),),
    "DRAWorkloadResourceClaims": (Spec(36, False, A), Spec(37, False, B)),
    "GenericWorkload": (Spec(35, False, A), Spec(37, False, B)),
    "GangScheduling": (Spec(35, False, A),),
    "WorkloadAwarePreemption": (Spec(36, False, A),),
    "CompositePodGroup": (Spec(37, False, A),),
    "TopologyAwareWorkloadScheduling": (Spec(36, False, A),),
    "PodGroupPreemptionPolicy": (Spec(37, False, A),),
    "InPlacePodVerticalScaling": (Spec(27, False, A), Spec(33, True, B), Spec(35, True, G, True)),
    "InPlacePodLevelResourcesVerticalScaling": (Spec(35, False, A), Spec(36, True, B)),
    "InPlacePodVerticalScalingSchedulerPreemption": (Spec(37, False, A),),
    "InterPodAffinityHostnameFastPath": (Spec(37, False, A),),
    "MatchLabelKeysInPodTopologySpread": (Spec(25, False, A), Spec(27, True, B)),
    "NodeDeclaredFeatures": (Spec(35, False, A), Spec(36, True, B), Spec(37, True, G, True)),
    "NodeInclusionPolicyInPodTopologySpread": (Spec(25, False, A), Spec(26, True, B), Spec(33, True, G, True)),
    "NominatedNodeNameForExpectation": (Spec(34, False, A), Spec(35, True, B)),
    "ClearingNominatedNodeNameAfterBinding": (Spec(34, False, A), Spec(35, True, B)),
    "OpportunisticBatching": (Spec(35, True, B),),
    "PodLevelResources": (Spec(32, False, A), Spec(34, True, B)),
    "SchedulerAsyncAPICalls": (Spec(34, False, B),),
    "SchedulerAsyncPreemption": (Spec(32, False, A), Spec(33, True, B)),
    "SchedulerPopFromBackoffQ": (Spec(33, True, B),),
    "SchedulerPreQueueingHints": (Spec(37, False, A),),
    "SchedulerQueueingHints": (Spec(28, False, B), Spec(32, True, B), Spec(34, True, G, True)),
    "SidecarContainers": (Spec(28, False, A), Spec(29, True, B), Spec(33, True, G, True)),
    "StorageCapacityScoring": (Spec(33, False, A), Spec(37, True, B)),
    "TaintTolerationComparisonOperators": (Spec(35, False, A),),
    "VolumeAttributesClass": (Spec(29, False, A), Spec(31, False, B), Spec(34, True, G), Spec(36, True, G, True)),
    "VolumeLimitScaling": (Spec(35, False, A), Spec(37, True, B)),
}

# Gates gone from the binary at a minor (kube-scheduler then calls them unrecognized):
# SidecarContainers (#137755, v1.37); GangScheduling and WorkloadAwarePreemption folded into
# GenericWorkload (#139520, v1.37).
# The value is what the code does once the gate is gone (SidecarContainers' behaviour stays on).
REMOVED: dict[str, tuple[int, bool]] = {
    "SidecarContainers": (37, True),
    "GangScheduling": (37, False),
    "WorkloadAwarePreemption": (37, False),
}


def _spec_at(specs: tuple[Spec, ...], minor: int) -> Spec | None:
    current = None
    for spec in specs:
        if spec.since <= minor:
            current = spec
    return current


@functools.cache
def known_at(minor: int) -> dict[str, Spec]:
    """Every gate the v1.<minor> binary knows, with the spec in force there."""
    out = {}
    for name, specs in GATES.items():
        spec = _spec_at(specs, minor)
        if spec is not None and (name not in REMOVED or REMOVED[name][0] > minor):
            out[name] = spec
    return out


def _parse_bool(name: str, text: str) -> bool:
    """strconv.ParseBool's spellings, as cliflag.MapStringBool reads `--feature-gates`."""
    if text in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if text in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    raise InputError(f'invalid value of {name}={text}, err: strconv.ParseBool: parsing "{text}": invalid syntax')


def parse_gate_overrides(text: str) -> dict[str, bool]:
    """`--feature-gates=A=true,B=false` (cliflag.MapStringBool.Set), in the order given; errors
    without the flag's name (get_version adds it)."""
    out: dict[str, bool] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            raise InputError(f"missing bool value for {part}")
        name, value = (s.strip() for s in part.split("=", 1))
        out[name] = _parse_bool(name, value)
    return out


@dataclass(frozen=True)
class FeatureGates:
    """The gates of one kube-scheduler binary (v1.<minor>) with the user's overrides applied."""

    minor: int
    overrides: Mapping[str, bool] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def __hash__(self) -> int:  # a Version keys caches (profiles resolved once per version)
        return hash((self.minor, tuple(sorted(self.overrides.items()))))

    @classmethod
    def build(cls, minor: int, overrides: Mapping[str, bool]) -> FeatureGates:
        """`featureGate.SetFromMap`: refuses an unknown gate or a locked one set against its lock."""
        known = known_at(minor)
        resolved: dict[str, bool] = {}
        warnings: list[str] = []
        for name, value in overrides.items():
            if name in ("AllAlpha", "AllBeta"):
                stage = Stage.ALPHA if name == "AllAlpha" else Stage.BETA
                for gate, spec in known.items():
                    if spec.stage == stage and not spec.locked and gate not in overrides:
                        resolved[gate] = value
                continue
            spec = known.get(name)
            if spec is None:
                raise InputError(f"unrecognized feature gate: {name} (not a gate kube-scheduler v1.{minor} reads)")
            if spec.locked and value != spec.default:
                raise InputError(
                    f"cannot set feature gate {name} to {str(value).lower()}, "
                    f"feature is locked to {str(spec.default).lower()} (v1.{minor})"
                )
            if spec.stage == Stage.GA:
                warnings.append(
                    f"Setting GA feature gate {name}={str(value).lower()}. It will be removed in a future release."
                )
            resolved[name] = value
        return cls(minor, resolved, tuple(warnings))

    def enabled(self, name: str) -> bool:
        """The gate's value (a gate this version does not have is off)."""
        if name in self.overrides:
            return self.overrides[name]
        spec = known_at(self.minor).get(name)
        if spec is not None:
            return spec.default
        return name in REMOVED and REMOVED[name][0] <= self.minor and REMOVED[name][1]

    def spec_text(self) -> str:
        """The overrides as `--feature-gates` spells them."""
        return ",".join(f"{name}={str(value).lower()}" for name, value in sorted(self.overrides.items()))
