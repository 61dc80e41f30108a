"""The fixtures of upstream's dynamicresources_test.go (v1.34), as resource.k8s.io/v1 objects.

pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go: node "worker" with a
slice of one device "instance-1" of driver "some-driver" in pool "worker"; pod "my-pod" (UID 1234)
with a claim "my-pod-my-resource" requesting one device of class "my-resource-class" as "req-1".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduler_core.api.objects import Pod
from scheduler_core.api.resource import AllocationResult, DeviceClass, ResourceClaim, ResourceSlice
from scheduler_core.dra.index import DraIndex
from scheduler_core.framework.node_table import NodeTable
from tests.helpers import node

NODE = "worker"
DRIVER = "some-driver"
POD = "my-pod"
POD_UID = "1234"
RESOURCE = "my-resource"
CLAIM = f"{POD}-{RESOURCE}"
CLASS = "my-resource-class"
ATTR = "healthy"  # a device attribute only the other nodes' devices have
FINALIZER = "resource.kubernetes.io/delete-protection"
BROKEN_SELECTOR = {"cel": {"expression": f'device.attributes["{DRIVER}"].{ATTR}'}}


def worker(name: str = NODE) -> Any:
    return node(name, {"kubernetes.io/hostname": name})


def device_class(name: str = CLASS, selectors: list[dict[str, Any]] | None = None) -> DeviceClass:
    return DeviceClass.model_validate({"metadata": {"name": name}, "spec": {"selectors": selectors or []}})


def node_slice(node_name: str = NODE, devices: list[str | dict[str, Any]] | None = None) -> ResourceSlice:
    """`st.MakeResourceSlice(node, driver).Device(...)`: pool named after the node, one slice."""
    listed = [{"name": d} if isinstance(d, str) else d for d in (devices or ["instance-1"])]
    return ResourceSlice.model_validate(
        {
            "metadata": {"name": f"{node_name}-{DRIVER}"},
            "spec": {
                "driver": DRIVER,
                "pool": {"name": node_name, "resourceSliceCount": 1},
                "nodeName": node_name,
                "devices": listed,
            },
        }
    )


def healthy_device(name: str = "instance-1", healthy: bool = True) -> dict[str, Any]:
    return {"name": name, "attributes": {ATTR: {"bool": healthy}}}


def pod_with(claims: list[dict[str, Any]], statuses: list[dict[str, Any]] | None = None) -> Pod:
    body: dict[str, Any] = {
        "metadata": {"name": POD, "namespace": "default", "uid": POD_UID},
        "spec": {"containers": [{"name": "c", "image": "pause"}], "resourceClaims": claims},
        "status": {"phase": "Pending"},
    }
    if statuses is not None:
        body["status"]["resourceClaimStatuses"] = statuses
    return Pod.model_validate(body)


def pod_with_claim_name() -> Pod:
    return pod_with([{"name": RESOURCE, "resourceClaimName": CLAIM}])


def pod_with_claim_template(in_status: bool = True) -> Pod:
    statuses = [{"name": RESOURCE, "resourceClaimName": CLAIM}] if in_status else None
    return pod_with([{"name": RESOURCE, "resourceClaimTemplateName": CLAIM}], statuses)


def claim(
    name: str = CLAIM,
    requests: list[dict[str, Any]] | None = None,
    owned: bool = True,
    allocation: dict[str, Any] | None = None,
    reserved_for: list[dict[str, Any]] | None = None,
    class_name: str = CLASS,
    admin_access: bool = False,
    uid: str | None = None,
) -> ResourceClaim:
    """`st.MakeResourceClaim().Request(className)` (request "req-1"), owned by the pod (pendingClaim)."""
    exactly: dict[str, Any] = {"deviceClassName": class_name}
    if admin_access:
        exactly["adminAccess"] = True
    metadata: dict[str, Any] = {"name": name, "namespace": "default", "uid": uid or f"uid-{name}"}
    if owned:
        metadata["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": POD, "uid": POD_UID, "controller": True}
        ]
    status: dict[str, Any] = {}
    if allocation is not None:
        metadata["finalizers"] = [FINALIZER]
        status["allocation"] = allocation
    if reserved_for is not None:
        status["reservedFor"] = reserved_for
    return ResourceClaim.model_validate(
        {
            "metadata": metadata,
            "spec": {"devices": {"requests": requests or [{"name": "req-1", "exactly": exactly}]}},
            "status": status,
        }
    )


def allocation(
    device: str = "instance-1", request: str = "req-1", node_name: str = NODE, admin_access: bool = False
) -> dict[str, Any]:
    """`allocationResult`: one device of the node's pool, pinned to the node by matchFields."""
    result: dict[str, Any] = {"request": request, "driver": DRIVER, "pool": node_name, "device": device}
    if admin_access:
        result["adminAccess"] = True
    return {
        "devices": {"results": [result]},
        "nodeSelector": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]
        },
    }


def allocation_result(**kwargs: Any) -> AllocationResult:
    """`allocation(...)` as the model the plugin writes (compared field by field, empty lists included)."""
    return AllocationResult.model_validate(allocation(**kwargs))


def reserved_for_pod() -> list[dict[str, Any]]:
    return [{"resource": "pods", "name": POD, "uid": POD_UID}]


def table_of(
    nodes: list[Any] | None = None,
    claims: Sequence[ResourceClaim] = (),
    classes: Sequence[DeviceClass] = (),
    slices: Sequence[ResourceSlice] = (),
) -> NodeTable:
    table = NodeTable.build(nodes or [worker()])
    table.dra = DraIndex.of(claims, classes, slices)
    return table
