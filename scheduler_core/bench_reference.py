"""The benchmark's reference kernel — a yardstick, NOT the scheduler.

A lean columnar numpy loop doing, for each pod of a workload, the default profile's filters and
scores over every node (resources, unschedulable, taints, node affinity, inter-pod affinity both
ways, topology spread; LeastAllocated, BalancedAllocation, taints, node affinity, spread,
inter-pod affinity, image locality), picking the best node and binding the pod — with none of
the scheduler's explanation: no per-plugin verdicts or reasons, no events, no statuses, no
extension points. It runs in the same process as the scheduler's benchmark, so
`scheduler pods/s ÷ reference pods/s` stays meaningful on a loaded machine where raw pods/s
swing with the load. Its choices are not checked against upstream and nothing reads them.
"""

from __future__ import annotations

import math
import random

import numpy as np

from .framework.node_table import NodeTable
from .framework.pod_info import AffinityTerm, PodInfo
from .framework.selectors import compile_label_selector, compile_node_selector_term
from .plugins.helper import find_untolerated_taint, tolerates
from .plugins.image_locality import normalized_image_name

__all__ = ["ReferenceKernel"]

_BASE = ("cpu", "memory", "ephemeral-storage")


class ReferenceKernel:
    """Schedules pods onto a `NodeTable` with the bare arithmetic of the default profile."""

    def __init__(self, table: NodeTable, seed: int = 0) -> None:
        self.table = table
        self.rng = random.Random(seed)
        # node-static columns, prepared once
        self.alloc_cpu = table.alloc["cpu"]
        self.alloc_mem = table.alloc["memory"]
        self.alloc_cpu_safe = np.where(self.alloc_cpu > 0, self.alloc_cpu, 1).astype(np.float64)
        self.alloc_mem_safe = np.where(self.alloc_mem > 0, self.alloc_mem, 1).astype(np.float64)

    def schedule(self, pod: PodInfo) -> int | None:
        table = self.table
        ok = self._feasible(pod)
        feasible = np.flatnonzero(ok)
        if len(feasible) == 0:
            return None
        total = self._scores(pod, feasible)
        top = feasible[total == total.max()]
        chosen = int(top[self.rng.randrange(len(top))]) if len(top) > 1 else int(top[0])
        table.add_pod(pod, chosen)
        return chosen

    # --- filters --------------------------------------------------------------------------------

    def _feasible(self, pod: PodInfo) -> np.ndarray:
        t = self.table
        ok = t.pod_count < t.alloc["pods"]
        for resource, request in pod.requests.items():
            alloc = t.alloc.get(resource)
            if alloc is None:
                return np.zeros(t.n, dtype=bool)
            ok &= t.requested[resource] + request <= alloc
        if t.unschedulable.any():
            ok &= ~t.unschedulable
        if len(t.taint_sets) > 1 or t.taint_sets[0]:
            sig_ok = np.array([find_untolerated_taint(s, pod.tolerations) is None for s in t.taint_sets])
            ok &= sig_ok[t.taint_sig]
        spec = pod.pod.spec
        if spec.node_selector:
            ok &= t.selector_mask(spec.node_selector)
        affinity = spec.affinity.node_affinity if spec.affinity else None
        required = affinity.required_during_scheduling_ignored_during_execution if affinity else None
        if required is not None:
            any_term = np.zeros(t.n, dtype=bool)
            for term in required.node_selector_terms:
                any_term |= t.term_mask(compile_node_selector_term(term))
            ok &= any_term
        for term in pod.required_affinity:
            at = self._at_node(term, self._matching(term))
            if not at.any() and term.matches(pod, None):
                continue  # the first pod of a group may land anywhere with the key
            ok &= at > 0
        for term in pod.required_anti_affinity:
            ok &= self._at_node(term, self._matching(term)) == 0
        for group in t.affinity_groups.values():
            for term in group.pod.required_anti_affinity:
                if term.matches(pod, None) and group.counts.any():
                    ok &= self._at_node(term, group.counts) == 0
        for c in spec.topology_spread_constraints:
            if c.when_unsatisfiable != "DoNotSchedule":
                continue
            codes = t.label_column(c.topology_key).codes
            per_domain = self._spread_counts(pod, c.topology_key, c.label_selector)
            if len(per_domain) == 0:
                continue
            self_match = 1
            ok &= (codes >= 0) & (per_domain[codes] + self_match - per_domain.min() <= c.max_skew)
        return ok

    def _matching(self, term: AffinityTerm) -> np.ndarray:
        return self.table.count_pods(lambda g: term.matches(g, None))  # type: ignore[arg-type]

    def _at_node(self, term: AffinityTerm, per_node: np.ndarray) -> np.ndarray:
        """Per node, the count summed over the node's topology domain (0 without the key)."""
        column = self.table.label_column(term.topology_key)
        if term.topology_key == "kubernetes.io/hostname" and len(column.values) == self.table.n:
            return np.where(column.codes >= 0, per_node, 0)
        sums = self.table.domain_counts(term.topology_key, per_node)
        return np.where(column.codes >= 0, sums[column.codes], 0) if len(sums) else np.zeros(self.table.n, np.int64)

    def _spread_counts(self, pod: PodInfo, key: str, label_selector: object) -> np.ndarray:
        selector = compile_label_selector(label_selector)
        per_node = self.table.count_matching(selector, pod.namespace)
        return self.table.domain_counts(key, per_node)

    # --- scores ---------------------------------------------------------------------------------

    def _scores(self, pod: PodInfo, idx: np.ndarray) -> np.ndarray:
        t = self.table
        cpu_alloc, mem_alloc = self.alloc_cpu[idx], self.alloc_mem[idx]
        nz_cpu = t.non_zero_cpu[idx] + pod.non_zero_cpu
        nz_mem = t.non_zero_memory[idx] + pod.non_zero_memory
        least = (
            ((cpu_alloc - nz_cpu) * 100 / self.alloc_cpu_safe[idx]).astype(np.int64)
            + ((mem_alloc - nz_mem) * 100 / self.alloc_mem_safe[idx]).astype(np.int64)
        ) // 2
        f_cpu = np.minimum((t.requested["cpu"][idx] + pod.requests.get("cpu", 0)) / self.alloc_cpu_safe[idx], 1.0)
        f_mem = np.minimum((t.requested["memory"][idx] + pod.requests.get("memory", 0)) / self.alloc_mem_safe[idx], 1.0)
        total = least + ((1 - np.abs(f_cpu - f_mem) / 2) * 100).astype(np.int64)
        # TaintToleration (weight 3): PreferNoSchedule taints not tolerated, reversed
        per_sig = np.array(
            [
                sum(1 for x in s if x.effect == "PreferNoSchedule" and not tolerates(pod.tolerations, x))
                for s in t.taint_sets
            ]
        )
        taints = per_sig[t.taint_sig[idx]]
        top = int(taints.max())
        total += 3 * (100 - 100 * taints // top if top else 100)
        # ImageLocality (weight 1)
        if t.images:
            sizes = np.zeros(t.n, dtype=np.int64)
            for container in pod.pod.spec.containers:
                for i, size in t.images.get(normalized_image_name(container.image), {}).items():
                    sizes[i] += size
            total += 100 * (np.clip(sizes[idx], 23 << 20, 1000 << 20) - (23 << 20)) // ((1000 - 23) << 20)
        # PodTopologySpread (weight 2): ScheduleAnyway constraints
        spread = np.zeros(len(idx), dtype=np.float64)
        scored = False
        for c in pod.pod.spec.topology_spread_constraints:
            if c.when_unsatisfiable != "ScheduleAnyway":
                continue
            scored = True
            codes = t.label_column(c.topology_key).codes[idx]
            per_domain = self._spread_counts(pod, c.topology_key, c.label_selector)
            weight = math.log(len(np.unique(codes[codes >= 0])) + 2)
            spread += np.where(codes >= 0, per_domain[codes] * weight + (c.max_skew - 1), 0.0)
        if scored:
            s = np.floor(spread + 0.5).astype(np.int64)
            high, low = int(s.max()), int(s.min())
            total += 2 * (100 * (high + low - s) // high if high else np.full(len(idx), 100))
        # InterPodAffinity (weight 2): the pod's preferred terms, and existing pods' terms matching it
        affinity = np.zeros(t.n, dtype=np.int64)
        touched = False
        for weighted, sign in [(w, 1) for w in pod.preferred_affinity] + [(w, -1) for w in pod.preferred_anti_affinity]:
            affinity += sign * weighted.weight * self._at_node(weighted.term, self._matching(weighted.term))
            touched = True
        for group in t.affinity_groups.values():
            other = group.pod
            terms = [(w.term, w.weight) for w in other.preferred_affinity]
            terms += [(w.term, -w.weight) for w in other.preferred_anti_affinity]
            terms += [(term, 1) for term in other.required_affinity]
            for term, weight in terms:
                if term.matches(pod, None):
                    affinity += weight * self._at_node(term, group.counts)
                    touched = True
        if touched:
            s = affinity[idx]
            low, high = int(s.min()), int(s.max())
            if high > low:
                total += 2 * (100.0 * ((s - low) / (high - low))).astype(np.int64)
        return total
