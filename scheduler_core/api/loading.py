"""Reading Kubernetes objects — a snapshot of a cluster, or one pod — with located errors.

Every failure is an `InputError` whose message names the source, the line (and column for syntax
errors) and, for invalid fields, the field path — `pod.yaml:12: spec.containers[0].resources.requests.cpu:
"1x" is not a valid quantity`. Nothing here raises anything else for bad input.

A snapshot is read object by object (JSON through the standard library's C scanner, YAML through
libyaml), each object losing the fields the scheduler never reads before the next is read; kinds
the scheduler does not read are skipped and counted (`ClusterObjects.skipped_notice()`).
"""

from __future__ import annotations

import contextlib
import gc
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import yaml
from pydantic import BaseModel, ValidationError

from ..collector import collector_paused
from .errors import InputError, LineOf, format_validation_error_at, path_text
from .json_reading import json_objects, looks_like_json
from .limits import (
    DEFAULT_MAX_UPLOAD_BYTES,
    MAX_ALIAS_EXPANDED_NODES,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_INT_DIGITS,
    MAX_YAML_BYTES,
    MAX_YAML_NODES,
)
from .objects import Namespace, Node, Pod, PriorityClass, RuntimeClass, Workload
from .policy import PodDisruptionBudget
from .pruning import (
    DROPPED_CONTAINER_FIELDS,
    DROPPED_METADATA_FIELDS,
    DROPPED_POD_SPEC_FIELDS,
    DROPPED_VOLUME_SOURCES,
    prune,
)
from .resource import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from .storage import CSIDriver, CSINode, CSIStorageCapacity, PersistentVolume, PersistentVolumeClaim, StorageClass
from .text import quote
from .version_document import server_git_version
from .yaml_reading import (
    Document,
    Plan,
    RawObject,
    format_validation_error,
    line_of,
    load_yaml_documents,
    locate,
    yaml_objects,
)

__all__ = [
    "DEFAULT_MAX_UPLOAD_BYTES",
    "KINDS",
    "MAX_ALIAS_EXPANDED_NODES",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_INT_DIGITS",
    "MAX_YAML_BYTES",
    "MAX_YAML_NODES",
    "ClusterObjects",
    "Document",
    "InputError",
    "Kind",
    "admit_pod",
    "format_validation_error",
    "list_items",
    "load_cluster",
    "load_cluster_file",
    "load_kept_cluster_file",
    "load_pod",
    "load_yaml_documents",
    "locate",
    "open_input",
    "parse_object",
]


@dataclass(frozen=True)
class Kind:
    """How the loader reads one kind: its model, the `ClusterObjects` list it goes to, and the
    `status` fields the scheduler reads (the rest of the status is dropped as the object is read;
    None keeps the whole status)."""

    model: type[BaseModel]
    bucket: str
    status: tuple[str, ...] | None = None


#: Every kind the scheduler reads; any other kind in a snapshot is skipped and counted
#: (`ClusterObjects.skipped`). Adding a kind: one line here and its list in `ClusterObjects`.
KINDS: dict[str, Kind] = {
    "Node": Kind(Node, "nodes", status=("capacity", "allocatable", "images", "declaredFeatures", "nodeInfo")),
    "Pod": Kind(Pod, "pods", status=("phase", "nominatedNodeName", "startTime", "conditions", "resourceClaimStatuses")),
    "Namespace": Kind(Namespace, "namespaces", status=()),
    "PriorityClass": Kind(PriorityClass, "priority_classes"),
    "RuntimeClass": Kind(RuntimeClass, "runtime_classes"),
    "Service": Kind(Workload, "workloads", status=()),
    "ReplicaSet": Kind(Workload, "workloads", status=()),
    "StatefulSet": Kind(Workload, "workloads", status=()),
    "ReplicationController": Kind(Workload, "workloads", status=()),
    "Deployment": Kind(Workload, "workloads", status=()),
    "PersistentVolumeClaim": Kind(PersistentVolumeClaim, "claims"),
    "PersistentVolume": Kind(PersistentVolume, "volumes"),
    "StorageClass": Kind(StorageClass, "storage_classes"),
    "CSINode": Kind(CSINode, "csi_nodes"),
    "CSIDriver": Kind(CSIDriver, "csi_drivers"),
    "CSIStorageCapacity": Kind(CSIStorageCapacity, "storage_capacities"),
    # preemption: budgets (their status is read); workload kinds seen through their pods
    "PodDisruptionBudget": Kind(PodDisruptionBudget, "pdbs"),
    "DaemonSet": Kind(Workload, "workloads", status=()),
    "Job": Kind(Workload, "workloads", status=()),
    # Dynamic Resource Allocation (resource.k8s.io/v1): DynamicResources reads all four
    "DeviceClass": Kind(DeviceClass, "device_classes"),
    "ResourceSlice": Kind(ResourceSlice, "resource_slices"),
    "ResourceClaim": Kind(ResourceClaim, "resource_claims", status=("allocation", "reservedFor")),
    "ResourceClaimTemplate": Kind(ResourceClaimTemplate, "resource_claim_templates"),
}


