"""One pod under two kube-scheduler versions: what differs (filter verdicts, scores, the message,
the placement, the plugins that ran) and which upstream change (versions/changes.py) causes it."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from . import Change, Version
from .changes import CHANGES

__all__ = ["Difference", "compare_answers", "format_differences"]

MAX_EXAMPLES = 3


@dataclass(frozen=True)
class Difference:
    what: str  # "plugins" | "filter" | "score" | "message" | "placement"
    plugin: str | None
    before: Any
    after: Any
    nodes: tuple[str, ...] = ()
    causes: tuple[Change, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "plugin": self.plugin,
            "before": self.before,
            "after": self.after,
            "nodes": list(self.nodes),
            "causes": [
                {"change": c.key, "source": c.source, "gate": c.gate, "summary": c.summary} for c in self.causes
            ],
        }


def _differing_changes(a: Version, b: Version) -> tuple[Change, ...]:
    return tuple(c for c in CHANGES if a.has(c.key) != b.has(c.key))


def _causes(changes: tuple[Change, ...], plugins: set[str]) -> tuple[Change, ...]:
    """The changes touching `plugins`; every differing change when none names them."""
    named = tuple(c for c in changes if plugins & set(c.plugins))
    return named or (changes if not plugins else ())


def _filter_text(status: dict[str, Any] | None) -> str:
    if status is None:
        return "pass"
    return f"{status['plugin']}: {', '.join(status['reasons'])} ({status['code']})"


def _filter_plugins(answer: dict[str, Any]) -> list[str]:
    for node in answer.get("nodes", {}).values():
        return [f["plugin"] for f in node.get("filters", []) if f]
    return []


def compare_answers(a: dict[str, Any], b: dict[str, Any], va: Version, vb: Version) -> list[Difference]:
    """The differences between two `explain -o json` answers for the same pod and cluster."""
    changes = _differing_changes(va, vb)
    out: list[Difference] = []
    plugins_a, plugins_b = _filter_plugins(a), _filter_plugins(b)
    if plugins_a != plugins_b:
        touched = set(plugins_a) ^ set(plugins_b)
        out.append(Difference("plugins", None, plugins_a, plugins_b, (), _causes(changes, touched)))
    verdicts: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    scores: dict[str, list[tuple[str, int | None, int | None]]] = defaultdict(list)
    for name, node_a in a.get("nodes", {}).items():
        node_b = b.get("nodes", {}).get(name)
        if node_b is None:
            continue
        before, after = _filter_text(node_a["filter"]), _filter_text(node_b["filter"])
        if before != after:
            verdicts[(before, after, _plugin_of(node_a["filter"], node_b["filter"]))].append(name)
        for plugin in sorted(set(node_a["scores"]) | set(node_b["scores"])):
            sa = node_a["scores"].get(plugin, {}).get("normalized")
            sb = node_b["scores"].get(plugin, {}).get("normalized")
            if sa != sb:
                scores[plugin].append((name, sa, sb))
    for (before, after, plugin), nodes in verdicts.items():
        plugins = {plugin} if plugin else set()
        out.append(Difference("filter", plugin or None, before, after, tuple(nodes), _causes(changes, plugins)))
    for plugin, rows in scores.items():
        examples = [f"{node}: {sa} → {sb}" for node, sa, sb in rows[:MAX_EXAMPLES]]
        nodes = tuple(node for node, _, _ in rows)
        out.append(Difference("score", plugin, examples, len(rows), nodes, _causes(changes, {plugin})))
    # the plugins behind a differing message or placement: those whose verdict or score differs, and
    # those only one version runs (not every filter plugin of both lists)
    touched = {d.plugin for d in out if d.plugin} | (set(plugins_a) ^ set(plugins_b))
    if a.get("message") != b.get("message"):
        out.append(Difference("message", None, a.get("message"), b.get("message"), (), _causes(changes, touched)))
    if a.get("selectedNode") != b.get("selectedNode"):
        causes = _causes(changes, touched) if touched else ()
        out.append(Difference("placement", None, a.get("selectedNode"), b.get("selectedNode"), (), causes))
    return out


def _plugin_of(before: dict[str, Any] | None, after: dict[str, Any] | None) -> str:
    return (before or {}).get("plugin") or (after or {}).get("plugin") or ""


def format_differences(differences: list[Difference], va: Version, vb: Version) -> str:
    """The text `explain --compare-version` prints."""
    lines = [f"Compared: kube-scheduler {va} and {vb} (default gates unless set)"]
    if not differences:
        lines.append("  The same answer in both: every verdict, score, the message and the placement.")
    for d in differences:
        lines.append("")
        if d.what == "plugins":
            lines.append(f"  Filter plugins differ: {va}: {', '.join(d.before)}")
            lines.append(f"  {' ' * len('Filter plugins differ:')} {vb}: {', '.join(d.after)}")
        elif d.what == "filter":
            lines.append(f"  Filter verdict on {_count(d.nodes)}:")
            lines.append(f"    {va}: {d.before}")
            lines.append(f"    {vb}: {d.after}")
        elif d.what == "score":
            lines.append(f"  {d.plugin} score differs on {_count(d.nodes, d.after)}: {'; '.join(d.before)}")
        elif d.what == "message":
            lines.append("  FailedScheduling message:")
            lines.append(f"    {va}: {d.before or '(scheduled)'}")
            lines.append(f"    {vb}: {d.after or '(scheduled)'}")
        else:
            lines.append(f"  Placement: {va}: {d.before or 'Pending'}; {vb}: {d.after or 'Pending'}")
        for cause in d.causes:
            gate = f", gate {cause.gate}" if cause.gate else ""
            lines.append(f"    because: {cause.summary} [{cause.source}{gate}; since v1.{cause.since}]")
        if not d.causes:
            lines.append("    because: no modelled upstream change; a tie between equal totals is broken at random")
    return "\n".join(lines) + "\n"


def _count(nodes: tuple[str, ...], total: int | None = None) -> str:
    n = total if total is not None else len(nodes)
    shown = ", ".join(nodes[:MAX_EXAMPLES]) + (", …" if len(nodes) > MAX_EXAMPLES else "")
    return f"{n} node{'s' if n != 1 else ''} ({shown})"
