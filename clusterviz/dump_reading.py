"""Reading a cluster dump object by object: `kubectl get … -o json` (a List, an array or one object)
without holding every parsed object at once, or a YAML stream (List or documents).

A JSON List's items are decoded one at a time from the text (the standard library's C scanner on
each item), so a big dump costs its text plus one object, not its whole object tree; the items can
be read again (an import reads them twice: admission needs the PriorityClasses first).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from scheduler_core.api.loading import InputError, load_yaml_documents, locate

__all__ = ["Dump", "Item", "read_dump"]

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass
class Item:
    """One object of a dump and what locates its errors (a YAML node and path, or just the path)."""

    data: Any
    node: yaml.Node | None
    prefix: tuple[int | str, ...]


class Dump:
    """The objects of a dump, readable more than once."""

    def __init__(self, source: str, text: str | None = None, items: list[Item] | None = None) -> None:
        self.source = source
        self._text = text
        self._items = items

    def items(self) -> Iterator[Item]:
        if self._items is not None:
            return iter(self._items)
        assert self._text is not None
        return _JsonItems(self._text, self.source).items()


def read_dump(data: bytes, source: str, max_bytes: int) -> Dump:
    """A JSON or YAML dump; syntax errors name line and column (JSON's: when its items are read)."""
    head = data[:4096].lstrip()
    if head[:1] in (b"{", b"["):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise InputError(f"{source}:{line}: not valid UTF-8 (byte {exc.start})") from None
        return Dump(source, text=text)
    items: list[Item] = []
    for document in load_yaml_documents(data, source, max_bytes):
        items.extend(_list_items(document.data, document.node, source))
    return Dump(source, items=items)


def _list_items(data: Any, node: yaml.Node | None, source: str) -> list[Item]:
    """A `kind: List` (or `PodList`, …) → its items; any other document is one object."""
    if isinstance(data, dict) and str(data.get("kind", "")).endswith("List") and "items" in data:
        raw = data.get("items") or []
        if not isinstance(raw, list):
            raise InputError(f"{locate(source, node, ('items',))}: must be a list")
        item_kind = str(data["kind"])[: -len("List")]
        for item in raw:
            if item_kind and isinstance(item, dict) and "kind" not in item:
                item["kind"] = item_kind  # typed lists (PodList) leave out their items' kind
        return [Item(item, node, ("items", k)) for k, item in enumerate(raw)]
    return [Item(data, node, ())]


class _JsonItems:
    """Walks a JSON text: a top-level array's elements, a top-level object's `items` one by one."""

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source

    def _error(self, position: int, message: str) -> InputError:
        line = self.text.count("\n", 0, position) + 1
        column = position - (self.text.rfind("\n", 0, position) + 1) + 1
        return InputError(f"{self.source}:{line}:{column}: invalid JSON: {message}")

    def _space(self, i: int) -> int:
        match = _SPACE.match(self.text, i)
        assert match is not None
        return match.end()

    def _value(self, i: int) -> tuple[Any, int]:
        try:
            return _DECODER.raw_decode(self.text, i)
        except json.JSONDecodeError as exc:
            raise self._error(exc.pos, exc.msg) from None
        except RecursionError:
            raise self._error(i, "nesting too deep") from None

    def _expect(self, i: int, char: str, what: str) -> int:
        if not self.text.startswith(char, i):
            raise self._error(i, f"Expecting {what}")
        return self._space(i + 1)

    def _array(self, i: int, prefix: tuple[int | str, ...], kind: str) -> Iterator[Item | int]:
        """The elements of the array at `i` as Items, then the index after it."""
        i = self._space(i + 1)
        index = 0
        if self.text.startswith("]", i):
            yield i + 1
            return
        while True:
            obj, i = self._value(i)
            if kind and isinstance(obj, dict) and "kind" not in obj:
                obj["kind"] = kind
            yield Item(obj, None, (*prefix, index))
            index += 1
            i = self._space(i)
            if self.text.startswith(",", i):
                i = self._space(i + 1)
            elif self.text.startswith("]", i):
                yield i + 1
                return
            else:
                raise self._error(i, "Expecting ',' delimiter")

    def items(self) -> Iterator[Item]:
        text = self.text
        i = self._space(0)
        if text.startswith("[", i):
            end = 0
            for part in self._array(i, (), ""):
                if isinstance(part, Item):
                    yield part
                else:
                    end = part
            self._end(end)
            return
        # An object: a List whose items are read one by one, or a single object.
        i = self._expect(i, "{", "'{'")
        header: dict[str, Any] = {}
        has_items = False
        if not text.startswith("}", i):
            while True:
                if not text.startswith('"', i):
                    raise self._error(i, "Expecting property name enclosed in double quotes")
                key, i = self._value(i)
                i = self._expect(self._space(i), ":", "':' delimiter")
                kind = str(header.get("kind", ""))
                if key == "items" and text.startswith("[", i) and (not kind or kind.endswith("List")):
                    has_items = True
                    for part in self._array(i, ("items",), kind[: -len("List")] if kind else ""):
                        if isinstance(part, Item):
                            yield part
                        else:
                            i = part
                else:
                    header[key], i = self._value(i)
                i = self._space(i)
                if text.startswith(",", i):
                    i = self._space(i + 1)
                    continue
                break
        i = self._expect(i, "}", "',' delimiter")
        self._end(i)
        if not has_items:
            yield Item(header, None, ())

    def _end(self, i: int) -> None:
        i = self._space(i)
        if i != len(self.text):
            raise self._error(i, "Extra data")
