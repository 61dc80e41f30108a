"""The `kubernetes` Service of the `default` namespace, which kube-apiserver keeps pointing at itself
(pkg/controlplane/controller/kubernetesservice), with its Endpoints and EndpointSlice: the first
address of the service CIDR, port 443 (https) to the API server's 6443. Served computed where none is
stored (as the built-in namespaces are); the address allocator never hands the first address out."""

from __future__ import annotations

from typing import Any

from .models import Cluster
from .service_ips import service_cidr

__all__ = ["API_SERVER_ADDRESS", "NAME", "computed", "service_ip"]

Obj = dict[str, Any]
NAME = "kubernetes"
NAMESPACE = "default"
API_SERVER_ADDRESS = "192.168.0.2"  # the simulated control plane's, below the nodes' 192.168.0.10+
API_SERVER_PORT = 6443
LABELS = {"component": "apiserver", "provider": "kubernetes"}


def service_ip() -> str:
    return str(service_cidr()[1])


def _meta(cluster: Cluster, kind: str, labels: dict[str, str]) -> Obj:
    return {
        "name": NAME,
        "namespace": NAMESPACE,
        "uid": f"{kind.lower()}-{cluster.pk}-kubernetes",
        "resourceVersion": "1",
        "creationTimestamp": cluster.created_rfc3339(),
        "labels": labels,
    }


def computed(cluster: Cluster, kind: str) -> Obj | None:
    """The kind's `kubernetes` object (Service, Endpoints or EndpointSlice), None for other kinds."""
    port = {"name": "https", "port": API_SERVER_PORT, "protocol": "TCP"}
    if kind == "Service":
        ip = service_ip()
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": _meta(cluster, kind, LABELS),
            "spec": {
                "clusterIP": ip,
                "clusterIPs": [ip],
                "internalTrafficPolicy": "Cluster",
                "ipFamilies": ["IPv4"],
                "ipFamilyPolicy": "SingleStack",
                "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": API_SERVER_PORT}],
                "sessionAffinity": "None",
                "type": "ClusterIP",
            },
            "status": {"loadBalancer": {}},
        }
    if kind == "Endpoints":
        return {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": _meta(cluster, kind, {"endpointslice.kubernetes.io/skip-mirror": "true"}),
            "subsets": [{"addresses": [{"ip": API_SERVER_ADDRESS}], "ports": [port]}],
        }
    if kind == "EndpointSlice":
        return {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": _meta(cluster, kind, {"kubernetes.io/service-name": NAME}),
            "addressType": "IPv4",
            "endpoints": [{"addresses": [API_SERVER_ADDRESS], "conditions": {"ready": True}}],
            "ports": [port],
        }
    return None
