"""`NodeTable.build` sums a snapshot's bound pods column by column: the table must be the one
adding them one by one (`add_pod`, the per-cycle path) gives."""

from __future__ import annotations

import io

from scheduler_core.api.loading import load_cluster
from scheduler_core.framework.node_table import NodeTable
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.synthetic import SnapshotSpec, dump_json, generate_objects
from tests.table_digest import digest


def test_build_is_add_pod_one_by_one() -> None:
    out = io.StringIO()
    dump_json(generate_objects(SnapshotSpec(nodes=40, pods=400, seed=11)), out)
    cluster = load_cluster(out.getvalue(), "c.json")
    infos = [PodInfo.of(pod) for pod in cluster.pods]
    table = NodeTable.build(cluster.nodes, infos, cluster.namespaces)
    one_by_one = NodeTable(list(cluster.nodes), {ns.metadata.name: ns.metadata.labels for ns in cluster.namespaces})
    bound = [
        info
        for info in infos
        if info.pod.status.phase not in ("Succeeded", "Failed") and info.pod.spec.node_name in one_by_one.index
    ]
    for info in bound:
        one_by_one.add_pod(info, one_by_one.index[info.pod.spec.node_name])
    assert len(bound) > 250 and table.volume_pods and table.affinity_groups
    assert digest(table) == digest(one_by_one)
    assert list(table.groups) == list(one_by_one.groups)  # the same order, hence the same iteration
    assert list(table.affinity_groups) == list(one_by_one.affinity_groups)
    assert [g.pod for g in table.affinity_groups.values()] == [g.pod for g in one_by_one.affinity_groups.values()]
    assert [r for r in table.requested] == [r for r in one_by_one.requested]
