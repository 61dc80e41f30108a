"""NodeVolumeLimits (CSI), transcribed from upstream v1.34 unit tests.

Upstream: pkg/scheduler/framework/plugins/nodevolumelimits/csi_test.go TestCSILimits, with its
fixtures (getFakeCSIPVLister, getFakeCSIPVCLister, getFakeCSIStorageClassLister,
getNodeWithPodAndVolumeLimits, enableMigrationOnNode). Rows about VolumeAttachments are left out:
VolumeAttachment objects are not modelled. The namespace is `default` where the test used "".
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.api.objects import OwnerReference, Pod
from scheduler_core.plugins.node_volume_limits import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, NodeVolumeLimits
from tests.helpers import node, pod

from .storage_builders import claim_volume, csi_node, outcome, pv, pvc, run_plugin, schedule_with, storage_class

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
AWS_IN_TREE = "kubernetes.io/aws-ebs"
HOSTPATH_IN_TREE = "kubernetes.io/hostpath"
SC_NAME = "csi-sc"
NODE = "node-for-max-pd-test-1"
EXCEEDED = ("Unschedulable", (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,))
MIGRATED = {"storage.alpha.kubernetes.io/migrated-plugins": AWS_IN_TREE}


def claims_pod(*claims: str, name: str = "p", uid: str | None = None, node_name: str = "") -> Pod:
    p = pod(name, node_name=node_name, volumes=[claim_volume(c, f"v{i}") for i, c in enumerate(claims)])
    p.metadata.uid = uid
    return p


def ephemeral_pod(name: str, uid: str, *volumes: str, node_name: str = "") -> Pod:
    p = pod(name, node_name=node_name, volumes=[{"name": v, "ephemeral": {}} for v in volumes])
    p.metadata.uid = uid
    return p


def ephemeral_claim(owner: Pod, volume: str, owned: bool = True) -> Any:
    """The claim `<pod>-<volume>` of a generic ephemeral volume, controlled by its pod unless `owned` is False."""
    claim = pvc(f"{owner.metadata.name}-{volume}", SC_NAME)
    if owned:
        claim.metadata.owner_references = [
            OwnerReference(kind="Pod", name=owner.metadata.name, uid=owner.metadata.uid or "", controller=True)
        ]
    return claim


def fixtures(drivers: list[str]) -> list[Any]:
    """getFakeCSIPVLister + getFakeCSIPVCLister("csi", ...) + getFakeCSIStorageClassLister."""
    objects: list[Any] = []
    for driver in drivers:
        for j in range(4):
            name = f"csi-{driver}-{j}"
            if driver == AWS_IN_TREE:
                objects.append(pv(name, awsElasticBlockStore={"volumeID": name}))
            elif driver == HOSTPATH_IN_TREE:
                objects.append(pv(name, hostPath={"path": "/tmp"}))
            else:
                objects.append(pv(name, csi={"driver": driver, "volumeHandle": name}))
            objects.append(pvc(name, volume_name=name))
    objects += [
        pvc("csi-4", SC_NAME),
        pvc("csi-5"),
        pvc("csi-6", SC_NAME, volume_name="missing-in-action"),  # a PV that does not exist, a valid class
        storage_class(SC_NAME, provisioner=drivers[0]),
    ]
    return objects


def limits_node(source: str, limit: int, drivers: list[str]) -> list[Any]:
    """getNodeWithPodAndVolumeLimits' CSINode, with AWS EBS migrated (enableMigrationOnNode)."""
    if source == "csinode":
        return [csi_node(NODE, dict.fromkeys(drivers, limit), MIGRATED)]
    if source == "csinode-with-no-limit":
        return [csi_node(NODE, dict.fromkeys(drivers, None), MIGRATED)]
    return []


