"""Fixes for a pod the scheduler rejected, node by node — each one verified by scheduling again.

For every rejected node: every failing Filter plugin with what would fix it there (a toleration,
a node label, a smaller request, uncordon, no hostPort, or a required node-affinity edit), then
the pod and the node with all of those fixes applied go through `explain()` once more. A fix set
is `verified` only if the scheduler would then place the pod on that very node.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from .api.loading import ClusterObjects, InputError
from .api.objects import Node, Pod, Toleration
from .api.quantity import parse_quantity
from .explain import explain, wire_events
from .framework.pod_info import PodInfo, resource_value
from .framework.profile import Profile

__all__ = ["MAX_FIX_NODES", "suggest_fixes"]

MAX_FIX_NODES = 12  # rejected nodes tried, one scheduling cycle each
NO_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass
class _NodeFix:
    """The fixes for one node: edits to the pod's body and to the node, with their texts."""

    node: Node
    body: dict[str, Any]
    commands: list[str] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    complete: bool = True  # every failing plugin got a fix


def _quantity(resource: str, value: int) -> str:
    return f"{value}m" if resource == "cpu" else str(value)


def _request(resource: str, raw: object) -> int:
    """A quantity as the core counts it (millicores for cpu)."""
    return resource_value(resource, parse_quantity(raw))


def _fix_taints(fix: _NodeFix, tolerations: list[Toleration]) -> list[dict[str, Any]]:
    out = []
    spec = fix.body.setdefault("spec", {})
    for taint in fix.node.spec.taints:
        if taint.effect not in NO_EFFECTS or any(t.tolerates(taint) for t in tolerations):
            continue
        toleration: dict[str, Any] = {"key": taint.key, "operator": "Equal" if taint.value else "Exists"}
        if taint.value:
            toleration["value"] = taint.value
        toleration["effect"] = taint.effect
        spec.setdefault("tolerations", []).append(toleration)
        tolerations.append(Toleration.model_validate(toleration))
        shown = f"{taint.key}{'=' + taint.value if taint.value else ''}:{taint.effect}"
        out.append(
            {
                "kind": "pod",
                "text": f"tolerate {shown}",
                "alternative": f"kubectl taint node {fix.node.metadata.name} {taint.key}:{taint.effect}-",
            }
        )
    return out


def _set_label(fix: _NodeFix, key: str, value: str | None) -> dict[str, Any]:
    name = fix.node.metadata.name
    if value is None:
        fix.node.metadata.labels.pop(key, None)
        command = f"kubectl label nodes {name} {key}-"
        return {"kind": "cluster", "text": f"remove label {key} from {name}", "command": command}
    fix.node.metadata.labels[key] = value
    command = f"kubectl label nodes {name} {key}={value} --overwrite"
    return {"kind": "cluster", "text": f"label {name} {key}={value}", "command": command}


def _fix_affinity(fix: _NodeFix, pod: Pod) -> list[dict[str, Any]]:
    """Node labels that satisfy the nodeSelector and the first required node-affinity term."""
    out = []
    labels = fix.node.metadata.labels
    for key, value in pod.spec.node_selector.items():
        if labels.get(key) != value:
            out.append(_set_label(fix, key, value))
    affinity = pod.spec.affinity.node_affinity if pod.spec.affinity else None
    required = affinity.required_during_scheduling_ignored_during_execution if affinity else None
    if required and required.node_selector_terms:
        for expr in required.node_selector_terms[0].match_expressions:
            have = labels.get(expr.key)
            if expr.operator == "In" and have not in expr.values:
                out.append(_set_label(fix, expr.key, expr.values[0]))
            elif expr.operator == "Exists" and have is None:
                out.append(_set_label(fix, expr.key, "true"))
            elif (expr.operator == "NotIn" and have in expr.values) or (
                expr.operator == "DoesNotExist" and have is not None
            ):
                out.append(_set_label(fix, expr.key, None))
    return out


def _fix_resources(fix: _NodeFix, detail: dict[str, Any], i: int) -> list[dict[str, Any]]:
    """Lower the largest container request of each short resource to what the node has free."""
    out = []
    for resource, figures in detail.items():
        free = int(figures["allocatable"].values[i]) - int(figures["used"].values[i])
        excess = int(figures["request"]) - free
        if excess <= 0:
            continue
        if free <= 0 or resource not in ("cpu", "memory"):
            return []
        containers = [
            c
            for c in fix.body.get("spec", {}).get("containers", [])
            if resource in ((c.get("resources") or {}).get("requests") or {})
        ]
        if not containers:
            return []
        sizes = [_request(resource, c["resources"]["requests"][resource]) for c in containers]
        biggest = containers[sizes.index(max(sizes))]
        lowered = max(sizes) - excess
        if lowered <= 0:
            return []
        biggest["resources"]["requests"][resource] = _quantity(resource, lowered)
        text = f"request {_quantity(resource, lowered)} {resource} in container {biggest.get('name')}"
        out.append({"kind": "pod", "text": text})
    return out


