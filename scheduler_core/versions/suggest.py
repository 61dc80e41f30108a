"""Which kube-scheduler version a snapshot comes from, suggested from what the dump reports.

A dump that holds a `kubectl version` document names the API server's release: kube-scheduler runs
at it, so its minor is suggested. Otherwise the nodes tell: a kubelet is never newer than its API
server (the version skew policy: kubelets up to three minors older), so the newest
`status.nodeInfo.kubeletVersion` is the control plane's lower bound. Either is clipped to the
supported range, with the reason in words.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from . import NEWEST, SUPPORTED

__all__ = ["Suggestion", "kubelet_versions", "suggest_version"]

_KUBELET = re.compile(r"^v?1\.(\d+)(?:\.\d+)?")


@dataclass(frozen=True)
class Suggestion:
    version: str  # "1.35"
    why: str
    kubelets: tuple[tuple[str, int], ...] = ()  # ("v1.35", nodes), newest first
    server: str = ""  # the API server's gitVersion, when the dump names it

    def to_json(self) -> dict[str, object]:
        kubelets = [list(k) for k in self.kubelets]
        out: dict[str, object] = {"version": self.version, "why": self.why, "kubelets": kubelets}
        if self.server:
            out["server"] = self.server
        return out


def _clipped(minor: int, said: str) -> tuple[str, str]:
    """The supported version nearest v1.<minor>, and `said` with why it is that one."""
    if minor in SUPPORTED:
        return f"1.{minor}", said
    if minor > NEWEST:
        return f"1.{NEWEST}", f"{said}, newer than v1.{NEWEST}, the newest modelled"
    return f"1.{SUPPORTED[0]}", f"{said}, older than v1.{SUPPORTED[0]}, the oldest modelled"


def suggest_version(kubelet_versions: Iterable[str], server: str | None = None) -> Suggestion | None:
    """The version the dump's API server (`server`, a gitVersion) or else its nodes' kubelets
    point to; None when neither is known."""
    minors: Counter[int] = Counter()
    for text in kubelet_versions:
        match = _KUBELET.match(text or "")
        if match:
            minors[int(match.group(1))] += 1
    ordered = sorted(minors.items(), reverse=True)
    kubelets = tuple((f"v1.{m}", n) for m, n in ordered)
    seen = ", ".join(f"v1.{m} ({n} node{'s' if n != 1 else ''})" for m, n in ordered)
    server_match = _KUBELET.match(server or "")
    if server_match:
        said = f"the dump's `kubectl version` reports the API server at {server}"
        version, why = _clipped(int(server_match.group(1)), said)
        if minors and f"1.{max(minors)}" != version:
            why += f" (its nodes run kubelet {seen})"
        return Suggestion(version, why, kubelets, str(server))
    if not minors:
        return None
    newest = max(minors)
    if newest in SUPPORTED:
        why = (
            f"the nodes run kubelet {seen}; no kubelet is newer than its control plane, so the scheduler "
            f"is at least v1.{newest}"
        )
        return Suggestion(f"1.{newest}", why, kubelets)
    version, why = _clipped(newest, f"the nodes run kubelet {seen}")
    return Suggestion(version, why, kubelets)


def kubelet_versions(nodes: Iterable[Any]) -> list[str]:
    """`status.nodeInfo.kubeletVersion` of each core Node (kept by the loader for this)."""
    out = []
    for node in nodes:
        info = (node.status.model_extra or {}).get("nodeInfo")
        if isinstance(info, dict) and isinstance(info.get("kubeletVersion"), str):
            out.append(info["kubeletVersion"])
    return out
