"""The kube-scheduler versions clusterviz models (v1.34 to v1.37), each as data: its feature gates
with their defaults, its default plugins, the code changes it carries.

`get_version("1.36", "TaintTolerationComparisonOperators=true")` is what the CLI's `--version`
and `--feature-gates` and a cluster's setting resolve to; plugins ask `version.has(change)` and
`version.gates.enabled(gate)` rather than comparing numbers.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..api.loading import InputError
from .changes import CHANGES, NOT_MODELLED, Change
from .gates import FeatureGates, parse_gate_overrides

__all__ = [
    "NEWEST",
    "REFERENCE",
    "SUPPORTED",
    "Change",
    "FeatureGates",
    "Version",
    "get_version",
    "parse_version",
    "reference_version",
]

SUPPORTED: tuple[int, ...] = (34, 35, 36, 37)
NEWEST = SUPPORTED[-1]
# The version the fidelity corpus pins (v1.34.0): what the library answers when no version is named.
REFERENCE = 34
RANGE_TEXT = f"v1.{SUPPORTED[0]} to v1.{SUPPORTED[-1]}"
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?$")

# (name, weight) of the default profile's MultiPoint plugins (default_plugins.go getDefaultPlugins,
# after applyFeatureGates inserts DynamicResources before DefaultPreemption).
_BASE_PLUGINS: tuple[tuple[str, int], ...] = (
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 0),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
)


def parse_version(text: str, flag: str = "--version") -> tuple[int, int]:
    """`1.36`, `v1.36`, `1.36.2` → (36, 2); a version outside the supported range is an InputError."""
    match = _VERSION.match(text.strip())
    if not match:
        raise InputError(f"{flag} {text!r}: expected a Kubernetes version such as 1.{NEWEST}; supported: {RANGE_TEXT}")
    minor = int(match.group(2))
    if match.group(1) != "1" or minor not in SUPPORTED:
        raise InputError(f"{flag} {text}: unsupported Kubernetes version; supported: {RANGE_TEXT}")
    return minor, int(match.group(3) or 0)


@dataclass(frozen=True)
class Version:
    """One kube-scheduler release with its feature gates resolved."""

    minor: int
    gates: FeatureGates
    patch: int = 0

    @property
    def name(self) -> str:
        return f"1.{self.minor}" + (f".{self.patch}" if self.patch else "")

    @property
    def git_version(self) -> str:
        return f"v1.{self.minor}.{self.patch}"

    def __str__(self) -> str:
        return f"v{self.name}"

    def has(self, key: str) -> bool:
        """Whether this version (with its gates) carries the change `key` (versions/changes.py):
        from its minor on, or from a patch release it was backported to."""
        change = _CHANGES[key]
        backported = any(minor == self.minor and self.patch >= patch for minor, patch in change.backports)
        arrived = self.minor >= change.since or backported
        return arrived and (change.gate is None or self.gates.enabled(change.gate))

    def changes(self) -> tuple[Change, ...]:
        return tuple(c for c in CHANGES if self.has(c.key))

    def default_plugins(self) -> tuple[tuple[str, int], ...]:
        """getDefaultPlugins with this version's gates applied."""
        plugins = list(_BASE_PLUGINS)
        if self.gates.enabled("NodeDeclaredFeatures"):
            # applyFeatureGates "adds NodeDeclaredFeatures to MultiPoint": appended, after
            # DefaultBinder (the position is not in a stored upstream source; docs/versions.md)
            plugins.append(("NodeDeclaredFeatures", 0))
        return tuple(plugins)

    def unmodelled_gates(self) -> dict[str, str]:
        """The gates on here whose behaviour clusterviz does not model, with what they cover."""
        return {gate: what for gate, what in NOT_MODELLED.items() if self.gates.enabled(gate)}

    def unmodelled(self, gate: str) -> str:
        """The error text for something that meets gate `gate`'s unmodelled behaviour."""
        return f"{NOT_MODELLED[gate]} (feature gate {gate}, on in {self}) are not modelled by clusterviz"


_CHANGES = {change.key: change for change in CHANGES}


@functools.cache
def _default(minor: int, patch: int = 0) -> Version:
    return Version(minor, FeatureGates(minor), patch)


def get_version(
    text: str | int | None = None,
    feature_gates: str | Mapping[str, bool] = "",
    flag: str = "--version",
    gates_flag: str = "--feature-gates",
) -> Version:
    """The version named (default: the newest supported) with `--feature-gates` applied; errors
    name `flag` and `gates_flag`, the options the version and the gates came from."""
    if text is None or isinstance(text, int):
        minor, patch = NEWEST if text is None else text, 0
        if minor not in SUPPORTED:
            raise InputError(f"version 1.{minor}: unsupported Kubernetes version; supported: {RANGE_TEXT}")
    else:
        minor, patch = parse_version(str(text), flag)
    try:
        overrides = parse_gate_overrides(feature_gates) if isinstance(feature_gates, str) else dict(feature_gates)
        if not overrides:
            return _default(minor, patch)
        gates = FeatureGates.build(minor, overrides)
    except InputError as exc:
        raise InputError(f"{gates_flag}: {exc}") from None
    for gate, value in gates.overrides.items():
        if value and gate in NOT_MODELLED and not FeatureGates(minor).enabled(gate):
            raise InputError(
                f"{gates_flag}: {gate}=true: {NOT_MODELLED[gate]} are not modelled by clusterviz (see docs/versions.md)"
            )
    return Version(minor, gates, patch)


def reference_version() -> Version:
    """v1.34 with its default gates: the library's default, the fidelity corpus' pin."""
    return _default(REFERENCE)
