"""The optimized hot paths decide and explain exactly as before: randomized clusters are scheduled
pod after pod and every cycle's events and result are compared, by digest, with those the code
gave before the optimization (commit c094e49; re-recorded in GOLDEN at cf7f49c, the unoptimized code
once Filter events carried their detail and filter.finished), and the resource scorers with
the plain formulas on random columns, edge cases included."""

from __future__ import annotations

import hashlib
import json
import random

import numpy as np
import pytest

from scheduler_core.api.objects import Node, Pod
from scheduler_core.framework.interface import MAX_NODE_SCORE
from scheduler_core.framework.node_table import NodeTable
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.plugins.node_resources.resource_allocation import ResourceColumn, least_allocated
from scheduler_core.schedule_one import Scheduler, ScheduleResult

ZONES = ["a", "b", "c"]


def _node(rng: random.Random, i: int) -> Node:
    allocatable = {"pods": str(rng.choice([2, 5, 110]))}
    if rng.random() > 0.05:
        allocatable["cpu"] = rng.choice(["0", "1", "2500m", "4", "64"])
    if rng.random() > 0.05:
        allocatable["memory"] = rng.choice(["0", "1Gi", "4Gi", "32Gi", "1Ti"])
    if rng.random() < 0.3:
        allocatable["example.com/gpu"] = str(rng.randint(0, 4))
    labels = {"kubernetes.io/hostname": f"n{i}"}
    if rng.random() < 0.9:
        labels["topology.kubernetes.io/zone"] = rng.choice(ZONES)
    if rng.random() < 0.3:
        labels["disk"] = rng.choice(["ssd", "hdd"])
    taints = []
    if rng.random() < 0.2:
        taints.append({"key": "dedicated", "value": rng.choice(["x", "y"]), "effect": "NoSchedule"})
    if rng.random() < 0.3:
        taints.append({"key": "soft", "value": "1", "effect": "PreferNoSchedule"})
    images = []
    if rng.random() < 0.3:
        images.append({"names": ["registry.k8s.io/big:1"], "sizeBytes": rng.choice([10, 300, 900]) * 1024 * 1024})
    return Node.model_validate(
        {
            "metadata": {"name": f"n{i}", "labels": labels},
            "spec": {"taints": taints, "unschedulable": rng.random() < 0.05},
            "status": {"allocatable": allocatable, "images": images},
        }
    )


def _pod(rng: random.Random, name: str) -> Pod:
    requests = {}
    if rng.random() < 0.8:
        requests["cpu"] = rng.choice(["100m", "500m", "1", "3"])
    if rng.random() < 0.8:
        requests["memory"] = rng.choice(["100Mi", "1Gi", "3Gi"])
    if rng.random() < 0.15:
        requests["example.com/gpu"] = "1"
    color = rng.choice(["red", "blue", "green"])
    container: dict = {"name": "c", "image": rng.choice(["registry.k8s.io/big:1", "pause"]), "resources": {}}
    if requests:
        container["resources"]["requests"] = requests
    if rng.random() < 0.1:
        container["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    spec: dict = {"containers": [container]}
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    if rng.random() < 0.2:
        spec["nodeSelector"] = {"disk": "ssd"}
    affinity: dict = {}
    key = rng.choice(["topology.kubernetes.io/zone", "kubernetes.io/hostname"])
    term = {"labelSelector": {"matchLabels": {"color": color}}, "topologyKey": key}
    roll = rng.random()
    if roll < 0.1:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    elif roll < 0.15:
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    elif roll < 0.2:
        affinity["podAntiAffinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 7, "podAffinityTerm": term}]
        }
    elif roll < 0.3:
        affinity["podAffinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": term}]
        }
    elif roll < 0.4:
        affinity["nodeAffinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 3,
                    "preference": {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]},
                }
            ]
        }
    if affinity:
        spec["affinity"] = affinity
    if rng.random() < 0.2:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": rng.choice(["topology.kubernetes.io/zone", "kubernetes.io/hostname"]),
                "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
                "labelSelector": {"matchLabels": {"color": color}},
            }
        ]
    pod = Pod.model_validate({"metadata": {"name": name, "namespace": "ns", "labels": {"color": color}}, "spec": spec})
    pod.spec.priority = 0
    return pod


def _summary(result: ScheduleResult) -> dict:
    return {
        "selected": result.selected_node,
        "message": result.message,
        "code": int(result.status.code),
        "totals": None if result.totals is None else result.totals.tolist(),
        "candidates": result.candidates.tolist(),
        "scores": [[s.plugin, s.raw.tolist(), s.normalized.tolist(), s.weighted.tolist()] for s in result.scores],
        "firstFail": None if result.filter is None else result.filter.first_fail.tolist(),
    }


def cycle_digest(seed: int) -> str:
    """Schedule 8 random pods (binding each) on a random cluster; digest every event and result."""
    rng = random.Random(seed)
    nodes = [_node(rng, i) for i in range(rng.randint(1, 40))]
    existing = []
    for k in range(rng.randint(0, 30)):
        pod = _pod(rng, f"e{k}")
        pod.spec.node_name = rng.choice(nodes).metadata.name
        existing.append(PodInfo.of(pod))
    table = NodeTable.build(nodes, existing)
    scheduler = Scheduler(seed=seed)
    events: list = []
    scheduler.subscribe(events.append)
    digest = hashlib.sha256()
    for k in range(8):
        info = PodInfo.of(_pod(rng, f"p{k}"))
        result = scheduler.schedule_pod(table, info)
        if result.selected is not None:
            scheduler.bind(table, info, result.selected)
        record = {"events": [e.to_dict(table.names) for e in events], "result": _summary(result)}
        digest.update(json.dumps(record, sort_keys=True, default=str).encode())
        events.clear()
    return digest.hexdigest()[:16]


