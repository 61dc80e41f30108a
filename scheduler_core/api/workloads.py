"""Which workload a pod belongs to: its controller, followed up the owner chain.

A Deployment's pods are owned by a ReplicaSet that the Deployment owns; a CronJob's by a Job.
The chain follows `metadata.ownerReferences` entries with `controller: true`
(`metav1.GetControllerOf`) through the workloads of the snapshot, and stops at the first owner
the snapshot does not hold (it is still named: the reference says what it is).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .objects import ObjectMeta, OwnerReference, Workload

__all__ = ["WorkloadIndex", "WorkloadRef", "controller_ref"]

MAX_CHAIN = 8  # owner chains are 1-2 long; a cycle in hostile input stops here


@dataclass(frozen=True)
class WorkloadRef:
    kind: str
    namespace: str
    name: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "namespace": self.namespace, "name": self.name}


def controller_ref(meta: ObjectMeta) -> OwnerReference | None:
    """`metav1.GetControllerOf`: the ownerReference with `controller: true`, if any."""
    return next((ref for ref in meta.owner_references if ref.controller), None)


class WorkloadIndex:
    """The snapshot's workloads by (kind, namespace, name)."""

    def __init__(self, workloads: Iterable[Workload]) -> None:
        self.by_key: dict[tuple[str, str, str], Workload] = {
            (w.kind, w.metadata.namespace or "default", w.metadata.name): w for w in workloads
        }

    def owner_chain(self, meta: ObjectMeta) -> list[WorkloadRef]:
        """The controllers of an object, nearest first (a Deployment pod: [ReplicaSet, Deployment])."""
        namespace = meta.namespace or "default"
        chain: list[WorkloadRef] = []
        current: ObjectMeta | None = meta
        while current is not None and len(chain) < MAX_CHAIN:
            ref = controller_ref(current)
            if ref is None:
                break
            chain.append(WorkloadRef(ref.kind, namespace, ref.name))
            owner = self.by_key.get((ref.kind, namespace, ref.name))
            current = owner.metadata if owner is not None else None
        return chain

    def workload_of(self, meta: ObjectMeta) -> WorkloadRef | None:
        """The top of the owner chain: what a person calls the pod's workload."""
        chain = self.owner_chain(meta)
        return chain[-1] if chain else None