def parse_object(
    data: Any,
    source: str,
    node: yaml.Node | None = None,
    kinds: tuple[str, ...] | None = None,
    prefix: tuple[int | str, ...] = (),
) -> BaseModel:
    """Validate one object of an accepted kind (default: any kind of `KINDS`)."""
    if kinds is None:
        kinds = tuple(KINDS)
    if not isinstance(data, dict):
        raise InputError(f"{source}: expected a Kubernetes object (a mapping), got {type(data).__name__}")
    kind = data.get("kind")
    if not isinstance(kind, str) or kind not in kinds:
        raise _kind_error(kind, kinds, source, lambda loc: line_of(node, loc), prefix)
    return _validate(data, source, lambda loc: line_of(node, loc), prefix)


def _validate(data: dict[str, Any], source: str, lines: LineOf, prefix: tuple[int | str, ...] = ()) -> BaseModel:
    """Validate an object of a kind of `KINDS`; `lines` gives the line of a path from the object's root."""

    def line(loc: tuple[int | str, ...]) -> int | None:
        return lines(loc[len(prefix) :])

    try:
        return KINDS[data["kind"]].model.model_validate(data)
    except ValidationError as exc:
        raise InputError(format_validation_error_at(exc, source, line, prefix)) from None
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
    claims: list[PersistentVolumeClaim] = field(default_factory=list)
    volumes: list[PersistentVolume] = field(default_factory=list)
    storage_classes: list[StorageClass] = field(default_factory=list)
    csi_nodes: list[CSINode] = field(default_factory=list)
    csi_drivers: list[CSIDriver] = field(default_factory=list)
    storage_capacities: list[CSIStorageCapacity] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    device_classes: list[DeviceClass] = field(default_factory=list)
    resource_slices: list[ResourceSlice] = field(default_factory=list)
    resource_claims: list[ResourceClaim] = field(default_factory=list)
    resource_claim_templates: list[ResourceClaimTemplate] = field(default_factory=list)

    skipped: dict[str, int] = field(default_factory=dict)
    """Objects of kinds the scheduler does not read (ConfigMap, Secret, Event, …), counted by kind."""

    server_version: str | None = None
    """The API server's gitVersion, when the dump holds a `kubectl version` document."""

    def add(self, obj: BaseModel) -> None:
        """Append `obj` to the list of its kind (see `KINDS`)."""
        getattr(self, KINDS[str(getattr(obj, "kind", ""))].bucket).append(obj)

    def skip(self, kind: str) -> None:
        self.skipped[kind] = self.skipped.get(kind, 0) + 1

    def skipped_notice(self) -> str | None:
        """One line for every skipped object (None when nothing was skipped):
        `skipped 3 objects of kinds the scheduler does not read: ConfigMap (2), Secret (1)`."""
        if not self.skipped:
            return None
        total = sum(self.skipped.values())
        kinds = ", ".join(f"{kind} ({count})" for kind, count in sorted(self.skipped.items()))
        noun = "object" if total == 1 else "objects"
        return f"skipped {total} {noun} of kinds the scheduler does not read: {kinds}"


def _kind_error(
    kind: object, kinds: tuple[str, ...], source: str, lines: LineOf, prefix: tuple[int | str, ...]
) -> InputError:
    where = lines(("kind",))
    location = f"{source}:{where}" if where else source
    shown = path_text((*prefix, "kind"))
    return InputError(f"{location}: {shown}: unsupported kind {quote(kind)} (expected {', '.join(kinds)})")


# --- what the readers skip ----------------------------------------------------------------------

_POD_PLAN = Plan(
    skip=frozenset(DROPPED_POD_SPEC_FIELDS),
    children={
        "containers": Plan(skip=frozenset(DROPPED_CONTAINER_FIELDS)),
        "initContainers": Plan(skip=frozenset(DROPPED_CONTAINER_FIELDS)),
        "volumes": Plan(skip=frozenset(DROPPED_VOLUME_SOURCES)),
    },
)
_METADATA_PLAN = Plan(skip=frozenset(DROPPED_METADATA_FIELDS))


