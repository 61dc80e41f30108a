"""The pod a capacity query places again and again: a Pod written out, or the one a workload's
controller would create next (a Deployment's newest ReplicaSet, a ReplicaSet, a StatefulSet)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..api.errors import InputError
from ..api.loading import admit_pod, parse_object
from ..api.objects import Pod, PriorityClass, RuntimeClass, Workload
from ..api.workloads import controller_ref
from ..framework.pod_info import PodInfo
from .replay import renamed

__all__ = ["WORKLOAD_KINDS", "PodTemplate", "pod_template", "workload_template"]

#: What `kind/name` may name, with kubectl's short names.
WORKLOAD_KINDS = {
    "deployment": "Deployment",
    "deployments": "Deployment",
    "deploy": "Deployment",
    "replicaset": "ReplicaSet",
    "replicasets": "ReplicaSet",
    "rs": "ReplicaSet",
    "statefulset": "StatefulSet",
    "statefulsets": "StatefulSet",
    "sts": "StatefulSet",
}
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"


@dataclass
class PodTemplate:
    """The pod to copy, what it stands for, and how its copies are named."""

    info: PodInfo
    source: str  # "Deployment default/web", "Pod default/probe"
    prefix: str  # copies are <prefix><k>
    first: int = 1  # the first k (a StatefulSet continues after its replicas)

    def copy(self, k: int) -> PodInfo:
        """The k-th copy (0-based) under its own name."""
        return renamed(self.info, f"{self.prefix}{self.first + k}")


def pod_template(pod: Pod) -> PodTemplate:
    """Copies of a Pod written out: `<name>-1`, `<name>-2`, …"""
    base = pod.metadata.name or (pod.metadata.generate_name or "pod").rstrip("-")
    namespace = pod.metadata.namespace or "default"
    return PodTemplate(PodInfo.of(pod), f"Pod {namespace}/{base}", f"{base}-")


def _controller_of(workload: Workload) -> tuple[str, str] | None:
    ref = controller_ref(workload.metadata)
    return (ref.kind, ref.name) if ref else None


def _revision(workload: Workload) -> int:
    try:
        return int(workload.metadata.annotations.get(REVISION_ANNOTATION, "0"))
    except ValueError:
        return 0


def _newest_replica_set(deployment: Workload, workloads: Iterable[Workload]) -> Workload | None:
    """The ReplicaSet the Deployment scales up: the one it owns with the highest revision."""
    namespace = deployment.metadata.namespace or "default"
    owned = [
        w
        for w in workloads
        if w.kind == "ReplicaSet"
        and (w.metadata.namespace or "default") == namespace
        and _controller_of(w) == ("Deployment", deployment.metadata.name)
    ]
    return max(owned, key=_revision) if owned else None


def workload_template(
    reference: str,
    namespace: str,
    workloads: Iterable[Workload],
    priority_classes: dict[str, PriorityClass],
    runtime_classes: dict[str, RuntimeClass],
) -> PodTemplate:
    """The pod `kind/name` would create next in `namespace`; an error naming what is missing."""
    kind_text, _, name = reference.partition("/")
    kind = WORKLOAD_KINDS.get(kind_text.lower())
    if kind is None or not name:
        raise InputError(f"--workload {reference!r}: expected deployment/NAME, replicaset/NAME or statefulset/NAME")
    workloads = list(workloads)
    found = next(
        (
            w
            for w in workloads
            if w.kind == kind and w.metadata.name == name and (w.metadata.namespace or "default") == namespace
        ),
        None,
    )
    if found is None:
        raise InputError(f'{kind.lower()}s.apps "{name}" not found in namespace "{namespace}"')
    owner: Workload = found
    if kind == "Deployment":
        owner = _newest_replica_set(found, workloads) or found
    template = owner.spec.get("template") or found.spec.get("template")
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        raise InputError(f"{kind} {namespace}/{name}: spec.template.spec: Required value")
    meta = template.get("metadata") if isinstance(template.get("metadata"), dict) else {}
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{owner.metadata.name}-template",
            "namespace": namespace,
            "labels": dict(meta.get("labels") or {}),
            "annotations": dict(meta.get("annotations") or {}),
            "ownerReferences": [
                {
                    "apiVersion": owner.api_version,
                    "kind": owner.kind,
                    "name": owner.metadata.name,
                    "uid": owner.metadata.uid or "",
                    "controller": True,
                }
            ],
        },
        "spec": template["spec"],
    }
    source = f"{kind} {namespace}/{name}"
    pod = parse_object(body, f"{source}: spec.template", kinds=("Pod",))
    assert isinstance(pod, Pod)
    admit_pod(pod, priority_classes, runtime_classes, source)
    if kind == "StatefulSet":  # the next ordinals: <name>-<replicas>, <name>-<replicas + 1>, …
        replicas = found.spec.get("replicas")
        first = replicas if isinstance(replicas, int) and replicas >= 0 else 1
        return PodTemplate(PodInfo.of(pod), source, f"{name}-", first)
    return PodTemplate(PodInfo.of(pod), source, f"{owner.metadata.name}-fit-")