def _fix_ports(fix: _NodeFix) -> list[dict[str, Any]]:
    for container in fix.body.get("spec", {}).get("containers", []):
        for port in container.get("ports") or []:
            port.pop("hostPort", None)
    return [{"kind": "pod", "text": "drop the containers' hostPort"}]


def _fix_cordon(fix: _NodeFix) -> list[dict[str, Any]]:
    fix.node.spec.unschedulable = False
    name = fix.node.metadata.name
    return [{"kind": "cluster", "text": f"uncordon {name}", "command": f"kubectl uncordon {name}"}]


def _diff(before: dict[str, Any], after: dict[str, Any]) -> str:
    a = yaml.safe_dump(before, sort_keys=False).splitlines()
    b = yaml.safe_dump(after, sort_keys=False).splitlines()
    return "\n".join(difflib.unified_diff(a, b, "pod.yaml", "pod.yaml (fixed)", lineterm="", n=2))


def suggest_fixes(
    cluster: ClusterObjects,
    body: dict[str, Any],
    load: Callable[[dict[str, Any]], Pod],
    seed: int = 0,
    profile: Profile | None = None,
) -> dict[str, Any]:
    """Per rejected node: its failing plugins with fixes, the pod diff, the kubectl commands, and
    where the scheduler puts the fixed pod on the fixed cluster (`verified` if on that node).
    `body` is the pod as written; `load` turns a body into an admitted Pod (the caller's rules)."""
    original = copy.deepcopy(body)
    original.pop("status", None)
    original.get("spec", {}).pop("nodeName", None)
    pod = load(original)
    first = explain(cluster, pod, profile, seed=seed)
    result = first.result
    out: dict[str, Any] = {"pod": PodInfo.of(pod).key, "nodes": []}
    if result is None or result.filter is None or result.diagnosis is None:
        out["message"] = first.gated.message() if first.gated else (result.message if result else "")
        return out
    out["message"] = result.message
    outcome = result.filter
    tried = 0
    for i, name in enumerate(result.table.names):
        if result.diagnosis.status_of(i) is None or tried >= MAX_FIX_NODES:
            continue
        tried += 1
        node = next(n for n in cluster.nodes if n.metadata.name == name).model_copy(deep=True)
        fix = _NodeFix(node, copy.deepcopy(original))
        tolerations = list(PodInfo.of(pod).tolerations)
        for plugin, verdicts in zip(outcome.plugins, outcome.verdicts, strict=True):
            if verdicts is None or not verdicts.codes[i]:
                continue
            reasons = list(verdicts.status_of(i, plugin).reasons)
            if plugin == "TaintToleration":
                fixes = _fix_taints(fix, tolerations)
            elif plugin == "NodeAffinity":
                fixes = _fix_affinity(fix, pod)
            elif plugin == "NodeResourcesFit" and verdicts.detail:
                fixes = _fix_resources(fix, verdicts.detail, i)
            elif plugin == "NodeUnschedulable":
                fixes = _fix_cordon(fix)
            elif plugin == "NodePorts":
                fixes = _fix_ports(fix)
            else:
                fixes = []
            fix.complete &= bool(fixes)
            fix.failures.append({"plugin": plugin, "reasons": reasons, "fixes": fixes})
        out["nodes"].append(_verify(cluster, fix, original, load, seed, profile))
    return out


def _verify(
    cluster: ClusterObjects,
    fix: _NodeFix,
    original: dict[str, Any],
    load: Callable[[dict[str, Any]], Pod],
    seed: int,
    profile: Profile | None,
) -> dict[str, Any]:
    name = fix.node.metadata.name
    commands = [f["command"] for failure in fix.failures for f in failure["fixes"] if f.get("command")]
    entry: dict[str, Any] = {
        "node": name,
        "failures": fix.failures,
        "podDiff": _diff(original, fix.body) if fix.body != original else "",
        "fixedPod": yaml.safe_dump(fix.body, sort_keys=False),
        "commands": commands,
        "complete": fix.complete,
        "verified": False,
        "landsOn": None,
        "message": "",
    }
    if not fix.complete:
        entry["message"] = "no automatic fix for every failing plugin"
        return entry
    try:
        fixed_pod = load(fix.body)
    except InputError as exc:
        entry["message"] = str(exc)
        return entry
    nodes = [fix.node if n.metadata.name == name else n for n in cluster.nodes]
    again = explain(replace(cluster, nodes=nodes), fixed_pod, profile, seed=seed)
    if again.result is not None:
        entry["landsOn"] = again.result.selected_node
        entry["message"] = again.result.message
        entry["verified"] = again.result.selected_node == name
        entry["events"] = wire_events(again)  # the verifying cycle, to show as a what-if
    return entry
