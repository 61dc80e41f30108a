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
    term = {"labelSelector": {"matchLabels": {"color": color}}, "topologyKey": "topology.kubernetes.io/zone"}
    roll = rng.random()
    if roll < 0.15:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
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
                "topologyKey": "topology.kubernetes.io/zone",
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
    0: "de08fa25112c3bfb",
    1: "56dd163af5e28726",
    2: "a990980dd40759ea",
    3: "7209dda7a14b1af0",
    4: "00d60799ee550235",
    5: "878c3b17d7b75944",
    6: "83513591e34b8c81",
    7: "fe45ed2017bd6d7a",
    8: "f4a74beae5175712",
    9: "ec43c537e17f0328",
    10: "fa92cd525c6cd17c",
    11: "40dd274e5bff44cb",
    12: "a359ca25525338a4",
    13: "1824c3c232a8b5dd",
    14: "322d46ad1ad7abc3",
    15: "c6a990437aaa6108",
    16: "a28b37343038f718",
    17: "7f28f22d7b101a17",
    18: "353a5af706ced8ad",
    19: "ac97be68435436ab",
    20: "90f5fee5a7adcdaa",
    21: "a96b677f9f22357f",
    22: "ecc9faf10ae7c1e9",
    23: "454eb6e4f5289b02",
    24: "eeebf37eefe640d2",
    25: "e321ec4c4dc1012a",
    26: "1b6d9587febe5005",
    27: "1b2009a14fdcbd67",
    28: "5405d7cd489f7b78",
    29: "2adb078e29c83b24",
    30: "16e4757c8f5b32b2",
    31: "3dc09ba6555473f1",
    32: "1d98a70efb0a16af",
    33: "f0e7bd9c6f857cae",
    34: "cd208fc1d0e93815",
    35: "af1ea4bf92af71f6",
    36: "0b9c0ce65deee0ab",
    37: "6f3467649bb70f88",
    38: "36338d6898625496",
    39: "bfd92c0be67473b5",
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
