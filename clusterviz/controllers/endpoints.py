"""The endpoints and EndpointSlice controllers (pkg/controller/endpoint, pkg/controller/endpointslice),
one action per step: every Service with a selector gets an Endpoints object of the same name (ready
pods under `addresses`, the others under `notReadyAddresses`) and one EndpointSlice labelled
`kubernetes.io/service-name`, from the pods that match the selector and have an IP. Named target
ports are resolved against each pod's container ports. Endpoints of a deleted Service are removed.
"""

from __future__ import annotations

from typing import Any

from .. import scheduler_cache, store
from ..models import Cluster
from .owners import is_ready, is_terminating, owner_ref

COMPONENT = "endpoint-controller"
SLICE_COMPONENT = "endpointslice-controller"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
MANAGED_BY = "endpointslice-controller.k8s.io"
Obj = dict[str, Any]


def _target_port(port: Obj, pod: Obj) -> int | None:
    """podutil.FindPort: a number, or the container port of that name."""
    target = port.get("targetPort", port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for container in pod["spec"].get("containers", []):
        for container_port in container.get("ports", []):
            if container_port.get("name") == target and container_port.get("protocol", "TCP") == port.get(
                "protocol", "TCP"
            ):
                return int(container_port["containerPort"])
    return None


def _selected(service: Obj, pods: list[Obj]) -> list[Obj]:
    selector = service["spec"].get("selector") or {}
    namespace = service["metadata"].get("namespace", "default")
    return [
        pod
        for pod in pods
        if pod["metadata"].get("namespace") == namespace
        and all(pod["metadata"].get("labels", {}).get(k) == v for k, v in selector.items())
        and pod.get("status", {}).get("podIP")
        and pod.get("status", {}).get("phase") not in ("Succeeded", "Failed")
    ]


def _ref(pod: Obj) -> Obj:
    meta = pod["metadata"]
    return {
        "kind": "Pod",
        "name": meta["name"],
        "namespace": meta.get("namespace", "default"),
        "uid": meta.get("uid", ""),
    }


def _port_entry(port: Obj, number: int) -> Obj:
    entry: Obj = {"port": number, "protocol": port.get("protocol", "TCP")}
    if port.get("name"):
        entry["name"] = port["name"]
    return entry


def wanted_subsets(service: Obj, pods: list[Obj]) -> list[Obj]:
    """One subset per distinct port set (pods whose named ports resolve alike share one)."""
    groups: dict[tuple[tuple[int, str], ...], Obj] = {}
    for pod in sorted(pods, key=lambda p: p["status"]["podIP"]):
        ports = []
        for port in service["spec"].get("ports", []):
            number = _target_port(port, pod)
            if number is not None:
                ports.append(_port_entry(port, number))
        if not ports:
            continue
        key = tuple((p["port"], p.get("name", "")) for p in ports)
        subset = groups.setdefault(key, {"ports": ports})
        address = {"ip": pod["status"]["podIP"], "nodeName": pod["spec"].get("nodeName", ""), "targetRef": _ref(pod)}
        field = "addresses" if is_ready(pod) and not is_terminating(pod) else "notReadyAddresses"
        subset.setdefault(field, []).append(address)
    return [
        {k: subset[k] for k in ("addresses", "notReadyAddresses", "ports") if k in subset} for subset in groups.values()
    ]


def wanted_slice(service: Obj, pods: list[Obj]) -> tuple[list[Obj], list[Obj]]:
    """(endpoints, ports) of the Service's EndpointSlice."""
    endpoints = []
    ports: list[Obj] = []
    for pod in sorted(pods, key=lambda p: p["status"]["podIP"]):
        resolved = [(port, _target_port(port, pod)) for port in service["spec"].get("ports", [])]
        if not ports:
            ports = [
                {"name": port.get("name", ""), "port": number, "protocol": port.get("protocol", "TCP")}
                for port, number in resolved
                if number is not None
            ]
        ready = is_ready(pod) and not is_terminating(pod)
        endpoints.append(
            {
                "addresses": [pod["status"]["podIP"]],
                "conditions": {"ready": ready, "serving": is_ready(pod), "terminating": is_terminating(pod)},
                "nodeName": pod["spec"].get("nodeName", ""),
                "targetRef": _ref(pod),
            }
        )
    return endpoints, ports


def sync_endpoints(cluster: Cluster) -> bool:
    """One write for the first Service whose Endpoints or EndpointSlice is out of date."""
    services = [row.body for row in scheduler_cache.listed(cluster, "Service")]
    existing = {(row.namespace, row.name): row.body for row in scheduler_cache.listed(cluster, "Endpoints")}
    served = {(s["metadata"].get("namespace", "default"), s["metadata"]["name"]) for s in services}
    for namespace, name in existing:
        if (namespace, name) not in served:
            store.delete(cluster, "Endpoints", namespace, name, COMPONENT)
            return True
    if not any(s["spec"].get("selector") for s in services):
        return False
    pods = [row.body for row in scheduler_cache.listed(cluster, "Pod") if row.node_name]
    slices = [row.body for row in scheduler_cache.listed(cluster, "EndpointSlice")]
    for service in services:
        if not service["spec"].get("selector") or service["spec"].get("type") == "ExternalName":
            continue
        selected = _selected(service, pods)
        namespace = service["metadata"].get("namespace", "default")
        if _sync_endpoints_object(cluster, service, selected, existing.get((namespace, service["metadata"]["name"]))):
            return True
        if _sync_slice(cluster, service, selected, slices):
            return True
    return False


def _sync_endpoints_object(cluster: Cluster, service: Obj, pods: list[Obj], current: Obj | None) -> bool:
    meta = service["metadata"]
    subsets = wanted_subsets(service, pods)
    labels = dict(meta.get("labels", {}))
    if current is None:
        body: Obj = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": meta["name"], "namespace": meta.get("namespace", "default")},
        }
        if labels:
            body["metadata"]["labels"] = labels
        if subsets:
            body["subsets"] = subsets
        store.create(cluster, body, COMPONENT)
        return True
    if current.get("subsets", []) == subsets and current["metadata"].get("labels", {}) == labels:
        return False

    def update(body: Obj) -> None:
        body.pop("subsets", None)
        if subsets:
            body["subsets"] = subsets
        body["metadata"].pop("labels", None)
        if labels:
            body["metadata"]["labels"] = labels

    store.patch(cluster, "Endpoints", meta.get("namespace", "default"), meta["name"], update, COMPONENT)
    return True


