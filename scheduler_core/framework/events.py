"""The typed, ordered events of a scheduling cycle — the wire format lives here and only here.

Every event carries the cycle number and a sequence number. Per-plugin events carry all nodes at
once; their arrays stay numpy until `to_dict()` turns them into `{node name: value}` maps, so a
5000-node cycle costs a few dozen small objects unless someone serializes it.

Fields by type (besides `type`, `cycle`, `seq`):
- `cycle.started`: `pod`, `priority`, `nodes` (count).
- `phase.started`: `point`.
- `plugin.evaluated`: `point`, `plugin`, then per point: PreFilter `status`, `nodes`; Filter `verdicts`
  (`{node: {code, reasons}}`) or `status` (Skip) and, when the plugin explains itself, `detail`:
  NodeResourcesFit `{resource: {request, used: {node: n}, allocatable: {node: n}}}`,
  TaintToleration `{taints: {reason: {key, value, effect}}}`, NodeAffinity
  `{missingLabels: [{key, value, nodes: [node]}]}` (the pod's nodeSelector pairs a node lacks);
  Score `raw`; PostFilter `status`, `nominatedNode`; Bind `status`, `node`.
- `filter.finished`: `rejectedBy` (`{node: plugin}`: the plugin whose status upstream records, the
  first failing one), `feasible` (count).
- `node.skipped`: `nodes`, `reason`. `scores.normalized`: `plugin`, `normalized`, `weight`, `weighted`.
- `host.selected`: `node`, `total`, `tiedTop`. `preemption.evaluated`: `candidates`, `statuses`,
  `notHelpful`, `nominatedNode`, `victims`, `priorities` (`{victim: priority}`).
- `cycle.finished`: `pod`, `scheduled`, `node`, `nominatedNode`, `message`, `code`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .status import Code, NodeVerdicts, Status

__all__ = [
    "CYCLE_FINISHED",
    "CYCLE_STARTED",
    "EVENT_TYPES",
    "FILTER_FINISHED",
    "HOST_SELECTED",
    "NODE_SKIPPED",
    "PHASE_STARTED",
    "PLUGIN_EVALUATED",
    "PREEMPTION_EVALUATED",
    "SCORES_NORMALIZED",
    "Deferred",
    "Event",
    "EventEmitter",
    "EventSink",
    "NodeNames",
    "PerNode",
]

CYCLE_STARTED = "cycle.started"
PHASE_STARTED = "phase.started"
PLUGIN_EVALUATED = "plugin.evaluated"
NODE_SKIPPED = "node.skipped"
FILTER_FINISHED = "filter.finished"
SCORES_NORMALIZED = "scores.normalized"
HOST_SELECTED = "host.selected"
# preemption.evaluated: candidates [{node, victims [{pod, priority, pdbViolating}], reprieved [{pod,
# priority, pdbProtected}], pdbViolations, chosen, eliminatedBy}], statuses {node: status},
# notHelpful [node], notEvaluated [node], dropped [node], offset, numCandidates, nominatedNode,
# victims [pod]. Built lazily (Deferred) when serialized.
PREEMPTION_EVALUATED = "preemption.evaluated"
CYCLE_FINISHED = "cycle.finished"
EVENT_TYPES = (
    CYCLE_STARTED,
    PHASE_STARTED,
    PLUGIN_EVALUATED,
    NODE_SKIPPED,
    FILTER_FINISHED,
    SCORES_NORMALIZED,
    HOST_SELECTED,
    PREEMPTION_EVALUATED,
    CYCLE_FINISHED,
)


@dataclass(slots=True)  # not frozen: a frozen dataclass is ~3× slower to build, and a cycle builds many
class PerNode:
    """Values for some nodes: `values[k]` belongs to node `idx[k]` (all nodes when idx is None)."""

    values: np.ndarray
    idx: np.ndarray | None = None

    def to_dict(self, names: list[str]) -> dict[str, Any]:
        values = self.values.tolist()
        if self.idx is None:
            return dict(zip(names, values, strict=True))
        return {names[i]: v for i, v in zip(self.idx.tolist(), values, strict=True)}


@dataclass(slots=True)  # not frozen: a frozen dataclass is ~3× slower to build, and a cycle builds many
class NodeNames:
    """A list of nodes by index, named only when serialized."""

    idx: np.ndarray

    def to_list(self, names: list[str]) -> list[str]:
        return [names[i] for i in self.idx.tolist()]


@dataclass(frozen=True, slots=True)
class Deferred:
    """A field built only when the event is serialized: `build(node names)`."""

    build: Callable[[list[str]], Any]


def _jsonable(value: Any, names: list[str]) -> Any:
    if isinstance(value, Deferred):
        return _jsonable(value.build(names), names)
    if isinstance(value, NodeNames):
        return value.to_list(names)
    if isinstance(value, PerNode):
        return value.to_dict(names)
    if isinstance(value, NodeVerdicts):
        return _verdicts_to_dict(value, names)
    if isinstance(value, Status):
        return value.to_dict()
    if isinstance(value, Code):
        return value.label
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _jsonable(v, names) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value) if isinstance(value, set | frozenset) else value
        return [_jsonable(v, names) for v in items]
    return value


def _verdicts_to_dict(verdicts: NodeVerdicts, names: list[str]) -> dict[str, Any]:
    codes = verdicts.codes.tolist()
    out: dict[str, Any] = {}
    for i, name in enumerate(names):
        code = Code(codes[i])
        reasons = [reason for reason, mask in verdicts.reasons if mask[i]] if code else []
        out[name] = {"code": code.label, "reasons": reasons}
    return out


@dataclass(slots=True)
class Event:
    """One step of a cycle: `type`, `cycle`, `seq`, and the type's fields in `data`."""

    type: str
    cycle: int
    seq: int
    data: dict[str, Any]

    def to_dict(self, names: list[str]) -> dict[str, Any]:
        """JSON-serializable form; per-node values keyed by node name."""
        out: dict[str, Any] = {"type": self.type, "cycle": self.cycle, "seq": self.seq}
        out.update(_jsonable(self.data, names))
        return out


