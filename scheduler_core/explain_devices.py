"""Which device each request of a pod's claims got on a node, and why the node's other devices did not.

The DynamicResources Filter only says "cannot allocate all claims"; a person asks which GPU a pod
would get and why the others were refused (the class's or the claim's selector is false, the
device is allocated to another claim, another request of the pod took it, a matchAttribute
constraint, an incomplete pool). After a cycle, the allocation is run again on each node the
pod's devices could come from, with a report, and the answers are laid out per node.
"""

from __future__ import annotations

from typing import Any

from .framework.cycle_state import CycleState
from .framework.node_table import NodeTable
from .plugins.dynamic_resources import STATE_KEY, DraState, DynamicResources

__all__ = ["device_report", "device_text"]


def _device(device: Any) -> str:
    return f"{device.driver}/{device.pool}/{device.device}"


def _claims(state: DraState) -> list[dict[str, Any]]:
    out = []
    for k, claim in enumerate(state.claims):
        allocation = claim.status.allocation
        results = allocation.devices.results if allocation else []
        out.append(
            {
                "claim": claim.key,
                "allocated": allocation is not None,
                "devices": [f"{r.driver}/{r.pool}/{r.device}" for r in results],
                "reservedFor": [ref.name for ref in claim.status.reserved_for],
                "toAllocate": k in state.to_allocate,
            }
        )
    return out


def device_report(plugin: DynamicResources, state: CycleState | None, table: NodeTable) -> dict[str, Any] | None:
    """The pod's claims and, per node with devices, the allocation and the refusals (None: no claims)."""
    if state is None:
        return None
    s: DraState | None = state.get(STATE_KEY)
    if s is None or not s.claims:
        return None
    nodes: dict[str, Any] = {}
    if s.allocator is not None:
        slices = s.allocator.slices
        for i, name in enumerate(table.names):
            if not (slices.shared or name in slices.local):
                continue
            report = plugin.allocation_report(state, table, i)
            if report is None:
                continue
            nodes[name] = {
                "requests": [
                    {
                        "claim": entry.claim,
                        "request": entry.request,
                        "chosen": [_device(d) for d in entry.chosen],
                        "rejected": [{"device": _device(d), "why": why} for d, why in entry.rejected],
                    }
                    for entry in report.requests
                ]
            }
    return {"claims": _claims(s), "nodes": nodes}


def device_text(report: dict[str, Any], limit: int = 20) -> list[str]:
    """The report as lines for `explain`'s text output (at most `limit` nodes, allocatable ones first)."""
    lines = ["Devices (DynamicResources):"]
    for claim in report["claims"]:
        if claim["allocated"]:
            held = ", ".join(claim["devices"]) or "no device"
            lines.append(
                f"  claim {claim['claim']}: allocated ({held}), reserved for {len(claim['reservedFor'])} pod(s)"
            )
        else:
            lines.append(f"  claim {claim['claim']}: to allocate")
    ranked = sorted(report["nodes"].items(), key=lambda item: not all(r["chosen"] for r in item[1]["requests"]))
    for name, node in ranked[:limit]:
        for request in node["requests"]:
            got = ", ".join(request["chosen"]) or "no device"
            lines.append(f"  {name}: {request['claim']} request {request['request']}: {got}")
            for rejected in request["rejected"]:
                lines.append(f"    {rejected['device']}: {rejected['why']}")
    if len(ranked) > limit:
        lines.append(f"  … and {len(ranked) - limit} more node(s) with devices")
    return lines