RUNNING = claims_pod(f"csi-{EBS}-3", name="running")
PENDING_VOLUME = claims_pod("csi-4", name="pending-volume")
UNBOUND_PVC_POD_2 = claims_pod("csi-4", name="unbound-2")
MISSING_PV = claims_pod("csi-6", name="missing-pv")
NO_SC_PVC = claims_pod("csi-5", name="no-sc")
GCE_TWO = claims_pod(f"csi-{GCE}-1", f"csi-{GCE}-2", name="gce-two")
IN_TREE_ONE = claims_pod(f"csi-{AWS_IN_TREE}-0", name="in-tree-one")
IN_TREE_TWO = claims_pod(f"csi-{AWS_IN_TREE}-1", f"csi-{AWS_IN_TREE}-2", name="in-tree-two")
CSI_EBS_ONE = claims_pod(f"csi-{EBS}-0", name="csi-ebs-one")
CSI_EBS_TWO = claims_pod(f"csi-{EBS}-1", f"csi-{EBS}-2", name="csi-ebs-two")
IN_TREE_NON_MIGRATABLE = claims_pod(f"csi-{HOSTPATH_IN_TREE}-0", name="hostpath")
IN_TREE_INLINE = pod("inline", volumes=[{"name": "v", "awsElasticBlockStore": {"volumeID": "aws-inline1"}}])
IN_TREE_INLINE_SAME_ID = pod(
    "inline-same", volumes=[{"name": "v", "awsElasticBlockStore": {"volumeID": f"csi-{EBS}-1"}}]
)
CONFIGMAP_SECRET = [{"name": "cm", "configMap": {"name": "c"}}, {"name": "s", "secret": {"secretName": "s"}}]
ONLY_CONFIGMAP_SECRET = pod("cm-only", volumes=CONFIGMAP_SECRET)
PVC_WITH_CONFIGMAP_SECRET = pod("cm-pvc", volumes=[*CONFIGMAP_SECRET, claim_volume(f"csi-{EBS}-0")])
INLINE_WITH_CONFIGMAP_SECRET = pod(
    "cm-inline", volumes=[*CONFIGMAP_SECRET, {"name": "v", "awsElasticBlockStore": {"volumeID": "aws-inline1"}}]
)
EPHEMERAL = ephemeral_pod("abc", "12345", "xyz")
EPHEMERAL_WITH_CONFIGMAP_SECRET = pod("abc", volumes=[*CONFIGMAP_SECRET, {"name": "xyz", "ephemeral": {}}])
EPHEMERAL_TWO = ephemeral_pod("abc", "12345II", "x", "y")