EventSink = Callable[[Event], None]


@dataclass
class EventEmitter:
    """Numbers events of one cycle and hands them to the sinks, in order."""

    cycle: int = 0
    sinks: list[EventSink] = field(default_factory=list)
    _seq: int = 0

    def emit(self, type_: str, **data: Any) -> None:
        if not self.sinks:
            return
        self._seq += 1
        event = Event(type_, self.cycle, self._seq, data)
        for sink in self.sinks:
            sink(event)


# --- the compact wire form ------------------------------------------------------------------------
# A cycle's per-node values are columnar: node names once (in `cycle.started`'s `nodeNames`), every
# per-node field as indexes into that table, a Filter plugin's verdicts as its failures only (every
# node not listed passed), and `weighted` scores left out (normalized × weight). Tagged objects
# (keys starting with "$") mark the columnar parts; `static/js/model/cycle_wire.js` decodes them.


def encode_cycle(events: list[Event], names: list[str]) -> list[dict[str, Any]]:
    """The compact wire form of one cycle's events (a JSON-serializable list, in order)."""
    wire = []
    for event in events:
        out: dict[str, Any] = {"type": event.type, "cycle": event.cycle, "seq": event.seq}
        for key, value in event.data.items():
            if key == "weighted" and isinstance(value, PerNode):
                continue
            out[key] = _compact(value, names)
        if event.type == CYCLE_STARTED:
            out["nodeNames"] = names
        wire.append(out)
    return wire


def _compact(value: Any, names: list[str]) -> Any:
    """Per-node values at any depth (e.g. NodeResourcesFit's `detail`) in their compact form."""
    if isinstance(value, Deferred):
        return _compact(value.build(names), names)
    if isinstance(value, NodeNames):
        return {"$nodes": value.idx.tolist()}
    if isinstance(value, PerNode):
        return {"$idx": None if value.idx is None else value.idx.tolist(), "$values": value.values.tolist()}
    if isinstance(value, NodeVerdicts):
        return _compact_verdicts(value)
    if isinstance(value, dict):
        return {str(k): _compact(v, names) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_compact(v, names) for v in value]
    return _jsonable(value, names)


def _compact_verdicts(verdicts: NodeVerdicts) -> dict[str, Any]:
    """Failures only: node indexes per code, and per reason (in upstream's order) the nodes it applies to."""
    codes = verdicts.codes
    failed = codes != 0
    by_code = {Code(int(code)).label: np.flatnonzero(codes == code).tolist() for code in np.unique(codes[failed])}
    reasons = [[reason, np.flatnonzero(mask & failed).tolist()] for reason, mask in verdicts.reasons]
    return {"$failed": by_code, "$reasons": [r for r in reasons if r[1]]}
