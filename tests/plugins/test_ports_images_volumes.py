"""NodePorts, ImageLocality and VolumeRestrictions, transcribed from upstream v1.34 unit tests.

Upstream: pkg/scheduler/framework/plugins/nodeports/node_ports_test.go (TestNodePorts, TestFits),
imagelocality/image_locality_test.go (TestImageLocalityPriority, TestNormalizedImageName),
volumerestrictions/volume_restrictions_test.go (TestGCEDiskConflicts, TestAWSDiskConflicts,
TestRBDDiskConflicts, TestISCSIDiskConflicts, TestAccessModeConflicts). Rows marked "(source)" follow
the plugin sources (isVolumeConflict, HostPortInfo.CheckConflict, sumImageScores) rather than a table.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from scheduler_core.framework.status import Code
from scheduler_core.plugins.image_locality import normalized_image_name
from scheduler_core.plugins.volume_restrictions import ERR_REASON_RWOP, VolumeRestrictions
from scheduler_core.schedule_one import ScheduleResult
from tests.helpers import filter_status, node, pod, schedule, scores

from .storage_builders import claim_volume, outcome, pv, pvc, run_plugin, schedule_with

MB = 1024 * 1024


def skipped(result: ScheduleResult, plugin: str) -> bool:
    """Whether `plugin`'s PreFilter returned Skip (its Filter did not run)."""
    assert result.filter is not None
    return result.filter.verdicts[result.filter.plugins.index(plugin)] is None


# --- NodePorts: TestNodePorts, TestFits ------------------------------------------------------------------

PORTS_FAIL = ("NodePorts", "Unschedulable", ["node(s) didn't have free ports for the requested pod ports"])


def ports(*specs: str) -> list[dict[str, Any]]:
    """Container ports from "PROTOCOL/hostIP/hostPort" strings (node_ports_test.go newPod)."""
    out = []
    for spec in specs:
        protocol, ip, port = spec.split("/")
        entry: dict[str, Any] = {"containerPort": int(port), "hostPort": int(port), "hostIP": ip}
        if protocol:
            entry["protocol"] = protocol
        out.append(entry)
    return out


def port_pod(name: str, *specs: str, node_name: str = "") -> Any:
    return pod(name, node_name=node_name, containers=[{"name": "c", "image": "img", "ports": ports(*specs)}])