def _sync_slice(cluster: Cluster, service: Obj, pods: list[Obj], slices: list[Obj]) -> bool:
    meta = service["metadata"]
    namespace = meta.get("namespace", "default")
    mine = [
        s
        for s in slices
        if s["metadata"].get("namespace") == namespace
        and s["metadata"].get("labels", {}).get(SERVICE_NAME_LABEL) == meta["name"]
        and any(ref.get("uid") == meta.get("uid") for ref in s["metadata"].get("ownerReferences", []))
    ]
    endpoints, ports = wanted_slice(service, pods)
    labels = {**meta.get("labels", {}), SERVICE_NAME_LABEL: meta["name"], MANAGED_BY_LABEL: MANAGED_BY}
    if not mine:
        body: Obj = {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "generateName": f"{meta['name']}-",
                "namespace": namespace,
                "labels": labels,
                "ownerReferences": [owner_ref({**service, "apiVersion": "v1"})],
            },
            "addressType": "IPv4",
            "endpoints": endpoints,
            "ports": ports,
        }
        store.create(cluster, body, SLICE_COMPONENT)
        return True
    current = mine[0]
    if current.get("endpoints", []) == endpoints and current.get("ports", []) == ports:
        return False

    def update(body: Obj) -> None:
        body["endpoints"] = endpoints
        body["ports"] = ports

    store.patch(cluster, "EndpointSlice", namespace, current["metadata"]["name"], update, SLICE_COMPONENT)
    return True
