"""The structured allocator: which devices a pod's unallocated ResourceClaims get on one node.

Upstream: staging/src/k8s.io/dynamic-resource-allocation/structured (v1.34, the "stable"
implementation, which covers the v1.34 default gates). For each node, the pools the node can
reach are gathered (pools.py); then claims, their requests and each device of a request are
allocated one after another in an exhaustive first-fit search with backtracking: a device is a
candidate when it is not in use (allocated to some claim, or picked for another request of this
pod; admin-access requests may share), the request's class selectors and its own selectors are
true, and adding it keeps every `matchAttribute` constraint of the claim. The first complete
solution is the answer. `All` requests take every selectable device of the reachable pools
(refused while a pool is incomplete or invalid); a `firstAvailable` request tries its
subrequests in order. Errors (a broken CEL expression, a missing class, an invalid pool in the
way) end the scheduling attempt; "no solution" is None.

With an `AllocationReport`, `allocate` also records per request which devices were chosen and
why the others of the node were not: the explanation a person needs beside upstream's bare
"cannot allocate all claims".
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..api.objects import NodeSelector
from ..api.resource import (
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocationResult,
    DeviceAllocationResult,
    DeviceClass,
    DeviceRequestAllocationResult,
    DeviceSelector,
    ResourceClaim,
)
from ..versions import Version
from . import cel
from .pools import Pool, PoolDevice, SliceIndex

__all__ = ["AllocationError", "AllocationReport", "Allocator", "DeviceID", "Features", "RequestReport"]


class DeviceID(NamedTuple):
    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


# The device fields each gate's unmodelled "on" behaviour reads (versions/changes.py NOT_MODELLED).
_GATED_DEVICE_FIELDS = {
    "DRAPartitionableDevices": "consumesCounters",
    "DRADeviceBindingConditions": "bindingConditions",
    "DRADeviceTaints": "taints",
    "DRAConsumableCapacity": "allowMultipleAllocations",
}


@dataclass(frozen=True)
class Features:
    """The DRA feature gates the allocator honours (defaults: v1.34's)."""

    admin_access: bool = True  # DRAAdminAccess, beta
    prioritized_list: bool = True  # DRAPrioritizedList, beta
    partitionable_devices: bool = False  # DRAPartitionableDevices, alpha
    device_taints: bool = False  # DRADeviceTaints, alpha
    device_binding_conditions: bool = False  # DRADeviceBindingConditions, alpha
    consumable_capacity: bool = False  # DRAConsumableCapacity, alpha
    # gate → the error for a device that needs the gate's (on, unmodelled) behaviour
    unmodelled: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, version: Version) -> Features:
        gates = version.gates
        on = version.unmodelled_gates()
        unmodelled = tuple((gate, version.unmodelled(gate)) for gate in _GATED_DEVICE_FIELDS if gate in on)
        return cls(
            admin_access=gates.enabled("DRAAdminAccess"),
            prioritized_list=gates.enabled("DRAPrioritizedList"),
            partitionable_devices=gates.enabled("DRAPartitionableDevices"),
            device_taints=gates.enabled("DRADeviceTaints"),
            device_binding_conditions=gates.enabled("DRADeviceBindingConditions"),
            consumable_capacity=gates.enabled("DRAConsumableCapacity"),
            unmodelled=unmodelled,
        )

    def unmodelled_use(self, device: PoolDevice) -> str:
        """The error for a device using a gated field whose behaviour is on but not modelled, else ""."""
        extra = device.device.model_extra or {}
        for gate, text in self.unmodelled:
            if extra.get(_GATED_DEVICE_FIELDS[gate]):
                return f"device {device.driver}/{device.pool}/{device.name}: {text}"
        return ""


class AllocationError(Exception):
    """A fatal allocation problem (upstream's error return): the scheduling attempt ends with it."""


@dataclass
class RequestReport:
    claim: str  # namespace/name
    request: str  # "req" or "req/sub"
    chosen: list[DeviceID] = field(default_factory=list)
    rejected: list[tuple[DeviceID, str]] = field(default_factory=list)


