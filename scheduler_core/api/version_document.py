"""A `kubectl version -o json` (or `-o yaml`) document inside a dump: the API server's version.

A dump made as `{ kubectl version -o json; kubectl get nodes,pods -A -o json; } > dump.json`
carries it as a first, kindless object whose `serverVersion.gitVersion` ("v1.35.2") names the
control plane's release exactly; kube-scheduler runs at that release.
"""

from __future__ import annotations

__all__ = ["server_git_version"]


def server_git_version(data: object) -> str | None:
    """The `serverVersion.gitVersion` of a kindless `kubectl version` document, None for any other."""
    if not isinstance(data, dict) or "kind" in data:
        return None
    server = data.get("serverVersion")
    if isinstance(server, dict) and isinstance(server.get("gitVersion"), str) and server["gitVersion"]:
        return server["gitVersion"]
    return None
