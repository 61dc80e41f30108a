"""Which kube-scheduler version a snapshot comes from, suggested from what its nodes report.

A kubelet is never newer than its API server, and kube-scheduler runs at the control plane's
version (the version skew policy: kubelets up to three minors older), so the newest
`status.nodeInfo.kubeletVersion` is the control plane's lower bound: that minor is suggested,
clipped to the supported range, with the reason in words.
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

    def to_json(self) -> dict[str, object]:
        return {"version": self.version, "why": self.why, "kubelets": [list(k) for k in self.kubelets]}


def suggest_version(kubelet_versions: Iterable[str]) -> Suggestion | None:
    """The version the nodes' kubelets point to; None when no node reports one."""
    minors: Counter[int] = Counter()
    for text in kubelet_versions:
        match = _KUBELET.match(text or "")
        if match:
            minors[int(match.group(1))] += 1
    if not minors:
        return None
    ordered = sorted(minors.items(), reverse=True)
    kubelets = tuple((f"v1.{m}", n) for m, n in ordered)
    seen = ", ".join(f"v1.{m} ({n} node{'s' if n != 1 else ''})" for m, n in ordered)
    newest = max(minors)
    if newest in SUPPORTED:
        why = (
            f"the nodes run kubelet {seen}; no kubelet is newer than its control plane, so the scheduler "
            f"is at least v1.{newest}"
        )
        return Suggestion(f"1.{newest}", why, kubelets)
    if newest > NEWEST:
        why = f"the nodes run kubelet {seen}, newer than v1.{NEWEST}, the newest modelled"
        return Suggestion(f"1.{NEWEST}", why, kubelets)
    why = f"the nodes run kubelet {seen}, older than v1.{SUPPORTED[0]}, the oldest modelled"
    return Suggestion(f"1.{SUPPORTED[0]}", why, kubelets)


def kubelet_versions(nodes: Iterable[Any]) -> list[str]:
    """`status.nodeInfo.kubeletVersion` of each core Node (kept by the loader for this)."""
    out = []
    for node in nodes:
        info = (node.status.model_extra or {}).get("nodeInfo")
        if isinstance(info, dict) and isinstance(info.get("kubeletVersion"), str):
            out.append(info["kubeletVersion"])
    return out