# (TestCSILimits row, new pod, existing pods, maxVols, drivers, limitSource, extra claims, want Filter)
ROWS: list[tuple[str, Pod, list[Pod], int, list[str], str, list[Any], Any]] = [
    (
        "fits when node volume limit >= new pods CSI volume",
        CSI_EBS_ONE,
        [RUNNING, CSI_EBS_TWO],
        4,
        [EBS],
        "csinode",
        [],
        None,
    ),
    (
        "doesn't when node volume limit <= pods CSI volume",
        CSI_EBS_ONE,
        [RUNNING, CSI_EBS_TWO],
        2,
        [EBS],
        "csinode",
        [],
        EXCEEDED,
    ),
    (
        "should when driver does not support volume limits",
        CSI_EBS_ONE,
        [RUNNING, CSI_EBS_TWO],
        2,
        [EBS],
        "csinode-with-no-limit",
        [],
        None,
    ),
    (
        "count pending PVCs towards volume limit <= pods CSI volume",
        CSI_EBS_ONE,
        [PENDING_VOLUME, CSI_EBS_TWO],
        2,
        [EBS],
        "csinode",
        [],
        EXCEEDED,
    ),
    (
        "count multiple pending pvcs towards volume limit >= pods CSI volume",
        CSI_EBS_ONE,
        [PENDING_VOLUME, UNBOUND_PVC_POD_2, CSI_EBS_TWO],
        4,
        [EBS],
        "csinode",
        [],
        None,
    ),
    (
        "should count PVCs with invalid PV name but valid SC",
        CSI_EBS_ONE,
        [MISSING_PV, CSI_EBS_TWO],
        2,
        [EBS],
        "csinode",
        [],
        EXCEEDED,
    ),
    (
        "don't count pvcs with missing SC towards volume limit",
        CSI_EBS_ONE,
        [RUNNING, NO_SC_PVC],
        2,
        [EBS],
        "csinode",
        [],
        None,
    ),
    (
        "count pvcs with the same type towards volume limit",
        CSI_EBS_ONE,
        [GCE_TWO, CSI_EBS_TWO],
        2,
        [EBS, GCE],
        "csinode",
        [],
        EXCEEDED,
    ),
    (
        "don't count pvcs with different type towards volume limit",
        GCE_TWO,
        [CSI_EBS_TWO, RUNNING],
        2,
        [EBS, GCE],
        "csinode",
        [],
        None,
    ),
    (
        "should count in-tree volumes if migration is enabled",
        IN_TREE_ONE,
        [IN_TREE_TWO],
        2,
        [AWS_IN_TREE, EBS],
        "csinode",
        [],
        EXCEEDED,
    ),
    ("nil csi node", IN_TREE_INLINE, [IN_TREE_TWO], 0, [AWS_IN_TREE, EBS], "", [], None),
    (
        "should count unbound in-tree volumes if migration is enabled",
        PENDING_VOLUME,
        [IN_TREE_TWO],
        2,
        [AWS_IN_TREE, EBS],
        "csinode",
        [],
        EXCEEDED,
    ),
    (
        "should not limit pod if volume used does not report limits",
        IN_TREE_ONE,
        [IN_TREE_TWO],
        2,
        [AWS_IN_TREE, EBS],
        "csinode-with-no-limit",
        [],
        None,
    ),
    (
        "should not count non-migratable in-tree volumes",
        IN_TREE_NON_MIGRATABLE,
        [CSI_EBS_TWO],
        2,
        [HOSTPATH_IN_TREE, EBS],
        "csinode",
        [],
        None,
    ),
    (
        "should count in-tree inline volumes if migration is enabled",
        IN_TREE_INLINE,
        [IN_TREE_TWO],
        2,
        [AWS_IN_TREE, EBS],
        "csinode",
        [],
        EXCEEDED,
    ),
    (
        "should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
        IN_TREE_ONE,
        [CSI_EBS_TWO],
        2,
        [AWS_IN_TREE, EBS],
        "csinode",
        [],
        EXCEEDED,
    ),
    (
        "should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
        IN_TREE_INLINE,
        [CSI_EBS_TWO, IN_TREE_ONE],
        3,
        [AWS_IN_TREE, EBS],
        "csinode",
        [],
        EXCEEDED,
    ),
    (
        "should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
        IN_TREE_INLINE_SAME_ID,
        [CSI_EBS_TWO, IN_TREE_ONE],
        3,
        [AWS_IN_TREE, EBS],
        "csinode",
        [],
        None,
    ),
    (
        "should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
        CSI_EBS_ONE,
        [IN_TREE_TWO],
        2,
        [AWS_IN_TREE, EBS],
        "csinode",
        [],
        EXCEEDED,
    ),
    # Upstream's fake lister says `persistentvolumeclaims`; the informer's lister says `persistentvolumeclaim`.
    (
        "ephemeral volume missing",
        EPHEMERAL,
        [],
        0,
        [EBS],
        "csinode-with-no-limit",
        [],
        (
            "UnschedulableAndUnresolvable",
            ('looking up PVC default/abc-xyz: persistentvolumeclaim "abc-xyz" not found',),
        ),
    ),
    (
        "ephemeral volume not owned",
        EPHEMERAL,
        [],
        0,
        [EBS],
        "csinode-with-no-limit",
        [ephemeral_claim(EPHEMERAL, "xyz", owned=False)],
        ("Error", ("PVC default/abc-xyz was not created for pod default/abc (pod is not owner)",)),
    ),
    (
        "ephemeral volume unbound",
        EPHEMERAL,
        [],
        0,
        [EBS],
        "csinode-with-no-limit",
        [ephemeral_claim(EPHEMERAL, "xyz")],
        None,
    ),
    (
        "ephemeral doesn't when node volume limit <= pods CSI volume",
        EPHEMERAL,
        [RUNNING, CSI_EBS_TWO],
        2,
        [EBS],
        "csinode",
        [ephemeral_claim(EPHEMERAL, "xyz")],
        EXCEEDED,
    ),
    (
        "ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
        CSI_EBS_ONE,
        [RUNNING, EPHEMERAL_TWO],
        2,
        [EBS],
        "csinode",
        [ephemeral_claim(EPHEMERAL_TWO, "x"), ephemeral_claim(EPHEMERAL_TWO, "y")],
        EXCEEDED,
    ),
    (
        "persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
        CSI_EBS_ONE,
        [RUNNING, EPHEMERAL, CSI_EBS_TWO],
        3,
        [EBS],
        "csinode",
        [ephemeral_claim(EPHEMERAL, "xyz")],
        EXCEEDED,
    ),
    (
        "persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
        CSI_EBS_ONE,
        [RUNNING, EPHEMERAL, CSI_EBS_TWO],
        5,
        [EBS],
        "csinode",
        [ephemeral_claim(EPHEMERAL, "xyz")],
        None,
    ),
    ("don't skip Filter when the pod has pvcs", PVC_WITH_CONFIGMAP_SECRET, [], 2, [EBS], "csinode", [], None),
    (
        "don't skip Filter when the pod has ephemeral volumes",
        EPHEMERAL_WITH_CONFIGMAP_SECRET,
        [],
        0,
        [EBS],
        "csinode-with-no-limit",
        [],
        (
            "UnschedulableAndUnresolvable",
            ('looking up PVC default/abc-xyz: persistentvolumeclaim "abc-xyz" not found',),
        ),
    ),
    (
        "don't skip Filter when the pod has inline migratable volumes",
        INLINE_WITH_CONFIGMAP_SECRET,
        [IN_TREE_TWO],
        2,
        [AWS_IN_TREE, EBS],
        "csinode",
        [],
        EXCEEDED,
    ),
]