GOLDEN: dict[int, str] = {
    0: "72870bfaae00524e",
    1: "ec9ef1e6dc2d29ce",
    2: "9a3d63f88ab17475",
    3: "4cce15c7589a21c9",
    4: "a725217c14c6acc7",
    5: "f4b8a4dca9f99dd2",
    6: "a96558607d01acc4",
    7: "040a10b502b7aeea",
    8: "9cbd05e9487f58d0",
    9: "1d72ce6706794920",
    10: "41e165ef3944853e",
    11: "d98c3c02c6d3ad12",
    12: "b1ba0d5f2c33ff42",
    13: "6767f522e083a497",
    14: "40d1e6446dc19fe8",
    15: "88a623b5c2b9b67d",
    16: "172d8de7df747b2b",
    17: "7c23e102261f686d",
    18: "c66e73b959f7a76b",
    19: "53959d0fb0a2b315",
    20: "d419f0d26818ed66",
    21: "531af0f7ec2d5160",
    22: "f0672ee82acae3ec",
    23: "d9708f67f22f0775",
    24: "ff8e1bbc083f4b36",
    25: "c7d4a306f1e02e9f",
    26: "e8d3635c8166dac9",
    27: "396b574c5ea5f285",
    28: "7299b0d10dd4a3a4",
    29: "d943a42aae29877d",
    30: "beba2c8285557614",
    31: "0655b8108b18b111",
    32: "b235bedfb4f7c2fa",
    33: "17e3934422a9e503",
    34: "5b1c46f53ac78f12",
    35: "180cf72174b11534",
    36: "44b0ec4a0c39aa13",
    37: "b7e7276c7ea94bd2",
    38: "ad96590786bfd651",
    39: "c5ceae13eca86c2c",
}


@pytest.mark.parametrize("seed", range(40))
def test_same_results_and_events_as_before(seed: int) -> None:
    assert cycle_digest(seed) == GOLDEN[seed]


def _plain_least_allocated(columns: list[tuple[np.ndarray, np.ndarray, int]], n: int) -> np.ndarray:
    """The formula as written upstream, in plain integer numpy."""
    total = np.zeros(n, dtype=np.int64)
    weights = np.zeros(n, dtype=np.int64)
    for alloc, req, weight in columns:
        valid = alloc != 0
        fits = valid & (req <= alloc)
        total += np.where(fits, (alloc - req) * MAX_NODE_SCORE, 0) // np.where(valid, alloc, 1) * weight
        weights += valid * weight
    return np.where(weights > 0, total // np.maximum(weights, 1), 0)


@pytest.mark.parametrize("seed", range(30))
def test_least_allocated_matches_the_plain_formula(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    columns, plain = [], []
    for _ in range(int(rng.integers(1, 4))):
        high = int(rng.choice([10, 4000, 2**40, 2**55]))
        alloc = rng.integers(0, high, n) * (rng.random(n) > 0.1)
        req = rng.integers(0, high, n)
        weight = int(rng.integers(1, 5))
        divisor = np.where(alloc != 0, alloc, 1).astype(np.float64)
        exact = int(alloc.max()) * 101 < 2**53
        columns.append(ResourceColumn(alloc, req, weight, divisor, bool((alloc != 0).all()), exact))
        plain.append((alloc, req, weight))
    assert least_allocated(columns, n).tolist() == _plain_least_allocated(plain, n).tolist()


@pytest.mark.parametrize("seed", range(20))
def test_domain_counts_and_spread_match_plain_loops(seed: int) -> None:
    """Per-domain sums equal a loop over nodes: zones in node order or shuffled, nodes without the
    key, a single zone, a mask, and integer columns of several widths."""
    rng = random.Random(seed)
    n = rng.randint(1, 80)
    zones = ZONES[: rng.randint(1, 3)]
    in_order = seed % 2 == 0
    nodes = []
    for i in range(n):
        labels = {"kubernetes.io/hostname": f"n{i}"}
        if rng.random() < 0.85 or seed % 4 == 0:
            labels["zone"] = zones[i * len(zones) // n] if in_order else rng.choice(zones)
        nodes.append(Node.model_validate({"metadata": {"name": f"n{i}", "labels": labels}}))
    table = NodeTable.build(nodes, [])
    nprng = np.random.default_rng(seed)
    dtype = [np.int64, np.int32, np.uint8, np.float64][seed % 4]
    per_node = nprng.integers(0, 250, n).astype(dtype)
    mask = nprng.random(n) < 0.5 if seed % 3 == 0 else None
    column = table.label_column("zone")
    want = np.zeros(len(column.values), dtype=np.int64)
    for i, labels in enumerate(table.labels):
        if "zone" in labels and (mask is None or mask[i]):
            want[column.vocab[labels["zone"]]] += int(per_node[i])
    got = table.domain_counts("zone", per_node, mask)
    assert got.dtype == np.int64
    assert got.tolist() == want.tolist()
    # and back to nodes: each node's domain sum, 0 without the key
    assert column.spread(got).tolist() == [
        int(want[column.vocab[labels["zone"]]]) if "zone" in labels else 0 for labels in table.labels
    ]
