"""DynamicResources, transcribed from upstream's TestPlugin rows (v1.34).

Upstream: pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go `TestPlugin`
(fixtures in tests/plugins/dra_objects.py). Each row runs the plugin's extension points in the
order upstream's test harness does — PreEnqueue, PreFilter, Filter on every node, then PostFilter
when no node passed, or Reserve and PreBind on the node that passed — and asserts the status of
each and the claims PreBind writes. The v1.34 PostFilter text for a pod without claims is
"no new claims to deallocate" (the Errata of the semantics reference; later releases dropped it).
Rows marked "(source)" follow dynamicresources.go rather than a table row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from scheduler_core.api.objects import Pod
from scheduler_core.api.resource import ResourceClaim
from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.diagnosis import Diagnosis
from scheduler_core.framework.node_table import NodeTable
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.framework.status import Code, Status
from scheduler_core.plugins.dynamic_resources import DynamicResources

from .dra_objects import (
    BROKEN_SELECTOR,
    CLAIM,
    CLASS,
    FINALIZER,
    NODE,
    allocation,
    allocation_result,
    claim,
    device_class,
    healthy_device,
    node_slice,
    pod_with_claim_name,
    pod_with_claim_template,
    reserved_for_pod,
    table_of,
    worker,
)

UNRESOLVABLE = "UnschedulableAndUnresolvable"


@dataclass
class Outcome:
    """What the harness saw, point by point: (code label, reasons) or None when not reached."""

    pre_enqueue: tuple[str, tuple[str, ...]] | None = None
    pre_filter: tuple[str, tuple[str, ...]] | None = None
    filter: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    post_filter: tuple[str, tuple[str, ...]] | None = None
    deallocated: ResourceClaim | None = None
    reserve: tuple[str, tuple[str, ...]] | None = None
    pending: list[ResourceClaim] = field(default_factory=list)
    pre_bind: tuple[str, tuple[str, ...]] | None = None
    table: NodeTable | None = None


def _seen(status: Status) -> tuple[str, tuple[str, ...]]:
    return status.code.label, tuple(status.reasons)


def run(table: NodeTable, pod: Pod) -> Outcome:
    """testPlugin's sequence of calls."""
    plugin = DynamicResources()
    info = PodInfo.of(pod)
    out = Outcome(table=table)
    status = plugin.pre_enqueue(info, table)
    out.pre_enqueue = _seen(status)
    if not status.is_success():
        return out
    state = CycleState()
    _, status = plugin.pre_filter(state, info, table)
    out.pre_filter = _seen(status)
    passed: list[int] = []
    if status.is_success():
        verdicts = plugin.filter(state, info, table)
        for i, name in enumerate(table.names):
            node_status = verdicts.status_of(i)
            out.filter[name] = _seen(node_status)
            if node_status.code == Code.ERROR:
                return out  # an error aborts scheduling
            if node_status.is_success():
                passed.append(i)
    elif status.code != Code.SKIP:
        passed = []
    else:
        passed = list(range(table.n))
    if not passed:
        result, status = plugin.post_filter(state, info, table, Diagnosis(num_nodes=table.n))
        out.post_filter = _seen(status)
        out.deallocated = result.detail.get("deallocate") if result else None
        return out
    i = passed[0]
    status = plugin.reserve(state, info, table, i)
    out.reserve = _seen(status)
    out.pending = list(table.dra.pending.values())
    status = plugin.pre_bind(state, info, table, i)
    out.pre_bind = _seen(status)
    return out


SUCCESS = ("Success", ())
SKIP = ("Skip", ())


def test_empty() -> None:
    """TestPlugin/empty: a pod without claims — Skip at PreFilter; PostFilter's v1.34 text."""
    table = table_of()
    out = run(
        table,
        Pod.model_validate({"metadata": {"name": "foo"}, "spec": {"containers": [{"name": "c", "image": "pause"}]}}),
    )
    assert out.pre_filter == SKIP
    state = CycleState()
    plugin = DynamicResources()
    info = PodInfo.of(
        Pod.model_validate({"metadata": {"name": "foo"}, "spec": {"containers": [{"name": "c", "image": "pause"}]}})
    )
    plugin.pre_filter(state, info, table)
    _, status = plugin.post_filter(state, info, table, Diagnosis(num_nodes=1))
    assert _seen(status) == ("Unschedulable", ("no new claims to deallocate",))


