"""GPUs handed out by Dynamic Resource Allocation in a generated cluster (resource.k8s.io/v1).

Every node of the `gpu` pool publishes one ResourceSlice of the NVIDIA DRA driver
(`gpu.nvidia.com`) with its GPUs as devices (the attributes and capacity the driver publishes:
productName, architecture, driverVersion, cudaComputeCapability, index, uuid; memory), as
`kubectl get resourceslices -o json` prints them. A DeviceClass selects the driver's devices; a
ResourceClaimTemplate asks for one GPU. Training pods run on most GPU nodes, each with the claim
the resourceclaim controller made from the template for it, allocated to one of the node's GPUs
and reserved for the pod — so some GPUs are free and some nodes have none left.

Drawn from its own random source (seeded from the spec), so turning DRA on leaves every other
object of the cluster exactly as it was.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from typing import Any

__all__ = ["DEVICE_CLASS", "DRIVER", "TEMPLATE", "TEMPLATE_NAMESPACE", "dra_objects", "pending_gpu_pod"]

Obj = dict[str, Any]

DRIVER = "gpu.nvidia.com"
DEVICE_CLASS = "gpu.nvidia.com"
TEMPLATE = "single-gpu"
TEMPLATE_NAMESPACE = "default"
GPUS_PER_NODE = 1  # the gpu pool's p3.2xlarge: one V100
PRODUCT = ("Tesla-V100-SXM2-16GB", "Volta", "7.0.0", "16Gi")
DRIVER_VERSION = "550.54.15"
TRAINER_IMAGE = "nvcr.io/nvidia/pytorch:25.01-py3"
API = "resource.k8s.io/v1"


def _uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _suffix(rng: random.Random, length: int = 5) -> str:
    return "".join(rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(length))


def _device(rng: random.Random, index: int) -> Obj:
    product, architecture, compute, memory = PRODUCT
    return {
        "attributes": {
            "architecture": {"string": architecture},
            "brand": {"string": "Nvidia"},
            "cudaComputeCapability": {"version": compute},
            "cudaDriverVersion": {"version": "12.4.0"},
            "driverVersion": {"version": DRIVER_VERSION},
            "index": {"int": index},
            "minor": {"int": index},
            "productName": {"string": product},
            "type": {"string": "gpu"},
            "uuid": {"string": f"GPU-{_uid(rng)}"},
        },
        "capacity": {"memory": {"value": memory}},
        "name": f"gpu-{index}",
    }


def _slice(rng: random.Random, node: str, created: str) -> Obj:
    return {
        "apiVersion": API,
        "kind": "ResourceSlice",
        "metadata": {
            "creationTimestamp": created,
            "generateName": f"{node}-{DRIVER}-",
            "name": f"{node}-{DRIVER}-{_suffix(rng)}",
            "ownerReferences": [
                {"apiVersion": "v1", "controller": True, "kind": "Node", "name": node, "uid": _uid(rng)}
            ],
            "resourceVersion": str(rng.randint(10_000, 900_000)),
            "uid": _uid(rng),
        },
        "spec": {
            "devices": [_device(rng, i) for i in range(GPUS_PER_NODE)],
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"generation": 1, "name": node, "resourceSliceCount": 1},
        },
    }


def _trainer(rng: random.Random, k: int, node: str, claim: str, pod_uid: str, created: str) -> Obj:
    name = f"trainer-{k}-{_suffix(rng)}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "creationTimestamp": created,
            "labels": {"app": "trainer", "batch.kubernetes.io/job-name": f"trainer-{k}"},
            "name": name,
            "namespace": TEMPLATE_NAMESPACE,
            "resourceVersion": str(rng.randint(10_000, 900_000)),
            "uid": pod_uid,
        },
        "spec": {
            "containers": [
                {
                    "image": TRAINER_IMAGE,
                    "name": "trainer",
                    "resources": {
                        "claims": [{"name": "gpu"}],
                        "requests": {"cpu": "4", "memory": "32Gi"},
                    },
                }
            ],
            "nodeName": node,
            "priority": 0,
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": TEMPLATE}],
            "restartPolicy": "OnFailure",
            "schedulerName": "default-scheduler",
            "tolerations": [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}],
        },
        "status": {
            "phase": "Running",
            "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": claim}],
            "startTime": created,
        },
    }


def _claim(rng: random.Random, name: str, pod: Obj, node: str, device: int, created: str) -> Obj:
    meta = pod["metadata"]
    return {
        "apiVersion": API,
        "kind": "ResourceClaim",
        "metadata": {
            "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
            "creationTimestamp": created,
            "finalizers": ["resource.kubernetes.io/delete-protection"],
            "generateName": f"{meta['name']}-gpu-",
            "name": name,
            "namespace": TEMPLATE_NAMESPACE,
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "Pod",
                    "name": meta["name"],
                    "uid": meta["uid"],
                }
            ],
            "resourceVersion": str(rng.randint(10_000, 900_000)),
            "uid": _uid(rng),
        },
        "spec": _template_spec(),
        "status": {
            "allocation": {
                "devices": {"results": [{"device": f"gpu-{device}", "driver": DRIVER, "pool": node, "request": "gpu"}]},
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                    ]
                },
            },
            "reservedFor": [{"name": meta["name"], "resource": "pods", "uid": meta["uid"]}],
        },
    }


def _template_spec() -> Obj:
    return {"devices": {"requests": [{"exactly": {"deviceClassName": DEVICE_CLASS}, "name": "gpu"}]}}


def dra_objects(gpu_nodes: list[str], seed: int, created: str) -> Iterator[Obj]:
    """The DeviceClass, the template, one slice per GPU node, and the training pods with their
    claims: on two nodes in three, pods holding 1 to all of the node's GPUs (one each, in device order)."""
    rng = random.Random(f"dra-{seed}")
    yield {
        "apiVersion": API,
        "kind": "DeviceClass",
        "metadata": {"creationTimestamp": created, "name": DEVICE_CLASS, "uid": _uid(rng)},
        "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]},
    }
    yield {
        "apiVersion": API,
        "kind": "ResourceClaimTemplate",
        "metadata": {"creationTimestamp": created, "name": TEMPLATE, "namespace": TEMPLATE_NAMESPACE, "uid": _uid(rng)},
        "spec": {"spec": _template_spec()},
    }
    trainers: list[tuple[Obj, Obj]] = []
    for node in gpu_nodes:
        yield _slice(rng, node, created)
        if rng.random() < 1 / 3:
            continue
        for device in range(rng.randint(1, GPUS_PER_NODE)):
            k = len(trainers)
            pod_uid = _uid(rng)
            claim_name = f"trainer-{k}-gpu-{_suffix(rng)}"
            pod = _trainer(rng, k, node, claim_name, pod_uid, created)
            trainers.append((pod, _claim(rng, claim_name, pod, node, device, created)))
    for pod, claim in trainers:
        yield pod
        yield claim


def pending_gpu_pod(name: str = "trainer", claim_name: str | None = None) -> Obj:
    """A training pod that asks for a GPU: from the template (its claim not created yet — the
    scheduler waits for the controller), or through a claim of its own (`claim_name`)."""
    if claim_name is None:
        claim = {"name": "gpu", "resourceClaimTemplateName": TEMPLATE}
    else:
        claim = {"name": "gpu", "resourceClaimName": claim_name}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": TEMPLATE_NAMESPACE},
        "spec": {
            "containers": [
                {
                    "image": TRAINER_IMAGE,
                    "name": "trainer",
                    "resources": {"claims": [{"name": "gpu"}], "requests": {"cpu": "4", "memory": "32Gi"}},
                }
            ],
            "resourceClaims": [claim],
            "tolerations": [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}],
        },
    }
