"""Label selectors and node selector terms, compiled once and matched many times.

Upstream: k8s.io/apimachinery/pkg/labels (Requirement.Matches) and
k8s.io/component-helpers/scheduling/corev1/nodeaffinity (node selector terms).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..api.objects import LabelSelector, NodeSelectorRequirement, NodeSelectorTerm

__all__ = [
    "LabelRequirement",
    "NodeTermCompiled",
    "Selector",
    "SelectorSyntaxError",
    "compile_label_selector",
    "compile_node_selector_term",
    "is_valid_label_key",
    "is_valid_label_value",
    "parse_int64",
    "parse_label_selector",
]

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def parse_int64(text: str) -> int | None:
    """Go `strconv.ParseInt(s, 10, 64)`: optional sign, decimal digits, int64 range."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    """One requirement: key, operator (In, NotIn, Exists, DoesNotExist, Gt, Lt), values."""

    key: str
    operator: str
    values: frozenset[str]

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "In":
            return self.key in labels and labels[self.key] in self.values
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        if op in ("Gt", "Lt"):
            if self.key not in labels or len(self.values) != 1:
                return False
            have = parse_int64(labels[self.key])
            want = parse_int64(next(iter(self.values)))
            if have is None or want is None:
                return False
            return have > want if op == "Gt" else have < want
        return False


@dataclass(frozen=True, slots=True)
class Selector:
    """A compiled selector. `nothing` matches no set of labels (a nil selector)."""

    requirements: tuple[LabelRequirement, ...] = ()
    nothing: bool = False

    @property
    def empty(self) -> bool:
        """`labels.Selector.Empty()`: no requirements (the everything selector)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        for requirement in self.requirements:
            if not requirement.matches(labels):
                return False
        return True

    def and_requirements(self, extra: tuple[LabelRequirement, ...]) -> Selector:
        if self.nothing or not extra:
            return self
        return Selector(self.requirements + extra)


NOTHING = Selector(nothing=True)
EVERYTHING = Selector()


def compile_label_selector(selector: LabelSelector | None) -> Selector:
    """`metav1.LabelSelectorAsSelector`: nil → nothing, {} → everything."""
    if selector is None:
        return NOTHING
    requirements = [
        LabelRequirement(key, "In", frozenset([value])) for key, value in sorted(selector.match_labels.items())
    ]
    for expression in selector.match_expressions:
        requirements.append(LabelRequirement(expression.key, expression.operator, frozenset(expression.values)))
    return Selector(tuple(requirements))


@dataclass(frozen=True, slots=True)
class NodeTermCompiled:
    """A node selector term: expressions on labels and fields on metadata.name, all ANDed.

    A term with neither matches nothing; a term whose requirement is invalid matches nothing
    (upstream ignores the parse error "for backwards compatibility").
    """

    label_requirements: tuple[LabelRequirement, ...]
    field_requirements: tuple[LabelRequirement, ...]
    valid: bool

    def matches(self, name: str, labels: Mapping[str, str]) -> bool:
        if not self.valid:
            return False
        for requirement in self.label_requirements:
            if not requirement.matches(labels):
                return False
        if self.field_requirements:
            fields = {"metadata.name": name}
            for requirement in self.field_requirements:
                if not requirement.matches(fields):
                    return False
        return True


_LABEL_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def is_valid_label_key(key: str) -> bool:
    """`validation.IsQualifiedName`: an optional DNS-subdomain prefix and "/", then a name of 1-63 characters."""
    prefix, slash, name = key.rpartition("/")
    if slash and ("/" in prefix or not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(prefix)):
        return False
    return 0 < len(name) <= 63 and _LABEL_NAME.fullmatch(name) is not None


def is_valid_label_value(value: str) -> bool:
    """`validation.IsValidLabelValue`: empty, or up to 63 characters of the label-name alphabet."""
    return value == "" or (len(value) <= 63 and _LABEL_NAME.fullmatch(value) is not None)


