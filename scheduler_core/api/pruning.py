"""Dropping, as a snapshot is read, the fields the scheduler never reads, so memory stays bounded.

A pod as `kubectl get -o json` prints it is 10–15 KB, most of it managedFields, status and container
details (env, probes, mounts); a node carries its addresses, conditions and nodeInfo. Only what a
scheduling decision reads is kept: a 50,000-pod snapshot then fits in a few hundred MiB.
Paths of the kept fields do not change, so a validation error still names its line.
"""

from __future__ import annotations

from typing import Any

from .limits import MAX_ANNOTATIONS_BYTES

__all__ = [
    "DROPPED_CONTAINER_FIELDS",
    "DROPPED_METADATA_FIELDS",
    "DROPPED_POD_SPEC_FIELDS",
    "KEPT_ANNOTATIONS",
    "prune",
]

#: metadata fields no plugin reads.
DROPPED_METADATA_FIELDS = ("managedFields", "finalizers", "generation", "selfLink")
#: Annotations that plugins read: always kept.
KEPT_ANNOTATIONS = frozenset(
    {
        "pv.kubernetes.io/bind-completed",
        "storage.alpha.kubernetes.io/migrated-plugins",
        "volume.beta.kubernetes.io/storage-class",
        "volume.kubernetes.io/selected-node",
    }
)
#: Other annotations are kept up to this length of value (last-applied-configuration and the like go).
MAX_KEPT_ANNOTATION_CHARS = 1024
#: Annotations never read, dropped whatever their size.
DROPPED_ANNOTATIONS = frozenset({"kubectl.kubernetes.io/last-applied-configuration"})
#: Pod volume sources no plugin reads (claims, ephemeral, CSI and in-tree disks are read; emptyDir is
#: kept for `drain`, which refuses such pods without --delete-emptydir-data).
DROPPED_VOLUME_SOURCES = ("configMap", "downwardAPI", "projected", "secret")
#: Pod conditions read (preemption looks for DisruptionTarget); the others are dropped.
KEPT_POD_CONDITIONS = frozenset({"DisruptionTarget", "PodScheduled"})
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
    metadata.managedFields, long or unread annotations (never `KEPT_ANNOTATIONS`), the status fields
    not in `status` (None keeps the whole status) and, for pods, container, volume and spec details."""
    metadata = data.get("metadata")
    if isinstance(metadata, dict):
        for name in DROPPED_METADATA_FIELDS:
            metadata.pop(name, None)
        annotations = metadata.get("annotations")
        if isinstance(annotations, dict) and annotations and _within_size(annotations):
            metadata["annotations"] = {k: v for k, v in annotations.items() if _kept_annotation(k, v)}
    current = data.get("status")
    if status is not None and isinstance(current, dict):
        data["status"] = current = {name: current[name] for name in status if name in current}
        info = current.get("nodeInfo")
        if isinstance(info, dict):  # a Node: only the kubelet's version is read (versions/suggest.py)
            current["nodeInfo"] = {k: v for k, v in info.items() if k == "kubeletVersion"}
    if data.get("kind") == "Pod":
        conditions = current.get("conditions") if isinstance(current, dict) else None
        if isinstance(conditions, list):
            current["conditions"] = [  # type: ignore[index]
                c for c in conditions if not isinstance(c, dict) or c.get("type") in KEPT_POD_CONDITIONS
            ]
        spec = data.get("spec")
        if isinstance(spec, dict):
            _prune_pod_spec(spec)
    return data


def _within_size(annotations: dict[Any, Any]) -> bool:
    """Annotations within upstream's total size (larger ones are kept, for validation to refuse)."""
    total = 0
    for key, value in annotations.items():
        if not isinstance(key, str) or not isinstance(value, str):
            return False
        total += len(key) + len(value)
    return total <= MAX_ANNOTATIONS_BYTES // 4 or (
        sum(len(k.encode()) + len(v.encode()) for k, v in annotations.items()) <= MAX_ANNOTATIONS_BYTES
    )


def _kept_annotation(key: object, value: object) -> bool:
    if key in KEPT_ANNOTATIONS:
        return True
    return key not in DROPPED_ANNOTATIONS and not (isinstance(value, str) and len(value) > MAX_KEPT_ANNOTATION_CHARS)


def _prune_pod_spec(spec: dict[str, Any]) -> None:
    for name in DROPPED_POD_SPEC_FIELDS:
        spec.pop(name, None)
    for key in ("containers", "initContainers"):
        containers = spec.get(key)
        if isinstance(containers, list):
            for container in containers:
                if isinstance(container, dict):
                    mounts = container.get("volumeMounts")
                    for name in DROPPED_CONTAINER_FIELDS:
                        container.pop(name, None)
                    if isinstance(mounts, list):  # NodeDeclaredFeatures reads bindMountOptions (v1.37)
                        kept = [m for m in mounts if isinstance(m, dict) and m.get("bindMountOptions")]
                        if kept:
                            container["volumeMounts"] = kept
    volumes = spec.get("volumes")
    if isinstance(volumes, list):
        for volume in volumes:
            if isinstance(volume, dict):
                for name in DROPPED_VOLUME_SOURCES:
                    volume.pop(name, None)