@pytest.mark.parametrize(
    "pod",
    [
        pytest.param(pod_with_claim_name(), id="TestPlugin/claim-reference"),
        pytest.param(pod_with_claim_template(), id="TestPlugin/claim-template"),
    ],
)
def test_allocated_claim_gets_reserved_at_prebind(pod: Pod) -> None:
    table = table_of(claims=[claim(allocation=allocation()), claim("not-my-claim", owned=False)])
    out = run(table, pod)
    assert out.pre_filter == SUCCESS
    assert out.filter == {NODE: SUCCESS}
    assert out.reserve == SKIP  # nothing to allocate
    assert out.pre_bind == SUCCESS
    written = table.dra.claim("default", CLAIM)
    assert written is not None
    assert [ref.model_dump() for ref in written.status.reserved_for] == [
        {"api_group": "", "resource": "pods", "name": "my-pod", "uid": "1234"}
    ]
    untouched = table.dra.claim("default", "not-my-claim")
    assert untouched is not None and untouched.status.reserved_for == []


@pytest.mark.parametrize(
    ("pod", "claims", "message"),
    [
        pytest.param(
            pod_with_claim_template(in_status=False),
            [claim(allocation=allocation())],
            'pod "default/my-pod": ResourceClaim not created yet',
            id="TestPlugin/missing-claim",
        ),
        pytest.param(
            pod_with_claim_template(),
            [claim(allocation=allocation()).model_copy(update={})],
            'resourceclaim "my-pod-my-resource" is being deleted',
            id="TestPlugin/deleted-claim",
        ),
        pytest.param(
            pod_with_claim_template(),
            [claim(allocation=allocation())],
            "ResourceClaim default/my-pod-my-resource was not created for pod default/my-pod (pod is not owner)",
            id="TestPlugin/wrong-claim",
        ),
        pytest.param(
            pod_with_claim_name(),
            [],
            'resourceclaim.resource.k8s.io "my-pod-my-resource" not found',
            id="(source) foreachPodResourceClaim: the lister's NotFound",
        ),
    ],
)
def test_pre_enqueue_rejections(pod: Pod, claims: list[ResourceClaim], message: str) -> None:
    if "deleted" in message:
        claims[0].metadata.deletion_timestamp = "2026-12-05T00:00:00Z"
    if "not owner" in message:
        claims[0].metadata.owner_references[0].uid += "123"
    out = run(table_of(claims=claims), pod)
    assert out.pre_enqueue == (UNRESOLVABLE, (message,))
    assert out.pre_filter is None


def test_no_resources() -> None:
    """TestPlugin/no-resources: no slice — Filter rejects, PostFilter has nothing to deallocate."""
    out = run(table_of(claims=[claim()], classes=[device_class()]), pod_with_claim_name())
    assert out.pre_filter == SUCCESS
    assert out.filter == {NODE: (UNRESOLVABLE, ("cannot allocate all claims",))}
    assert out.post_filter == ("Unschedulable", ("still not schedulable",))


def test_with_resources() -> None:
    """TestPlugin/with-resources: Reserve puts the allocation in flight, PreBind writes it."""
    table = table_of(claims=[claim()], classes=[device_class()], slices=[node_slice()])
    out = run(table, pod_with_claim_name())
    assert out.filter == {NODE: SUCCESS}
    assert out.reserve == SUCCESS
    assert [c.status.allocation for c in out.pending if c.status.allocation] == [allocation_result()]
    assert out.pre_bind == SUCCESS
    written = table.dra.claim("default", CLAIM)
    assert written is not None and written.status.allocation is not None
    assert written.status.allocation == allocation_result()
    assert [ref.uid for ref in written.status.reserved_for] == ["1234"]
    assert FINALIZER in (written.metadata.model_extra or {}).get("finalizers", [])
    assert table.dra.pending == {}  # PreBind finished the allocation in flight
    assert table.dra.allocated_devices() == {("some-driver", "worker", "instance-1")}


def test_exhausted_resources() -> None:
    """TestPlugin/exhausted-resources: the only device is allocated to another claim."""
    other = claim("other-allocated", owned=False, allocation=allocation())
    out = run(table_of(claims=[claim(), other], classes=[device_class()], slices=[node_slice()]), pod_with_claim_name())
    assert out.filter == {NODE: (UNRESOLVABLE, ("cannot allocate all claims",))}
    assert out.post_filter == ("Unschedulable", ("still not schedulable",))


