"""`/version` and API discovery: aggregated (apidiscovery.k8s.io v2 / v2beta1, negotiated strictly on
the Accept header) and the legacy APIVersions / APIGroupList / APIResourceList documents."""

from __future__ import annotations

from typing import Any

from scheduler_core.versions import Version

from .accept import negotiate
from .resources import GROUPS, RESOURCES, SUBRESOURCE_KINDS, Resource, subresource_kind

__all__ = ["BUILDS", "aggregated_version", "api_group", "api_groups", "api_resources", "core_api", "version"]

# The Cloud-SDK kubectl dispatcher picks the client binary by `minor`: it bundles 1.27–1.33 and runs its
# built-in v1.32.4 for any other minor, so a cluster at 1.34–1.37 is driven by kubectl 1.32.4, the
# client this endpoint was measured against (docs: /work/shared/kubectl-api.md §2; measured again for
# minors 34 and 37). kubectl prints its version-skew warning, as against a real cluster that new.
# The build of each release: its release date and the Go it was built with (the CHANGELOG's "built
# using Go" entries; clusterviz is not a build, so gitCommit is zeros).
BUILDS = {
    34: ("2025-08-27T00:00:00Z", "go1.24.6"),
    35: ("2025-12-17T00:00:00Z", "go1.25.5"),
    36: ("2026-04-22T00:00:00Z", "go1.26.0"),
    37: ("2026-08-26T00:00:00Z", "go1.26.4"),
}
DISCOVERY_CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v={v};as=APIGroupDiscoveryList"


def version(served: Version) -> dict[str, Any]:
    """`/version` of a kube-apiserver at `served` (k8s.io/apimachinery/pkg/version.Info, with the
    emulation and minimum-compatibility versions a 1.34+ apiserver reports)."""
    build_date, go_version = BUILDS.get(served.minor, BUILDS[max(BUILDS)])
    minor = str(served.minor)
    return {
        "major": "1",
        "minor": minor,
        "emulationMajor": "1",
        "emulationMinor": minor,
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": str(served.minor - 1),
        "gitVersion": served.git_version,
        "gitCommit": "0" * 40,
        "gitTreeState": "clean",
        "buildDate": build_date,
        "goVersion": go_version,
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def aggregated_version(accept: str) -> str | None:
    """ "v2" or "v2beta1" when the client asks for aggregated discovery (first acceptable wins), else None."""
    return negotiate(accept, "APIGroupDiscoveryList", "apidiscovery.k8s.io", ("v2", "v2beta1"))


def _served(group: str) -> list[Resource]:
    return [res for res in RESOURCES if res.group == group]


def _discovery_resource(res: Resource) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "resource": res.plural,
        "responseKind": {"group": res.group, "version": res.version, "kind": res.kind},
        "scope": "Namespaced" if res.namespaced else "Cluster",
        "singularResource": res.singular,
        "verbs": list(res.verbs),
    }
    if res.short_names:
        entry["shortNames"] = list(res.short_names)
    if res.categories:
        entry["categories"] = list(res.categories)
    subresources = []
    for sub in res.subresources:
        group, version, kind, verbs = subresource_kind(res, sub)
        response_kind = {"group": group, "version": version, "kind": kind}
        subresources.append({"subresource": sub, "responseKind": response_kind, "verbs": list(verbs)})
    if subresources:
        entry["subresources"] = subresources
    return entry


def _discovery_group(group: str, version: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {"creationTimestamp": None}
    if group:
        metadata["name"] = group
    return {
        "metadata": metadata,
        "versions": [
            {
                "version": version,
                "freshness": "Current",
                "resources": [_discovery_resource(res) for res in _served(group)],
            }
        ],
    }


def aggregated(core: bool, discovery_version: str) -> tuple[dict[str, Any], str]:
    """The APIGroupDiscoveryList of `/api` (core) or `/apis`, with its exact content type."""
    groups = [(g, v) for g, v in GROUPS.items() if (g == "") == core]
    body = {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"apidiscovery.k8s.io/{discovery_version}",
        "metadata": {},
        "items": [_discovery_group(g, v) for g, v in groups],
    }
    return body, DISCOVERY_CONTENT_TYPE.format(v=discovery_version)


def core_api(server_address: str) -> dict[str, Any]:
    """Legacy `/api`: APIVersions."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def api_group(group: str) -> dict[str, Any] | None:
    """Legacy `/apis/<group>`: APIGroup, or None for a group that is not served."""
    if not group or group not in GROUPS:
        return None
    gv = {"groupVersion": f"{group}/{GROUPS[group]}", "version": GROUPS[group]}
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": [gv], "preferredVersion": gv}


def api_groups() -> dict[str, Any]:
    """Legacy `/apis`: APIGroupList."""
    groups = [api_group(g) for g in GROUPS if g]
    for group in groups:
        assert group is not None
        group.pop("kind")
        group.pop("apiVersion")
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_resources(group: str, version: str) -> dict[str, Any] | None:
    """Legacy `/api/v1` and `/apis/<group>/<version>`: APIResourceList, or None when not served."""
    if GROUPS.get(group) != version:
        return None
    resources: list[dict[str, Any]] = []
    for res in _served(group):
        entry: dict[str, Any] = {
            "name": res.plural,
            "singularName": res.singular,
            "namespaced": res.namespaced,
            "kind": res.kind,
            "verbs": list(res.verbs),
        }
        if res.short_names:
            entry["shortNames"] = list(res.short_names)
        if res.categories:
            entry["categories"] = list(res.categories)
        resources.append(entry)
        for sub in res.subresources:
            sub_group, sub_version, kind, verbs = subresource_kind(res, sub)
            sub_entry: dict[str, Any] = {
                "name": f"{res.plural}/{sub}",
                "singularName": "",
                "namespaced": res.namespaced,
                "kind": kind,
                "verbs": list(verbs),
            }
            if sub in SUBRESOURCE_KINDS:  # kubectl's CheckEvictionSupport reads group and version here
                sub_entry.update({"group": sub_group, "version": sub_version})
            resources.append(sub_entry)
    group_version = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}