def _on_node(p: Pod) -> Pod:
    copy = p.model_copy(deep=True)
    copy.spec.node_name = NODE
    copy.status.phase = "Running"
    return copy


@pytest.mark.parametrize(
    ("new_pod", "existing", "max_vols", "drivers", "source", "extra", "want"),
    [pytest.param(*row[1:], id=row[0]) for row in ROWS],
)
def test_csi_limits(
    new_pod: Pod, existing: list[Pod], max_vols: int, drivers: list[str], source: str, extra: list[Any], want: Any
) -> None:
    objects = [*fixtures(drivers), *extra, *limits_node(source, max_vols, drivers)]
    pre, filters = run_plugin(NodeVolumeLimits(), [node(NODE)], new_pod, objects, [_on_node(p) for p in existing])
    assert pre.is_success()
    assert outcome(filters[NODE]) == want


def test_skip_when_the_pod_only_uses_secrets_and_configmaps() -> None:
    """TestCSILimits "skip Filter when the pod only uses secrets and configmaps"."""
    objects = [*fixtures([EBS]), *limits_node("csinode", 2, [EBS])]
    pre, filters = run_plugin(NodeVolumeLimits(), [node(NODE)], ONLY_CONFIGMAP_SECRET, objects)
    assert (pre.code.label, filters) == ("Skip", {})


# --- end to end -----------------------------------------------------------------------------------


def test_volume_limit_message_end_to_end() -> None:
    """Two nodes whose EBS driver attaches one volume each, already used: the pod's message counts
    them under NodeVolumeLimits (Unschedulable: preemption could free a slot)."""
    nodes = [node("n1"), node("n2")]
    objects: list[Any] = [csi_node("n1", {EBS: 1}), csi_node("n2", {EBS: 1})]
    for j in range(3):  # claims bound by the PV controller (bind-completed), CSI volumes
        name = f"csi-{EBS}-{j}"
        objects += [pv(name, csi={"driver": EBS, "volumeHandle": name}), pvc(name, bound_pv=name)]
    existing = [
        claims_pod(f"csi-{EBS}-1", name="a", node_name="n1"),
        claims_pod(f"csi-{EBS}-2", name="b", node_name="n2"),
    ]
    result = schedule_with(nodes, CSI_EBS_ONE, objects, existing)
    assert result.diagnosis.status_of(0).plugin == "NodeVolumeLimits"
    assert result.message.startswith(
        "0/2 nodes are available: 2 node(s) exceed max volume count. no new claims to deallocate, preemption: "
    )
    # The volume already attached on n1 is shared by the new pod: it fits there.
    result = schedule_with(nodes, claims_pod(f"csi-{EBS}-1", name="again"), objects, existing)
    assert result.selected_node == "n1"
