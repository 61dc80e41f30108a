"""What the scheduler derives from a Pod once: requests, ports, affinity terms, tolerations.

Upstream: pkg/scheduler/framework/types.go (`PodInfo`, `AffinityTerm`, `calculateResource`) and
k8s.io/component-helpers/resource `PodRequests` (v1.34, with restartable sidecars and pod-level
resources).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from ..api.objects import Container, Pod, PodAffinityTerm, Toleration
from ..api.quantity import Quantity
from .selectors import LabelRequirement, Selector, compile_label_selector

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "AffinityTerm",
    "PodInfo",
    "WeightedAffinityTerm",
    "is_scalar_resource",
    "resource_value",
]

# pkg/scheduler/util/pod_resources.go
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_sequence = itertools.count()
_ZERO = Fraction(0)
_NON_ZERO_DEFAULTS = {"cpu": Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000), "memory": Fraction(DEFAULT_MEMORY_REQUEST)}


def is_scalar_resource(name: str) -> bool:
    """`schedutil.IsScalarResourceName`: extended, hugepages-*, prefixed native, attachable volumes."""
    if name.startswith("hugepages-") or name.startswith("attachable-volumes-"):
        return True
    if "/" not in name:
        return False
    if "kubernetes.io/" in name:
        return True  # prefixed native resource
    return not name.startswith("requests.")


def resource_value(name: str, quantity: Quantity | Fraction) -> int:
    """cpu in millicores (`MilliValue()`), everything else in units (`Value()`), rounded up."""
    amount = quantity.amount if isinstance(quantity, Quantity) else quantity
    # ceil(numerator / denominator) in integers (a Fraction's denominator is positive)
    numerator = amount.numerator * 1000 if name == "cpu" else amount.numerator
    return -(-numerator // amount.denominator)


def _add(into: dict[str, Fraction], requests: Mapping[str, Fraction]) -> None:
    for name, amount in requests.items():
        into[name] = into[name] + amount if name in into else amount


def _max(into: dict[str, Fraction], requests: Mapping[str, Fraction]) -> None:
    for name, amount in requests.items():
        if name not in into or amount > into[name]:
            into[name] = amount


def _container_requests(container: Container, non_missing: Mapping[str, Fraction] | None) -> dict[str, Fraction]:
    requests = {name: q.amount for name, q in container.resources.requests.items()}
    if non_missing:
        for name, amount in non_missing.items():
            requests.setdefault(name, amount)
    return requests


def pod_requests(pod: Pod, non_missing: Mapping[str, Fraction] | None = None) -> dict[str, Fraction]:
    """`resourcehelper.PodRequests`: max(regular + sidecars, init peak), pod-level override, + overhead."""
    spec = pod.spec
    total: dict[str, Fraction] = {}
    for container in spec.containers:
        _add(total, _container_requests(container, non_missing))
    sidecars: dict[str, Fraction] = {}
    init_peak: dict[str, Fraction] = {}
    for container in spec.init_containers:
        requests = _container_requests(container, non_missing)
        if container.is_sidecar:
            _add(total, requests)
            _add(sidecars, requests)
            _max(init_peak, sidecars)
        else:
            combined = dict(requests)
            _add(combined, sidecars)
            _max(init_peak, combined)
    _max(total, init_peak)
    if spec.resources is not None and spec.resources.requests:
        for name in ("cpu", "memory"):  # IsSupportedPodLevelResource
            if name in spec.resources.requests:
                total[name] = spec.resources.requests[name].amount
    _add(total, {name: q.amount for name, q in spec.overhead.items()})
    return total


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A pod (anti-)affinity term with its namespaces resolved (`framework.AffinityTerm`)."""

    namespaces: frozenset[str]
    namespace_selector: Selector  # NOTHING unless the term has a namespaceSelector
    selector: Selector
    topology_key: str

    def matches(self, pod: PodInfo, namespace_labels: Mapping[str, str] | None) -> bool:
        """`AffinityTerm.Matches`: (namespace in the set, or its labels selected) and labels selected.

        `namespace_labels` are the labels of `pod`'s Namespace object (None when unknown).
        """
        if pod.namespace not in self.namespaces and not self.namespace_selector.matches(namespace_labels or {}):
            return False
        return self.selector.matches(pod.labels)

    def merge_namespaces(self, namespace_labels: Mapping[str, Mapping[str, str]]) -> AffinityTerm:
        """`mergeAffinityTermNamespacesIfNotEmpty`: resolve a non-empty namespaceSelector to names."""
        if self.namespace_selector.empty or self.namespace_selector.nothing:
            return self
        selected = {ns for ns, labels in namespace_labels.items() if self.namespace_selector.matches(labels)}
        return AffinityTerm(self.namespaces | selected, Selector(nothing=True), self.selector, self.topology_key)


@dataclass(frozen=True, slots=True)
class WeightedAffinityTerm:
    term: AffinityTerm
    weight: int


def _affinity_term(owner: Pod, term: PodAffinityTerm) -> AffinityTerm:
    namespaces = frozenset(term.namespaces)
    if term.namespace_selector is None:
        namespace_selector = Selector(nothing=True)
        if not namespaces:
            namespaces = frozenset([owner.metadata.namespace or "default"])
    else:
        namespace_selector = compile_label_selector(term.namespace_selector)
    selector = compile_label_selector(term.label_selector)
    # matchLabelKeys / mismatchLabelKeys: merged into the selector with the owner's label values
    # (the API server does this at creation in v1.34; doing it here gives the same selector).
    labels = owner.metadata.labels
    extra = tuple(
        LabelRequirement(key, "In", frozenset([labels[key]])) for key in term.match_label_keys if key in labels
    ) + tuple(
        LabelRequirement(key, "NotIn", frozenset([labels[key]])) for key in term.mismatch_label_keys if key in labels
    )
    if extra and term.label_selector is not None:
        selector = selector.and_requirements(extra)
    return AffinityTerm(namespaces, namespace_selector, selector, term.topology_key)


