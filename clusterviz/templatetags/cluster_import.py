"""Template filters of the import panel (templates/clusterviz/_import.html)."""

from __future__ import annotations

from django import template

from ..models import Cluster, KubeObject

register = template.Library()


@register.filter
def is_empty(cluster: Cluster) -> bool:
    """Whether the cluster holds no objects (only an empty cluster can be imported into)."""
    return not KubeObject.objects.filter(cluster=cluster).exists()
