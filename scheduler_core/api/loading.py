"""Reading Kubernetes objects from YAML with located errors.

Every failure is an `InputError` whose message names the source, the line (and column for syntax
errors) and, for invalid fields, the field path — `pod.yaml:12: spec.containers[0].resources.requests.cpu:
"1x" is not a valid quantity`. Nothing here raises anything else for bad input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

import yaml
from pydantic import BaseModel, ValidationError

from .limits import (
    MAX_ALIAS_EXPANDED_NODES,
    MAX_ALIAS_REFERENCES,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    MAX_YAML_BYTES,
    MAX_YAML_NODES,
)
from .objects import Namespace, Node, Pod, PriorityClass, RuntimeClass, Workload
from .policy import PodDisruptionBudget
from .text import quote

__all__ = [
    "MAX_ALIAS_EXPANDED_NODES",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "MAX_YAML_BYTES",
    "MAX_YAML_NODES",
    "ClusterObjects",
    "Document",
    "InputError",
    "admit_pod",
    "format_validation_error",
    "load_cluster",
    "load_pod",
    "load_yaml_documents",
    "locate",
    "parse_object",
]

MAX_ALIAS_EXPANSIONS = MAX_ALIAS_REFERENCES  # the former name

KINDS: dict[str, type[BaseModel]] = {
    "Node": Node,
    "Pod": Pod,
    "Namespace": Namespace,
    "PriorityClass": PriorityClass,
    "RuntimeClass": RuntimeClass,
    "Service": Workload,
    "ReplicaSet": Workload,
    "StatefulSet": Workload,
    "ReplicationController": Workload,
    "Deployment": Workload,
    # preemption: budgets; workload kinds seen through their pods (owners, grouping)
    "PodDisruptionBudget": PodDisruptionBudget,
    "DaemonSet": Workload,
    "Job": Workload,
}


class InputError(ValueError):
    """Bad input: the message is one clear line naming where the problem is."""


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

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._aliases = 0
        self._expanded = 0
        self._nodes = 0
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
        if self._nodes > MAX_YAML_NODES:
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

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            self._aliases = 0
            self._expanded = 0
            self._nodes = 0
            self._sizes = {}

        # libyaml provides the events; everything above them is Python's (the MRO would otherwise
        # pick the pure-Python Reader/Scanner/Parser methods of SafeLoader first).
        check_event = CParser.check_event
        peek_event = CParser.peek_event
        get_event = CParser.get_event
        dispose = CParser.dispose

    _PyStrictLoader: type[_StrictRules] | None = _StrictRules
    _NODE_EVENTS = (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent, yaml.AliasEvent)

    def _count_nodes(text: str) -> None:
        """Refuse a stream of too many nodes, or nested too deeply, before building any node (libyaml's
        events alone: ~1 µs each); the errors are the composer's own, at the same place."""
        parser = CParser(text)
        try:
            count = depth = 0
            while parser.check_event():
                event = parser.get_event()
                if isinstance(event, _NODE_EVENTS):
                    count += 1
                    if count > MAX_YAML_NODES:
                        raise yaml.constructor.ConstructorError(None, None, _TOO_MANY_NODES, event.start_mark)
                    if depth + 1 > MAX_DEPTH:
                        raise yaml.constructor.ConstructorError(None, None, _TOO_DEEP, event.start_mark)
                    if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                        depth += 1
                elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                    depth -= 1
        finally:
            parser.dispose()
else:  # pragma: no cover - PyYAML built without libyaml
    _StrictLoader = _StrictRules  # type: ignore[misc]
    _PyStrictLoader = None

    def _count_nodes(text: str) -> None:
        pass  # the composer counts