def test_admin_access_allocates_a_device_in_use() -> None:
    """TestPlugin/request-admin-access-with-DRAAdminAccess-featuregate (beta, on in v1.34)."""
    other = claim("other-allocated", owned=False, allocation=allocation())
    table = table_of(claims=[claim(admin_access=True), other], classes=[device_class()], slices=[node_slice()])
    out = run(table, pod_with_claim_name())
    assert out.filter == {NODE: SUCCESS}
    written = table.dra.claim("default", CLAIM)
    assert written is not None and written.status.allocation is not None
    assert written.status.allocation == allocation_result(admin_access=True)


def test_allocated_with_admin_access_does_not_use_up_the_device() -> None:
    """TestPlugin/structured-ignore-allocated-admin-access."""
    other = claim("other-allocated", owned=False, allocation=allocation(admin_access=True))
    out = run(table_of(claims=[claim(), other], classes=[device_class()], slices=[node_slice()]), pod_with_claim_name())
    assert out.filter == {NODE: SUCCESS}
    assert out.pre_bind == SUCCESS


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        pytest.param(
            "claim",
            "claim default/my-pod-my-resource: selector #0: CEL runtime error: no such key: healthy",
            id="TestPlugin/claim-parameters-CEL-runtime-error",
        ),
        pytest.param(
            "class",
            "class my-resource-class: selector #0: CEL runtime error: no such key: healthy",
            id="TestPlugin/class-parameters-CEL-runtime-error",
        ),
    ],
)
def test_cel_runtime_errors_abort_the_cycle(broken: str, message: str) -> None:
    requests = [{"name": "req-1", "exactly": {"deviceClassName": CLASS, "selectors": [BROKEN_SELECTOR]}}]
    pending = claim(requests=requests) if broken == "claim" else claim()
    cls = device_class(selectors=[BROKEN_SELECTOR]) if broken == "class" else device_class()
    out = run(table_of(claims=[pending], classes=[cls], slices=[node_slice()]), pod_with_claim_name())
    assert out.filter == {NODE: ("Error", (message,))}
    assert out.post_filter is None  # an Error ends the cycle


def test_cel_runtime_error_for_one_of_two_nodes() -> None:
    """TestPlugin/CEL-runtime-error-for-one-of-two-nodes: the error on one node ends the cycle,
    although the other node's device has the attribute."""
    requests = [{"name": "req-1", "exactly": {"deviceClassName": CLASS, "selectors": [BROKEN_SELECTOR]}}]
    table = table_of(
        nodes=[worker(), worker("worker-2")],
        claims=[claim(requests=requests)],
        classes=[device_class()],
        slices=[node_slice(), node_slice("worker-2", [healthy_device()])],
    )
    out = run(table, pod_with_claim_name())
    message = "claim default/my-pod-my-resource: selector #0: CEL runtime error: no such key: healthy"
    assert out.filter[NODE] == ("Error", (message,))


@pytest.mark.parametrize(
    ("requests", "message"),
    [
        pytest.param(
            None,
            "request req-1: device class my-resource-class does not exist",
            id="TestPlugin/missing-class",
        ),
        pytest.param(
            [{"name": "req-1", "exactly": {"deviceClassName": "does-not-exist"}}],
            "request req-1: device class does-not-exist does not exist",
            id="TestPlugin/claim-with-request-with-unknown-device-class",
        ),
        pytest.param(
            [{"name": "req-1", "firstAvailable": [{"name": "subreq-1", "deviceClassName": "does-not-exist"}]}],
            "request req-1/subreq-1: device class does-not-exist does not exist",
            id="TestPlugin/claim-with-prioritized-list-unknown-device-class",
        ),
    ],
)
def test_missing_classes(requests: list[dict[str, Any]] | None, message: str) -> None:
    out = run(table_of(claims=[claim(requests=requests)]), pod_with_claim_name())
    assert out.pre_filter == (UNRESOLVABLE, (message,))
    assert out.post_filter == ("Unschedulable", ("no new claims to deallocate",))


def test_wrong_topology_deallocates() -> None:
    """TestPlugin/wrong-topology: PostFilter deallocates the claim allocated where the pod cannot go."""
    wrong = allocation()
    wrong["nodeSelector"] = {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "no-such-label", "operator": "In", "values": ["v"]}]}]
    }
    out = run(table_of(claims=[claim(allocation=wrong)]), pod_with_claim_name())
    assert out.filter == {NODE: (UNRESOLVABLE, ("resourceclaim not available on the node",))}
    assert out.post_filter == ("Unschedulable", ("deallocation of ResourceClaim completed",))
    assert out.deallocated is not None
    assert out.deallocated.status.allocation is None and out.deallocated.status.reserved_for == []


