"""Values inside kube-apiserver's field errors, printed as Go's `%#v` prints them
(apimachinery util/validation/field.Error.ErrorBody): `v1.LabelSelector{MatchLabels:…}`,
`[]string{"10.96.0.5"}`, `"text"`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["go_quote", "go_slice", "go_string_map", "label_selector"]


def go_quote(text: str) -> str:
    """strconv.Quote: double quotes, backslash escapes for quotes and control characters."""
    out = []
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif char == "\r":
            out.append("\\r")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def go_slice(values: Iterable[Any] | None, element: str = "string") -> str:
    """`[]string{"a", "b"}`, or `[]string(nil)` for an absent list."""
    if values is None:
        return f"[]{element}(nil)"
    return f"[]{element}{{" + ", ".join(go_quote(str(v)) for v in values) + "}"


def go_string_map(values: dict[str, Any] | None) -> str:
    """`map[string]string{"a":"1", "b":"2"}` (keys sorted, as fmt prints maps)."""
    if values is None:
        return "map[string]string(nil)"
    items = ", ".join(f"{go_quote(str(k))}:{go_quote(str(values[k]))}" for k in sorted(values))
    return "map[string]string{" + items + "}"


def label_selector(selector: dict[str, Any] | None) -> str:
    """A metav1.LabelSelector as `%#v` prints it (the pointer dereferenced, as ErrorBody does)."""
    if selector is None:
        return "null"
    expressions = selector.get("matchExpressions")
    if expressions is None:
        rendered = "[]v1.LabelSelectorRequirement(nil)"
    else:
        rendered = (
            "[]v1.LabelSelectorRequirement{"
            + ", ".join(
                "v1.LabelSelectorRequirement{"
                f"Key:{go_quote(str(e.get('key', '')))}, Operator:{go_quote(str(e.get('operator', '')))}, "
                f"Values:{go_slice(e.get('values'))}}}"
                for e in expressions
            )
            + "}"
        )
    return f"v1.LabelSelector{{MatchLabels:{go_string_map(selector.get('matchLabels'))}, MatchExpressions:{rendered}}}"
