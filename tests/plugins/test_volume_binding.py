"""VolumeBinding, transcribed from upstream v1.34 unit tests.

Upstream: pkg/scheduler/framework/plugins/volumebinding/volume_binding_test.go TestVolumeBinding
(fixtures from test_utils.go: makePVC/withBoundPV add the bind-completed annotation; the classes
`wait-sc`, `wait-hdd-sc` wait for the first consumer and have no provisioner). Its scores are not
asserted: StorageCapacityScoring is off in v1.34, so PreScore returns Skip (asserted below).
Rows marked "(source)" follow binder.go (FindPodVolumes, checkVolumeProvisions) and
component-helpers' FindMatchingVolume rather than a table row.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.plugins.volume_binding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_PV_NOT_EXIST,
    VolumeBinding,
)
from tests.helpers import node, pod

from .storage_builders import claim_volume, csi_node, outcome, pv, pvc, run_plugin, schedule_with, storage_class

HOSTNAME = "kubernetes.io/hostname"
UNRESOLVABLE = "UnschedulableAndUnresolvable"
BIND = (UNRESOLVABLE, (ERR_REASON_BIND_CONFLICT,))
WAIT = "WaitForFirstConsumer"
CLASSES = [
    storage_class("immediate-sc", "Immediate"),
    storage_class("wait-sc", WAIT),
    storage_class("wait-hdd-sc", WAIT),
]


def make_node(name: str, **labels: str) -> Any:
    """`makeNode`: the hostname label plus `labels`."""
    return node(name, {HOSTNAME: name, **labels})


def claims(*names: str) -> list[dict[str, Any]]:
    return [claim_volume(n, f"vol{i}") for i, n in enumerate(names)]


LOCAL = [  # "local volumes with close capacity are preferred"
    pv("pv-a-0", "wait-sc", phase="Available", capacity="200Gi", node_affinity={HOSTNAME: ["node-a"]}),
    pv("pv-a-1", "wait-sc", phase="Available", capacity="200Gi", node_affinity={HOSTNAME: ["node-a"]}),
    pv("pv-b-0", "wait-sc", phase="Available", capacity="100Gi", node_affinity={HOSTNAME: ["node-b"]}),
    pv("pv-b-1", "wait-sc", phase="Available", capacity="100Gi", node_affinity={HOSTNAME: ["node-b"]}),
]
LOCAL_HDD = [
    pv("pv-a-2", "wait-hdd-sc", phase="Available", capacity="200Gi", node_affinity={HOSTNAME: ["node-a"]}),
    pv("pv-a-3", "wait-hdd-sc", phase="Available", capacity="200Gi", node_affinity={HOSTNAME: ["node-a"]}),
    pv("pv-b-2", "wait-hdd-sc", phase="Available", capacity="100Gi", node_affinity={HOSTNAME: ["node-b"]}),
    pv("pv-b-3", "wait-hdd-sc", phase="Available", capacity="100Gi", node_affinity={HOSTNAME: ["node-b"]}),
]


def zonal(name: str, region: str, zone: str, capacity: str) -> Any:
    return pv(
        name,
        "wait-sc",
        phase="Available",
        capacity=capacity,
        node_affinity={"topology.kubernetes.io/region": [region], "topology.kubernetes.io/zone": [zone]},
    )


REGION, ZONE = "topology.kubernetes.io/region", "topology.kubernetes.io/zone"
ZONE_NODES = [
    make_node(f"zone-{z}-node-{n}", **{REGION: f"region-{z}", ZONE: f"zone-{z}"}) for z in "abc" for n in "ab"
]

# (row, pod volumes, nodes, objects, PreFilter outcome, Filter outcome per node (if PreFilter passed))
ROWS: list[tuple[str, list[dict[str, Any]], list[Any], list[Any], Any, dict[str, Any]]] = [
    ("pod has not pvcs", [], [make_node("node-a")], [], ("Skip", ()), {}),
    (
        "all bound",
        claims("pvc-a"),
        [make_node("node-a")],
        [pvc("pvc-a", "wait-sc", bound_pv="pv-a"), pv("pv-a", "wait-sc", phase="Available")],
        None,
        {"node-a": None},
    ),
    (
        "PVC does not exist",
        claims("pvc-a"),
        [make_node("node-a")],
        [],
        (UNRESOLVABLE, ('persistentvolumeclaim "pvc-a" not found',)),
        {},
    ),
    (
        "Part of PVCs do not exist",
        claims("pvc-a", "pvc-b"),
        [make_node("node-a")],
        [pvc("pvc-a", "wait-sc", bound_pv="pv-a")],
        (UNRESOLVABLE, ('persistentvolumeclaim "pvc-b" not found',)),
        {},
    ),
    (
        "immediate claims not bound",
        claims("pvc-a"),
        [make_node("node-a")],
        [pvc("pvc-a", "immediate-sc")],
        (UNRESOLVABLE, ("pod has unbound immediate PersistentVolumeClaims",)),
        {},
    ),
    (
        "unbound claims no matches",
        claims("pvc-a"),
        [make_node("node-a")],
        [pvc("pvc-a", "wait-sc")],
        None,
        {"node-a": BIND},
    ),
    (
        "bound and unbound unsatisfied",
        claims("pvc-a", "pvc-b"),
        [make_node("node-a", foo="barbar")],
        [
            pvc("pvc-a", "wait-sc", bound_pv="pv-a"),
            pvc("pvc-b", "wait-sc"),
            pv("pv-a", "wait-sc", phase="Available", node_affinity={"foo": ["bar"]}),
        ],
        None,
        {"node-a": (UNRESOLVABLE, (ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT))},
    ),
    (
        "pv not found",
        claims("pvc-a"),
        [make_node("node-a")],
        [pvc("pvc-a", "wait-sc", bound_pv="pv-a")],
        None,
        {"node-a": (UNRESOLVABLE, (ERR_REASON_PV_NOT_EXIST,))},
    ),
    (
        "pv not found claim lost",
        claims("pvc-a"),
        [make_node("node-a")],
        [pvc("pvc-a", "wait-sc", bound_pv="pv-a", phase="Lost")],
        (UNRESOLVABLE, ('persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"',)),
        {},
    ),
    (
        "local volumes with close capacity are preferred",
        claims("pvc-a"),
        [make_node("node-a"), make_node("node-b"), make_node("node-c")],
        [pvc("pvc-a", "wait-sc", request="50Gi"), *LOCAL],
        None,
        {"node-a": None, "node-b": None, "node-c": BIND},
    ),
    (
        "local volumes with close capacity are preferred (multiple pvcs)",
        claims("pvc-0", "pvc-1"),
        [make_node("node-a"), make_node("node-b"), make_node("node-c")],
        [pvc("pvc-0", "wait-sc", request="50Gi"), pvc("pvc-1", "wait-hdd-sc", request="100Gi"), *LOCAL, *LOCAL_HDD],
        None,
        {"node-a": None, "node-b": None, "node-c": BIND},
    ),
    (
        "zonal volumes with close capacity are preferred",
        claims("pvc-a"),
        ZONE_NODES,
        [
            pvc("pvc-a", "wait-sc", request="50Gi"),
            zonal("pv-a-0", "region-a", "zone-a", "200Gi"),
            zonal("pv-a-1", "region-a", "zone-a", "200Gi"),
            zonal("pv-b-0", "region-b", "zone-b", "100Gi"),
            zonal("pv-b-1", "region-b", "zone-b", "100Gi"),
        ],
        None,
        {
            "zone-a-node-a": None,
            "zone-a-node-b": None,
            "zone-b-node-a": None,
            "zone-b-node-b": None,
            "zone-c-node-a": BIND,
            "zone-c-node-b": BIND,
        },
    ),
    # --- (source) rows ----------------------------------------------------------------------------
    (
        "(source) pre-bound claim (volume name, no bind-completed) is immediate",
        claims("pvc-a"),
        [make_node("node-a")],
        [pvc("pvc-a", "wait-sc", volume_name="pv-a"), pv("pv-a", "wait-sc", phase="Available")],
        (UNRESOLVABLE, ("pod has unbound immediate PersistentVolumeClaims",)),
        {},
    ),
    (
        "(source) a claim whose class does not exist binds immediately",
        claims("pvc-a"),
        [make_node("node-a")],
        [pvc("pvc-a", "no-such-class")],
        (UNRESOLVABLE, ("pod has unbound immediate PersistentVolumeClaims",)),
        {},
    ),
    (
        "(source) provisioning: class with a provisioner and allowedTopologies",
        claims("pvc-a"),
        [make_node("node-a", zone="z1"), make_node("node-b", zone="z2")],
        [pvc("pvc-a", "wait-prov"), storage_class("wait-prov", WAIT, "csi.example.com", [{"zone": ["z1"]}])],
        None,
        {"node-a": None, "node-b": BIND},
    ),
    (
        "(source) provisioning: no-provisioner class cannot provision",
        claims("pvc-a"),
        [make_node("node-a")],
        [pvc("pvc-a", "wait-local"), storage_class("wait-local", WAIT, "kubernetes.io/no-provisioner")],
        None,
        {"node-a": BIND},
    ),
    (
        "(source) selected-node annotation pins the claim to its node",
        claims("pvc-a"),
        [make_node("node-a"), make_node("node-b")],
        [
            pvc("pvc-a", "wait-prov", annotations={"volume.kubernetes.io/selected-node": "node-b"}),
            storage_class("wait-prov", WAIT, "csi.example.com"),
        ],
        None,
        {"node-a": BIND, "node-b": None},
    ),
    (
        "(source) one PV cannot serve two claims on the same node",
        claims("pvc-0", "pvc-1"),
        [make_node("node-a"), make_node("node-b")],
        [
            pvc("pvc-0", "wait-sc", request="1Gi"),
            pvc("pvc-1", "wait-sc", request="1Gi"),
            pv("pv-a", "wait-sc", phase="Available", capacity="5Gi", node_affinity={HOSTNAME: ["node-a"]}),
            pv("pv-b-0", "wait-sc", phase="Available", capacity="5Gi", node_affinity={HOSTNAME: ["node-b"]}),
            pv("pv-b-1", "wait-sc", phase="Available", capacity="5Gi", node_affinity={HOSTNAME: ["node-b"]}),
        ],
        None,
        {"node-a": BIND, "node-b": None},
    ),
    (
        "(source) FindMatchingVolume: too small, wrong access mode, not Available, taken by another claim",
        claims("pvc-a"),
        [make_node("node-a")],
        [
            pvc("pvc-a", "wait-sc", request="10Gi", access_modes=["ReadWriteOnce"]),
            pv("small", "wait-sc", phase="Available", capacity="5Gi", accessModes=["ReadWriteOnce"]),
            pv("rox", "wait-sc", phase="Available", capacity="10Gi", accessModes=["ReadOnlyMany"]),
            pv("released", "wait-sc", phase="Released", capacity="10Gi", accessModes=["ReadWriteOnce"]),
            pv(
                "taken",
                "wait-sc",
                phase="Available",
                capacity="10Gi",
                accessModes=["ReadWriteOnce"],
                claimRef={"namespace": "default", "name": "other"},
            ),
        ],
        None,
        {"node-a": BIND},
    ),
    (
        "(source) FindMatchingVolume: a PV pre-bound to the claim is taken even if not Available",
        claims("pvc-a"),
        [make_node("node-a"), make_node("node-b")],
        [
            pvc("pvc-a", "wait-sc", request="10Gi"),
            pv(
                "mine",
                "wait-sc",
                phase="Pending",
                capacity="10Gi",
                node_affinity={HOSTNAME: ["node-b"]},
                claimRef={"namespace": "default", "name": "pvc-a"},
            ),
            pv("free", "wait-sc", phase="Available", capacity="10Gi"),
        ],
        None,
        {"node-a": BIND, "node-b": None},
    ),
]


@pytest.mark.parametrize(
    ("volumes", "nodes", "objects", "want_pre", "want_filter"), [pytest.param(*r[1:], id=r[0]) for r in ROWS]
)
def test_volume_binding(
    volumes: list[dict[str, Any]], nodes: list[Any], objects: list[Any], want_pre: Any, want_filter: dict[str, Any]
) -> None:
    pre, filters = run_plugin(VolumeBinding(), nodes, pod("pod-a", volumes=volumes), [*CLASSES, *objects])
    assert outcome(pre) == want_pre
    assert {name: outcome(status) for name, status in filters.items()} == want_filter


def test_claim_being_deleted() -> None:
    """(source) podHasPVCs: a claim with a deletionTimestamp rejects the pod at PreFilter."""
    claim = pvc("pvc-a", "wait-sc", bound_pv="pv-a")
    claim.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
    pre, _ = run_plugin(VolumeBinding(), [make_node("node-a")], pod("pod-a", volumes=claims("pvc-a")), [claim])
    assert outcome(pre) == (UNRESOLVABLE, ('persistentvolumeclaim "pvc-a" is being deleted',))


def test_ephemeral_claim_not_created_yet() -> None:
    """(source) podHasPVCs: a generic ephemeral volume whose claim does not exist yet."""
    incoming = pod("pod-a", volumes=[{"name": "scratch", "ephemeral": {}}])
    pre, _ = run_plugin(VolumeBinding(), [make_node("node-a")], incoming, [])
    assert outcome(pre) == (
        UNRESOLVABLE,
        ('waiting for ephemeral volume controller to create the persistentvolumeclaim "pod-a-scratch"',),
    )


# --- the default profile ----------------------------------------------------------------------------


def test_pre_score_skip_and_no_score() -> None:
    """StorageCapacityScoring is off by default in v1.34: the scorer is nil, PreScore returns Skip."""
    objects = [*CLASSES, pvc("pvc-a", "wait-sc", request="50Gi"), *LOCAL]
    nodes = [make_node("node-a"), make_node("node-b")]
    result = schedule_with(nodes, pod("pod-a", volumes=claims("pvc-a")), objects)
    assert "VolumeBinding" in result.skipped_score_plugins
    assert "VolumeBinding" not in [entry.plugin for entry in result.scores]
    assert result.selected_node in ("node-a", "node-b")


def test_node_affinity_conflict_message() -> None:
    """A bound claim's PV pinned to another node: every node fails VolumeBinding, v1.34 wording."""
    objects = [
        *CLASSES,
        pvc("data", "wait-sc", bound_pv="pv-x"),
        pv("pv-x", "wait-sc", node_affinity={HOSTNAME: ["gone"]}),
    ]
    nodes = [make_node("n1"), make_node("n2"), make_node("n3")]
    result = schedule_with(nodes, pod("p", volumes=claims("data")), objects)
    assert result.message == (
        "0/3 nodes are available: 3 node(s) didn't match PersistentVolume's node affinity. no new claims to "
        "deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )


def test_filter_error_ends_the_cycle() -> None:
    """(source) A Filter Error ends the cycle with `running "<plugin>" filter plugin: <error>`
    (RunFilterPlugins) and no FailedScheduling histogram: here NodeVolumeLimits meets a pod on the
    node whose generic ephemeral claim is not controlled by it (ephemeral.VolumeIsForPod)."""
    owner = pod("x", node_name="n1", volumes=[{"name": "y", "ephemeral": {}}])
    objects = [
        *CLASSES,
        pvc("x-y", "wait-sc"),  # no ownerReferences
        pvc("data", "wait-sc", bound_pv="pv-data"),
        pv("pv-data", "wait-sc", csi={"driver": "csi.example.com", "volumeHandle": "h"}),
        csi_node("n1", {"csi.example.com": 5}),
    ]
    result = schedule_with([make_node("n1")], pod("p", volumes=claims("data")), objects, [owner])
    assert not result.scheduled
    assert result.status.code.label == "Error"
    assert result.message == (
        'running "NodeVolumeLimits" filter plugin: PVC default/x-y was not created for pod default/x (pod is not owner)'
    )
