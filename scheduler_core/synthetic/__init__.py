"""Realistic synthetic clusters, as `kubectl get … -A -o json|yaml` prints them (deterministic by seed).

Used by the snapshot benchmark (`python -m scheduler_core bench-snapshot`), the tests and the CLI
(`python -m scheduler_core generate --nodes N --pods M`).
"""

from __future__ import annotations

from .cluster import SnapshotSpec, generate_objects, pending_pod
from .dump import dump_json, dump_yaml, write_snapshot

__all__ = ["SnapshotSpec", "dump_json", "dump_yaml", "generate_objects", "pending_pod", "write_snapshot"]
