"""YAML with located errors and bounded cost: libyaml's parser under a strict composer.

Limits are per object (a document, or an item of a `kind: List`): nodes, nesting depth, integer
digits; alias references and their expansion are bounded over the whole stream (real dumps have
none). `yaml_objects` reads a large stream object by object, skipping at the event level the
fields the scheduler never reads; `load_yaml_documents` keeps every document whole.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import yaml

from ..collector import collector_paused
from .errors import InputError, LineOf, format_validation_error_at, path_text
from .limits import (
    MAX_ALIAS_EXPANDED_NODES,
    MAX_ALIAS_REFERENCES,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    MAX_YAML_BYTES,
    MAX_YAML_NODES,
)

__all__ = [
    "Document",
    "format_validation_error",
    "line_of",
    "load_yaml_documents",
    "locate",
    "yaml_objects",
]

MAX_ALIAS_EXPANSIONS = MAX_ALIAS_REFERENCES  # the former name


@dataclass
class Document:
    """One parsed YAML document with the node tree used to locate fields."""

    data: Any
    node: yaml.Node | None


_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
# Syntax errors of texts up to this size are reported with PyYAML's wording (it names the offending
# character), found by parsing again with the pure-Python parser; larger texts get libyaml's.
_PY_MESSAGES_BELOW = 64 * 1024
_TOO_MANY_NODES = f"more than {MAX_YAML_NODES} YAML nodes (values, lists and maps)"
_TOO_DEEP = f"nesting deeper than {MAX_DEPTH} levels"


class _StrictRules(yaml.SafeLoader):
    """SafeLoader that rejects duplicate keys and bounds alias expansion, nesting and size.

    Unquoted timestamps stay strings: Kubernetes objects carry them as strings in JSON, and
    `kubectl` accepts `creationTimestamp: 2024-01-01T00:00:00Z` unquoted.
    """

    yaml_implicit_resolvers: ClassVar[dict[Any, list[tuple[str, Any]]]] = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, stream: str | bytes) -> None:
        super().__init__(stream)
        self._aliases = 0
        self._expanded = 0
        self._nodes = 0  # nodes of the object being composed (reset for each item of a List)
        self._node_limit = MAX_YAML_NODES
        self._sizes: dict[int, int] = {}

    def _size(self, node: yaml.Node) -> int:
        """Nodes in `node`'s subtree once every alias inside it is expanded (memoized)."""
        key = id(node)
        if key in self._sizes:
            return self._sizes[key]
        self._sizes[key] = 1  # a cycle counts once (SafeLoader builds recursive objects lazily)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(self._size(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(self._size(k) + self._size(v) for k, v in node.value)
        self._sizes[key] = total
        return total

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            self._aliases += 1
            if self._aliases > MAX_ALIAS_EXPANSIONS:
                raise yaml.constructor.ConstructorError(
                    None, None, f"too many alias references (limit {MAX_ALIAS_EXPANSIONS})", event.start_mark
                )
            anchored = self.anchors.get(event.anchor)
            if anchored is not None:
                self._expanded += self._size(anchored)
                if self._expanded > MAX_ALIAS_EXPANDED_NODES:
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f"excessive aliasing: aliases expand to more than {MAX_ALIAS_EXPANDED_NODES} nodes",
                        event.start_mark,
                    )
        self._nodes += 1
        if self._nodes > self._node_limit:
            event = self.peek_event()
            raise yaml.constructor.ConstructorError(None, None, _TOO_MANY_NODES, event.start_mark)
        depth = getattr(self, "_depth", 0) + 1
        if depth > MAX_DEPTH:
            event = self.peek_event()
            raise yaml.constructor.ConstructorError(None, None, _TOO_DEEP, event.start_mark)
        self._depth = depth
        try:
            return super().compose_node(parent, index)  # type: ignore[arg-type]
        finally:
            self._depth = depth - 1

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:  # type: ignore[override]
        if sum(ch.isdigit() for ch in str(node.value)) > MAX_INT_DIGITS:
            raise yaml.constructor.ConstructorError(
                None, None, f"integer with more than {MAX_INT_DIGITS} digits", node.start_mark
            )
        return super().construct_yaml_int(node)  # type: ignore[no-any-return]

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *base` merges; explicit keys may override merged ones
            key = self.construct_object(key_node, deep=True)  # type: ignore[no-untyped-call]
            try:
                duplicate = key in seen
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, "mapping key is not a scalar", key_node.start_mark
                ) from None
            if duplicate:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


_StrictRules.add_constructor("tag:yaml.org,2002:int", _StrictRules.construct_yaml_int)


if getattr(yaml, "__with_libyaml__", False):
    from yaml._yaml import CParser

    class _StrictLoader(_StrictRules, CParser):  # type: ignore[misc]
        """The same rules over libyaml's events: the pure-Python scanner costs ~20 µs a node, and
        libyaml's (the parser go-yaml, hence kubectl, is ported from) about a fifth of that.
        The composer and constructor (where the limits live) stay in Python."""

        def __init__(self, stream: str | bytes) -> None:
            CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            self._aliases = 0
            self._expanded = 0
            self._nodes = 0
            self._node_limit = MAX_YAML_NODES
            self._sizes = {}

        # libyaml provides the events; everything above them is Python's (the MRO would otherwise
        # pick the pure-Python Reader/Scanner/Parser methods of SafeLoader first).
        check_event = CParser.check_event
        peek_event = CParser.peek_event
        get_event = CParser.get_event
        dispose = CParser.dispose

    _PyStrictLoader: type[_StrictRules] | None = _StrictRules
    _NODE_EVENTS = (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent, yaml.AliasEvent)

    def _count_nodes(text: str | bytes) -> None:
        """Refuse an object of too many nodes, or nested too deeply, before building any node
        (libyaml's events alone: ~1 µs each); the errors are the composer's own, at the same place.
        An object is a document, or an item of a document's top-level `items` list."""
        parser = CParser(text)
        try:
            count = depth = 0
            root_map = in_items = False
            root_children = 0  # complete nodes directly in the root mapping: keys and values alternate
            last_key: object = None
            while parser.check_event():
                event = parser.get_event()
                if isinstance(event, _NODE_EVENTS):
                    if in_items and depth == 2:
                        count = 0  # a new item
                    count += 1
                    if count > MAX_YAML_NODES:
                        raise yaml.constructor.ConstructorError(None, None, _TOO_MANY_NODES, event.start_mark)
                    if depth + 1 > MAX_DEPTH:
                        raise yaml.constructor.ConstructorError(None, None, _TOO_DEEP, event.start_mark)
                    if depth == 1 and root_map:
                        if root_children % 2 == 0:
                            last_key = getattr(event, "value", None)
                        elif isinstance(event, yaml.SequenceStartEvent) and last_key == "items":
                            in_items = True
                    if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                        depth += 1
                        if depth == 1:
                            root_map = isinstance(event, yaml.MappingStartEvent)
                    elif depth == 1:
                        root_children += 1
                elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                    depth -= 1
                    if depth == 1:
                        root_children += 1
                        if in_items:
                            in_items, count = False, 0
                elif isinstance(event, yaml.DocumentStartEvent):
                    count = depth = root_children = 0
                    root_map = in_items = False
        finally:
            parser.dispose()
else:  # pragma: no cover - PyYAML built without libyaml
    _StrictLoader = _StrictRules  # type: ignore[misc]
    _PyStrictLoader = None

    def _count_nodes(text: str | bytes) -> None:
        pass  # the composer counts


def _parse(text: str, loader_class: type[_StrictRules], counted: bool = False) -> list[Document]:
    documents: list[Document] = []
    loader = loader_class(text)
    if counted:  # `_count_nodes` has bounded every object: the composer need not count the whole stream
        loader._node_limit = 2**62
    with collector_paused():  # nodes and their data hold no cycles (a recursive alias's is collected later)
        try:
            while loader.check_node():
                node = loader.get_node()
                data = loader.construct_document(node)  # type: ignore[no-untyped-call]
                if data is not None:
                    documents.append(Document(data=data, node=node))
        finally:
            loader.dispose()
    return documents


def size_error(source: str, max_bytes: int) -> InputError:
    """`source: larger than 16 MiB` (or GiB)."""
    if max_bytes % 2**30 == 0:
        size = f"{max_bytes // 2**30} GiB"
    elif max_bytes % 2**20 == 0:
        size = f"{max_bytes // 2**20} MiB"
    else:
        size = f"{max_bytes} bytes"
    return InputError(f"{source}: larger than {size}")


def decode_text(text: str | bytes, source: str, max_bytes: int = MAX_YAML_BYTES) -> str:
    """The text of an input of at most `max_bytes`; invalid UTF-8 is located at line and column."""
    if len(text) > max_bytes:
        raise size_error(source, max_bytes)
    if isinstance(text, bytes):
        try:
            return text.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = text.count(b"\n", 0, exc.start) + 1
            column = exc.start - (text.rfind(b"\n", 0, exc.start) + 1) + 1
            raise InputError(f"{source}:{line}:{column}: not valid UTF-8 (byte {exc.start})") from None
    return text


def _yaml_error(exc: Exception, text: str, source: str) -> InputError:
    """PyYAML's error as one located line."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if "maximum nesting depth" in problem:  # libyaml's own bound (1000), met while looking ahead
            problem = _TOO_DEEP
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        return InputError(f"{where}: {problem}")
    if isinstance(exc, yaml.reader.ReaderError):
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        code = ord(exc.character) if isinstance(exc.character, str) else int(exc.character)
        return InputError(f"{source}:{line}:{column}: unacceptable character #x{code:04x}: {exc.reason}")
    if isinstance(exc, RecursionError):
        return InputError(f"{source}: nesting too deep")
    return InputError(f"{source}: {exc}")


def _python_wording(text: str) -> None:
    """Parse a small text again with the pure-Python parser, which names the offending character."""
    if _PyStrictLoader is not None and len(text) <= _PY_MESSAGES_BELOW:
        _parse(text, _PyStrictLoader)


def load_yaml_documents(text: str | bytes, source: str, max_bytes: int = MAX_YAML_BYTES) -> list[Document]:
    """Parse a YAML stream into documents; syntax errors name line and column."""
    text = decode_text(text, source, max_bytes)
    try:
        yaml.reader.Reader(text)  # non-printable characters, with PyYAML's message (a regex: fast)
        try:
            _count_nodes(text)
            return _parse(text, _StrictLoader, counted=_PyStrictLoader is not None)
        except (yaml.scanner.ScannerError, yaml.parser.ParserError):
            _python_wording(text)
            raise
    except (yaml.YAMLError, RecursionError) as exc:
        raise _yaml_error(exc, text, source) from None


def line_of(node: yaml.Node | None, loc: tuple[int | str, ...]) -> int | None:
    """The 1-based line of the deepest YAML node found along `loc`."""
    if node is None:
        return None
    line = node.start_mark.line + 1
    for part in loc:
        child: yaml.Node | None = None
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if getattr(key_node, "value", None) == part:
                    child = value_node
                    line = key_node.start_mark.line + 1
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            child = node.value[part]
            line = child.start_mark.line + 1
        if child is None:
            break
        node = child
    return line


def locate(source: str, node: yaml.Node | None, loc: tuple[int | str, ...]) -> str:
    """`source:line: field.path` for a field of a parsed document (line left out if unknown)."""
    line = line_of(node, loc)
    where = f"{source}:{line}" if line else source
    path = path_text(loc)
    return f"{where}: {path}" if path else where


def format_validation_error(exc: Any, source: str, node: yaml.Node | None, prefix: tuple[int | str, ...] = ()) -> str:
    """One line for the first error: `source:line: field.path: message` (line from the YAML node tree)."""
    return format_validation_error_at(exc, source, lambda loc: line_of(node, loc), prefix)


# --- reading a large stream object by object ----------------------------------------------------

#: What a reader yields for each object: its data, the line of a field (path from the object's
#: root), and the object's path in its document (`("items", 3)` for an item of a List).
RawObject = tuple[Any, LineOf, tuple[int | str, ...]]


@dataclass(frozen=True)
class Plan:
    """Which keys of a mapping are composed: `skip` are consumed unread, and when `keep` is set
    every other key is too; `children` plan the kept values (a plan on a sequence plans each item)."""

    skip: frozenset[str] = frozenset()
    keep: frozenset[str] | None = None
    children: Mapping[str, Plan] | None = None

    def skips(self, key: object) -> bool:
        return key in self.skip or (self.keep is not None and key not in self.keep)


#: The plan for an object of a given kind, or None when the kind is not read at all.
PlanOf = Callable[[str], "Plan | None"]

_SKIP_ALL = Plan(keep=frozenset({"apiVersion", "kind"}))
_SCALAR = yaml.ScalarEvent
_SKIPPED: Any = object()  # a skipped value (removed from its mapping before it is returned)


# What PyYAML's reader counts as a line break (its marks' line numbers), not "\n" alone.
_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")


def _lines(text: str, first: int, stop: int) -> list[str]:
    """Lines first..stop-1 (0-based) of `text`, as far as it has them, its lines broken as YAML breaks
    them."""
    breaks = _LINE_BREAK.finditer(text)
    start = 0
    for _ in range(first):
        found = next(breaks, None)
        if found is None:
            return [""]
        start = found.end()
    lines: list[str] = []
    for _ in range(max(1, stop - first)):
        found = next(breaks, None)
        if found is None:
            lines.append(text[start:])
            break
        lines.append(text[start : found.start()])
        start = found.end()
    return lines


#: Where an object is in its text: 0-based line and column of its start, then of its end.
Span = tuple[int, int, int, int]


def _fragment_lines(text: str | Callable[[], str], span: Span) -> LineOf:
    """Lines of the fields of an object built without nodes: its lines are composed again (only
    when asked), as a document of their own. `text` may be a function giving it (when asked)."""
    start_line, start_column, end_line, end_column = span

    def line(loc: tuple[int | str, ...]) -> int | None:
        first = start_line + 1
        try:
            whole = text if isinstance(text, str) else text()
            lines = _lines(whole, start_line, end_line + (1 if end_column else 0))
            lines[0] = " " * start_column + lines[0][start_column:]
            node = yaml.compose("\n".join(lines), Loader=_StrictLoader)
        except (yaml.YAMLError, RecursionError, IndexError):
            return first
        relative = line_of(node, loc)
        return first + relative - 1 if relative else first

    return line


def _list_items(
    data: Any, items_line: int, end: tuple[int, int], waiting: list[tuple[Any, LineOf, int]], source: str
) -> Iterator[RawObject]:
    """The items of a List that had no kind of their own, once the List's kind is read (`end`: the
    0-based line and column where the List's mapping ends)."""
    kind = data.get("kind") if isinstance(data, dict) else None
    if isinstance(kind, str) and kind and not kind.endswith("List"):
        raise InputError(f"{source}:{items_line}: items: a {kind} has no items (only a List has)")
    if kind is None:  # kubectl writes `kind: List` after the items: a YAML dump cut short still parses
        line = end[0] + (1 if end[1] else 0)
        raise InputError(f"{source}:{line}: kind: Required value (items without `kind: List`: a truncated file?)")
    item_kind = kind[: -len("List")] if isinstance(kind, str) else ""
    for item_data, lines, index in waiting:
        if item_kind:
            item_data["kind"] = item_kind
        yield item_data, lines, ("items", index)


class _ObjectReader:
    """The strict composer, driven object by object over one libyaml parser."""

    def __init__(self, loader: _StrictRules, plan_of: PlanOf, text: str) -> None:
        self.loader = loader
        self.plan_of = plan_of
        self.text = text
        self._end: yaml.Mark | None = None
        self._plain: dict[str, Any] = {}

    # composing with a plan

    def _count(self, event: yaml.Event) -> int:
        loader = self.loader
        loader._nodes += 1
        if loader._nodes > loader._node_limit:
            raise yaml.constructor.ConstructorError(None, None, _TOO_MANY_NODES, event.start_mark)
        depth = getattr(loader, "_depth", 0) + 1
        if depth > MAX_DEPTH:
            raise yaml.constructor.ConstructorError(None, None, _TOO_DEEP, event.start_mark)
        return depth

    def _skip_node(self) -> None:
        """Consume one node's events without building it (an anchored node inside is composed,
        so that a later alias finds it). Its nodes count toward the object's limits."""
        loader = self.loader
        peek, get = loader.peek_event, loader.get_event
        base = depth = loader._depth
        nodes, limit = loader._nodes, loader._node_limit
        while True:
            event = peek()
            cls = event.__class__
            if cls is yaml.MappingEndEvent or cls is yaml.SequenceEndEvent:
                get()
                depth -= 1
            else:
                nodes += 1
                if nodes > limit:
                    raise yaml.constructor.ConstructorError(None, None, _TOO_MANY_NODES, event.start_mark)
                if cls is not yaml.AliasEvent and event.anchor is not None:
                    loader._nodes, loader._depth = nodes, depth
                    loader.compose_node(None, None)
                    nodes = loader._nodes
                elif cls is yaml.MappingStartEvent or cls is yaml.SequenceStartEvent:
                    get()
                    depth += 1
                    if depth > MAX_DEPTH:
                        raise yaml.constructor.ConstructorError(None, None, _TOO_DEEP, event.start_mark)
                else:
                    get()
            if depth == base:
                loader._nodes, loader._depth = nodes, base
                return

    def compose(self, parent: yaml.Node | None, index: object, plan: Plan | None) -> yaml.Node:
        """One node, skipping what `plan` says."""
        loader = self.loader
        event = loader.peek_event()
        if plan is None or getattr(event, "anchor", None) is not None:
            return loader.compose_node(parent, index)  # type: ignore[no-any-return]
        if isinstance(event, yaml.SequenceStartEvent):
            depth = self._count(event)
            loader.get_event()
            tag = event.tag if event.tag not in (None, "!") else loader.resolve(yaml.SequenceNode, None, event.implicit)
            seq = yaml.SequenceNode(tag, [], event.start_mark, None, flow_style=event.flow_style)
            loader._depth = depth
            try:
                while not loader.check_event(yaml.SequenceEndEvent):
                    seq.value.append(self.compose(seq, len(seq.value), plan))
                seq.end_mark = loader.get_event().end_mark
            finally:
                loader._depth = depth - 1
            return seq
        if not isinstance(event, yaml.MappingStartEvent):
            return loader.compose_node(parent, index)  # type: ignore[no-any-return]
        depth = self._count(event)
        loader.get_event()
        tag = event.tag if event.tag not in (None, "!") else loader.resolve(yaml.MappingNode, None, event.implicit)
        node = yaml.MappingNode(tag, [], event.start_mark, None, flow_style=event.flow_style)
        loader._depth = depth
        skipped: set[Any] = set()
        try:
            while not loader.check_event(yaml.MappingEndEvent):
                key = loader.compose_node(node, None)
                self._compose_entry(node, key, plan, skipped)
            node.end_mark = loader.get_event().end_mark
        finally:
            loader._depth = depth - 1
        return node

    def _compose_entry(self, node: yaml.MappingNode, key: yaml.Node, plan: Plan | None, skipped: set[Any]) -> None:
        """The value of `key` in `node`, composed as `plan` says, or consumed unread when it skips
        the key (a key skipped twice is a duplicate, refused as `build` refuses it)."""
        name = key.value if isinstance(key, yaml.ScalarNode) else None
        if plan is not None and plan.skips(name):
            if name is None:
                raise yaml.constructor.ConstructorError(None, None, "mapping key is not a scalar", key.start_mark)
            value = self.loader.construct_object(key, deep=True)  # type: ignore[no-untyped-call]
            if value in skipped:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {value!r}", key.start_mark)
            skipped.add(value)
            self._skip_node()
            return
        child = plan.children.get(name) if plan is not None and plan.children and name else None
        node.value.append((key, self.compose(node, key, child)))

    # building values straight from events (the composer's nodes are made only where needed)

    def build(self, plan: Plan | None, root: bool = False) -> Any:
        """The value of the next node, built from its events without composing nodes, skipping
        what `plan` says (`root`: an object, whose plan follows its kind). Anchored, aliased and
        explicitly tagged nodes go through the composer and constructor, as in `load_yaml_documents`."""
        loader = self.loader
        event = loader.peek_event()
        cls = event.__class__
        if cls is _SCALAR and event.anchor is None and event.tag is None:  # most nodes: a plain or quoted scalar
            loader._nodes += 1
            if loader._nodes > loader._node_limit or loader._depth >= MAX_DEPTH:
                self._count(event)  # raises, with the composer's message
            loader.get_event()
            self._end = event.end_mark
            if not event.implicit[0]:
                return event.value
            known = self._plain.get(event.value, _SKIPPED)
            return self._scalar(event) if known is _SKIPPED else known
        if cls is yaml.AliasEvent or event.anchor is not None or event.tag not in (None, "!"):
            node = loader.compose_node(None, None)
            self._end = node.end_mark
            return loader.construct_object(node, deep=True)  # type: ignore[no-untyped-call]
        depth = self._count(event)
        loader.get_event()
        if cls is yaml.ScalarEvent:
            self._end = event.end_mark
            return self._scalar(event)
        loader._depth = depth
        try:
            if cls is yaml.SequenceStartEvent:
                items = []
                while loader.peek_event().__class__ is not yaml.SequenceEndEvent:
                    items.append(self.build(plan))
                self._end = loader.get_event().end_mark
                return items
            return self._mapping(plan, root)
        finally:
            loader._depth = depth - 1

    def _mapping(self, plan: Plan | None, root: bool) -> dict[Any, Any]:
        loader = self.loader
        result: dict[Any, Any] = {}
        merges: list[Any] = []
        while True:
            event = loader.peek_event()
            if event.__class__ is yaml.MappingEndEvent:
                break
            if event.__class__ is not yaml.ScalarEvent or event.anchor is not None:
                key = self.build(None)
                if isinstance(key, (dict, list)):
                    raise yaml.constructor.ConstructorError(None, None, "mapping key is not a scalar", event.start_mark)
            elif event.style == "" and event.value == "<<" and event.tag is None:
                self._count(event)
                loader.get_event()
                merges.append((self.build(None), event))
                continue
            else:
                key = self.build(None)
            if key in result:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", event.start_mark)
            if root and key != "kind" and "kind" in result and plan is None:
                kind = result["kind"]
                plan = (self.plan_of(kind) or _SKIP_ALL) if isinstance(kind, str) else None
            if plan is not None and (key in plan.skip or (plan.keep is not None and key not in plan.keep)):
                self._skip_node()
                result[key] = _SKIPPED
                continue
            child = plan.children.get(key) if plan is not None and plan.children and isinstance(key, str) else None
            result[key] = self.build(child)
        self._end = loader.get_event().end_mark
        if _SKIPPED in result.values():
            result = {k: v for k, v in result.items() if v is not _SKIPPED}
        # Explicit keys win; among merged mappings the last has the key, as PyYAML's flatten_mapping
        # (hence `load_yaml_documents` and `load_pod`) gives it.
        for value, event in reversed(merges):
            for merged in reversed(value) if isinstance(value, list) else [value]:
                if not isinstance(merged, dict):
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", None, "expected a mapping for merging", event.start_mark
                    )
                for key, item in merged.items():
                    result.setdefault(key, item)
        return result

    def _scalar(self, event: yaml.ScalarEvent) -> Any:
        value = event.value
        if not event.implicit[0]:  # quoted: a string
            return value
        known = self._plain.get(value, _SKIPPED)
        if known is not _SKIPPED:
            return known
        loader = self.loader
        tag = loader.resolve(yaml.ScalarNode, value, (True, False))
        if tag == "tag:yaml.org,2002:str":
            result: Any = value
        else:
            result = loader.construct_object(yaml.ScalarNode(tag, value, event.start_mark, event.end_mark))  # type: ignore[no-untyped-call]
            loader.constructed_objects.clear()
        if len(value) <= 64 and len(self._plain) < 100_000:
            self._plain[value] = result  # plain scalars repeat: resolve each spelling once
        return result

    def _fragment_lines(self, start: yaml.Mark, end: yaml.Mark) -> LineOf:
        return _fragment_lines(self.text, (start.line, start.column, end.line, end.column))

    def _object_plan(self, node: yaml.MappingNode) -> Plan | None:
        """The plan of an object once its kind is read (None before: everything is composed)."""
        for key, value in node.value:
            if getattr(key, "value", None) == "kind" and isinstance(value, yaml.ScalarNode):
                return self.plan_of(value.value) or _SKIP_ALL
        return None

    # documents and lists

    def objects(self, source: str) -> Iterator[RawObject]:
        loader = self.loader
        loader.get_event()  # StreamStart
        while not loader.check_event(yaml.StreamEndEvent):
            loader.get_event()  # DocumentStart
            loader._nodes = 0
            event = loader.peek_event()
            if isinstance(event, yaml.MappingStartEvent) and event.anchor is None:
                yield from self._document(source)
            else:
                node = loader.compose_node(None, None)
                data = loader.construct_document(node)  # type: ignore[no-untyped-call]
                if data is not None:
                    yield data, _locator(node), ()
            loader.get_event()  # DocumentEnd
            loader.anchors = {}

    def _document(self, source: str) -> Iterator[RawObject]:
        """A document whose root is a mapping: an object, or a List whose items are read one by one
        (items without a kind, as typed lists such as NodeList print them, wait for the list's kind)."""
        loader = self.loader
        start = loader.get_event()
        loader._nodes = 1
        loader._depth = 1
        tag = start.tag if start.tag not in (None, "!") else loader.resolve(yaml.MappingNode, None, start.implicit)
        header = yaml.MappingNode(tag, [], start.start_mark, None, flow_style=start.flow_style)
        items: yaml.ScalarNode | None = None
        waiting: list[tuple[Any, LineOf, int]] = []
        skipped: set[Any] = set()
        try:
            while not loader.check_event(yaml.MappingEndEvent):
                key = loader.compose_node(header, None)
                event = loader.peek_event()
                if (
                    items is None
                    and isinstance(key, yaml.ScalarNode)
                    and key.value == "items"
                    and isinstance(event, yaml.SequenceStartEvent)
                    and event.anchor is None
                ):
                    items = key
                    loader.get_event()
                    loader._depth = 2
                    index = 0
                    while not loader.check_event(yaml.SequenceEndEvent):
                        loader._nodes = 0
                        start = loader.peek_event().start_mark
                        data = self.build(None, root=True)
                        lines = self._fragment_lines(start, self._end)
                        if isinstance(data, dict) and "kind" not in data:
                            waiting.append((data, lines, index))
                        else:
                            yield data, lines, ("items", index)
                        index += 1
                    loader.get_event()
                    loader._depth = 1
                    loader._nodes = 0
                    continue
                # before any items the root is an object: planned by its kind, as `build` plans an item
                # (`items` that are not a plain list are kept whole: the List's reading refuses them)
                planned = items is None and not (isinstance(key, yaml.ScalarNode) and key.value == "items")
                self._compose_entry(header, key, self._object_plan(header) if planned else None, skipped)
            header.end_mark = loader.get_event().end_mark
        finally:
            loader._depth = 0
        data = loader.construct_document(header)  # type: ignore[no-untyped-call]
        if items is None:
            yield data, _locator(header), ()
            return
        end = header.end_mark
        yield from _list_items(data, items.start_mark.line + 1, (end.line, end.column), waiting, source)


def _locator(node: yaml.Node) -> LineOf:
    """Lines of the fields of an object (paths from the object's root)."""
    return lambda loc: line_of(node, loc)


def _exact_objects(text: str, source: str, plan_of: PlanOf) -> Iterator[RawObject]:
    """`yaml_objects` by the exact reader (PyYAML's composer and constructor over libyaml's events)."""
    try:
        yaml.reader.Reader(text)  # non-printable characters, with PyYAML's message (a regex: fast)
        loader = _StrictLoader(text)
        try:
            yield from _ObjectReader(loader, plan_of, text).objects(source)
        except (yaml.scanner.ScannerError, yaml.parser.ParserError):
            _python_wording(text)
            raise
        finally:
            loader.dispose()
    except (yaml.YAMLError, RecursionError) as exc:
        raise _yaml_error(exc, text, source) from None


def _resolved_first() -> str | None:
    """The characters some implicit resolver of the strict rules is keyed by (a plain scalar
    starting otherwise is a string: `Resolver.resolve` looks no further), or None when a resolver
    applies whatever the first character, or is keyed by a character that is not ASCII."""
    firsts = _StrictRules.yaml_implicit_resolvers
    if not all(isinstance(first, str) and len(first) <= 1 and first.isascii() for first in firsts):
        return None
    return "".join(firsts)


def _known_rules() -> bool:
    """Whether the strict rules' resolvers are PyYAML's YAML 1.1 ones less the timestamp, whose
    patterns the fast path's shortcuts for plain scalars starting with a letter or digit rely on."""
    expected = {
        first: [(tag, regexp.pattern) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
        for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
    }
    actual = {
        first: [(tag, regexp.pattern) for tag, regexp in resolvers]
        for first, resolvers in _StrictRules.yaml_implicit_resolvers.items()
    }
    return yaml.__version__.startswith("6.") and actual == {k: v for k, v in expected.items() if v}


def _plain_scalar_typer(cache: dict[str, Any]) -> Callable[[str], Any]:
    """The value of a plain scalar by the strict rules' resolver and constructor (YAML 1.1, as
    `_ObjectReader._scalar`), remembered in `cache` for the spellings that repeat."""
    loader = _StrictLoader("")

    def typed(value: str) -> Any:
        tag = loader.resolve(yaml.ScalarNode, value, (True, False))
        if tag == "tag:yaml.org,2002:str":
            result: Any = value
        else:
            node = yaml.ScalarNode(tag, value, None, None)
            result = loader.construct_object(node)  # type: ignore[no-untyped-call]
            loader.constructed_objects.clear()
        if len(value) <= 64 and len(cache) < 100_000:
            cache[value] = result
        return result

    return typed


def _fast_objects(
    text: str | Callable[[], str], source: str, plan_of: PlanOf, utf8: bytes | None = None
) -> Iterator[RawObject]:
    """`yaml_objects` by the C fast path; raises `_yaml_fast.Fallback` on anything it does not read
    (after yielding, in the same order, the objects the exact reader yields first). `utf8`: the
    text's UTF-8 bytes (then `text` may be a function giving the text, for error lines only)."""
    assert _yaml_fast is not None
    if utf8 is None:
        assert isinstance(text, str)
        utf8 = text.encode("utf-8")
    cache: dict[str, Any] = {}
    reader = _yaml_fast.Reader(
        utf8,
        plan_of,
        _SKIP_ALL,
        _plain_scalar_typer(cache),
        cache,
        _RESOLVED_FIRST,
        _KNOWN_RULES,
        MAX_YAML_NODES - 8,  # near a limit, the exact reader counts (and names the place)
        MAX_DEPTH - 3,
    )
    waiting: list[tuple[Any, LineOf, int]] = []
    while (entry := reader.next()) is not None:
        what, data, span, number = entry
        lines = _fragment_lines(text, span)
        if what == "item":
            if isinstance(data, dict) and "kind" not in data:
                waiting.append((data, lines, number))
            else:
                yield data, lines, ("items", number)
        elif not number:  # a document that is one object
            yield data, lines, ()
        else:
            yield from _list_items(data, number, (span[2], span[3]), waiting, source)
            waiting = []


def yaml_objects(
    text: str | bytes, source: str, plan_of: PlanOf, max_bytes: int = MAX_YAML_BYTES
) -> Iterator[RawObject]:
    """Every object of a YAML stream — a document, or an item of a `kind: List` — one at a time,
    composed without the fields `plan_of` skips. Errors are `InputError`s located at line and column.

    The C fast path reads ordinary dumps; on anything else (an anchor, a tag, a duplicate key, a
    syntax error…) the exact reader reads the stream again, past the objects already given."""
    utf8 = text if isinstance(text, bytes) else None
    if utf8 is not None and len(utf8) <= max_bytes and utf8.isascii():  # valid UTF-8: decoded if ever needed
        decoded: Callable[[], str] = functools.cache(lambda: utf8.decode("ascii"))
    else:
        whole = decode_text(text, source, max_bytes)
        decoded = lambda: whole  # noqa: E731
    given = 0
    if _yaml_fast is not None and _RESOLVED_FIRST is not None and _fast_enabled():
        try:  # libyaml refuses the characters PyYAML's Reader does: the exact reader names them
            for obj in _fast_objects(decoded if utf8 is not None else decoded(), source, plan_of, utf8):
                yield obj
                given += 1
            return
        except (_yaml_fast.Fallback, UnicodeEncodeError):
            pass
    exact = _exact_objects(decoded(), source, plan_of)
    for _ in range(given):
        next(exact)
    yield from exact


def _fast_enabled() -> bool:
    """The fast path is used unless `CLUSTERVIZ_YAML_EXACT` is set (to compare the two)."""
    return not os.environ.get("CLUSTERVIZ_YAML_EXACT")


try:
    from . import _yaml_fast  # type: ignore[attr-defined]
except ImportError:  # not built (`python -m scheduler_core.api.build_yaml_fast`): the exact reader reads all
    _yaml_fast = None

_RESOLVED_FIRST = _resolved_first()
_KNOWN_RULES = _known_rules()