def _parse(text: str, loader_class: type[_StrictRules]) -> list[Document]:
    documents: list[Document] = []
    loader = loader_class(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            data = loader.construct_document(node)  # type: ignore[no-untyped-call]
            if data is not None:
                documents.append(Document(data=data, node=node))
    finally:
        loader.dispose()
    return documents


def load_yaml_documents(text: str | bytes, source: str) -> list[Document]:
    """Parse a YAML stream into documents; syntax errors name line and column."""
    if isinstance(text, bytes):
        if len(text) > MAX_YAML_BYTES:
            raise InputError(f"{source}: larger than {MAX_YAML_BYTES // (1024 * 1024)} MiB")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = text.count(b"\n", 0, exc.start) + 1
            column = exc.start - (text.rfind(b"\n", 0, exc.start) + 1) + 1
            raise InputError(f"{source}:{line}:{column}: not valid UTF-8 (byte {exc.start})") from None
    if len(text) > MAX_YAML_BYTES:
        raise InputError(f"{source}: larger than {MAX_YAML_BYTES // (1024 * 1024)} MiB")
    try:
        yaml.reader.Reader(text)  # non-printable characters, with PyYAML's message (a regex: fast)
        try:
            _count_nodes(text)
            return _parse(text, _StrictLoader)
        except (yaml.scanner.ScannerError, yaml.parser.ParserError):
            if _PyStrictLoader is None or len(text) > _PY_MESSAGES_BELOW:
                raise
            return _parse(text, _PyStrictLoader)  # raises again, in PyYAML's words
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if "maximum nesting depth" in problem:  # libyaml's own bound (1000), met while looking ahead
            problem = _TOO_DEEP
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise InputError(f"{where}: {problem}") from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        code = ord(exc.character) if isinstance(exc.character, str) else int(exc.character)
        raise InputError(f"{source}:{line}:{column}: unacceptable character #x{code:04x}: {exc.reason}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{source}: {exc}") from None
    except RecursionError:
        raise InputError(f"{source}: nesting too deep") from None


def _path_text(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _line_of(node: yaml.Node | None, loc: tuple[int | str, ...]) -> int | None:
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
    line = _line_of(node, loc)
    where = f"{source}:{line}" if line else source
    path = _path_text(loc)
    return f"{where}: {path}" if path else where


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


def format_validation_error(
    exc: ValidationError, source: str, node: yaml.Node | None, prefix: tuple[int | str, ...] = ()
) -> str:
    """One line for the first error: `source:line: field.path: message`."""
    error = exc.errors()[0]
    loc = prefix + tuple(part for part in error["loc"] if part != "__root__")
    message = _message(error)
    if "[key]" in loc:  # a mapping key of the wrong type: report it on the mapping
        cut = loc.index("[key]")
        loc, key = loc[: cut - 1], loc[cut - 1]
        message = f"Invalid value: {_quote(key)}: keys must be strings"
    path = _path_text(loc)
    # Field checks name a map key first ("[cpu]: Invalid value: ..."), model-level checks their
    # own path ("spec.containers: Required value").
    if message.startswith("[") and "]: " in message:
        head, message = message.split(": ", 1)
        path += head
        loc = (*loc, head[1:-1])
    elif message.startswith(".") and ": " in message:  # a map key as a path segment: ".cpu: Invalid value: ..."
        head, message = message.split(": ", 1)
        path += head
        loc = (*loc, head[1:])
    elif ": " in message and message.split(": ", 1)[0].count(".") and not path.endswith(message.split(":")[0]):
        head, message = message.split(": ", 1)
        path = f"{path}.{head}" if path else head
        loc = loc + tuple(head.split("."))
    line = _line_of(node, loc)
    where = f"{source}:{line}" if line else source
    return f"{where}: {path}: {message}" if path else f"{where}: {message}"


def parse_object(
    data: Any,
    source: str,
    node: yaml.Node | None = None,
    kinds: tuple[str, ...] = tuple(KINDS),
    prefix: tuple[int | str, ...] = (),
) -> BaseModel:
    """Validate one object of an accepted kind."""
    if not isinstance(data, dict):
        raise InputError(f"{source}: expected a Kubernetes object (a mapping), got {type(data).__name__}")
    kind = data.get("kind")
    if kind not in kinds:
        where = _line_of(node, (*prefix, "kind"))
        location = f"{source}:{where}" if where else source
        accepted = ", ".join(kinds)
        shown = _path_text((*prefix, "kind"))
        raise InputError(f"{location}: {shown}: unsupported kind {_quote(kind)} (expected {accepted})")
    try:
        return KINDS[kind].model_validate(data)
    except ValidationError as exc:
        raise InputError(format_validation_error(exc, source, node, prefix)) from None
    except RecursionError:
        raise InputError(f"{source}: nesting too deep") from None


@dataclass
class ClusterObjects:
    """Everything a scheduling decision reads, as loaded from a snapshot."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    namespaces: list[Namespace] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    runtime_classes: list[RuntimeClass] = field(default_factory=list)
    workloads: list[Workload] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)

    def add(self, obj: BaseModel) -> None:
        bucket = {
            Node: self.nodes,
            Pod: self.pods,
            Namespace: self.namespaces,
            PriorityClass: self.priority_classes,
            RuntimeClass: self.runtime_classes,
            Workload: self.workloads,
            PodDisruptionBudget: self.pdbs,
        }[type(obj)]
        bucket.append(obj)  # type: ignore[arg-type]


def load_cluster(text: str | bytes | list[Document], source: str) -> ClusterObjects:
    """A `kind: List` (or NodeList/PodList) or a multi-document stream of cluster objects (given as
    text, or as the documents `load_yaml_documents` read from it)."""
    cluster = ClusterObjects()
    where: dict[int, tuple[yaml.Node | None, tuple[int | str, ...]]] = {}
    documents = text if isinstance(text, list) else load_yaml_documents(text, source)
    for document in documents:
        data = document.data
        if isinstance(data, dict) and str(data.get("kind", "")).endswith("List"):
            items = data.get("items") or []
            if not isinstance(items, list):
                raise InputError(f"{source}: items: must be a list")
            item_kind = str(data["kind"])[: -len("List")]
            for index, item in enumerate(items):
                if item_kind and isinstance(item, dict) and "kind" not in item:
                    item = {**item, "kind": item_kind}  # typed lists from the API omit the items' kind
                obj = parse_object(item, source, document.node, prefix=("items", index))
                cluster.add(obj)
                where[id(obj)] = (document.node, ("items", index))
        else:
            obj = parse_object(data, source, document.node)
            cluster.add(obj)
            where[id(obj)] = (document.node, ())
    names: set[str] = set()
    for node in cluster.nodes:
        if node.name in names:
            raise InputError(f"{source}: duplicate node {node.name!r}")
        names.add(node.name)
    classes = {pc.metadata.name: pc for pc in cluster.priority_classes}
    runtimes = {rc.metadata.name: rc for rc in cluster.runtime_classes}
    for pod in cluster.pods:
        node, prefix = where.get(id(pod), (None, ()))
        admit_pod(pod, classes, runtimes, source, node, prefix)
    return cluster


def load_pod(
    text: str | bytes,
    source: str,
    priority_classes: dict[str, PriorityClass] | None = None,
    runtime_classes: dict[str, RuntimeClass] | None = None,
) -> Pod:
    """Exactly one Pod."""
    documents = load_yaml_documents(text, source)
    if len(documents) != 1:
        raise InputError(f"{source}: expected exactly one Pod, found {len(documents)} documents")
    pod = parse_object(documents[0].data, source, documents[0].node, kinds=("Pod",))
    assert isinstance(pod, Pod)
    admit_pod(pod, priority_classes or {}, runtime_classes or {}, source, documents[0].node)
    return pod


def admit_pod(
    pod: Pod,
    priority_classes: dict[str, PriorityClass],
    runtime_classes: dict[str, RuntimeClass],
    source: str = "pod",
    node: yaml.Node | None = None,
    prefix: tuple[int | str, ...] = (),
) -> None:
    """The API server's admission for scheduling fields: priority and RuntimeClass overhead.

    Upstream: plugin/pkg/admission/priority (priority, preemptionPolicy from the class; the
    globalDefault class when none is named; else 0) and plugin/pkg/admission/runtimeclass.
    """
    spec = pod.spec
    if spec.priority_class_name:
        pc = priority_classes.get(spec.priority_class_name)
        if pc is None:
            if spec.priority is None and spec.priority_class_name not in (
                "system-cluster-critical",
                "system-node-critical",
            ):
                loc = (*prefix, "spec", "priorityClassName")
                line = _line_of(node, loc)
                location = f"{source}:{line}" if line else source
                raise InputError(
                    f'{location}: {_path_text(loc)}: pods "{pod.metadata.name}" is forbidden: '
                    f"no PriorityClass with name {spec.priority_class_name} was found"
                )
            if spec.priority is None:
                spec.priority = 2000000000 if spec.priority_class_name == "system-cluster-critical" else 2000001000
        else:
            if spec.priority is None:
                spec.priority = pc.value
            if spec.preemption_policy is None:
                spec.preemption_policy = pc.preemption_policy
    elif spec.priority is None:
        defaults = [pc for pc in priority_classes.values() if pc.global_default]
        if defaults:
            spec.priority = defaults[0].value
            spec.priority_class_name = defaults[0].metadata.name
            if spec.preemption_policy is None:
                spec.preemption_policy = defaults[0].preemption_policy
    if spec.priority is None:
        spec.priority = 0
    if spec.preemption_policy is None:
        spec.preemption_policy = "PreemptLowerPriority"
    if spec.runtime_class_name and not spec.overhead:
        rc = runtime_classes.get(spec.runtime_class_name)
        if rc is not None and rc.overhead is not None:
            spec.overhead = dict(rc.overhead.pod_fixed)