@dataclass
class AllocationReport:
    requests: list[RequestReport] = field(default_factory=list)


class _Stop(Exception):
    """errAllocationResultMaxSizeExceeded: no solution below this point within the 32-results limit."""


@dataclass
class _Request:
    """requestData: one request without subrequests, or one subrequest."""

    name: str  # the request's (or subrequest's) own name
    parent: str  # the parent request's name for a subrequest, else ""
    device_class: DeviceClass
    selectors: list[DeviceSelector]
    mode: str
    count: int
    admin_access: bool
    num_devices: int = 0
    all_devices: list[PoolDevice] = field(default_factory=list)

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


@dataclass
class _Constraint:
    """matchAttributeConstraint: all devices of the named requests share one attribute value."""

    requests: frozenset[str]
    attribute: str  # fully qualified
    value: tuple[str, Any] | None = None
    num_devices: int = 0

    def applies(self, base: str, sub: str) -> bool:
        if not self.requests:
            return True
        return base in self.requests or (bool(sub) and f"{base}/{sub}" in self.requests)

    def add(self, base: str, sub: str, device: PoolDevice) -> bool:
        if not self.applies(base, sub):
            return True
        value = _lookup_attribute(device, self.attribute)
        if value is None:
            return False
        if self.num_devices == 0:
            self.value = value
            self.num_devices = 1
            return True
        if value != self.value:  # same kind and value (versions compare as strings, as upstream)
            return False
        self.num_devices += 1
        return True

    def remove(self, base: str, sub: str) -> None:
        if self.applies(base, sub):
            self.num_devices -= 1


def _lookup_attribute(device: PoolDevice, qualified: str) -> tuple[str, Any] | None:
    attributes = device.device.attributes
    attribute = attributes.get(qualified)
    if attribute is None:
        domain, sep, ident = qualified.partition("/")
        if not sep or domain != device.driver:
            return None
        attribute = attributes.get(ident)
        if attribute is None:
            return None
    return attribute.kind_and_value


