"""The readable reports of `fit`, `drain` and `add` (the CLI's default output)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .add import AddReport
from .drain import DrainReport
from .fit import FitReport
from .replay import Placement

__all__ = ["format_add", "format_drain", "format_fit"]

#: Rows of a per-node or per-pod table shown before "… and N more" (-o json has every row).
MAX_ROWS = 20


def _quantity(resource: str, value: int) -> str:
    if resource == "cpu":
        return f"{value / 1000:.1f}".removesuffix(".0")  # in cores
    if resource == "memory":
        for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if value >= size:
                return f"{value / size:.1f}{unit}".replace(".0" + unit, unit)
        return str(value)
    return str(value)


def _share(figures: dict[str, int], resource: str) -> str:
    requested, allocatable = figures["requested"], figures["allocatable"]
    percent = f" ({100 * requested / allocatable:.0f}%)" if allocatable else ""
    return f"{_quantity(resource, requested)} of {_quantity(resource, allocatable)}{percent}"


def _allocation_lines(label: str, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    lines = [f"{label}:"]
    for resource in ("cpu", "memory", "pods"):
        lines.append(f"  {resource:<7} {_share(before[resource], resource)}  ->  {_share(after[resource], resource)}")
    return lines


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    shown = rows[:MAX_ROWS]
    widths = [max(len(str(r[k])) for r in [header, *shown]) for k in range(len(header))]
    lines = [
        "  " + "  ".join(str(cell).ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *shown]
    ]
    if len(rows) > MAX_ROWS:
        lines.append(f"  … and {len(rows) - MAX_ROWS} more (-o json lists every one)")
    return lines


def _pending_lines(pending: list[Placement]) -> list[str]:
    """Pods left Pending, grouped by their FailedScheduling message."""
    lines: list[str] = []
    by_message = Counter(p.message for p in pending)
    for message, count in by_message.most_common():
        pods = [p.pod for p in pending if p.message == message]
        shown = ", ".join(pods[:5]) + (f" and {len(pods) - 5} more" if len(pods) > 5 else "")
        lines.append(f"  {count} pod{'s' if count != 1 else ''} ({shown}):")
        lines.append(f"    {message}")
    return lines


def format_fit(report: FitReport) -> str:
    per_node = report.per_node()
    lines = [f"fit: {report.template}"]
    where = f" on {len(per_node)} of {report.nodes} nodes" if per_node else ""
    limit = f" (the limit of {report.limit} was reached)" if report.stopped is None else ""
    lines.append(f"{report.count} more pod{'s' if report.count != 1 else ''} fit{where}{limit}")
    if per_node:
        lines.append("")
        lines.extend(_table(["NODE", "PODS"], [[node, str(count)] for node, count in per_node.items()]))
    if report.stopped is not None:
        lines.append("")
        lines.append(f"The next one ({report.stopped.pod}) stays Pending:")
        lines.append(f"  {report.stopped.message}")
    lines.append("")
    lines.extend(_allocation_lines("cluster requests", report.before, report.after))
    return "\n".join(lines) + "\n"


def format_drain(report: DrainReport) -> str:
    plural = "s" if len(report.nodes) != 1 else ""
    lines = [f"drain: {len(report.nodes)} node{plural} cordoned: {', '.join(report.nodes[:10])}"]
    if len(report.nodes) > 10:
        lines[-1] += f" and {len(report.nodes) - 10} more"
    for node, warning in report.warnings.items():
        lines.append(f"Warning: {node}: {warning}")
    for node, error in report.not_drained.items():
        lines.append(f'error: unable to drain node "{node}" due to error: {error}, continuing command...')
    rescheduled = [p for p in report.placements if p.scheduled]
    lines.append("")
    lines.append(
        f"{report.evicted} pods evicted: {len(rescheduled)} rescheduled, {len(report.pending)} Pending,"
        f" {len(report.deleted)} gone for good; {len(report.refused)} evictions refused"
    )
    if rescheduled:
        lines.append("")
        lines.extend(
            _table(["POD", "FROM", "TO"], [[p.pod, p.origin or "(preempted)", p.node or ""] for p in rescheduled])
        )
    if report.pending:
        lines.append("")
        lines.append("Left Pending:")
        lines.extend(_pending_lines(report.pending))
    if report.deleted:
        lines.append("")
        lines.append("Deleted, not recreated:")
        lines.extend(_table(["POD", "NODE", "WHY"], [[d.pod, d.node, d.message] for d in report.deleted]))
    if report.refused:
        lines.append("")
        lines.append("Evictions refused (kubectl would retry until --timeout):")
        lines.extend(_table(["POD", "NODE", "MESSAGE"], [[r.pod, r.node, r.message] for r in report.refused]))
    if report.preempted:
        lines.append("")
        lines.append("Preempted to make room:")
        lines.extend(_table(["POD", "NODE", "BY"], [[v["pod"], v["node"], v["by"]] for v in report.preempted]))
    lines.append("")
    lines.extend(_allocation_lines("drained nodes' requests", report.before["drained"], report.after["drained"]))
    lines.extend(_allocation_lines("cluster requests", report.before["cluster"], report.after["cluster"]))
    return "\n".join(lines) + "\n"


def format_add(report: AddReport) -> str:
    count = len(report.added)
    lines = [f"add: {count} node{'s' if count != 1 else ''} like {report.shape}: {', '.join(report.added[:10])}"]
    if count > 10:
        lines[-1] += f" and {count - 10} more"
    scheduled, new = report.scheduled, report.on_new_nodes
    pending = [p for p in report.placements if not p.scheduled]
    lines.append(
        f"{len(report.placements)} pending pods: {len(scheduled)} schedule ({len(new)} on the new nodes),"
        f" {len(pending)} stay Pending"
    )
    if report.anyway is not None:
        difference = len(scheduled) - len(report.anyway)
        lines.append(
            f"without the new nodes {len(report.anyway)} of them would schedule: {difference:+d} with the new nodes"
            " (a pod may also land elsewhere when random tie-breaks fall differently)"
        )
    if scheduled:
        lines.append("")
        added = set(report.added)
        anyway = report.anyway or set()

        def note(p: Placement) -> str:
            if report.anyway is not None and p.pod not in anyway:
                return "Pending without the new nodes"
            return "new node" if p.node in added else ""

        ordered = sorted(scheduled, key=lambda p: (report.anyway is not None and p.pod in anyway, p.pod))
        lines.extend(_table(["POD", "NODE", ""], [[p.pod, p.node or "", note(p)] for p in ordered]))
    if pending:
        lines.append("")
        lines.append("Still Pending:")
        lines.extend(_pending_lines(pending))
    lines.append("")
    lines.extend(_allocation_lines("cluster requests", report.before, report.after))
    return "\n".join(lines) + "\n"