def _plan_of(kind: str) -> Plan | None:
    """What the YAML reader composes of an object of `kind` (None: a kind the scheduler skips)."""
    spec = KINDS.get(kind)
    if spec is None:
        return None
    children: dict[str, Plan] = {"metadata": _METADATA_PLAN}
    if spec.status is not None:
        children["status"] = Plan(keep=frozenset(spec.status))
    if kind == "Pod":
        children["spec"] = _POD_PLAN
    return Plan(children=children)


# --- snapshots ------------------------------------------------------------------------------------

Input = str | bytes | BinaryIO


def list_items(data: Any, source: str, lines: LineOf | None = None) -> list[Any] | None:
    """The items of a List (`kind: List`, or a typed list such as PodList, whose items leave out
    their kind: they get it from the list's), or None when `data` is not a List. The one place a
    List is unwrapped, for the loader, the app's create and its import alike."""
    kind = data.get("kind") if isinstance(data, dict) else None
    if not (isinstance(kind, str) and kind.endswith("List")):
        return None
    items = data.get("items") or []
    if not isinstance(items, list):
        line = lines(("items",)) if lines is not None else None
        raise InputError(f"{source}:{line}: items: must be a list" if line else f"{source}: items: must be a list")
    item_kind = kind[: -len("List")]
    return [
        {**item, "kind": item_kind} if item_kind and isinstance(item, dict) and "kind" not in item else item
        for item in items
    ]


def _unwrapped(data: Any, lines: LineOf, source: str) -> Iterator[RawObject]:
    """`data` as it is, or each item of a List with its lines and path."""
    items = list_items(data, source, lines)
    if items is None:
        yield data, lines, ()
        return
    for index, item in enumerate(items):
        yield item, _item_lines(lines, index), ("items", index)


def _documents_objects(documents: list[Document], source: str) -> Iterator[RawObject]:
    """The objects of already parsed documents (a List's items one by one)."""
    for document in documents:
        yield from _unwrapped(document.data, lambda loc, node=document.node: line_of(node, loc), source)


def _item_lines(lines: LineOf, index: int) -> LineOf:
    return lambda loc: lines(("items", index, *loc))


def _stream_objects(stream: BinaryIO, source: str, max_bytes: int) -> Iterator[RawObject]:
    """The objects of a JSON or YAML input, read one at a time. Input that starts like JSON but
    is not (YAML's flow style, `{kind: Pod}`) is read again as YAML when no object was read yet."""
    start = stream.tell()
    head = stream.read(4096)
    stream.seek(start)
    if looks_like_json(head):
        count = 0
        try:
            # metadata.managedFields: dropped by `prune` anyway, so not even built
            for obj in json_objects(stream, source, max_bytes, skip_managed_fields=True):
                count += 1
                yield obj
            return
        except InputError as exc:
            if count:
                raise
            stream.seek(start)
            try:
                yield from yaml_objects(stream.read(max_bytes + 1), source, _plan_of, max_bytes)
                return
            except InputError:
                raise exc from None
    yield from yaml_objects(stream.read(max_bytes + 1), source, _plan_of, max_bytes)


def _opener(text: Input) -> Callable[[], BinaryIO]:
    """Something that gives the input again from its start (to locate an error found late)."""
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogatepass")
    if isinstance(text, bytes):
        data = text
        return lambda: io.BytesIO(data)
    stream, start = text, text.tell()

    def reopen() -> BinaryIO:
        stream.seek(start)
        return stream

    return reopen


def load_cluster(text: Input | list[Document], source: str, max_bytes: int = MAX_YAML_BYTES) -> ClusterObjects:
    """The cluster objects of a `kind: List` (or NodeList, PodList…), a multi-document YAML stream
    or concatenated JSON objects — given as text, bytes, a binary file, or the documents
    `load_yaml_documents` read. Inputs over `max_bytes` are refused; kinds not in `KINDS` are skipped
    and counted in `ClusterObjects.skipped`."""
    if isinstance(text, list):
        documents = text
        return _load(lambda: _documents_objects(documents, source), source)
    if isinstance(text, str) and not looks_like_json(text):
        content = text  # YAML text: read as it is (no copy to bytes)
        return _load(lambda: yaml_objects(content, source, _plan_of, max_bytes), source)
    reopen = _opener(text)
    return _load(lambda: _stream_objects(reopen(), source, max_bytes), source)


@contextlib.contextmanager
def open_input(path: str) -> Iterator[BinaryIO]:
    """A file named on the command line, opened for reading; what the system says of it (while it is
    opened or read) becomes an `InputError` naming the file."""
    try:
        with open(path, "rb") as stream:
            yield stream
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory") from None
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror}") from None


