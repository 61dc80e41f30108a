"""Dropping, as a snapshot is read, the fields the scheduler never reads, so memory stays bounded.

A pod as `kubectl get -o json` prints it is 10–15 KB, most of it managedFields, status and container
details (env, probes, mounts); a node carries its addresses, conditions and nodeInfo. Only what a
scheduling decision reads is kept: a 50,000-pod snapshot then fits in a few hundred MiB.
Paths of the kept fields do not change, so a validation error still names its line.
"""

from __future__ import annotations

from typing import Any

from .storage import ANN_BIND_COMPLETED, ANN_SELECTED_NODE, BETA_STORAGE_CLASS_ANNOTATION

__all__ = [
    "DROPPED_CONTAINER_FIELDS",
    "DROPPED_METADATA_FIELDS",
    "DROPPED_POD_SPEC_FIELDS",
    "KEPT_ANNOTATIONS",
    "drop_unread_annotations",
    "prune",
]

#: metadata fields no plugin reads.
DROPPED_METADATA_FIELDS = ("managedFields", "finalizers", "generation", "selfLink")
#: Annotations kept: those a plugin reads (the volume plugins' binding and storage-class keys).
KEPT_ANNOTATIONS: frozenset[str] = frozenset({ANN_BIND_COMPLETED, ANN_SELECTED_NODE, BETA_STORAGE_CLASS_ANNOTATION})
#: Container fields no plugin reads (resources, ports, image, name and restartPolicy are read).
DROPPED_CONTAINER_FIELDS = (
    "args",
    "command",
    "env",
    "envFrom",
    "imagePullPolicy",
    "lifecycle",
    "livenessProbe",
    "readinessProbe",
    "securityContext",
    "startupProbe",
    "stdin",
    "stdinOnce",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "tty",
    "volumeDevices",
    "volumeMounts",
    "workingDir",
)
#: Pod spec fields no plugin reads.
DROPPED_POD_SPEC_FIELDS = (
    "automountServiceAccountToken",
    "dnsConfig",
    "dnsPolicy",
    "enableServiceLinks",
    "ephemeralContainers",
    "hostAliases",
    "imagePullSecrets",
    "readinessGates",
    "securityContext",
    "serviceAccount",
    "serviceAccountName",
    "terminationGracePeriodSeconds",
)


def prune(data: dict[str, Any], status: tuple[str, ...] | None) -> dict[str, Any]:
    """Drop, in place, what the scheduler never reads from `data` (one object of a known kind):
    metadata.managedFields (annotations go after validation: `drop_unread_annotations`), the status fields not in
    `status` (None keeps the whole status) and, for pods, container and spec details."""
    metadata = data.get("metadata")
    if isinstance(metadata, dict):
        for name in DROPPED_METADATA_FIELDS:
            metadata.pop(name, None)

    current = data.get("status")
    if status is not None and isinstance(current, dict):
        data["status"] = {name: current[name] for name in status if name in current}
    if data.get("kind") == "Pod":
        spec = data.get("spec")
        if isinstance(spec, dict):
            for name in DROPPED_POD_SPEC_FIELDS:
                spec.pop(name, None)
            for key in ("containers", "initContainers"):
                containers = spec.get(key)
                if isinstance(containers, list):
                    for container in containers:
                        if isinstance(container, dict):
                            for name in DROPPED_CONTAINER_FIELDS:
                                container.pop(name, None)
    return data


def drop_unread_annotations(obj: Any) -> None:
    """After validation (which checks every annotation as the API server does): keep only
    `KEPT_ANNOTATIONS`, so memory stays bounded."""
    metadata = getattr(obj, "metadata", None)
    if metadata is not None and metadata.annotations:
        metadata.annotations = {k: v for k, v in metadata.annotations.items() if k in KEPT_ANNOTATIONS}