def test_good_topology() -> None:
    """TestPlugin/good-topology: the allocation's node selector matches; PreBind reserves."""
    good = allocation()
    good["nodeSelector"] = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [NODE]}]}
        ]
    }
    table = table_of(claims=[claim(allocation=good)])
    out = run(table, pod_with_claim_name())
    assert out.filter == {NODE: SUCCESS}
    assert out.pre_bind == SUCCESS
    written = table.dra.claim("default", CLAIM)
    assert written is not None and [ref.name for ref in written.status.reserved_for] == ["my-pod"]


def test_reserved_okay() -> None:
    """TestPlugin/reserved-okay: already allocated and reserved for the pod: nothing to write."""
    table = table_of(claims=[claim(allocation=allocation(), reserved_for=reserved_for_pod())])
    out = run(table, pod_with_claim_name())
    assert (out.filter, out.reserve, out.pre_bind) == ({NODE: SUCCESS}, SKIP, SUCCESS)
    written = table.dra.claim("default", CLAIM)
    assert written is not None and len(written.status.reserved_for) == 1


def test_prioritized_list() -> None:
    """TestPlugin/claim-with-prioritized-list: the result names the subrequest ("req-1/subreq-1")."""
    requests = [{"name": "req-1", "firstAvailable": [{"name": "subreq-1", "deviceClassName": CLASS, "count": 1}]}]
    table = table_of(claims=[claim(requests=requests)], classes=[device_class()], slices=[node_slice()])
    out = run(table, pod_with_claim_name())
    assert out.pre_bind == SUCCESS
    written = table.dra.claim("default", CLAIM)
    assert written is not None and written.status.allocation is not None
    assert written.status.allocation == allocation_result(request="req-1/subreq-1")


def test_claim_reserved_by_too_many_consumers() -> None:
    """(source) PreFilter: allocated, 256 consumers (ResourceClaimReservedForMaxSize), not this pod."""
    consumers = [{"resource": "pods", "name": f"p{k}", "uid": f"u{k}"} for k in range(256)]
    out = run(table_of(claims=[claim(allocation=allocation(), reserved_for=consumers)]), pod_with_claim_name())
    assert out.pre_filter == (UNRESOLVABLE, ("resourceclaim in use",))


def test_claim_being_allocated_for_another_pod() -> None:
    """(source) PreFilter: the claim's allocation is in flight (another pod's Reserve)."""
    pending = claim()
    table = table_of(claims=[pending], classes=[device_class()], slices=[node_slice()])
    table.dra.signal_pending(pending.model_copy(update={}))
    out = run(table, pod_with_claim_name())
    assert out.pre_filter == (
        UNRESOLVABLE,
        ("resource claim default/my-pod-my-resource is in the process of being allocated",),
    )


def test_unreserve_releases_the_allocation_in_flight() -> None:
    """(source) Unreserve: the devices Reserve put in flight are free again."""
    table = table_of(claims=[claim()], classes=[device_class()], slices=[node_slice()])
    plugin, info, state = DynamicResources(), PodInfo.of(pod_with_claim_name()), CycleState()
    plugin.pre_filter(state, info, table)
    plugin.filter(state, info, table)
    assert plugin.reserve(state, info, table, 0).is_success()
    assert table.dra.allocated_devices() == {("some-driver", "worker", "instance-1")}
    plugin.unreserve(state, info, table, 0)
    assert table.dra.allocated_devices() == set()
    assert table.dra.pending == {}


def test_queueing_hints() -> None:
    """isSchedulableAfterClaimChange / isSchedulableAfterPodChange."""
    plugin = DynamicResources()
    table = table_of()
    waiting = PodInfo.of(pod_with_claim_template(in_status=False))
    created = claim()
    assert plugin.is_schedulable_after_claim_change(waiting, table, None, created) == "QueueSkip"
    named = PodInfo.of(pod_with_claim_name())
    table.dra.store(created)
    assert plugin.is_schedulable_after_claim_change(named, table, None, created) == "Queue"
    assert plugin.is_schedulable_after_claim_change(named, table, created, created) == "QueueSkip"
    freed = claim("elsewhere", owned=False, allocation=allocation())
    unallocated = claim("elsewhere", owned=False)
    assert plugin.is_schedulable_after_claim_change(named, table, freed, unallocated) == "Queue"
    assert plugin.is_schedulable_after_pod_change(waiting, table, PodInfo.of(pod_with_claim_template())) == "Queue"
    assert plugin.is_schedulable_after_pod_change(waiting, table, waiting) == "QueueSkip"
