"""A canonical, comparable form of a NodeTable: two tables with the same digest give every plugin
the same input (codes, list orders that carry no meaning and all-zero columns are left out)."""

from __future__ import annotations

from typing import Any

from scheduler_core.framework.node_table import NodeTable


def _nonzero(columns: dict[Any, Any]) -> dict[Any, list[int]]:
    return {key: column.tolist() for key, column in columns.items() if column.any()}


def digest(table: NodeTable) -> dict[str, Any]:
    n = table.n
    return {
        "names": list(table.names),
        "index": dict(table.index),
        "labels": [dict(labels) for labels in table.labels],
        "label_columns": {
            key: [table.label_column(key).values[c] if c >= 0 else None for c in table.label_column(key).codes]
            for key in sorted({k for labels in table.labels for k in labels})
        },
        "unschedulable": table.unschedulable.tolist(),
        "alloc": _nonzero(table.alloc),
        "requested": _nonzero(table.requested),
        "non_zero": (table.non_zero_cpu.tolist(), table.non_zero_memory.tolist()),
        "pod_count": table.pod_count.tolist(),
        "pods": [[info.key for info in pods] for pods in table.pods],
        "pod_versions": [[info.pod.metadata.resource_version for info in pods] for pods in table.pods],
        "taints": [[t.model_dump() for t in taints] for taints in table.taints],
        "taint_sets": [[t.model_dump() for t in table.taint_sets[table.taint_sig[i]]] for i in range(n)],
        "used_ports": [sorted(ports) for ports in table.used_ports],
        "port_users": {key: sorted(users) for key, users in table.port_users.items() if users},
        "images": {name: dict(holders) for name, holders in table.images.items() if holders},
        "groups": {
            (key[0], tuple(sorted(key[1])), key[2]): group.counts.tolist()
            for key, group in table.groups.items()
            if group.counts.any()
        },
        "affinity_groups": {
            repr(key): group.counts.tolist() for key, group in table.affinity_groups.items() if group.counts.any()
        },
        "namespace_labels": dict(table.namespace_labels),
        "services": sorted((ns, tuple(sorted(sel.items()))) for ns, sel in table.services),
        "controllers": dict(table.controllers),
        "nominated": {i: [info.key for info in pods] for i, pods in table.nominated.items() if pods},
        "volume_pods": sorted((i, info.key) for i, info in table.volume_pods),
        "pvc_refs": {claim: count for claim, count in table.pvc_refs.items() if count},
    }