def _kobj(claim: ResourceClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"


def _device_input(device: PoolDevice) -> cel.DeviceInput:
    return cel.DeviceInput(
        driver=device.driver,
        attributes={name: cel.AttributeValue(*a.kind_and_value) for name, a in device.device.attributes.items()},  # type: ignore[arg-type]
        capacity={name: c.value for name, c in device.device.capacity.items()},
    )


class Allocator:
    """`structured.NewAllocator`: the state of one scheduling cycle, used for every node."""

    def __init__(
        self,
        features: Features,
        allocated: set[DeviceID],
        classes: Mapping[str, DeviceClass],
        slices: SliceIndex,
    ) -> None:
        self.features = features
        self.allocated = allocated
        self.classes = classes
        self.slices = slices
        self._inputs: dict[int, cel.DeviceInput] = {}

    # --- selectors ------------------------------------------------------------------------

    def _selector_result(self, expression: str, device: PoolDevice) -> bool:
        """One CEL selector on one device (memoised in the SliceIndex); SelectorError when broken."""
        key = (expression, device.serial)
        memo = self.slices.selector_results
        result = memo.get(key)
        if result is None:
            try:
                compiled = cel.compile_selector(expression, consumable_capacity=self.features.consumable_capacity)
                data = self._inputs.get(device.serial)
                if data is None:
                    data = self._inputs[device.serial] = _device_input(device)
                result = compiled.matches(data)
            except cel.SelectorError as exc:
                result = exc
            memo[key] = result
        if isinstance(result, cel.SelectorError):
            raise result
        return result

    def _selectors_match(self, selectors: Sequence[DeviceSelector], device: PoolDevice, owner: str) -> int:
        """-1 when all selectors match, else the index of the first false one; AllocationError on a CEL error."""
        for i, selector in enumerate(selectors):
            assert selector.cel is not None  # checked when the request was read
            try:
                if not self._selector_result(selector.cel.expression, device):
                    return i
            except cel.SelectorError as exc:
                raise AllocationError(f"{owner}: selector #{i}: {exc}") from None
        return -1

    def _why_not_selectable(self, claim: ResourceClaim, request: _Request, device: PoolDevice) -> str:
        """isSelectable: "" when the device may serve the request, else why not (for reports)."""
        if self.features.unmodelled:
            unmodelled = self.features.unmodelled_use(device)
            if unmodelled:
                raise AllocationError(unmodelled)
        if not self.features.device_binding_conditions and device.device.model_extra.get("bindingConditions"):
            return "has binding conditions (DRADeviceBindingConditions is off)"
        failed = self._selectors_match(
            request.device_class.spec.selectors, device, f"class {request.device_class.metadata.name}"
        )
        if failed >= 0:
            expression = request.device_class.spec.selectors[failed].cel.expression  # type: ignore[union-attr]
            return f"class {request.device_class.metadata.name}: selector #{failed} is false ({expression})"
        failed = self._selectors_match(request.selectors, device, f"claim {_kobj(claim)}")
        if failed >= 0:
            expression = request.selectors[failed].cel.expression  # type: ignore[union-attr]
            return f"claim {_kobj(claim)}: selector #{failed} is false ({expression})"
        return ""

    # --- reading the claims ---------------------------------------------------------------

    def _read_request(
        self, claim: ResourceClaim, body: Any, name: str, parent: str, admin: bool | None, pools: list[Pool]
    ) -> _Request:
        """validateDeviceRequest."""
        for i, selector in enumerate(body.selectors):
            if selector.cel is None:
                raise AllocationError(
                    f"claim {_kobj(claim)}, request {name}, selector #{i}: "
                    "CEL expression empty (unsupported selector type?)"
                )
        if not self.features.admin_access and admin is not None:
            raise AllocationError(
                f"claim {_kobj(claim)}, request {name}: admin access is requested, but the feature is disabled"
            )
        class_name = body.device_class_name
        if not class_name:
            raise AllocationError(
                f"claim {_kobj(claim)}, request {name}: missing device class name (unsupported request type?)"
            )
        device_class = self.classes.get(class_name)
        if device_class is None:
            raise AllocationError(
                f"claim {_kobj(claim)}, request {name}: could not retrieve device class {class_name}: "
                f'deviceclass.resource.k8s.io "{class_name}" not found'
            )
        request = _Request(
            name, parent, device_class, list(body.selectors), body.allocation_mode, body.count or 1, bool(admin)
        )
        if request.mode == "ExactCount":
            request.num_devices = request.count
        elif request.mode == "All":
            for pool in pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"claim {_kobj(claim)}, request {name}: asks for all devices, but resource pool "
                        f"{pool.id} is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"claim {_kobj(claim)}, request {name}: asks for all devices, but resource pool "
                        f"{pool.id} is currently invalid"
                    )
                for device in pool.devices:
                    if not self._why_not_selectable(claim, request, device):
                        request.all_devices.append(device)
            request.num_devices = len(request.all_devices)
        else:
            raise AllocationError(f"claim {_kobj(claim)}, request {name}: unsupported count mode {request.mode}")
        return request

    def _read_claims(
        self, claims: Sequence[ResourceClaim], pools: list[Pool]
    ) -> tuple[list[list[list[_Request]]], list[list[_Constraint]]]:
        """Per claim, per request, the request (one entry) or its subrequests; and the constraints."""
        requests: list[list[list[_Request]]] = []
        constraints: list[list[_Constraint]] = []
        for claim in claims:
            per_claim: list[list[_Request]] = []
            min_devices = 0
            for request in claim.spec.devices.requests:
                if request.first_available:
                    if not self.features.prioritized_list:
                        raise AllocationError(
                            f"claim {_kobj(claim)}, request {request.name}: has subrequests, "
                            "but the DRAPrioritizedList feature is disabled"
                        )
                    subs = [
                        self._read_request(claim, sub, sub.name, request.name, None, pools)
                        for sub in request.first_available
                    ]
                    min_devices += min(sub.num_devices for sub in subs)
                    per_claim.append(subs)
                else:
                    exactly = request.exactly
                    assert exactly is not None  # validated when read
                    one = self._read_request(claim, exactly, request.name, "", exactly.admin_access, pools)
                    min_devices += one.num_devices
                    per_claim.append([one])
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {_kobj(claim)}: number of requested devices {min_devices} exceeds the claim limit "
                    f"of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            per_constraints = []
            for i, constraint in enumerate(claim.spec.devices.constraints):
                if constraint.match_attribute is None:
                    raise AllocationError(
                        f"claim {_kobj(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)"
                    )
                qualified = constraint.match_attribute  # FullyQualifiedName: validation requires a domain
                per_constraints.append(_Constraint(frozenset(constraint.requests), qualified))
            requests.append(per_claim)
            constraints.append(per_constraints)
        return requests, constraints

    # --- Allocate -------------------------------------------------------------------------

    def check_claims(self, claims: Sequence[ResourceClaim]) -> None:
        """The node-independent checks of `allocate` (classes, request types, limits): AllocationError."""
        self._read_claims(claims, [])

    def allocate(
        self, node: Any, claims: Sequence[ResourceClaim], report: AllocationReport | None = None
    ) -> list[AllocationResult] | None:
        """One result per claim, None when the claims cannot all be allocated on `node`, or AllocationError."""
        pools = self.slices.pools_for(node)
        requests, constraints = self._read_claims(claims, pools)
        search = _Search(self, node, claims, pools, requests, constraints)
        total = sum(r[0].num_devices + 2 for per in requests for r in per) + 2 * len(claims) + 50
        if total > sys.getrecursionlimit() - 200:
            sys.setrecursionlimit(total + 1000)
        done = search.claim(0)
        if report is not None:
            search.fill(report, done)
        if not done:
            return None
        return [search.result(k) for k in range(len(claims))]


