"""The DRA objects of a snapshot, indexed as the scheduler's DRA manager serves them.

Upstream the DynamicResources plugin reads ResourceClaims (through an assume cache that also
tracks allocations in flight), DeviceClasses and ResourceSlices through the `SharedDRAManager`
(pkg/scheduler/framework/plugins/dynamicresources/dra_manager.go). Here one `DraIndex` plays that
part and hangs on the `NodeTable` (`table.dra`), as `VolumeIndex` does for storage. The devices in
use — every allocated claim's results except admin-access ones, plus allocations in flight — are
counted incrementally, so a replay of thousands of pods does not rescan every claim per pod.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..api.resource import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from .allocator import DeviceID
from .pools import SliceIndex

__all__ = ["DraIndex"]

_JOURNAL_LIMIT = 100_000


def _devices_of(claim: ResourceClaim) -> list[DeviceID]:
    """`ListAllAllocatedDevices`' contribution of one claim (admin access does not count)."""
    allocation = claim.status.allocation
    if allocation is None:
        return []
    return [
        DeviceID(result.driver, result.pool, result.device)
        for result in allocation.devices.results
        if not result.admin_access
    ]


@dataclass
class DraIndex:
    """Claims by `namespace/name`, classes by name, templates by `namespace/name`, the slices."""

    claims: dict[str, ResourceClaim] = field(default_factory=dict)
    classes: dict[str, DeviceClass] = field(default_factory=dict)
    templates: dict[str, ResourceClaimTemplate] = field(default_factory=dict)
    slices: list[ResourceSlice] = field(default_factory=list)
    pending: dict[str, ResourceClaim] = field(default_factory=dict)  # claim UID → claim with its allocation
    _in_use: dict[DeviceID, int] = field(default_factory=dict, repr=False)
    # devices that became used (True) or free (False), in order: lets column caches follow changes
    journal: list[tuple[DeviceID, bool]] = field(default_factory=list, repr=False)
    journal_epoch: int = 0
    _slice_index: SliceIndex | None = field(default=None, repr=False)

    @classmethod
    def of(
        cls,
        claims: Iterable[ResourceClaim] = (),
        classes: Iterable[DeviceClass] = (),
        slices: Iterable[ResourceSlice] = (),
        templates: Iterable[ResourceClaimTemplate] = (),
    ) -> DraIndex:
        index = cls(
            classes={c.metadata.name: c for c in classes},
            templates={f"{t.metadata.namespace}/{t.metadata.name}": t for t in templates},
            slices=list(slices),
        )
        for claim in claims:
            index.store(claim)
        return index

    @property
    def empty(self) -> bool:
        return not (self.claims or self.slices or self.classes)

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claims.get(f"{namespace}/{name}")

    def slice_index(self) -> SliceIndex:
        """The slices indexed by node (built once, on first use)."""
        if self._slice_index is None:
            self._slice_index = SliceIndex(self.slices)
        return self._slice_index

    def invalidate_slices(self) -> None:
        """The slices changed: the index is built again on next use."""
        self._slice_index = None

    def allocated_devices(self) -> set[DeviceID]:
        """Devices allocated to claims, or being allocated (claims in flight)."""
        return set(self._in_use)

    # --- changes: the assume cache --------------------------------------------------------

    def store(self, claim: ResourceClaim) -> None:
        """Put `claim` in place of the one with its key (an API write, or an assumed update)."""
        old = self.claims.get(claim.key)
        if old is not None:
            self._count(_devices_of(old), -1)
        self.claims[claim.key] = claim
        self._count(_devices_of(claim), +1)

    def remove(self, key: str) -> None:
        old = self.claims.pop(key, None)
        if old is not None:
            self._count(_devices_of(old), -1)

    def has_pending(self, uid: str) -> bool:
        return bool(uid) and uid in self.pending

    def signal_pending(self, claim: ResourceClaim) -> None:
        """`SignalClaimPendingAllocation`: its devices count as used until PreBind or Unreserve."""
        self.remove_pending(claim.uid)
        self.pending[claim.uid] = claim
        self._count(_devices_of(claim), +1)

    def remove_pending(self, uid: str) -> bool:
        claim = self.pending.pop(uid, None)
        if claim is None:
            return False
        self._count(_devices_of(claim), -1)
        return True

    def in_use(self) -> dict[DeviceID, int]:
        """The devices in use (read-only view: allocated claims' results and allocations in flight)."""
        return self._in_use

    def _count(self, devices: list[DeviceID], sign: int) -> None:
        journal = self.journal
        for device in devices:
            before = self._in_use.get(device, 0)
            left = before + sign
            if left > 0:
                self._in_use[device] = left
            else:
                self._in_use.pop(device, None)
            if (before > 0) != (left > 0):
                journal.append((device, left > 0))
        if len(journal) > _JOURNAL_LIMIT:  # readers rebuild from the set; the log starts again
            journal.clear()
            self.journal_epoch += 1
