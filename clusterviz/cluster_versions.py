"""Changing the Kubernetes version a cluster runs, by any door (the board's version API, a lesson's
step): the stored scheduler profile must hold under it, and, as a kube-scheduler restarted at
another version, every parked pod is tried again."""

from __future__ import annotations

from scheduler_core.api.loading import InputError
from scheduler_core.versions import Version

from . import profiles, scheduling_queue
from .models import Cluster
from .publish import publish

__all__ = ["set_version"]


def set_version(cluster: Cluster, version: Version) -> None:
    """Run `cluster` as `version` from now on (InputError, nothing changed, if its profile does not hold)."""
    try:  # the stored profiles must hold in the new version (a plugin it lacks, an argument it refuses)
        profiles.profiles_of(profiles.config_of(cluster), version)
    except InputError as exc:
        raise InputError(
            f"version: {version.name}: the cluster's scheduler profile does not hold there: {exc}"
        ) from None
    cluster.kubernetes_version, cluster.feature_gates, cluster.version_hint = (
        version.name,
        version.gates.spec_text(),
        {},
    )
    # chosen: an import's suggestion is done
    cluster.save(update_fields=["kubernetes_version", "feature_gates", "version_hint"])
    scheduling_queue._requeue_all(cluster)
    publish(cluster.pk, {"type": "version.updated", "version": version.name})
