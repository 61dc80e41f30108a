"""What `kubectl drain` may delete, and what the eviction API lets it evict.

Which pods: kubectl's pod filters, in upstream's order, the first that does not delete a pod deciding
(staging/src/k8s.io/kubectl/pkg/drain/filters.go): DaemonSet-managed pods (an error unless
--ignore-daemonsets; then left where they run), mirror pods (skipped), pods with emptyDir volumes
(an error unless --delete-emptydir-data), pods without a controller (an error unless --force). A
node with any error is cordoned but not drained, as kubectl does; finished pods always go.

The budgets: the eviction subresource (pkg/registry/core/pod/storage/eviction.go) refuses a pod
that more than one PodDisruptionBudget selects, and one whose budget allows no disruption (429
"Cannot evict pod as it would violate the pod's disruption budget."); each eviction spends one. The
disruption controller then recounts the healthy pods: a replacement that was scheduled counts
again, so kubectl's retries (every 5 s) may go through later.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..api.objects import Pod
from ..api.policy import PodDisruptionBudget
from ..api.workloads import WorkloadIndex, controller_ref
from ..framework.node_table import NodeTable, PodGroup
from ..framework.pod_info import PodInfo
from ..framework.selectors import Selector

__all__ = [
    "PDB_REFUSAL",
    "Budgets",
    "DrainOptions",
    "NodeDeletions",
    "deletions_on",
]

DAEMONSET_FATAL = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
DAEMONSET_WARNING = "ignoring DaemonSet-managed Pods"
LOCAL_STORAGE_FATAL = "Pods with local storage (use --delete-emptydir-data to override)"
LOCAL_STORAGE_WARNING = "deleting Pods with local storage"
UNMANAGED_FATAL = "cannot delete Pods that declare no controller (use --force to override)"
UNMANAGED_WARNING = "deleting Pods that declare no controller"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
PDB_REFUSAL = "Cannot evict pod as it would violate the pod's disruption budget."
MANY_PDBS = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
FINISHED = ("Succeeded", "Failed")


@dataclass(frozen=True)
class DrainOptions:
    """kubectl drain's flags that decide which pods go."""

    ignore_daemonsets: bool = False
    force: bool = False
    delete_emptydir_data: bool = False


@dataclass
class NodeDeletions:
    """One node's pods as kubectl drain sorts them."""

    node: str
    delete: list[PodInfo] = field(default_factory=list)
    kept: list[PodInfo] = field(default_factory=list)  # skipped or ignored: they stay on the node
    warnings: dict[str, list[str]] = field(default_factory=dict)  # message → pods
    errors: dict[str, list[str]] = field(default_factory=dict)

    @property
    def error(self) -> str | None:
        """kubectl's error for the node (an aggregate of one line per message), if any."""
        if not self.errors:
            return None
        lines = []
        for message, pods in self.errors.items():
            lead = message if message.lower().startswith("cannot delete") else f"cannot delete {message}"
            lines.append(f"{lead}: {', '.join(pods)}")
        lines.sort()  # (upstream's order is a Go map's: any)
        return lines[0] if len(lines) == 1 else "[" + ", ".join(lines) + "]"

    @property
    def warning(self) -> str | None:
        if not self.warnings:
            return None
        return "; ".join(f"{message}: {', '.join(pods)}" for message, pods in sorted(self.warnings.items()))


def _controller_kind_and_name(pod: Pod) -> tuple[str, str] | None:
    ref = controller_ref(pod.metadata)
    return (ref.kind, ref.name) if ref is not None else None


Verdict = tuple[bool, str, str]  # (delete?, "Okay"|"Skip"|"Warning"|"Error", message)
OKAY: Verdict = (True, "Okay", "")


def _daemonset_filter(pod: Pod, options: DrainOptions, workloads: WorkloadIndex) -> Verdict:
    controller = _controller_kind_and_name(pod)
    if controller is None or controller[0] != "DaemonSet" or pod.status.phase in FINISHED:
        return OKAY
    if ("DaemonSet", pod.metadata.namespace or "default", controller[1]) not in workloads.by_key:
        missing = f'daemonsets.apps "{controller[1]}" not found'  # an orphan: deleted with --force
        return (True, "Warning", missing) if options.force else (False, "Error", missing)
    if not options.ignore_daemonsets:
        return False, "Error", DAEMONSET_FATAL
    return False, "Warning", DAEMONSET_WARNING


def _mirror_filter(pod: Pod, options: DrainOptions, workloads: WorkloadIndex) -> Verdict:
    return (False, "Skip", "") if MIRROR_POD_ANNOTATION in pod.metadata.annotations else OKAY


def _local_storage_filter(pod: Pod, options: DrainOptions, workloads: WorkloadIndex) -> Verdict:
    if pod.status.phase in FINISHED or not any(volume.empty_dir is not None for volume in pod.spec.volumes):
        return OKAY
    if not options.delete_emptydir_data:
        return False, "Error", LOCAL_STORAGE_FATAL
    return True, "Warning", LOCAL_STORAGE_WARNING