def _requirement_valid(requirement: NodeSelectorRequirement, is_field: bool) -> bool:
    """Whether upstream parses the requirement without error (a term with any error matches nothing)."""
    op, values = requirement.operator, requirement.values
    if is_field:
        # nodeaffinity.go nodeSelectorRequirementsAsFieldSelector: In/NotIn with one value. (Upstream takes
        # any key there; the API server admits only metadata.name, the one field a node has.)
        return requirement.key == "metadata.name" and op in ("In", "NotIn") and len(values) == 1
    # labels.NewRequirement: the key is a qualified name and every value a valid label value, whatever the
    # operator, plus the per-operator value count (and integers for Gt/Lt).
    if not is_valid_label_key(requirement.key) or not all(is_valid_label_value(v) for v in values):
        return False
    if op in ("In", "NotIn"):
        return len(values) > 0
    if op in ("Exists", "DoesNotExist"):
        return len(values) == 0
    if op in ("Gt", "Lt"):
        return len(values) == 1 and parse_int64(values[0]) is not None
    return False


def compile_node_selector_term(term: NodeSelectorTerm) -> NodeTermCompiled:
    labels = tuple(LabelRequirement(r.key, r.operator, frozenset(r.values)) for r in term.match_expressions)
    fields = tuple(LabelRequirement(r.key, r.operator, frozenset(r.values)) for r in term.match_fields)
    valid = (
        (bool(labels) or bool(fields))
        and all(_requirement_valid(r, False) for r in term.match_expressions)
        and all(_requirement_valid(r, True) for r in term.match_fields)
    )
    return NodeTermCompiled(labels, fields, valid)


class SelectorSyntaxError(ValueError):
    """A label selector string that `labels.Parse` refuses (the message is upstream's)."""


_SET = re.compile(r"^\s*(!?)\s*([^\s!=<>(),]+)\s*(?:(notin|in)\s*\(([^)]*)\)|(==|!=|=|>|<)\s*([^\s,]*))?\s*$")
_OPERATORS = {"in": "In", "notin": "NotIn", "=": "In", "==": "In", "!=": "NotIn", ">": "Gt", "<": "Lt"}


def _split_terms(text: str) -> list[str]:
    """Split on commas outside parentheses: `a in (x,y),b` → [`a in (x,y)`, `b`]."""
    terms, depth, current = [], 0, ""
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    terms.append(current)
    return [t for t in (term.strip() for term in terms) if t]


def _requirement(term: str, text: str) -> LabelRequirement:
    """One term of `labels.Parse`."""
    match = _SET.match(term)
    if not match:
        raise SelectorSyntaxError(f"unable to parse requirement: found '{term}' in \"{text}\"")
    negated, key, set_op, set_values, op, value = match.groups()
    if negated:
        if set_op or op:
            raise SelectorSyntaxError(f"unable to parse requirement: found '{term}' in \"{text}\"")
        return LabelRequirement(key, "DoesNotExist", frozenset())
    if set_op:
        return LabelRequirement(key, _OPERATORS[set_op], frozenset(v.strip() for v in set_values.split(",")))
    if op is None:
        return LabelRequirement(key, "Exists", frozenset())
    if op in (">", "<") and parse_int64(value) is None:  # strconv.ParseInt(value, 10, 64), as upstream
        raise SelectorSyntaxError(f"unable to parse requirement: for '{op}', '{value}' must be an integer")
    return LabelRequirement(key, _OPERATORS[op], frozenset([value]))


def parse_label_selector(text: str) -> Selector:
    """A selector as `kubectl -l` writes it (`app=web,tier in (a,b),!legacy`), as apimachinery's
    `labels.Parse` reads it; an error is its message (`SelectorSyntaxError`)."""
    return Selector(tuple(_requirement(term, text) for term in _split_terms(text)))