class _Search:
    """The `allocator` of one Allocate call: the devices being allocated and the results so far."""

    def __init__(
        self,
        owner: Allocator,
        node: Any,
        claims: Sequence[ResourceClaim],
        pools: list[Pool],
        requests: list[list[list[_Request]]],
        constraints: list[list[_Constraint]],
    ) -> None:
        self.owner = owner
        self.node = node
        self.claims = claims
        self.pools = pools
        self.requests = requests
        self.constraints = constraints
        self.allocating: dict[DeviceID, set[int]] = {}
        self.results: list[list[tuple[_Request, PoolDevice]]] = [[] for _ in claims]
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.selectable: dict[tuple[int, int, int, int], bool] = {}  # deviceMatchesRequest

    # the recursion of allocateOne, split by level
    def claim(self, k: int) -> bool:
        if k >= len(self.claims):
            return True
        return self.request(k, 0)

    def request(self, k: int, r: int) -> bool:
        if r >= len(self.requests[k]):
            try:
                return self.claim(k + 1)
            except _Stop:
                return False  # a prior claim's other subrequest may need fewer devices
        options = self.requests[k][r]
        if not options[0].parent:
            return self.device(k, r, 0, 0)
        all_exceeded = True
        for s in range(len(options)):
            try:
                done = self.device(k, r, s, 0)
            except _Stop:
                continue
            all_exceeded = False
            if done:
                self.selected_sub[(k, r)] = s
                return True
        if all_exceeded:
            raise _Stop
        return False

    def device(self, k: int, r: int, s: int, d: int) -> bool:
        request = self.requests[k][r][s]
        do_all = request.mode == "All"
        if do_all and not request.all_devices:
            return False
        if d >= request.num_devices:
            return self.request(k, r + 1)
        if len(self.results[k]) + request.num_devices - d > ALLOCATION_RESULTS_MAX_SIZE:
            raise _Stop
        if do_all:
            candidate = request.all_devices[d]
            undo = self.take(k, request, candidate, must=True)
            if undo is None:
                return False
            try:
                done = self.device(k, r, s, d + 1)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        claim = self.claims[k]
        for pool in self.pools:
            if pool.invalid:
                # "It's okay when pools of one driver are invalid if we allocate from some other pool,
                # but it's not safe to allocate from an invalid pool" (v1.34: fatal)
                raise AllocationError(f"pool {pool.name} is invalid: {pool.invalid_reason}")
            for candidate in pool.devices:
                device_id = DeviceID(candidate.driver, candidate.pool, candidate.name)
                if request.admin_access:
                    if k in self.allocating.get(device_id, ()):
                        continue
                elif device_id in self.owner.allocated or self.allocating.get(device_id):
                    continue
                key = (k, r, s, candidate.serial)
                ok = self.selectable.get(key)
                if ok is None:
                    ok = self.selectable[key] = not self.owner._why_not_selectable(claim, request, candidate)
                if not ok:
                    continue
                undo = self.take(k, request, candidate, must=False)
                if undo is None:
                    continue
                try:
                    done = self.device(k, r, s, d + 1)
                except BaseException:
                    undo()
                    raise
                if done:
                    return True
                undo()
        return False

    def take(self, k: int, request: _Request, device: PoolDevice, must: bool) -> Any:
        """allocateDevice: mark `device` as allocated for claim k; the undo, or None when it cannot be."""
        device_id = DeviceID(device.driver, device.pool, device.name)
        holders = self.allocating.get(device_id)
        if request.admin_access:
            if holders and k in holders:
                return None
        elif device_id in self.owner.allocated or holders:
            return None
        if not self.owner.features.partitionable_devices and device.device.model_extra.get("consumesCounters"):
            return None
        base, sub = (request.parent, request.name) if request.parent else (request.name, "")
        constraints = self.constraints[k]
        for i, constraint in enumerate(constraints):
            if not constraint.add(base, sub, device):
                if must:
                    raise AllocationError(
                        f"claim {_kobj(self.claims[k])}, request {request.name}: cannot add device {device_id} "
                        "because a claim constraint would not be satisfied"
                    )
                for earlier in constraints[:i]:
                    earlier.remove(base, sub)
                return None
        self.allocating.setdefault(device_id, set()).add(k)
        self.results[k].append((request, device))

        def undo() -> None:
            for constraint in constraints:
                constraint.remove(base, sub)
            self.allocating[device_id].discard(k)
            self.results[k].pop()

        return undo

    # --- the result -----------------------------------------------------------------------

    def result(self, k: int) -> AllocationResult:
        claim = self.claims[k]
        results = [
            DeviceRequestAllocationResult(
                request=request.full_name,
                driver=device.driver,
                pool=device.pool,
                device=device.name,
                admin_access=True if request.admin_access else None,
            )
            for request, device in self.results[k]
        ]
        config: list[dict[str, Any]] = []
        for r, options in enumerate(self.requests[k]):
            chosen = options[self.selected_sub.get((k, r), 0)] if options[0].parent else options[0]
            for item in chosen.device_class.spec.config:
                config.append({"source": "FromClass", **item})
        requests = claim.spec.devices.requests
        for item in claim.spec.devices.config:
            names = item.get("requests") or []
            if not names:
                config.append({"source": "FromClaim", **item})
                continue
            for r, request in enumerate(requests):
                if request.name in names:
                    config.append({"source": "FromClaim", **item})
                    continue
                options = self.requests[k][r]
                if not options[0].parent:
                    continue
                sub = options[self.selected_sub.get((k, r), 0)]
                if sub.full_name in names:
                    config.append({"source": "FromClaim", **item})
        return AllocationResult(
            devices=DeviceAllocationResult(results=results, config=config),
            node_selector=self.node_selector(k),
        )

    def node_selector(self, k: int) -> NodeSelector | None:
        """createNodeSelector: the node a node-local device binds the claim to, else the slices' selectors."""
        fields: list[dict[str, Any]] = []
        expressions: list[dict[str, Any]] = []
        for _request, device in self.results[k]:
            spec = device.slice.spec
            if spec.per_device_node_selection:
                node_name, selector = device.device.node_name, device.device.node_selector
            else:
                node_name, selector = spec.node_name, spec.node_selector
            if node_name:
                return NodeSelector.model_validate(
                    {
                        "nodeSelectorTerms": [
                            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                        ]
                    }
                )
            if selector is None or not selector.node_selector_terms:
                continue
            if len(selector.node_selector_terms) > 1:
                raise AllocationError(
                    f"create NodeSelector for claim {self.claims[k].metadata.name}: unsupported "
                    f"ResourceSlice.NodeSelector with {len(selector.node_selector_terms)} terms"
                )
            term = selector.node_selector_terms[0].to_dict()
            _add_new(term.get("matchFields") or [], fields)
            _add_new(term.get("matchExpressions") or [], expressions)
        if not fields and not expressions:
            return None
        term: dict[str, Any] = {}
        if expressions:
            term["matchExpressions"] = expressions
        if fields:
            term["matchFields"] = fields
        return NodeSelector.model_validate({"nodeSelectorTerms": [term]})

    # --- the report -----------------------------------------------------------------------

    def fill(self, report: AllocationReport, done: bool) -> None:
        """Per request: the devices chosen (when the search succeeded) and why each other device was not."""
        chosen_by: dict[DeviceID, str] = {}
        if done:
            for k, results in enumerate(self.results):
                for request, device in results:
                    chosen_by[DeviceID(device.driver, device.pool, device.name)] = (
                        f"claim {_kobj(self.claims[k])} request {request.full_name}"
                    )
        for k, claim in enumerate(self.claims):
            for r, options in enumerate(self.requests[k]):
                tried = [options[self.selected_sub.get((k, r), 0)]] if done else options
                for request in tried:
                    entry = RequestReport(_kobj(claim), request.full_name)
                    if done:
                        entry.chosen = [
                            DeviceID(d.driver, d.pool, d.name) for req, d in self.results[k] if req is request
                        ]
                    mine = set(entry.chosen)
                    for pool in self.pools:
                        for device in pool.devices:
                            device_id = DeviceID(device.driver, device.pool, device.name)
                            if device_id in mine:
                                continue
                            entry.rejected.append(
                                (device_id, self._why(claim, request, pool, device, device_id, chosen_by, done))
                            )
                    report.requests.append(entry)

    def _why(
        self,
        claim: ResourceClaim,
        request: _Request,
        pool: Pool,
        device: PoolDevice,
        device_id: DeviceID,
        chosen_by: dict[DeviceID, str],
        done: bool,
    ) -> str:
        if pool.invalid:
            return f"pool {pool.name} is invalid: {pool.invalid_reason}"
        if device_id in self.owner.allocated and not request.admin_access:
            return "allocated to another claim"
        try:
            why = self.owner._why_not_selectable(claim, request, device)
        except AllocationError as exc:
            return str(exc)
        if why:
            return why
        if not self.owner.features.partitionable_devices and device.device.model_extra.get("consumesCounters"):
            return "consumes counters (DRAPartitionableDevices is off)"
        if device_id in chosen_by:
            return f"taken by {chosen_by[device_id]}"
        if done:
            return "not needed"
        if any(self.constraints):
            return "selectable, but no choice of devices satisfies the claim's matchAttribute constraints"
        return "selectable, but the node has too few such devices for all requests"


def _add_new(source: list[dict[str, Any]], into: list[dict[str, Any]]) -> None:
    """addNewNodeSelectorRequirements: append requirements not present (same key, operator, value set)."""
    for requirement in source:
        values = set(requirement.get("values") or [])
        if not any(
            have.get("key") == requirement.get("key")
            and have.get("operator") == requirement.get("operator")
            and set(have.get("values") or []) == values
            for have in into
        ):
            into.append(requirement)