def _unreplicated_filter(pod: Pod, options: DrainOptions, workloads: WorkloadIndex) -> Verdict:
    if pod.status.phase in FINISHED or _controller_kind_and_name(pod) is not None:
        return OKAY
    if options.force:
        return True, "Warning", UNMANAGED_WARNING
    return False, "Error", UNMANAGED_FATAL


FILTERS = (_daemonset_filter, _mirror_filter, _local_storage_filter, _unreplicated_filter)


def _verdict(pod: Pod, options: DrainOptions, workloads: WorkloadIndex) -> Verdict:
    """The filters in order until one does not delete the pod; the last one run decides (so an
    earlier warning is dropped by a later Okay, as upstream's chain drops it)."""
    verdict = OKAY
    for check in FILTERS:
        verdict = check(pod, options, workloads)
        if not verdict[0]:
            break
    return verdict


def deletions_on(table: NodeTable, i: int, options: DrainOptions, workloads: WorkloadIndex) -> NodeDeletions:
    """kubectl drain's `GetPodsForDeletion` for node `i`: what it deletes, keeps, warns and refuses."""
    result = NodeDeletions(table.names[i])
    for info in table.pods[i]:
        delete, reason, message = _verdict(info.pod, options, workloads)
        if reason == "Warning":
            result.warnings.setdefault(message, []).append(info.key)
        elif reason == "Error":
            result.errors.setdefault(message, []).append(info.key)
        (result.delete if delete else result.kept).append(info)
    return result


@dataclass
class _Budget:
    pdb: PodDisruptionBudget
    selector: Selector
    desired: int = 0
    healthy_then: int = 0  # as the status reports (or as counted, without a status)
    counted_then: int = 0  # as this table counts them when the drain starts
    groups: list[PodGroup] = field(default_factory=list)  # the table's label groups it selects
    seen: int = 0  # how many of the table's groups were looked at (groups are only ever added)

    def count(self, table: NodeTable) -> int:
        """The budget's pods in the table now, not terminating (summed over its label groups)."""
        if self.seen == 0 and table.group_list:  # the first count: through the table's label index
            namespace = self.pdb.namespace
            self.groups = [
                g
                for g in table.candidate_groups(self.selector, namespace)
                if g.namespace == namespace and self.selector.matches(g.labels)
            ]
            self.seen = len(table.group_list)
        if len(table.group_list) != self.seen:
            namespace = self.pdb.namespace
            for group in table.group_list[self.seen :]:
                if group.namespace == namespace and self.selector.matches(group.labels):
                    self.groups.append(group)
            self.seen = len(table.group_list)
        return sum(int(group.counts.sum()) for group in self.groups if not group.terminating)

    def allowed(self, counted_now: int) -> tuple[int, int]:
        """(disruptions allowed now, healthy now): the status's figures moved by what changed since."""
        healthy = self.healthy_then + counted_now - self.counted_then
        return max(0, healthy - self.desired), healthy


def _desired(pdb: PodDisruptionBudget, expected: int) -> int:
    """The disruption controller's desiredHealthy for `expected` pods (disruption.go
    getExpectedPodCount): minAvailable as given or as a percentage rounded up; maxUnavailable taken
    from the expected count, its percentage rounded up."""
    spec = pdb.spec
    if spec.max_unavailable is not None:
        return max(0, expected - _scaled(spec.max_unavailable, expected))
    if spec.min_available is not None:
        return _scaled(spec.min_available, expected)
    return expected  # neither: upstream's validation refuses it; nothing may be disrupted


def _scaled(value: int | str, total: int) -> int:
    if isinstance(value, int):
        return value
    return math.ceil(int(value.rstrip("%")) * total / 100)


class Budgets:
    """The PodDisruptionBudgets, counted against the live table: an eviction removes a healthy pod
    from it, a replacement placed adds one back."""

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self.budgets: list[_Budget] = []
        self.by_namespace: dict[str, list[_Budget]] = {}
        for pdb in table.pdbs:
            budget = _Budget(pdb, pdb.selector())
            counted = budget.count(table)
            status = pdb.status
            if status.observed_generation is not None or status.expected_pods:
                desired, healthy = status.desired_healthy, status.current_healthy
            else:  # no status (a hand-written cluster): the controller's figures from the pods here
                desired, healthy = _desired(pdb, counted), counted
            budget.desired, budget.healthy_then, budget.counted_then = desired, healthy, counted
            self.budgets.append(budget)
            self.by_namespace.setdefault(pdb.namespace, []).append(budget)

    def _of(self, info: PodInfo) -> list[_Budget]:
        return [b for b in self.by_namespace.get(info.namespace, ()) if b.selector.matches(info.labels)]

    def refusal(self, info: PodInfo) -> str | None:
        """Why the eviction API refuses `info` now (None: it may go), with the budget's figures."""
        budgets = self._of(info)
        if len(budgets) > 1:
            return MANY_PDBS
        if not budgets:
            return None
        budget = budgets[0]
        allowed, healthy = budget.allowed(budget.count(self.table))
        if allowed > 0:
            return None
        name = budget.pdb.metadata.name
        if healthy <= budget.desired:
            cause = f"The disruption budget {name} needs {budget.desired} healthy pods and has {healthy} currently"
            return f"{PDB_REFUSAL} {cause}"
        return f"{PDB_REFUSAL} The disruption budget {name} does not allow evicting pods currently"
