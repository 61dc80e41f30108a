"""The Kubernetes release a cluster's API server is: the cluster's version (set at creation or
import, changed by its owner), read from the cluster row the request already loaded."""

from __future__ import annotations

from scheduler_core.versions import Version, reference_version

from ..models import Cluster
from ..profiles import loaded_version
from .schema import Schema, schema_of

__all__ = ["served_schema", "served_version"]


def served_version(cluster: Cluster | None) -> Version:
    """The cluster's release; the reference release when no cluster is known (the host's root paths)."""
    return reference_version() if cluster is None else loaded_version(cluster)


def served_schema(cluster: Cluster | None) -> Schema:
    """The kinds' schema of the cluster's release (what field validation and `kubectl explain` read)."""
    return schema_of(served_version(cluster).minor)
