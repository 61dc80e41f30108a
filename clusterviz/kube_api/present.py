"""Stored objects as the API serves them: `kind`/`apiVersion` filled in, plus the status a real
kubelet or node controller would report that the simulation does not store (node conditions,
addresses and nodeInfo; pod IPs and QoS class). Only the response is decorated, never the store."""

from __future__ import annotations

import copy
from typing import Any

from ..controllers.history import sorted_keys
from ..models import Cluster, KubeObject
from ..store import now_rfc3339
from . import events_v1
from .events_v1 import to_events_v1
from .resources import Resource
from .selectors import format_label_selector

__all__ = ["node_addresses", "present", "scale_of", "synthetic_lease"]

Obj = dict[str, Any]


def node_addresses(cluster: Cluster) -> dict[str, str]:
    """node name → InternalIP, numbered as the simulated kubelet numbers hostIP (node creation order)."""
    names = KubeObject.objects.filter(cluster=cluster, kind="Node").order_by("id").values_list("name", flat=True)
    return {name: f"192.168.{i // 250}.{10 + i % 250}" for i, name in enumerate(names)}


def present(res: Resource, body: Obj, addresses: dict[str, str] | None = None, kubelet: str = "") -> Obj:
    """A copy of `body` as served (kind, apiVersion and the simulated status; a node without a
    nodeInfo.kubeletVersion of its own runs `kubelet`, the cluster's release)."""
    obj = copy.deepcopy(body)
    if res.group == events_v1.GROUP:
        return to_events_v1(obj)
    obj["apiVersion"] = res.api_version
    obj["kind"] = res.kind
    obj.setdefault("metadata", {})
    if res.kind == "Node":
        _node(obj, (addresses or {}).get(obj["metadata"].get("name", "")), kubelet)
    elif res.kind == "Pod":
        _pod(obj)
    elif res.kind == "Event":
        _event(obj)
    elif res.kind == "Namespace":
        obj.setdefault("spec", {"finalizers": ["kubernetes"]})
        obj.setdefault("status", {}).setdefault("phase", "Active")
    elif res.kind == "ControllerRevision" and isinstance(obj.get("data"), dict):
        # served in the order it was written (kubectl compares a revision's bytes), whatever the database keeps
        obj["data"] = sorted_keys(obj["data"])
    return obj


NODE_CONDITIONS = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status (simulated by clusterviz)"),
)


def _node(obj: Obj, address: str | None, kubelet: str) -> None:
    meta, status = obj["metadata"], obj.setdefault("status", {})
    obj.setdefault("spec", {})
    created = meta.get("creationTimestamp") or now_rfc3339()
    if "capacity" not in status and "allocatable" in status:
        status["capacity"] = dict(status["allocatable"])
    if not status.get("conditions"):  # the kubelet's node status setters (pkg/kubelet/nodestatus)
        heartbeat = now_rfc3339()
        status["conditions"] = [
            {
                "type": kind,
                "status": state,
                "lastHeartbeatTime": heartbeat,
                "lastTransitionTime": created,
                "reason": reason,
                "message": message,
            }
            for kind, state, reason, message in NODE_CONDITIONS
        ]
    if not status.get("addresses"):
        addresses = [{"type": "Hostname", "address": meta.get("name", "")}]
        if address:
            addresses.insert(0, {"type": "InternalIP", "address": address})
        status["addresses"] = addresses
    info = status.setdefault("nodeInfo", {})
    for key, value in (
        ("kubeletVersion", kubelet),
        ("kubeProxyVersion", ""),
        ("osImage", "clusterviz simulated node"),
        ("kernelVersion", "simulated"),
        ("containerRuntimeVersion", "simulated://1.0"),
        ("operatingSystem", "linux"),
        ("architecture", "amd64"),
        ("machineID", ""),
        ("systemUUID", ""),
        ("bootID", ""),
    ):
        info.setdefault(key, value)
    status.setdefault("daemonEndpoints", {"kubeletEndpoint": {"Port": 10250}})


def _qos_class(spec: Obj) -> str:
    """v1qos.GetPodQOS, for cpu and memory: Guaranteed, Burstable or BestEffort."""
    containers = [*spec.get("containers", []), *spec.get("initContainers", [])]
    requests: list[Obj] = [c.get("resources", {}).get("requests") or {} for c in containers]
    limits: list[Obj] = [c.get("resources", {}).get("limits") or {} for c in containers]
    compute = ("cpu", "memory")
    if not any(k in r for r in requests + limits for k in compute):
        return "BestEffort"
    for req, lim in zip(requests, limits, strict=True):
        for resource in compute:
            if resource not in lim:
                return "Burstable"
            if resource in req and str(req[resource]) != str(lim[resource]):
                return "Burstable"
    return "Guaranteed"


def _pod(obj: Obj) -> None:
    status = obj.setdefault("status", {})
    status.setdefault("phase", "Pending")
    if status.get("podIP") and not status.get("podIPs"):
        status["podIPs"] = [{"ip": status["podIP"]}]
    if status.get("hostIP") and not status.get("hostIPs"):
        status["hostIPs"] = [{"ip": status["hostIP"]}]
    status.setdefault("qosClass", _qos_class(obj.get("spec", {})))


def _event(obj: Obj) -> None:
    involved = obj.get("involvedObject", {})
    # cluster-scoped objects' events name no namespace (describe node selects involvedObject.namespace=)
    if involved.get("kind") in ("Node", "Namespace", "PriorityClass"):
        involved.pop("namespace", None)


def scale_of(res: Resource, body: Obj) -> Obj:
    """The autoscaling/v1 Scale of a Deployment or ReplicaSet."""
    meta = body["metadata"]
    selector = format_label_selector(body.get("spec", {}).get("selector"))
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            key: meta[key]
            for key in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if key in meta
        },
        "spec": {"replicas": int(body.get("spec", {}).get("replicas", 1))},
        "status": {
            "replicas": int(body.get("status", {}).get("replicas", 0)),
            "selector": "" if selector == "<none>" else selector,
        },
    }


def synthetic_lease(node: Obj) -> Obj:
    """The kube-node-lease Lease of a node, renewed "just now" by its (simulated) kubelet."""
    meta = node["metadata"]
    return {
        "kind": "Lease",
        "apiVersion": "coordination.k8s.io/v1",
        "metadata": {
            "name": meta["name"],
            "namespace": "kube-node-lease",
            "uid": f"lease-{meta.get('uid', meta['name'])}",
            "resourceVersion": meta.get("resourceVersion", "0"),
            "creationTimestamp": meta.get("creationTimestamp"),
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": meta["name"], "uid": meta.get("uid", "")}],
        },
        "spec": {
            "holderIdentity": meta["name"],
            "leaseDurationSeconds": 40,
            "renewTime": now_rfc3339().replace("Z", ".000000Z"),
        },
    }
