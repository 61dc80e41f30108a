"""The cluster-side inputs of admission: PriorityClasses and RuntimeClasses in the store."""

from __future__ import annotations

from scheduler_core.api.objects import PriorityClass, RuntimeClass

from .models import Cluster, KubeObject


def admission_context(cluster: Cluster) -> tuple[dict[str, PriorityClass], dict[str, RuntimeClass]]:
    classes = {
        row.name: PriorityClass.model_validate(row.body)
        for row in KubeObject.objects.filter(cluster=cluster, kind="PriorityClass")
    }
    return classes, {}
