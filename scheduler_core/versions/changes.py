"""What changed in kube-scheduler between the supported versions, written as data.

Each change names the first minor version that has it, the gate that switches it (None: plain
code, no gate), the plugins whose answers it moves, and the upstream source (PR or KEP). Plugins
ask `Version.has(key)`; `explain --compare-version` names the change behind each difference.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CHANGES", "NOT_MODELLED", "Change"]


@dataclass(frozen=True)
class Change:
    key: str
    since: int  # first minor version with the change (when its gate is on)
    gate: str | None
    plugins: tuple[str, ...]
    source: str
    summary: str
    backports: tuple[tuple[int, int], ...] = ()  # (minor, first patch) of earlier minors that got it


CHANGES: tuple[Change, ...] = (
    Change(
        "taint-reason-constant",
        35,
        None,
        ("TaintToleration",),
        "kubernetes/kubernetes#134740",
        "TaintToleration's Filter reason is the constant `node(s) had untolerated taint(s)`; the taint moved to "
        "a log line (v1.34.0 printed `node(s) had untolerated taint {key: value}`)",
        backports=((34, 2),),  # #135023 in v1.34.2
    ),
    Change(
        "taint-comparison-operators",
        35,
        "TaintTolerationComparisonOperators",
        ("TaintToleration", "NodeUnschedulable", "PodTopologySpread"),
        "KEP-5471 (kubernetes/kubernetes#134665)",
        "tolerations may use the operators Gt and Lt, comparing the taint's value and the toleration's as integers",
    ),
    Change(
        "balanced-allocation-change",
        36,
        None,
        ("NodeResourcesBalancedAllocation",),
        "kubernetes/kubernetes#135573",
        "NodeResourcesBalancedAllocation scores the change in balance the pod brings, "
        "50 + (50 + balance with the pod − balance without it) / 2, instead of the balance with it",
    ),
    Change(
        "node-declared-features",
        36,
        "NodeDeclaredFeatures",
        ("NodeDeclaredFeatures",),
        "KEP-5328",
        "the NodeDeclaredFeatures plugin joins the default profile: a pod needing a feature only runs on nodes "
        "whose status.declaredFeatures lists it",
    ),
    Change(
        "node-declared-features-constant-reason",
        36,
        None,
        ("NodeDeclaredFeatures",),
        "component-helpers d925060 (avoid computing the feature diff)",
        "NodeDeclaredFeatures' Filter reason is the constant `node(s) didn't match Pod's required features` "
        "(v1.35 listed the unsatisfied features)",
    ),
    Change(
        "storage-capacity-scoring",
        37,
        "StorageCapacityScoring",
        ("VolumeBinding",),
        "KEP-4049",
        "VolumeBinding scores nodes by the CSI storage capacity left after binding (default shape: "
        "utilization 0 → 10, 100 → 0)",
    ),
)

# Gates whose "on" behaviour clusterviz does not model (their "off" behaviour it does). A user
# may not turn one on; where a version turns one on by default, what meets it is refused with an
# error naming the gate instead of being answered wrongly (docs/versions.md).
NOT_MODELLED: dict[str, str] = {
    "DRAConsumableCapacity": "devices shared by several claims (allowMultipleAllocations, capacity requests)",
    "DRADeviceBindingConditions": "devices with binding conditions",
    "DRADeviceTaints": "device taints and their tolerations",
    "DRADeviceTaintRules": "DeviceTaintRule objects",
    "DRAExtendedResource": "extended resources backed by DRA device classes",
    "DRAPartitionableDevices": "partitionable devices (shared counters)",
    "DRAListTypeAttributes": "list-typed device attributes",
    "DRANodeAllocatableResources": "node allocatable resources from DRA",
    "DRAOptionalNodeOperations": "optional node operations of DRA drivers",
    "DRADerivedAttributes": "derived device attributes",
    "DRADeviceCompatibilityGroups": "device compatibility groups",
    "DRAFractionalCapacityRange": "fractional capacity ranges",
    "DRAWorkloadResourceClaims": "workload resource claims",
    "GenericWorkload": "the Workload API and gang scheduling",
    "GangScheduling": "gang scheduling",
    "WorkloadAwarePreemption": "workload-aware preemption",
    "CompositePodGroup": "composite pod groups",
    "TopologyAwareWorkloadScheduling": "topology-aware workload scheduling",
    "PodGroupPreemptionPolicy": "pod group preemption policies",
    "InPlacePodLevelResourcesVerticalScaling": "in-place resize of pod-level resources",
    "InPlacePodVerticalScalingSchedulerPreemption": "the DeferredPodScheduling plugin",
    "VolumeLimitScaling": "scaled CSI volume limits",
}
