"""ClusterIP allocation from the service CIDR, as kube-apiserver's allocator does on create
(pkg/registry/core/service/ipallocator): a free address of `--service-cluster-ip-range`
(10.96.0.0/12 by default; the first address is the `kubernetes` Service's)."""

from __future__ import annotations

import ipaddress
import random
from typing import Any

from django.conf import settings

from .models import Cluster, KubeObject

__all__ = ["allocate_cluster_ip", "service_cidr"]

DEFAULT_SERVICE_CIDR = "10.96.0.0/12"
NODE_PORTS = range(30000, 32768)  # --service-node-port-range default


def service_cidr() -> ipaddress.IPv4Network:
    return ipaddress.IPv4Network(getattr(settings, "CLUSTERVIZ_SERVICE_CIDR", DEFAULT_SERVICE_CIDR))


def allocate_cluster_ip(cluster: Cluster, body: dict[str, Any]) -> None:
    """Fill in spec.clusterIP(s) and the single-stack IPv4 family fields; a requested address must be
    in the range and free (`spec.clusterIPs: Invalid value` otherwise, as upstream)."""
    spec = body.setdefault("spec", {})
    if spec.get("type") == "ExternalName":
        return
    if spec.get("type") in ("NodePort", "LoadBalancer"):
        _allocate_node_ports(cluster, body)
    spec.setdefault("ipFamilies", ["IPv4"])
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    wanted = spec.get("clusterIP") or ""
    if wanted == "None":
        spec["clusterIPs"] = ["None"]
        return
    network = service_cidr()
    taken = {
        row.body.get("spec", {}).get("clusterIP")
        for row in KubeObject.objects.filter(cluster=cluster, kind="Service").only("body")
    } | {str(network[1])}  # the `kubernetes` Service's (clusterviz/kubernetes_service.py)
    if wanted:
        try:
            address = ipaddress.IPv4Address(wanted)
        except ValueError:
            raise ValueError(f'spec.clusterIPs[0]: Invalid value: ["{wanted}"]: must be a valid IP address') from None
        if address not in network:
            raise ValueError(
                f'spec.clusterIPs[0]: Invalid value: ["{wanted}"]: failed to allocate IP {wanted}: '
                f"the provided IP ({wanted}) is not in the valid range. The range of valid IPs is {network}"
            )
        if wanted in taken:
            raise ValueError(
                f'spec.clusterIPs[0]: Invalid value: ["{wanted}"]: failed to allocate IP {wanted}: '
                "provided IP is already allocated"
            )
        spec["clusterIPs"] = [wanted]
        return
    rng = random.Random(f"{cluster.pk}-{body['metadata'].get('name')}-{len(taken)}")
    size = network.num_addresses
    start = rng.randrange(10, size - 1)
    for offset in range(size - 2):
        address = str(network[1 + (start + offset) % (size - 2)])
        if address not in taken:
            spec["clusterIP"] = address
            spec["clusterIPs"] = [address]
            return
    raise ValueError("spec.clusterIPs: Internal error: range is full")


def _allocate_node_ports(cluster: Cluster, body: dict[str, Any]) -> None:
    """Every port of a NodePort/LoadBalancer Service gets a free node port (a requested one must be
    in the range and free: `spec.ports[i].nodePort: Invalid value`, as upstream's portallocator)."""
    taken = {
        int(port["nodePort"])
        for row in KubeObject.objects.filter(cluster=cluster, kind="Service").only("body")
        for port in row.body.get("spec", {}).get("ports", [])
        if port.get("nodePort")
    }
    rng = random.Random(f"{cluster.pk}-{body['metadata'].get('name')}-{len(taken)}")
    for index, port in enumerate(body["spec"].get("ports", [])):
        wanted = port.get("nodePort")
        if wanted:
            if int(wanted) not in NODE_PORTS:
                raise ValueError(
                    f"spec.ports[{index}].nodePort: Invalid value: {wanted}: provided port is not in the valid "
                    f"range. The range of valid ports is {NODE_PORTS.start}-{NODE_PORTS.stop - 1}"
                )
            if int(wanted) in taken:
                raise ValueError(
                    f"spec.ports[{index}].nodePort: Invalid value: {wanted}: provided port is already allocated"
                )
            taken.add(int(wanted))
            continue
        free = [p for p in NODE_PORTS if p not in taken]
        if not free:
            raise ValueError(f"spec.ports[{index}].nodePort: Internal error: range is full")
        port["nodePort"] = rng.choice(free)
        taken.add(port["nodePort"])
