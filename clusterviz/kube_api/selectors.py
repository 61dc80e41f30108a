"""Label and field selectors of list/watch requests (`?labelSelector=`, `?fieldSelector=`), and the
string form of a LabelSelector (`app=web,tier in (a,b)`) that tables and Scale show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scheduler_core.framework.selectors import Selector, SelectorSyntaxError, parse_label_selector

from .status import ApiError

__all__ = ["FieldSelector", "LabelSelector", "format_label_selector"]

Obj = dict[str, Any]

# Field selectors a real API server accepts, per kind (plus metadata.name/namespace for all).
FIELDS: dict[str, set[str]] = {
    "Pod": {
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    },
    "Node": {"spec.unschedulable"},
    "Event": {
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    },
    "Namespace": {"status.phase"},
    "ReplicaSet": {"status.replicas"},
}


def _field_value(obj: Obj, path: str) -> str:
    if path == "source":
        return str(obj.get("source", {}).get("component", ""))
    if path == "spec.hostNetwork":
        return "true" if obj.get("spec", {}).get("hostNetwork") else "false"
    if path == "spec.unschedulable":
        return "true" if obj.get("spec", {}).get("unschedulable") else "false"
    current: Any = obj
    for part in path.split("."):
        current = current.get(part) if isinstance(current, dict) else None
    if current is None:
        return ""
    if isinstance(current, bool):
        return "true" if current else "false"
    return str(current)


@dataclass(frozen=True)
class FieldSelector:
    """`a=b,c!=d` terms; the order of terms is arbitrary (kubectl builds them from a Go map)."""

    terms: tuple[tuple[str, str, bool], ...]  # (field, value, negated)

    @classmethod
    def parse(cls, text: str | None, kind: str) -> FieldSelector:
        terms: list[tuple[str, str, bool]] = []
        for raw in (text or "").split(","):
            term = raw.strip()
            if not term:
                continue
            for op in ("!=", "==", "="):
                if op in term:
                    field, value = term.split(op, 1)
                    break
            else:
                raise ApiError(400, "BadRequest", f'invalid selector: "{text}"; can\'t understand "{term}"')
            field = field.strip()
            if field not in ("metadata.name", "metadata.namespace") and field not in FIELDS.get(kind, set()):
                raise ApiError(400, "BadRequest", f"field label not supported: {field}")
            terms.append((field, value.strip(), op == "!="))
        return cls(tuple(terms))

    def matches(self, obj: Obj) -> bool:
        return all((_field_value(obj, field) == value) != negated for field, value, negated in self.terms)

    def required(self, field: str) -> str | None:
        """The value an `=` term pins `field` to (to narrow a query), if any."""
        for name, value, negated in self.terms:
            if name == field and not negated:
                return value
        return None


@dataclass(frozen=True)
class LabelSelector:
    """A parsed `?labelSelector=` (equality- and set-based), matched by the scheduler's matcher."""

    selector: Selector

    @classmethod
    def parse(cls, text: str | None) -> LabelSelector:
        try:
            return cls(parse_label_selector(text or ""))
        except SelectorSyntaxError as exc:
            raise ApiError(400, "BadRequest", str(exc)) from None

    def matches(self, obj: Obj) -> bool:
        return self.selector.matches(obj.get("metadata", {}).get("labels") or {})


def format_label_selector(selector: Obj | None) -> str:
    """metav1.FormatLabelSelector: requirements sorted by key; `<none>` when empty."""
    if not selector:
        return "<none>"
    parts: list[tuple[str, str]] = []
    for key, value in (selector.get("matchLabels") or {}).items():
        parts.append((key, f"{key}={value}"))
    for expr in selector.get("matchExpressions") or []:
        key, operator = expr.get("key", ""), expr.get("operator", "")
        values = ",".join(sorted(expr.get("values") or []))
        text = {
            "In": f"{key} in ({values})",
            "NotIn": f"{key} notin ({values})",
            "Exists": key,
            "DoesNotExist": f"!{key}",
        }.get(operator, "<error>")
        parts.append((key, text))
    text = ",".join(part for _, part in sorted(parts, key=lambda p: p[0]))
    return text or "<none>"
