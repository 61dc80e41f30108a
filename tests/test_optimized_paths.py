"""The optimized hot paths decide and explain exactly as before: randomized clusters are scheduled
pod after pod and every cycle's events and result are compared, by digest, with those the code
gave before the optimization (commit c094e49, recorded in GOLDEN), and the resource scorers with
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
    0: "adf6fa908372c7a7",
    1: "e1e3f1173ffb24b5",
    2: "29df56e0da17f1d9",
    3: "6056658f0f59e9eb",
    4: "c693a62d76435559",
    5: "29c4ae9ec346e818",
    6: "2900e2b13f4841ba",
    7: "d1b4a8568ac1b4b6",
    8: "3886759512448a73",
    9: "074885af834140dc",
    10: "e4ecf6210e46bf4d",
    11: "1d6dc8ce172b3f03",
    12: "1ebed7266f63663e",
    13: "3db693fc5bd58e4b",
    14: "5b778220bb50f961",
    15: "b4c89bd9c8587f66",
    16: "f9208526ec1e0f7a",
    17: "efa37e23ba45b9b6",
    18: "596b2367ca9af270",
    19: "aaa62c6ed3e8f6e9",
    20: "0677e23c4c82e986",
    21: "a826c7926352136c",
    22: "9ef94021c528ff49",
    23: "9eece7542f9147dd",
    24: "f9dc5da81706df6c",
    25: "039511cacee8665e",
    26: "8d43a1d4016d61b4",
    27: "152134789d13d529",
    28: "1024e7c5639609b4",
    29: "6f6d70764e557353",
    30: "6a66700f2e1a7b3e",
    31: "ffed304238ddb71a",
    32: "0aec05c61359fa19",
    33: "50f4526dba3948ca",
    34: "4551814aea9dab8a",
    35: "67b1c5ed6a3fc097",
    36: "f58ceac00d97bead",
    37: "9c94b88c3329a641",
    38: "6d950f2ab497472c",
    39: "b3b2d6b763c773ba",
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