@dataclass(slots=True)
class PodInfo:
    """A pod with everything the plugins read, computed once."""

    pod: Pod
    namespace: str
    name: str
    labels: dict[str, str]
    priority: int
    requests: dict[str, int]  # cpu (milli), memory, ephemeral-storage and scalars; zero entries dropped
    non_zero_cpu: int
    non_zero_memory: int
    host_ports: tuple[tuple[str, str, int], ...]  # (hostIP, protocol, hostPort)
    tolerations: tuple[Toleration, ...]
    terminating: bool
    required_affinity: tuple[AffinityTerm, ...]
    required_anti_affinity: tuple[AffinityTerm, ...]
    preferred_affinity: tuple[WeightedAffinityTerm, ...]
    preferred_anti_affinity: tuple[WeightedAffinityTerm, ...]
    # a volume a plugin reads (a claim, an ephemeral volume, a disk): not emptyDir, nor a source the
    # loader dropped (configMap, secret, projected, …)
    has_plugin_volumes: bool = False
    sequence: int = field(default_factory=lambda: next(_sequence))

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def as_pod(self, pod: Pod) -> PodInfo:
        """This pod's information for `pod`, a copy of it under another name or status (what is
        computed from the spec is shared; the copy takes its own place in the queue's order)."""
        namespace = pod.metadata.namespace or "default"
        return dataclasses.replace(self, pod=pod, name=pod.metadata.name, namespace=namespace, sequence=next(_sequence))

    @property
    def has_affinity(self) -> bool:
        return bool(
            self.required_affinity
            or self.required_anti_affinity
            or self.preferred_affinity
            or self.preferred_anti_affinity
        )

    @property
    def requests_nothing(self) -> bool:
        return not any(self.requests.values())

    @classmethod
    def of(cls, pod: Pod) -> PodInfo:
        spec = pod.spec
        exact = pod_requests(pod)
        requests = {name: resource_value(name, amount) for name, amount in exact.items()}
        requests = {
            name: value
            for name, value in requests.items()
            if name in ("cpu", "memory", "ephemeral-storage") or is_scalar_resource(name)
        }
        # types.go calculateResource: the non-zero defaults apply per container, and with pod-level
        # requests only to the resources the pod level leaves unset (getNonMissingContainerRequests).
        defaults = _NON_ZERO_DEFAULTS
        if spec.resources is not None and spec.resources.requests:
            defaults = {k: v for k, v in defaults.items() if k not in spec.resources.requests}
        containers = itertools.chain(spec.containers, spec.init_containers)
        if defaults and any(not defaults.keys() <= c.resources.requests.keys() for c in containers):
            non_zero = pod_requests(pod, defaults)
        else:  # every container requests what the defaults would fill in: the same sums
            non_zero = exact
        # pkg/scheduler/util GetHostPorts: restartable init containers (sidecars) first, then containers.
        sidecars = [c for c in spec.init_containers if c.is_sidecar]
        ports = tuple(
            (port.host_ip or "0.0.0.0", port.protocol or "TCP", port.host_port)
            for container in itertools.chain(sidecars, spec.containers)
            for port in container.ports
            if port.host_port > 0
        )
        affinity = spec.affinity
        pod_affinity = affinity.pod_affinity if affinity else None
        anti = affinity.pod_anti_affinity if affinity else None
        return cls(
            pod=pod,
            namespace=pod.metadata.namespace or "default",
            name=pod.metadata.name,
            labels=pod.metadata.labels,
            priority=spec.priority or 0,
            requests=requests,
            non_zero_cpu=resource_value("cpu", non_zero.get("cpu", _ZERO)),
            non_zero_memory=resource_value("memory", non_zero.get("memory", _ZERO)),
            host_ports=ports,
            tolerations=tuple(spec.tolerations),
            terminating=pod.metadata.deletion_timestamp is not None,
            required_affinity=_terms(pod, pod_affinity.required_during_scheduling_ignored_during_execution)
            if pod_affinity
            else (),
            required_anti_affinity=_terms(pod, anti.required_during_scheduling_ignored_during_execution)
            if anti
            else (),
            preferred_affinity=_weighted(pod, pod_affinity.preferred_during_scheduling_ignored_during_execution)
            if pod_affinity
            else (),
            preferred_anti_affinity=_weighted(pod, anti.preferred_during_scheduling_ignored_during_execution)
            if anti
            else (),
            has_plugin_volumes=any(volume.read_by_plugins for volume in spec.volumes),
        )


def _terms(owner: Pod, terms: Iterable[PodAffinityTerm]) -> tuple[AffinityTerm, ...]:
    return tuple(_affinity_term(owner, term) for term in terms)


def _weighted(owner: Pod, terms: Iterable) -> tuple[WeightedAffinityTerm, ...]:  # type: ignore[type-arg]
    return tuple(WeightedAffinityTerm(_affinity_term(owner, t.pod_affinity_term), t.weight) for t in terms)