def load_cluster_file(path: str, max_bytes: int = MAX_FILE_BYTES) -> ClusterObjects:
    """`load_cluster` of a file named on the command line, read as it goes (the source is `path`)."""
    with open_input(path) as stream:
        if not stream.seekable():  # a pipe (`--cluster /dev/stdin`): read it whole
            return load_cluster(stream.read(max_bytes + 1), path, max_bytes)
        return load_cluster(stream, path, max_bytes)


def load_kept_cluster_file(path: str, max_bytes: int = MAX_FILE_BYTES) -> ClusterObjects:
    """`load_cluster_file` for a process that keeps the snapshot until it exits (the CLI, the
    benchmark): the loaded objects are frozen out of the garbage collector's reach (`gc.freeze()`)
    before it runs again, so it never traverses them — not even once: the first collection after
    a load would otherwise pass over every object just read (a fifth of a big snapshot's load)."""
    with collector_paused():
        cluster = load_cluster_file(path, max_bytes)
        gc.freeze()
        return cluster


def _lists_expanded(objects: Iterator[RawObject], source: str) -> Iterator[RawObject]:
    """The items of a List the readers could not stream (its items an alias, null, or not a list)."""
    for data, lines, prefix in objects:
        if prefix:  # already an item of a List
            yield data, lines, prefix
        else:
            yield from _unwrapped(data, lines, source)


def _load(objects: Callable[[], Iterator[RawObject]], source: str) -> ClusterObjects:
    """Validate every object (cyclic garbage collection paused: reading makes no cycles, and the
    collector's passes over every object kept so far would cost more than the reading)."""
    with collector_paused():
        return _load_objects(objects, source)


def _load_objects(objects: Callable[[], Iterator[RawObject]], source: str) -> ClusterObjects:
    cluster = ClusterObjects()
    ordinals: dict[int, tuple[int, tuple[int | str, ...]]] = {}  # id(pod) → (ordinal, path prefix)
    for ordinal, (data, lines, prefix) in enumerate(_lists_expanded(objects(), source)):
        kind = data.get("kind") if isinstance(data, dict) else None
        if isinstance(kind, str) and kind not in KINDS:
            cluster.skip(kind)
            continue
        if not isinstance(data, dict):
            line, shown = lines(()), path_text(prefix)
            where = f"{source}:{line}" if line else source
            got = f"expected a Kubernetes object (a mapping), got {type(data).__name__}"
            raise InputError(f"{where}: {shown}: {got}" if shown else f"{where}: {got}")
        if not isinstance(kind, str):
            git_version = server_git_version(data)
            if git_version is None:
                raise _kind_error(kind, tuple(KINDS), source, lines, prefix)
            cluster.server_version = git_version
            continue
        obj = _validate(prune(data, KINDS[kind].status), source, lines, prefix)
        cluster.add(obj)
        if kind == "Pod":
            ordinals[id(obj)] = (ordinal, prefix)
    names: set[str] = set()
    for node in cluster.nodes:
        if node.name in names:
            raise InputError(f"{source}: duplicate node {node.name!r}")
        names.add(node.name)
    classes = {pc.metadata.name: pc for pc in cluster.priority_classes}
    runtimes = {rc.metadata.name: rc for rc in cluster.runtime_classes}
    for pod in cluster.pods:
        ordinal, prefix = ordinals.get(id(pod), (-1, ()))
        try:
            admit_pod(pod, classes, runtimes, source, None, prefix)
        except InputError:  # found after reading everything: read again to the pod to name its line
            lines = next(lines for k, (_, lines, _) in enumerate(objects()) if k == ordinal)
            admit_pod(pod, classes, runtimes, source, None, prefix, lines)
            raise
    return cluster


def load_pod(
    text: str | bytes,
    source: str,
    priority_classes: dict[str, PriorityClass] | None = None,
    runtime_classes: dict[str, RuntimeClass] | None = None,
) -> Pod:
    """Exactly one Pod (read and validated with the cycle collector paused: a pod at the limits is
    about 70,000 YAML nodes and as many objects again, none in a cycle)."""
    with collector_paused():
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
    lines: LineOf | None = None,
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
                field_path = ("spec", "priorityClassName")
                line = lines(field_path) if lines else line_of(node, (*prefix, *field_path))
                location = f"{source}:{line}" if line else source
                shown = path_text((*prefix, *field_path))
                raise InputError(
                    f'{location}: {shown}: pods "{pod.metadata.name}" is forbidden: '
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
