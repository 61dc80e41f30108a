"""VolumeBinding with CSIStorageCapacity, transcribed from upstream v1.34's TestCapacity.

Upstream: pkg/scheduler/framework/plugins/volumebinding/binder_test.go `TestCapacity` (each row
runs twice: with the CSIDriver opted in to storage capacity, and opted out, where no row may
reject) with `makeCapacity(name, class, node, capacity, maximumVolumeSize)`: a nil node means an
empty `nodeTopology` selector (every node). The claim `provisioned-pvc` asks for 1Gi of a class
that waits for the first consumer and has the provisioner `test-provisioner`.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.api.storage import CSIDriver, CSIStorageCapacity
from scheduler_core.plugins.volume_binding import ERR_REASON_NOT_ENOUGH_SPACE, VolumeBinding
from tests.helpers import node, pod

from .storage_builders import claim_volume, outcome, pvc, run_plugin, schedule_with, storage_class

NODE_KEY = "nodeKey"
PROVISIONER = "test-provisioner"
WAIT_WITH_PROVISIONER = "waitClassWithProvisioner"
WAIT = "waitClass"
NO_SPACE = ("UnschedulableAndUnresolvable", (ERR_REASON_NOT_ENOUGH_SPACE,))


def capacity(
    name: str, class_name: str, node_name: str | None, size: str = "", maximum: str = ""
) -> CSIStorageCapacity:
    body: dict[str, Any] = {
        "metadata": {"name": name, "namespace": "default"},
        "storageClassName": class_name,
        "nodeTopology": {} if node_name is None else {"matchLabels": {NODE_KEY: node_name}},
    }
    if size:
        body["capacity"] = size
    if maximum:
        body["maximumVolumeSize"] = maximum
    return CSIStorageCapacity.model_validate(body)


def driver(opt_in: bool) -> CSIDriver:
    return CSIDriver.model_validate({"metadata": {"name": PROVISIONER}, "spec": {"storageCapacity": opt_in}})


CASES = [
    pytest.param([capacity("net", WAIT_WITH_PROVISIONER, None, "1Gi")], None, id="TestCapacity/network-attached"),
    pytest.param([capacity("net", WAIT_WITH_PROVISIONER, "node1", "1Gi")], None, id="TestCapacity/local-storage"),
    pytest.param(
        [
            capacity("net", WAIT_WITH_PROVISIONER, None, "1Gi"),
            capacity("net", WAIT_WITH_PROVISIONER, "node2", "1Gi"),
            capacity("net", WAIT_WITH_PROVISIONER, "node1", "1Gi"),
        ],
        None,
        id="TestCapacity/multiple",
    ),
    pytest.param([], NO_SPACE, id="TestCapacity/no-storage"),
    pytest.param([capacity("net", WAIT_WITH_PROVISIONER, "node2", "1Gi")], NO_SPACE, id="TestCapacity/wrong-node"),
    pytest.param([capacity("net", WAIT, "node1", "1Gi")], NO_SPACE, id="TestCapacity/wrong-storage-class"),
    pytest.param(
        [capacity("net", WAIT_WITH_PROVISIONER, "node1", "1Mi")], NO_SPACE, id="TestCapacity/insufficient-storage"
    ),
    pytest.param(
        [capacity("net", WAIT_WITH_PROVISIONER, "node1", "1Gi", "1Mi")],
        NO_SPACE,
        id="TestCapacity/insufficient-volume-size",
    ),
    pytest.param([capacity("net", WAIT_WITH_PROVISIONER, "node1", "0Mi")], NO_SPACE, id="TestCapacity/zero-storage"),
    pytest.param(
        [capacity("net", WAIT_WITH_PROVISIONER, "node1", "", "0Mi")], NO_SPACE, id="TestCapacity/zero-volume-size"
    ),
    pytest.param([capacity("net", WAIT_WITH_PROVISIONER, "node1")], NO_SPACE, id="TestCapacity/nil-storage"),
]


def _objects(capacities: list[CSIStorageCapacity], opt_in: bool) -> list[Any]:
    return [
        pvc("provisioned-pvc", WAIT_WITH_PROVISIONER, request="1Gi"),
        storage_class(WAIT_WITH_PROVISIONER, "WaitForFirstConsumer", PROVISIONER),
        storage_class(WAIT, "WaitForFirstConsumer"),
        driver(opt_in),
        *capacities,
    ]


@pytest.mark.parametrize("opt_in", [True, False], ids=["opted-in", "opted-out"])
@pytest.mark.parametrize(("capacities", "expected"), CASES)
def test_capacity(capacities: list[CSIStorageCapacity], expected: Any, opt_in: bool) -> None:
    node1 = node("node1", {NODE_KEY: "node1"})
    the_pod = pod("pod-a", volumes=[claim_volume("provisioned-pvc")])
    pre, verdicts = run_plugin(VolumeBinding(), [node1], the_pod, _objects(capacities, opt_in))
    assert pre.is_success()
    assert outcome(verdicts["node1"]) == (expected if opt_in else None)


def test_no_csi_driver_means_no_capacity_check() -> None:
    """hasEnoughCapacity: the provisioner is not a CSIDriver (NotFound): capacity is not checked."""
    objects = [pvc("provisioned-pvc", WAIT_WITH_PROVISIONER, request="1Gi")]
    objects.append(storage_class(WAIT_WITH_PROVISIONER, "WaitForFirstConsumer", PROVISIONER))
    the_pod = pod("p", volumes=[claim_volume("provisioned-pvc")])
    pre, verdicts = run_plugin(VolumeBinding(), [node("node1", {NODE_KEY: "node1"})], the_pod, objects)
    assert pre.is_success() and outcome(verdicts["node1"]) is None


def test_not_enough_space_in_the_message() -> None:
    """The FailedScheduling message names the reason; the node with capacity is chosen."""
    nodes = [node("node1", {NODE_KEY: "node1"}), node("node2", {NODE_KEY: "node2"})]
    objects = _objects([capacity("local", WAIT_WITH_PROVISIONER, "node2", "5Gi")], True)
    result = schedule_with(nodes, pod("p", volumes=[claim_volume("provisioned-pvc")]), objects)
    assert result.selected_node == "node2"
    result = schedule_with(nodes[:1], pod("p", volumes=[claim_volume("provisioned-pvc")]), objects)
    assert result.message.startswith("0/1 nodes are available: 1 node(s) did not have enough free storage.")
