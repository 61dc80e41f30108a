"""Reading a cluster dump object by object with scheduler_core's readers: `kubectl get … -o json`
(a List or objects one after another) through its chunked JSON reader, a YAML stream (List or
documents) through its libyaml object reader — the loader's own, so the app and the CLI accept the
same inputs and name the same lines.

A dump is kept as its bytes and read again from them (an import reads it twice: admission needs the
PriorityClasses first); only one object is parsed at a time, so memory is the dump's bytes plus one
object (plus, for YAML, its text: libyaml reads a whole stream). Every object is read whole — the
app stores what it imports — except the kinds the import leaves out, which the YAML reader skips
unread (they are counted by kind).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from scheduler_core.api.errors import LineOf
from scheduler_core.api.json_reading import json_objects, looks_like_json
from scheduler_core.api.loading import InputError
from scheduler_core.api.yaml_reading import Plan, yaml_objects

__all__ = ["Dump", "Item", "read_dump"]

_WHOLE = Plan()  # every field composed


@dataclass
class Item:
    """One object of a dump, its path in its document (`("items", 3)`) and the lines of its fields."""

    data: Any
    lines: LineOf
    prefix: tuple[int | str, ...]

    @property
    def node(self) -> yaml.Node:
        """A YAML node view of the item's document for the validators that locate by node
        (`locate`, `line_of`): its lines are the reader's, looked up only when an error is located."""
        return _Node.root(self.data, self.lines, self.prefix)

    @property
    def object_node(self) -> yaml.Node:
        """The same, of the object alone (for validators that take its path in the document apart)."""
        return _Node.root(self.data, self.lines, ())


class Dump:
    """The objects of a dump, readable more than once."""

    def __init__(self, data: bytes, source: str, max_bytes: int, stored: Callable[[str], bool]) -> None:
        self.source = source
        self._data = data
        self._max_bytes = max_bytes
        self._stored = stored

    def _plan(self, kind: str) -> Plan | None:
        return _WHOLE if self._stored(kind) else None

    def items(self) -> Iterator[Item]:
        if looks_like_json(self._data[:4096]):
            objects = json_objects(io.BytesIO(self._data), self.source, self._max_bytes)
        else:
            objects = yaml_objects(self._data, self.source, self._plan, self._max_bytes)
        for data, lines, prefix in objects:
            yield Item(data, lines, prefix)


def read_dump(data: bytes, source: str, max_bytes: int, stored: Callable[[str], bool] = lambda kind: True) -> Dump:
    """A JSON or YAML dump (refused above `max_bytes`); `stored(kind)`: whether objects of a kind are
    read whole (the others only as far as their kind). Syntax errors come as its items are read."""
    if len(data) > max_bytes:
        raise InputError(f"{source}: larger than {max_bytes // 2**20} MiB")
    return Dump(data, source, max_bytes, stored)


# --- locating errors by node ----------------------------------------------------------------------------


class _Mark:
    def __init__(self, lines: LineOf, loc: tuple[int | str, ...]) -> None:
        self._lines, self._loc = lines, loc

    @property
    def line(self) -> int:  # 0-based, as yaml.Mark's
        return (self._lines(self._loc) or 1) - 1


class _Node(yaml.Node):
    """A read-only YAML node over parsed data whose marks ask a `LineOf` (lazily, per field)."""

    def __init__(self, data: Any, lines: LineOf, loc: tuple[int | str, ...]) -> None:  # no super(): lazy fields
        self.tag = ""
        self._data, self._lines, self._loc = data, lines, loc
        self.start_mark = self.end_mark = _Mark(lines, loc)

    @staticmethod
    def root(data: Any, lines: LineOf, prefix: tuple[int | str, ...]) -> yaml.Node:
        """The node of the document holding `data` at `prefix` (an object, or a List's item)."""
        node: Any = _node(data, lines, ())
        for part in reversed(prefix):
            node = _node([node] if isinstance(part, int) else {part: node}, lines, ())
            if isinstance(part, int):
                node._index = part
        return node


class _Mapping(_Node, yaml.MappingNode):
    @property
    def value(self) -> list[tuple[yaml.Node, yaml.Node]]:  # type: ignore[override]
        return [
            (_Key(key, self._lines, (*self._loc, key)), _node(child, self._lines, (*self._loc, key)))
            for key, child in self._data.items()
        ]


class _Sequence(_Node, yaml.SequenceNode):
    _index: int | None = None  # a List's item stands alone: its index in the List

    @property
    def value(self) -> list[yaml.Node]:  # type: ignore[override]
        if self._index is not None:
            return [yaml.ScalarNode("", "")] * self._index + list(self._data)
        return [_node(child, self._lines, (*self._loc, k)) for k, child in enumerate(self._data)]


class _Key(_Node, yaml.ScalarNode):
    @property
    def value(self) -> Any:  # type: ignore[override]
        return self._data


def _node(data: Any, lines: LineOf, loc: tuple[int | str, ...]) -> Any:
    if isinstance(data, _Node):
        return data
    if isinstance(data, dict):
        return _Mapping(data, lines, loc)
    if isinstance(data, list):
        return _Sequence(data, lines, loc)
    return _Key(data, lines, loc)
