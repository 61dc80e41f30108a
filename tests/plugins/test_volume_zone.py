"""VolumeZone, transcribed from upstream v1.34 unit tests.

Upstream: pkg/scheduler/framework/plugins/volumezone/volume_zone_test.go (TestSingleZone,
TestMultiZone, TestWithBinding). Each row runs the plugin alone (PreFilter, then Filter on one node),
as the upstream test does; the end-to-end rows at the bottom run the whole default profile.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.plugins.volume_zone import ERR_REASON_CONFLICT, VolumeZone
from tests.helpers import node, pod

from .storage_builders import claim_volume, outcome, pv, pvc, run_plugin, schedule_with, storage_class

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
CONFLICT = ("UnschedulableAndUnresolvable", (ERR_REASON_CONFLICT,))
SKIP = ("Skip", ())

SINGLE_ZONE_OBJECTS = [
    pv("vol-1", labels={BETA_ZONE: "us-west1-a"}),
    pv("vol-2", labels={BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("vol-3", labels={BETA_REGION: "us-west1"}),
    pv("vol-stable-1", labels={ZONE: "us-west1-a"}),
    pv("vol-stable-2", labels={REGION: "us-west1", "uselessLabel": "none"}),
    pv("vol-stable-3", labels={ZONE: "us-west1-a", REGION: "us-west1-a"}),
    pvc("pvc-1", volume_name="vol-1"),
    pvc("pvc-2", volume_name="vol-2"),
    pvc("pvc-3", volume_name="vol-3"),
    pvc("pvc-4", volume_name="vol-not-exist"),
    pvc("pvc-stable-1", volume_name="vol-stable-1"),
    pvc("pvc-stable-2", volume_name="vol-stable-2"),
    pvc("pvc-stable-3", volume_name="vol-stable-3"),
]

# (TestSingleZone row, claim (None: no volume), node labels, PreFilter outcome, Filter outcome)
SINGLE_ZONE: list[tuple[str, str | None, dict[str, str], Any, Any]] = [
    ("pod without volume", None, {BETA_ZONE: "us-west1-a"}, SKIP, None),
    ("node without labels", "pvc-1", {}, None, None),
    ("beta zone label matched", "pvc-1", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, None, None),
    ("beta region label matched", "pvc-2", {BETA_REGION: "us-west1", "uselessLabel": "none"}, None, None),
    ("beta region label doesn't match", "pvc-2", {BETA_REGION: "no_us-west1", "uselessLabel": "none"}, None, CONFLICT),
    ("beta zone label doesn't match", "pvc-1", {BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"}, None, CONFLICT),
    ("zone label matched", "pvc-stable-1", {ZONE: "us-west1-a", "uselessLabel": "none"}, None, None),
    ("region label matched", "pvc-stable-2", {REGION: "us-west1", "uselessLabel": "none"}, None, None),
    ("region label doesn't match", "pvc-stable-2", {REGION: "no_us-west1", "uselessLabel": "none"}, None, CONFLICT),
    ("zone label doesn't match", "pvc-stable-1", {ZONE: "no_us-west1-a", "uselessLabel": "none"}, None, CONFLICT),
    ("pv with zone and region, node with only zone", "pvc-stable-3", {ZONE: "us-west1-a"}, None, CONFLICT),
    ("pv with zone,node with beta zone", "pvc-stable-1", {BETA_ZONE: "us-west1-a"}, None, CONFLICT),
    ("pv with beta label,node with ga label, matched", "pvc-1", {ZONE: "us-west1-a"}, None, None),
    ("pv with beta label,node with ga label, don't match", "pvc-1", {ZONE: "us-west1-b"}, None, CONFLICT),
    # (source) getPVbyPod: the bound PV is looked up by name; the lister's NotFound text.
    (
        "(source) bound pv missing",
        "pvc-4",
        {ZONE: "us-west1-a"},
        ("UnschedulableAndUnresolvable", ('persistentvolume "vol-not-exist" not found',)),
        None,
    ),
]


def _run(objects: list[Any], claim: str | None, labels: dict[str, str]) -> tuple[Any, Any]:
    volumes = [claim_volume(claim)] if claim else []
    pre, filters = run_plugin(VolumeZone(), [node("host1", labels)], pod("pod-1", volumes=volumes), objects)
    return outcome(pre), (outcome(filters["host1"]) if filters else None)


@pytest.mark.parametrize(
    ("claim", "labels", "want_pre", "want_filter"), [pytest.param(*r[1:], id=r[0]) for r in SINGLE_ZONE]
)
def test_single_zone(claim: str | None, labels: dict[str, str], want_pre: Any, want_filter: Any) -> None:
    assert _run(SINGLE_ZONE_OBJECTS, claim, labels) == (want_pre, want_filter)


MULTI_ZONE_OBJECTS = [
    pv("vol-1", labels={BETA_ZONE: "us-west1-a"}),
    pv("vol-2", labels={BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    pv("vol-3", labels={BETA_ZONE: "us-west1-c__us-west1-a"}),
    pv("vol-stable-1", labels={ZONE: "us-west1-a"}),
    pv("vol-stable-2", labels={ZONE: "us-west1-c__us-west1-a"}),
    pvc("pvc-1", volume_name="vol-1"),
    pvc("pvc-2", volume_name="vol-2"),
    pvc("pvc-3", volume_name="vol-3"),
    pvc("pvc-stable-1", volume_name="vol-stable-1"),
    pvc("pvc-stable-2", volume_name="vol-stable-2"),
]

# (TestMultiZone row, claim, node labels, Filter outcome)
MULTI_ZONE = [
    ("node without labels", "pvc-3", {}, None),
    ("beta zone label matched", "pvc-3", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, None),
    ("beta zone label doesn't match", "pvc-1", {BETA_ZONE: "us-west1-b", "uselessLabel": "none"}, CONFLICT),
    ("zone label matched", "pvc-stable-2", {ZONE: "us-west1-a", "uselessLabel": "none"}, None),
    ("zone label doesn't match", "pvc-stable-1", {ZONE: "us-west1-b", "uselessLabel": "none"}, CONFLICT),
    # (source) LabelZonesToSet trims each element: "a__ b" is {a, b}.
    ("(source) multi-zone value with spaces", "pvc-sp", {ZONE: "us-west1-b"}, None),
]


@pytest.mark.parametrize(("claim", "labels", "want"), [pytest.param(*r[1:], id=r[0]) for r in MULTI_ZONE])
def test_multi_zone(claim: str, labels: dict[str, str], want: Any) -> None:
    objects = [
        *MULTI_ZONE_OBJECTS,
        pv("vol-sp", labels={ZONE: "us-west1-a__ us-west1-b"}),
        pvc("pvc-sp", volume_name="vol-sp"),
    ]
    assert _run(objects, claim, labels) == (None, want)


def test_empty_zone_element_is_ignored() -> None:
    """(source) getPVTopologies: a value LabelZonesToSet refuses ("a__") is skipped, so nothing constrains."""
    objects = [pv("vol-bad", labels={ZONE: "us-west1-a__"}), pvc("pvc-bad", volume_name="vol-bad")]
    assert _run(objects, "pvc-bad", {ZONE: "us-west1-b"}) == (SKIP, None)


BINDING_OBJECTS = [
    storage_class("class-immediate"),  # volumeBindingMode defaults to Immediate (API defaulting)
    storage_class("class-wait", "WaitForFirstConsumer"),
    pv("vol-1", labels={BETA_ZONE: "us-west1-a"}),
    pvc("pvc-1", volume_name="vol-1"),
    pvc("pvc-nosc", "class-0"),
    pvc("pvc-emptysc"),
    pvc("pvc-waitsc", "class-wait"),
    pvc("pvc-immediatesc", "class-immediate"),
]
UNRESOLVABLE = "UnschedulableAndUnresolvable"

# (TestWithBinding row, claim, PreFilter outcome). The node is {beta zone: us-west1-a}.
WITH_BINDING = [
    ("label zone failure domain matched", "pvc-1", None),
    (
        "unbound volume empty storage class",
        "pvc-emptysc",
        (UNRESOLVABLE, ("PersistentVolumeClaim had no pv name and storageClass name",)),
    ),
    # Upstream's fake lister says `storageclasses.storage.k8s.io`; the informer's lister (what a real
    # scheduler uses) names the resource in the singular.
    (
        "unbound volume no storage class",
        "pvc-nosc",
        (UNRESOLVABLE, ('storageclass.storage.k8s.io "class-0" not found',)),
    ),
    # The test's class has no volumeBindingMode ("VolumeBindingMode not set"); the API server defaults
    # it to Immediate, so a real cluster reaches the next check.
    ("unbound volume immediate binding mode", "pvc-immediatesc", (UNRESOLVABLE, ("PersistentVolume had no name",))),
    ("unbound volume wait binding mode", "pvc-waitsc", SKIP),
]


@pytest.mark.parametrize(("claim", "want_pre"), [pytest.param(*r[1:], id=r[0]) for r in WITH_BINDING])
def test_with_binding(claim: str, want_pre: Any) -> None:
    pre, filt = _run(BINDING_OBJECTS, claim, {BETA_ZONE: "us-west1-a", "uselessLabel": "none"})
    assert pre == want_pre
    assert filt is None


# --- end to end -----------------------------------------------------------------------------------


def zone_node(name: str, zone: str) -> Any:
    return node(name, {"kubernetes.io/hostname": name, ZONE: zone, REGION: "us-west1"})


def test_zone_conflict_message_end_to_end() -> None:
    """A claim bound to a PV in zone a: nodes of zone b fail VolumeZone (UnschedulableAndUnresolvable)."""
    objects = [
        pv("vol-a", "standard", labels={ZONE: "us-west1-a"}, capacity="1Gi"),
        pvc("data", "standard", bound_pv="vol-a"),
    ]
    nodes = [zone_node("n1", "us-west1-b"), zone_node("n2", "us-west1-b"), zone_node("n3", "us-west1-a")]
    result = schedule_with(nodes, pod("p", volumes=[claim_volume("data")]), objects)
    assert result.selected_node == "n3"
    assert [result.diagnosis.status_of(i).plugin for i in (0, 1)] == ["VolumeZone", "VolumeZone"]
    nodes = nodes[:2]
    result = schedule_with(nodes, pod("p", volumes=[claim_volume("data")]), objects)
    assert result.message == (
        "0/2 nodes are available: 2 node(s) had no available volume zone. no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_missing_pv_is_volume_zone_pre_filter() -> None:
    """A bound claim whose PV is gone: VolumeBinding's PreFilter passes (bound claims are checked in
    Filter), so VolumeZone's PreFilter, which runs next, reports the lister's NotFound first."""
    objects = [pvc("data", "standard", bound_pv="gone")]
    result = schedule_with([zone_node("n1", "a")], pod("p", volumes=[claim_volume("data")]), objects)
    status = result.pre_filter_status
    assert (status.plugin, status.code.label, status.reasons) == (
        "VolumeZone",
        UNRESOLVABLE,
        ('persistentvolume "gone" not found',),
    )
    assert result.message.startswith('0/1 nodes are available: persistentvolume "gone" not found.')
