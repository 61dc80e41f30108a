"""Located input errors: `InputError` and the API server's wording for pydantic validation errors."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from .text import quote

__all__ = ["InputError", "LineOf", "format_validation_error_at", "path_text"]

#: The 1-based line of a field path inside the object being read (None when unknown).
LineOf = Callable[[tuple[int | str, ...]], int | None]


class InputError(ValueError):
    """Bad input: the message is one clear line naming where the problem is."""


def path_text(loc: tuple[int | str, ...]) -> str:
    """`spec.containers[0].name`; a key with spaces or unprintable characters in quotes and brackets
    (`spec.nodeSelector["a\\nb"]`), so that a message stays on its line."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _plain(text := str(part)):
            out += ("." if out else "") + text
        else:
            out += f"[{json.dumps(text)}]"
    return out


def _plain(key: str) -> bool:
    return key.isprintable() and " " not in key


def _message(error: Any) -> str:
    kind = error["type"]
    if kind == "missing":
        return "Required value"
    if kind == "literal_error":
        # field.NotSupported: `Unsupported value: "Foo": supported values: "In", "NotIn"`
        expected = str(error.get("ctx", {}).get("expected", ""))
        values = ", ".join(f'"{v}"' for v in re.findall(r"'([^']*)'", expected)) or expected
        return f"Unsupported value: {_quote(error.get('input'))}: supported values: {values}"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        bound = next(iter(error.get("ctx", {}).values()), "")
        relation = {
            "greater_than_equal": "greater than or equal to",
            "less_than_equal": "less than or equal to",
            "greater_than": "greater than",
            "less_than": "less than",
        }[kind]
        return f"Invalid value: {_quote(error.get('input'))}: must be {relation} {bound}"
    if kind in ("int_parsing", "int_type", "int_from_float", "finite_number"):
        return f"Invalid value: {_quote(error.get('input'))}: must be an integer"
    if kind in ("string_type",):
        return f"Invalid value: {_quote(error.get('input'))}: must be a string"
    if kind in ("bool_parsing", "bool_type"):
        return f"Invalid value: {_quote(error.get('input'))}: must be true or false"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"Invalid value: {_quote(error.get('input'))}: must be an object"
    if kind == "list_type":
        return f"Invalid value: {_quote(error.get('input'))}: must be a list"
    message = str(error["msg"])
    return message.removeprefix("Value error, ")


def _quote(value: object) -> str:
    return quote(value)


def format_validation_error_at(
    exc: ValidationError, source: str, line_of: LineOf, prefix: tuple[int | str, ...] = ()
) -> str:
    """One line for the first error: `source:line: field.path: message`."""
    error = exc.errors()[0]
    loc = prefix + tuple(part for part in error["loc"] if part != "__root__")
    message = _message(error)
    if "[key]" in loc:  # a mapping key of the wrong type: report it on the mapping
        cut = loc.index("[key]")
        loc, key = loc[: cut - 1], loc[cut - 1]
        message = f"Invalid value: {_quote(key)}: keys must be strings"
    path = path_text(loc)
    # Field checks name a map key first ("[cpu]: Invalid value: ..."), model-level checks their
    # own path ("spec.containers: Required value").
    if message.startswith("[") and "]: " in message:
        head, message = message.split(": ", 1)
        path += head if _plain(head) else f"[{json.dumps(head[1:-1])}]"
        loc = (*loc, head[1:-1])
    elif message.startswith(".") and ": " in message:  # a map key as a path segment: ".cpu: Invalid value: ..."
        head, message = message.split(": ", 1)
        loc = (*loc, head[1:])
        path = path_text(loc)
    elif ": " in message and message.split(": ", 1)[0].count(".") and not path.endswith(message.split(":")[0]):
        head, message = message.split(": ", 1)
        path = f"{path}.{head}" if path else head
        loc = loc + tuple(head.split("."))
    line = line_of(loc)
    where = f"{source}:{line}" if line else source
    return f"{where}: {path}: {message}" if path else f"{where}: {message}"
