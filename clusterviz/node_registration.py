"""What a kubelet puts on the Node it registers (pkg/kubelet/kubelet_node_status.go initialNode):
the well-known hostname, OS and architecture labels, for nodes created in the app (kubectl's create,
the browser's create action). Imported nodes keep the labels their cluster gave them."""

from __future__ import annotations

from typing import Any

__all__ = ["register_node"]

OS, ARCH = "linux", "amd64"


def register_node(body: dict[str, Any]) -> dict[str, Any]:
    """`body` (a Node) with the kubelet's labels where it has none of its own."""
    if body.get("kind") != "Node":
        return body
    meta = body.setdefault("metadata", {})
    labels = meta.setdefault("labels", {})
    for key, value in (
        ("beta.kubernetes.io/arch", ARCH),
        ("beta.kubernetes.io/os", OS),
        ("kubernetes.io/arch", ARCH),
        ("kubernetes.io/hostname", str(meta.get("name") or "")),
        ("kubernetes.io/os", OS),
    ):
        labels.setdefault(key, value)
    return body
