"""NodeTable.update_node: a node changed in place equals a table built from scratch."""

from __future__ import annotations

from scheduler_core.framework.node_table import NodeTable
from scheduler_core.framework.pod_info import PodInfo

from .helpers import node, pod
from .table_digest import digest


def build(nodes: list, pods: list) -> NodeTable:  # type: ignore[type-arg]
    return NodeTable.build(nodes, [PodInfo.of(p) for p in pods])


def test_update_node_equals_a_fresh_build() -> None:
    before = [
        node("a", labels={"zone": "z1"}, images=[{"names": ["nginx:1"], "sizeBytes": 100}]),
        node("b", labels={"zone": "z2"}, taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
        node("c"),
    ]
    pods = [
        pod("p1", node_name="a", requests={"cpu": "1", "example.com/gpu": "1"}),
        pod("p2", node_name="b", labels={"app": "x"}),
    ]
    after_b = node(
        "b",
        labels={"zone": "z1", "disk": "ssd"},
        taints=[{"key": "other", "effect": "NoExecute"}],
        allocatable={"cpu": "4", "memory": "8Gi", "pods": "10", "example.com/gpu": "2"},
        images=[{"names": ["nginx:1", "nginx:latest"], "sizeBytes": 100}],
        unschedulable=True,
    )
    table = build(before, pods)
    table.label_column("zone")  # a cached column must not survive the change
    assert not table.has_labels.all()  # c has no labels
    table.update_node(1, after_b)
    assert digest(table) == digest(build([before[0], after_b, before[2]], pods))
    # back again: the images and the taint signature of the old version return
    table.update_node(1, before[1])
    assert digest(table) == digest(build(before, pods))
    table.update_node(2, node("c", labels={"zone": "z3"}))
    assert table.has_labels.all()
    assert table.label_column("zone").values == ["z1", "z2", "z3"]


def test_update_node_refuses_another_name() -> None:
    table = build([node("a")], [])
    try:
        table.update_node(0, node("b"))
    except ValueError as exc:
        assert str(exc) == "node 0 is 'a', not 'b'"
    else:
        raise AssertionError("renamed in place")


def test_insert_and_remove_nodes_equal_a_fresh_build() -> None:
    nodes = [
        node("a", labels={"zone": "z1"}, images=[{"names": ["nginx:1"], "sizeBytes": 100}]),
        node("c", taints=[{"key": "k", "effect": "NoSchedule"}]),
    ]
    pods = [
        pod("p1", node_name="a", requests={"cpu": "1"}),
        pod("p2", node_name="c", labels={"app": "x"}),
    ]
    hosted = pod(
        "p3",
        node_name="c",
        containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 80, "hostPort": 80}]}],
        affinity={
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "zone"}
                ]
            }
        },
    )
    infos = [PodInfo.of(p) for p in [*pods, hosted]]
    table = NodeTable.build(nodes, infos)
    table.label_column("zone")
    b = node(
        "b",
        labels={"zone": "z2"},
        allocatable={"cpu": "2", "memory": "1Gi", "pods": "5", "example.com/gpu": "1"},
        images=[{"names": ["nginx:1"], "sizeBytes": 100}],
    )
    table.insert_node(1, b)
    assert digest(table) == digest(NodeTable.build([nodes[0], b, nodes[1]], infos))
    assert table.label_column("zone").values == ["z1", "z2"]
    table.remove_node(2)  # c, with its pods (their port and anti-affinity too)
    assert digest(table) == digest(NodeTable.build([nodes[0], b], infos))
    table.remove_node(0)
    assert digest(table) == digest(NodeTable.build([b], infos))
    table.insert_node(0, nodes[0])
    for info in infos[:1]:
        table.add_pod(info, 0)
    assert digest(table) == digest(NodeTable.build([nodes[0], b], infos))