# (id, incoming pod's ports, existing pod's ports on node m1, conflict?)
NODE_PORTS = [
    ("other port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/9090"], False),
    ("same udp port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], True),
    ("same tcp port", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], True),
    ("different host ip", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.2/8080"], False),
    ("different protocol", ["UDP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], False),
    ("second udp port conflict", ["UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], True),
    (
        "first tcp port conflict",
        ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"],
        ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"],
        True,
    ),
    ("first tcp port conflict due to 0.0.0.0 hostIP", ["TCP/0.0.0.0/8001"], ["TCP/127.0.0.1/8001"], True),
    (
        "TCP hostPort conflict due to 0.0.0.0 hostIP",
        ["TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"],
        ["TCP/127.0.0.1/8001"],
        True,
    ),
    ("second tcp port conflict to 0.0.0.0 hostIP", ["TCP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], True),
    ("second different protocol", ["UDP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], False),
    (
        "UDP hostPort conflict due to 0.0.0.0 hostIP",
        ["UDP/127.0.0.1/8001"],
        ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"],
        True,
    ),
    # TestFits
    ("non-conflicting ports", ["TCP/127.0.0.1/80"], ["TCP/127.0.0.1/9090"], False),
    (
        "multiple non-conflicting ports",
        ["TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"],
        ["TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"],
        False,
    ),
    ("same ports on different protocols", ["TCP/127.0.0.1/80"], ["UDP/127.0.0.1/80"], False),
    ("conflicting ports", ["TCP/127.0.0.1/80"], ["TCP/127.0.0.1/80"], True),
    (
        "multiple ports, some conflicting",
        ["TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"],
        ["TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"],
        True,
    ),
    # (source) HostPortInfo sanitize: empty hostIP is 0.0.0.0, empty protocol is TCP.
    ("(source) empty hostIP binds all addresses", ["TCP//8080"], ["TCP/127.0.0.1/8080"], True),
    ("(source) empty protocol is TCP", ["/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], True),
    ("(source) SCTP does not conflict with TCP", ["SCTP/0.0.0.0/8080"], ["TCP/0.0.0.0/8080"], False),
]


@pytest.mark.parametrize(
    ("wanted", "used", "conflict"),
    [pytest.param(*row[1:], id=row[0]) for row in NODE_PORTS],
)
def test_node_ports(wanted: list[str], used: list[str], conflict: bool) -> None:
    existing = port_pod("existing", *used, node_name="m1")
    result = schedule([node("m1")], port_pod("p", *wanted), [existing])
    assert filter_status(result, "m1") == (PORTS_FAIL if conflict else None)
    assert not skipped(result, "NodePorts")


def test_node_ports_skip_filter() -> None:
    """TestNodePorts "skip filter": a pod without host ports skips NodePorts."""
    existing = port_pod("existing", "TCP/0.0.0.0/8001", node_name="m1")
    result = schedule([node("m1")], pod("p"), [existing])
    assert skipped(result, "NodePorts")
    assert result.selected_node == "m1"


def _host_network_pod(name: str, node_name: str = "", host_network: bool = True) -> Any:
    container = {"name": "c", "image": "img", "ports": [{"containerPort": 9100}]}
    return pod(name, node_name=node_name, hostNetwork=host_network, containers=[container])


def test_host_network_ports_are_host_ports() -> None:
    """(source) pkg/apis/core/v1/defaults.go SetDefaults_Pod → defaultHostNetworkPorts: the API
    server gives a hostNetwork pod's ports their containerPort as hostPort, so two node exporters
    (hostNetwork, containerPort 9100, no hostPort) never share a node; without hostNetwork they do."""
    existing = _host_network_pod("exporter-a", node_name="m1")
    result = schedule([node("m1"), node("m2")], _host_network_pod("exporter-b"), [existing])
    assert filter_status(result, "m1") == PORTS_FAIL
    assert result.selected_node == "m2"
    plain = schedule([node("m1")], _host_network_pod("plain", host_network=False), [existing])
    assert skipped(plain, "NodePorts") and plain.selected_node == "m1"


def _init_port_pod(sidecar: bool) -> Any:
    init: dict[str, Any] = {"name": "init", "image": "img", "ports": ports("TCP//8001")}
    if sidecar:
        init["restartPolicy"] = "Always"
    return pod("p", initContainers=[init])


def test_non_sidecar_init_container_host_port_is_ignored() -> None:
    """TestNodePorts "non-sidecar initContainer using hostPort": PreFilter Skip."""
    existing = port_pod("existing", "TCP/0.0.0.0/8001", node_name="m1")
    result = schedule([node("m1")], _init_port_pod(sidecar=False), [existing])
    assert skipped(result, "NodePorts")
    assert filter_status(result, "m1") is None


def test_sidecar_init_container_host_port_conflicts() -> None:
    """TestNodePorts "TCP hostPort conflict from sidecar initContainer"."""
    existing = port_pod("existing", "TCP/0.0.0.0/8001", node_name="m1")
    result = schedule([node("m1")], _init_port_pod(sidecar=True), [existing])
    assert filter_status(result, "m1") == PORTS_FAIL


def test_port_conflict_only_on_the_node_that_uses_it() -> None:
    existing = port_pod("existing", "TCP/0.0.0.0/8080", node_name="m1")
    result = schedule([node("m1"), node("m2")], port_pod("p", "TCP/0.0.0.0/8080"), [existing])
    assert filter_status(result, "m1") == PORTS_FAIL
    assert filter_status(result, "m2") is None
    assert result.selected_node == "m2"


# --- ImageLocality: TestImageLocalityPriority, TestNormalizedImageName -----------------------------------


def images(*entries: tuple[list[str], int]) -> list[dict[str, Any]]:
    return [{"names": names, "sizeBytes": size_mb * MB} for names, size_mb in entries]


NODE_40_300_2000 = images(
    (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40),
    (["gcr.io/300:latest", "gcr.io/300:v1"], 300),
    (["gcr.io/2000:latest"], 2000),
)
NODE_250_10 = images((["gcr.io/250:latest"], 250), (["gcr.io/10:latest", "gcr.io/10:v1"], 10))
NODE_600_40_900 = images((["gcr.io/600:latest"], 600), (["gcr.io/40:latest"], 40), (["gcr.io/900:latest"], 900))
NODE_300_600_900 = images((["gcr.io/300:latest"], 300), (["gcr.io/600:latest"], 600), (["gcr.io/900:latest"], 900))
NODE_4000_30 = images((["gcr.io/4000:latest"], 4000), (["gcr.io/30:latest"], 30))
NODE_20_30_40 = images((["gcr.io/20:latest"], 20), (["gcr.io/30:latest"], 30), (["gcr.io/40:latest"], 40))
NO_IMAGES: list[dict[str, Any]] = []


def image_pod(containers: list[str], init_containers: tuple[str, ...] = ()) -> Any:
    spec: dict[str, Any] = {"containers": [{"name": f"c{i}", "image": img} for i, img in enumerate(containers)]}
    if init_containers:
        spec["initContainers"] = [{"name": f"i{i}", "image": img} for i, img in enumerate(init_containers)]
    return pod("p", **spec)


# (id, pod containers, pod init containers, [(node, images)], expected scores)
IMAGE_LOCALITY = [
    (
        "two images spread on two nodes, prefer the larger image one",
        ["gcr.io/40", "gcr.io/250"],
        (),
        [("node1", NODE_40_300_2000), ("node2", NODE_250_10)],
        {"node1": 0, "node2": 5},
    ),
    (
        "two images on one node, prefer this node",
        ["gcr.io/40", "gcr.io/300"],
        (),
        [("node1", NODE_40_300_2000), ("node2", NODE_250_10)],
        {"node1": 7, "node2": 0},
    ),
    (
        "if exceed limit, use limit",
        ["gcr.io/10", "gcr.io/4000"],
        (),
        [("node1", NODE_4000_30), ("node2", NODE_250_10)],
        {"node1": 100, "node2": 0},
    ),
    (
        "if exceed limit, use limit (with node which has no images present)",
        ["gcr.io/10", "gcr.io/4000"],
        (),
        [("node1", NODE_4000_30), ("node2", NODE_250_10), ("node3", NO_IMAGES)],
        {"node1": 66, "node2": 0, "node3": 0},
    ),
    (
        "pod with multiple large images, node2 is preferred",
        ["gcr.io/300", "gcr.io/600", "gcr.io/900"],
        (),
        [("node1", NODE_600_40_900), ("node2", NODE_300_600_900), ("node3", NO_IMAGES)],
        {"node1": 32, "node2": 36, "node3": 0},
    ),
    (
        "pod with multiple small images",
        ["gcr.io/30", "gcr.io/40"],
        (),
        [("node1", NODE_20_30_40), ("node2", NODE_4000_30)],
        {"node1": 1, "node2": 0},
    ),
    (
        "include InitContainers: two images spread on two nodes, prefer the larger image one",
        ["gcr.io/30"],
        ("gcr.io/300",),
        [("node1", NODE_40_300_2000), ("node2", NODE_20_30_40)],
        {"node1": 6, "node2": 0},
    ),
    (
        "(source) a tag other than latest must be listed by that name",
        ["gcr.io/300:v1", "gcr.io/300:v2"],
        (),
        [("node1", NODE_40_300_2000), ("node2", NO_IMAGES)],
        # only :v1 is listed: 100 * (300Mi/2 - 23Mi) / (2 * 1000Mi - 23Mi) = 6
        {"node1": 6, "node2": 0},
    ),
    (
        "(source) one container at the 1000Mi cap",
        ["gcr.io/2000"],
        (),
        [("node1", NODE_40_300_2000), ("node2", NO_IMAGES)],
        {"node1": 100, "node2": 0},
    ),
]


@pytest.mark.parametrize(
    ("containers", "init_containers", "nodes", "want"),
    [pytest.param(*row[1:], id=row[0]) for row in IMAGE_LOCALITY],
)
def test_image_locality(
    containers: list[str],
    init_containers: tuple[str, ...],
    nodes: list[tuple[str, list[dict[str, Any]]]],
    want: dict[str, int],
) -> None:
    result = schedule([node(n, images=imgs) for n, imgs in nodes], image_pod(containers, init_containers))
    assert scores(result, "ImageLocality") == want


def test_image_spread_counts_all_nodes_not_only_feasible_ones() -> None:
    """(source) totalNumNodes is the whole snapshot: 1000Mi on 2 of 3 nodes scales by 2/3, giving 65
    (counting only the 2 feasible nodes would give 1/2 and 48)."""
    big = images((["big:latest"], 1000))
    nodes = [node("a", images=big), node("b"), node("c", images=big, unschedulable=True)]
    result = schedule(nodes, image_pod(["big"]))
    assert filter_status(result, "c") is not None
    assert scores(result, "ImageLocality") == {"a": 65, "b": 0}


def _digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param("root", "root:latest", id="add :latest postfix 1"),
        pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="add :latest postfix 2"),
        pytest.param("root:tag", "root:tag", id="keep it as is 1"),
        pytest.param("root@" + _digest("root"), "root@" + _digest("root"), id="keep it as is 2"),
    ],
)
def test_normalized_image_name(name: str, want: str) -> None:
    assert normalized_image_name(name) == want


def test_digest_image_matches_its_digest_name() -> None:
    """A pod image by digest matches a node image name with that digest, not the tag."""
    ref = "gcr.io/app@" + _digest("app")
    nodes = [node("node1", images=images(([ref, "gcr.io/app:v1"], 500))), node("node2")]
    result = schedule(nodes, image_pod([ref]))
    # 500Mi on 1 of 2 nodes: 100 * (250Mi - 23Mi) / (1000Mi - 23Mi) = 23
    assert scores(result, "ImageLocality") == {"node1": 23, "node2": 0}


# --- VolumeRestrictions ---------------------------------------------------------------------------------

DISK_CONFLICT = ("VolumeRestrictions", "Unschedulable", ["node(s) had no available disk"])


def gce(pd: str, read_only: bool = False) -> dict[str, Any]:
    return {"name": "v", "gcePersistentDisk": {"pdName": pd, "readOnly": read_only}}


def ebs(volume_id: str, read_only: bool = False) -> dict[str, Any]:
    return {"name": "v", "awsElasticBlockStore": {"volumeID": volume_id, "readOnly": read_only}}


def rbd(monitors: list[str], pool: str = "foo", image: str = "bar", read_only: bool = False) -> dict[str, Any]:
    source = {"monitors": monitors, "pool": pool, "image": image, "fsType": "ext4", "readOnly": read_only}
    return {"name": "v", "rbd": source}


def iscsi(iqn: str, read_only: bool = False) -> dict[str, Any]:
    source = {"targetPortal": "127.0.0.1:3260", "iqn": iqn, "fsType": "ext4", "lun": 0, "readOnly": read_only}
    return {"name": "v", "iscsi": source}


IQN1 = "iqn.2016-12.server:storage.target01"
IQN2 = "iqn.2017-12.server:storage.target01"

# (id, incoming pod volumes, volumes of the pod on node1 (None: no pod), conflict?)
DISKS = [
    # TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts
    ("GCE nothing", [], None, False),
    ("GCE one state", [], [gce("foo")], False),
    ("GCE same state", [gce("foo")], [gce("foo")], True),
    ("GCE different state", [gce("bar")], [gce("foo")], False),
    ("AWS nothing", [], None, False),
    ("AWS one state", [], [ebs("foo")], False),
    ("AWS same state", [ebs("foo")], [ebs("foo")], True),
    ("AWS different state", [ebs("bar")], [ebs("foo")], False),
    ("RBD one state", [], [rbd(["a", "b"])], False),
    ("RBD same state", [rbd(["a", "b"])], [rbd(["a", "b"])], True),
    ("RBD different state", [rbd(["c", "d"])], [rbd(["a", "b"])], False),
    ("ISCSI one state", [], [iscsi(IQN1)], False),
    ("ISCSI same state", [iscsi(IQN1)], [iscsi(IQN1)], True),
    ("ISCSI different state", [iscsi(IQN2)], [iscsi(IQN1)], False),
    # (source) isVolumeConflict read-only exceptions and matching rules.
    ("(source) GCE both read-only", [gce("foo", True)], [gce("foo", True)], False),
    ("(source) GCE only the new pod read-only", [gce("foo", True)], [gce("foo")], True),
    ("(source) GCE only the existing pod read-only", [gce("foo")], [gce("foo", True)], True),
    ("(source) AWS both read-only still conflict", [ebs("foo", True)], [ebs("foo", True)], True),
    ("(source) ISCSI both read-only", [iscsi(IQN1, True)], [iscsi(IQN1, True)], False),
    ("(source) ISCSI one read-only", [iscsi(IQN1, True)], [iscsi(IQN1)], True),
    ("(source) RBD one shared monitor is enough", [rbd(["b", "c"])], [rbd(["a", "b"])], True),
    ("(source) RBD different pool", [rbd(["a"], pool="other")], [rbd(["a"])], False),
    ("(source) RBD different image", [rbd(["a"], image="other")], [rbd(["a"])], False),
    ("(source) RBD both read-only", [rbd(["a"], read_only=True)], [rbd(["a"], read_only=True)], False),
    ("(source) RBD empty pool is defaulted to rbd", [rbd(["a"], pool="")], [rbd(["a"], pool="rbd")], True),
    ("(source) GCE and EBS with the same name do not conflict", [gce("foo")], [ebs("foo")], False),
    ("(source) a second volume conflicts", [gce("x"), ebs("foo")], [ebs("foo")], True),
]


@pytest.mark.parametrize(
    ("volumes", "existing", "conflict"),
    [pytest.param(*row[1:], id=row[0]) for row in DISKS],
)
def test_disk_conflicts(volumes: list[dict[str, Any]], existing: list[dict[str, Any]] | None, conflict: bool) -> None:
    pods = [] if existing is None else [pod("existing", node_name="node1", volumes=existing)]
    result = schedule([node("node1")], pod("p", volumes=volumes), pods)
    assert filter_status(result, "node1") == (DISK_CONFLICT if conflict else None)
    assert skipped(result, "VolumeRestrictions") == (not volumes)


def test_disk_conflict_only_on_the_node_with_the_disk() -> None:
    existing = pod("existing", node_name="node1", volumes=[gce("foo")])
    result = schedule([node("node1"), node("node2")], pod("p", volumes=[gce("foo")]), [existing])
    assert filter_status(result, "node1") == DISK_CONFLICT
    assert result.selected_node == "node2"


def test_missing_claim_fails_pre_filter() -> None:
    """TestAccessModeConflicts "failed to get PVC": the claim lister's not-found error, UnschedulableAndUnresolvable."""
    claim = {"name": "data", "persistentVolumeClaim": {"claimName": "claim-with-rwop"}}
    result = schedule([node("node1"), node("node2")], pod("p", volumes=[claim]))
    status = result.pre_filter_status
    assert status is not None
    want = 'persistentvolumeclaim "claim-with-rwop" not found'
    assert (status.plugin, status.code, status.reasons) == (
        "VolumeRestrictions",
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        (want,),
    )
    assert filter_status(result, "node1") == ("VolumeRestrictions", "UnschedulableAndUnresolvable", [want])
    assert not result.scheduled
    assert result.message.startswith(f"0/2 nodes are available: {want}.")


# --- VolumeRestrictions: ReadWriteOncePod (TestAccessModeConflicts) -------------------------------------

RWOP_CONFLICT = ("Unschedulable", (ERR_REASON_RWOP,))


def _claims_pod(name: str, *claims: str, node_name: str = "") -> Any:
    return pod(name, node_name=node_name, volumes=[claim_volume(c, f"v{i}") for i, c in enumerate(claims)])


RWOP_1 = pvc("claim-with-rwop-1", access_modes=["ReadWriteOncePod"])
RWOP_2 = pvc("claim-with-rwop-2", access_modes=["ReadWriteOncePod"])
RWX = pvc("claim-with-rwx", access_modes=["ReadWriteMany"])
POD_WITH_RWX = _claims_pod("pod-with-rwx", "claim-with-rwx", node_name="node-1")

# (row, pod, existing pods on node-1, claims, PreFilter outcome, Filter outcome on node-1)
ACCESS_MODES: list[tuple[str, Any, list[Any], list[Any], Any, Any]] = [
    ("nothing", pod("p"), [], [], ("Skip", ()), None),
    (
        "failed to get PVC",
        _claims_pod("pod-with-one-pvc", "claim-with-rwop-1"),
        [],
        [],
        ("UnschedulableAndUnresolvable", ('persistentvolumeclaim "claim-with-rwop-1" not found',)),
        None,
    ),
    (
        "no access mode conflict",
        _claims_pod("pod-with-one-pvc", "claim-with-rwop-1"),
        [POD_WITH_RWX],
        [RWOP_1, RWX],
        ("Skip", ()),
        None,
    ),
    (
        "access mode conflict, unschedulable",
        _claims_pod("pod-with-one-conflict", "claim-with-rwop-1"),
        [_claims_pod("pod-with-one-pvc", "claim-with-rwop-1", node_name="node-1"), POD_WITH_RWX],
        [RWOP_1, RWX],
        None,
        RWOP_CONFLICT,
    ),
    (
        "two conflicts, unschedulable",
        _claims_pod("pod-with-two-conflicts", "claim-with-rwop-1", "claim-with-rwop-2"),
        [_claims_pod("pod-with-two-pvcs", "claim-with-rwop-1", "claim-with-rwop-2", node_name="node-1"), POD_WITH_RWX],
        [RWOP_1, RWOP_2, RWX],
        None,
        RWOP_CONFLICT,
    ),
]


@pytest.mark.parametrize(
    ("incoming", "existing", "claims", "want_pre", "want_filter"), [pytest.param(*r[1:], id=r[0]) for r in ACCESS_MODES]
)
def test_access_mode_conflicts(
    incoming: Any, existing: list[Any], claims: list[Any], want_pre: Any, want_filter: Any
) -> None:
    pre, filters = run_plugin(VolumeRestrictions(), [node("node-1")], incoming, claims, existing)
    assert outcome(pre) == want_pre
    assert (outcome(filters["node-1"]) if filters else None) == want_filter


def test_rwop_claim_in_use_on_another_node_rejects_every_node() -> None:
    """(source) The RWOP check counts the claim's users on any node (IsPVCUsedByPods), so every node
    fails it, Unschedulable: preempting the user (which RemovePod accounts for) could help."""
    claim = pvc("data", "standard", bound_pv="pv-data", access_modes=["ReadWriteOncePod"])
    objects = [claim, pv("pv-data", "standard", accessModes=["ReadWriteOncePod"])]
    holder = _claims_pod("holder", "data", node_name="n1")
    result = schedule_with([node("n1"), node("n2")], _claims_pod("p", "data"), objects, [holder])
    assert filter_status(result, "n1") == ("VolumeRestrictions", *(lambda c, r: (c, list(r)))(*RWOP_CONFLICT))
    assert filter_status(result, "n2") == filter_status(result, "n1")
    assert result.message.startswith(f"0/2 nodes are available: 2 {ERR_REASON_RWOP}. ")
    # Preemption: the holder (priority 0) is a victim only if the pod outranks it.
    assert "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod." in result.message


def test_rwop_preemption_evicts_the_claim_holder() -> None:
    """(source) SelectVictimsOnNode removes lower-priority pods and re-runs PreFilter/Filter: on the
    holder's node the claim is then free, so the holder is the victim and that node is nominated."""
    claim = pvc("data", "standard", bound_pv="pv-data", access_modes=["ReadWriteOncePod"])
    objects = [claim, pv("pv-data", "standard", accessModes=["ReadWriteOncePod"])]
    holder = _claims_pod("holder", "data", node_name="n2")
    urgent = _claims_pod("urgent", "data")
    urgent.spec.priority = 1000
    result = schedule_with([node("n1"), node("n2")], urgent, objects, [holder])
    assert result.nominated_node == "n2"
    assert [v.key for v in result.post_filter_result.detail["victims"]] == ["default/holder"]
