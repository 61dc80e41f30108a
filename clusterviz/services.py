"""Plain functions behind every way of changing a cluster — browser, HTTP, kubectl, lessons.

Each validates first and writes only when everything is valid, so a bad request changes nothing.
`component` names who made the change (it becomes the first hop of the List-Watch path).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import yaml
from django.db import transaction
from django.db.models import Q

from scheduler_core.api.errors import LineOf
from scheduler_core.api.limits import MAX_OBJECTS_PER_REQUEST
from scheduler_core.api.loading import (
    Document,
    InputError,
    list_items,
    load_cluster,
    load_pod,
    load_yaml_documents,
)
from scheduler_core.api.objects import Taint
from scheduler_core.api.validation import (
    dns1123_label_error,
    label_key_error,
    label_value_error,
    replicas_error,
)
from scheduler_core.api.workloads import WorkloadIndex
from scheduler_core.api.yaml_reading import line_of
from scheduler_core.explain import Explanation, explain_on, result_to_json, wire_events
from scheduler_core.fixes import suggest_fixes
from scheduler_core.framework.events import encode_cycle
from scheduler_core.framework.profile import Profile

from . import profiles, retention, scheduler_cache, store
from .adapters import snapshot
from .admission import admission_context
from .admission_plugins import admit_new
from .models import PACE_CHOICES, Cluster, KubeObject
from .node_registration import register_node
from .taints import stamp_no_execute
from .update_validation import admit_update
from .validation import admit

__all__ = [
    "admission_context",
    "check_scale",
    "create_cluster",
    "create_from_yaml",
    "delete_object",
    "ensure_namespace",
    "explain_cycle",
    "explain_pod",
    "export_yaml",
    "fix_pod",
    "freeze_followers",
    "import_snapshot",
    "node_requests",
    "replace_from_yaml",
    "scale",
    "set_cordon",
    "set_label",
    "set_pace",
    "set_presenter_view",
    "set_taint",
    "state",
]

UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"


def create_cluster(slug: str, title: str = "") -> Cluster:
    # A DNS-1123 label (no dots): the slug is one segment of the page, API and kubectl URLs.
    error = dns1123_label_error(slug)  # at most 63 characters
    if error:
        raise InputError(f"slug: {error}")
    retention.maybe_prune()  # the store grows here: expired clusters go first (clusterviz/retention.py)
    cluster, created = Cluster.objects.get_or_create(slug=slug, defaults={"title": title or slug})
    if not created:
        raise store.AlreadyExists(f'cluster "{slug}" already exists')
    return cluster


def _lines_of(document: Document) -> LineOf:
    """The line of a field (path from the document's root) of a parsed document."""
    return lambda loc: line_of(document.node, loc)


def _count_objects(documents: list[Document], source: str) -> None:
    """Refuse a request of more than MAX_OBJECTS_PER_REQUEST objects before validating any."""
    count = 0
    for document in documents:
        items = list_items(document.data, source, _lines_of(document))
        count += 1 if items is None else len(items)
    if count > MAX_OBJECTS_PER_REQUEST:
        raise InputError(f"{source}: {count} objects: more than {MAX_OBJECTS_PER_REQUEST} objects in one request")


def parse_objects(
    text: str | bytes, source: str, cluster: Cluster, documents: list[Document] | None = None
) -> list[dict[str, Any]]:
    """Validate every object of a YAML stream (or kind: List) before anything is written."""
    if documents is None:
        documents = load_yaml_documents(text, source)
    _count_objects(documents, source)
    classes, runtimes = admission_context(cluster)
    out: list[dict[str, Any]] = []
    for document in documents:
        listed = list_items(document.data, source, _lines_of(document))
        items: list[tuple[Any, tuple[int | str, ...]]] = (
            [(document.data, ())] if listed is None else [(item, ("items", k)) for k, item in enumerate(listed)]
        )
        for item, prefix in items:
            if isinstance(item, dict) and item.get("kind") == "PriorityClass":
                admitted = admit(item, source, document.node, prefix=prefix)
                classes[admitted["metadata"]["name"]] = _priority_class(admitted)
            out.append(admit(item, source, document.node, classes, runtimes, prefix))
    if not out:
        raise InputError(f"{source}: no objects found")
    return out


def _priority_class(body: dict[str, Any]) -> Any:
    from scheduler_core.api.objects import PriorityClass

    return PriorityClass.model_validate(body)


def create_from_yaml(
    cluster: Cluster, text: str | bytes, component: str, source: str = "input", register_nodes: bool = False
) -> list[dict[str, Any]]:
    """Create every object in the YAML; all or nothing (`register_nodes`: a Node gets the labels its
    kubelet would register it with, as the browser's create action does)."""
    objects = parse_objects(text, source, cluster)
    if register_nodes:
        objects = [register_node(body) for body in objects]
    with transaction.atomic():  # one by one, as kubectl creates them: a LimitRange first applies to the pods after it
        # each after the admission plugins that read other objects (LimitRanger, ServiceAccount, …)
        return [store.create(cluster, admit_new(cluster, body), component) for body in objects]


def replace_from_yaml(
    cluster: Cluster, text: str | bytes, component: str, source: str = "input"
) -> list[dict[str, Any]]:
    """Replace every object of the YAML with its new content (as `kubectl replace -f`); all or
    nothing. Each must exist; status and the server's metadata are kept; an update that changes what
    may not change is refused as kube-apiserver refuses it (update_validation.UpdateInvalid)."""
    objects = parse_objects(text, source, cluster)
    with transaction.atomic():
        return [_replace(cluster, body, component) for body in objects]


def _replace(cluster: Cluster, body: dict[str, Any], component: str) -> dict[str, Any]:
    meta = body["metadata"]
    expected = meta.get("resourceVersion") or None

    def swap(current: dict[str, Any]) -> None:
        new = copy.deepcopy(body)
        new.pop("status", None)
        if "status" in current:
            new["status"] = copy.deepcopy(current["status"])
        if current["metadata"].get("managedFields"):
            new["metadata"]["managedFields"] = copy.deepcopy(current["metadata"]["managedFields"])
        admit_update(body["kind"], current, new)
        current.clear()
        current.update(new)

    namespace = meta.get("namespace") or "default"
    return store.patch(cluster, body["kind"], namespace, meta["name"], swap, component, expected)


IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")


def namespace_body(name: str) -> dict[str, Any]:
    """A Namespace as kube-apiserver stores a new one (with its automatic name label)."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def ensure_namespace(cluster: Cluster, name: str, component: str) -> None:
    """Store a namespace that exists without a stored object (a built-in one, or one an import's
    objects live in), so that it can be labelled, annotated or deleted."""
    if not KubeObject.objects.filter(cluster=cluster, kind="Namespace", name=name).exists():
        store.create(cluster, namespace_body(name), component)


OWNER_KINDS = ("Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "Job", "Service")
DEFAULT_GRACE_SECONDS = 30  # a pod's terminationGracePeriodSeconds default


def delete_object(
    cluster: Cluster, kind: str, namespace: str, name: str, component: str, grace_seconds: int | None = None
) -> dict[str, Any]:
    """Delete an object; a running pod first becomes Terminating (the kubelet then removes it, after
    at most its grace period: `grace_seconds`, else the pod's terminationGracePeriodSeconds), a
    namespace turns Terminating (the namespace controller empties it, then removes it)."""
    if kind == "Namespace":
        if name in IMMORTAL_NAMESPACES:
            raise store.Forbidden(f'namespaces "{name}" is forbidden: this namespace may not be deleted')

        def terminate_namespace(obj: dict[str, Any]) -> None:
            obj["metadata"].setdefault("deletionTimestamp", store.now_rfc3339())
            obj.setdefault("spec", {})["finalizers"] = ["kubernetes"]
            obj.setdefault("status", {})["phase"] = "Terminating"

        return store.patch(cluster, "Namespace", "", name, terminate_namespace, component)
    if kind == "Pod":
        body = store.get(cluster, "Pod", namespace, name)
        if body["spec"].get("nodeName") and not body["metadata"].get("deletionTimestamp"):
            grace = grace_seconds
            if grace is None:
                grace = body["spec"].get("terminationGracePeriodSeconds", DEFAULT_GRACE_SECONDS)

            def terminate(obj: dict[str, Any]) -> None:
                obj["metadata"]["deletionTimestamp"] = store.now_rfc3339()
                obj["metadata"]["deletionGracePeriodSeconds"] = int(grace)

            return store.patch(cluster, "Pod", namespace, name, terminate, component)
    if kind != "Pod" and store.get(cluster, kind, namespace, name)["metadata"].get("finalizers"):
        return store.mark_deleted(cluster, kind, namespace, name, component)  # a claim in use, say
    if kind in OWNER_KINDS:
        with transaction.atomic():
            body = store.get(cluster, kind, namespace, name)
            _delete_owned(cluster, body["metadata"]["uid"], component)
            return store.delete(cluster, kind, namespace, name, component)
    return store.delete(cluster, kind, namespace, name, component)


def _delete_owned(cluster: Cluster, uid: str, component: str) -> None:
    """Garbage collection with background propagation: dependents go with their owner (deleted
    through the API like any other delete, so running pods turn Terminating first)."""
    dependents = ("ReplicaSet", "Pod", "Endpoints", "EndpointSlice", "ControllerRevision")
    for row in KubeObject.objects.filter(cluster=cluster, kind__in=dependents):
        refs = row.body["metadata"].get("ownerReferences", [])
        if not any(ref.get("uid") == uid for ref in refs):
            continue
        if row.kind == "Pod":
            if not row.body["metadata"].get("deletionTimestamp"):
                delete_object(cluster, "Pod", row.namespace, row.name, "garbage-collector")
            continue
        _delete_owned(cluster, row.uid, component)
        store.delete(cluster, row.kind, row.namespace, row.name, "garbage-collector")


def set_label(
    cluster: Cluster, node: str, key: str, value: str | None, component: str, overwrite: bool = True
) -> dict[str, Any]:
    """Add, change (`overwrite`) or remove (value None) a node label, as `kubectl label nodes`."""
    error = label_key_error(key) or (label_value_error(value) if value is not None else None)
    if error:
        raise InputError(f"metadata.labels: {error}")

    def relabel(body: dict[str, Any]) -> None:
        labels = body["metadata"].setdefault("labels", {})
        if value is None:
            # kubectl prints `label "k" not found.` and writes nothing; it is not an error
            labels.pop(key, None)
        else:
            # kubectl's validateNoOverwrites: any existing value, even the same one
            if key in labels and not overwrite:
                raise InputError(f"'{key}' already has a value ({labels[key]}), and --overwrite is false")
            labels[key] = value
        if not labels:
            body["metadata"].pop("labels")

    return store.patch(cluster, "Node", "", node, relabel, component)


def set_taint(
    cluster: Cluster, node: str, key: str, value: str, effect: str, component: str, remove: bool = False
) -> dict[str, Any]:
    """Add (or replace) or remove a taint, as `kubectl taint node`; NoExecute taints get timeAdded."""
    try:
        taint = Taint.model_validate({"key": key, "value": value, "effect": effect or "NoSchedule"})
    except Exception:
        if not remove or effect:
            raise InputError(f'invalid taint effect: "{effect}", unsupported taint effect') from None
        taint = None
    error = label_key_error(key) or (label_value_error(value) if value else None)
    if error:
        raise InputError(f"spec.taints: {error}")

    def retaint(body: dict[str, Any]) -> None:
        taints = body.setdefault("spec", {}).setdefault("taints", [])
        if remove:
            kept = [t for t in taints if not (t["key"] == key and (not effect or t["effect"] == effect))]
            if len(kept) == len(taints):
                raise InputError(f'taint "{key}{":" + effect if effect else ""}" not found')
            body["spec"]["taints"] = kept
        else:
            assert taint is not None
            new = {"key": key, "effect": taint.effect}
            if value:
                new["value"] = value
            replaced = [t for t in taints if not (t["key"] == key and t["effect"] == taint.effect)]
            body["spec"]["taints"] = [*replaced, new]
            stamp_no_execute(taints, body["spec"]["taints"])
        if not body["spec"]["taints"]:
            body["spec"].pop("taints")

    return store.patch(cluster, "Node", "", node, retaint, component)


def set_cordon(cluster: Cluster, node: str, cordoned: bool, component: str) -> dict[str, Any]:
    """`kubectl cordon/uncordon`: spec.unschedulable, and the node controller's unschedulable taint."""

    def cordon(body: dict[str, Any]) -> None:
        spec = body.setdefault("spec", {})
        current = spec.get("taints", [])
        taints = [t for t in current if t["key"] != UNSCHEDULABLE_TAINT_KEY]
        if cordoned:
            spec["unschedulable"] = True
            # already cordoned: keep the taint (and its timeAdded), so that nothing is written
            existing = [t for t in current if t["key"] == UNSCHEDULABLE_TAINT_KEY and t.get("effect") == "NoSchedule"]
            taints.append(
                existing[0]
                if existing
                else {"key": UNSCHEDULABLE_TAINT_KEY, "effect": "NoSchedule", "timeAdded": store.now_rfc3339()}
            )
        else:
            spec.pop("unschedulable", None)
        spec["taints"] = taints
        if not taints:
            spec.pop("taints")

    return store.patch(cluster, "Node", "", node, cordon, component)


def check_scale(kind: str, replicas: int) -> None:
    """InputError unless `kind` scales and `replicas` is in range (a dry run checks this too)."""
    if kind not in ("Deployment", "ReplicaSet", "StatefulSet"):
        raise InputError(f"{kind}: cannot be scaled (Deployment, ReplicaSet or StatefulSet)")
    error = replicas_error(replicas)
    if error:
        raise InputError(f"spec.replicas: {error}")


def scale(cluster: Cluster, kind: str, namespace: str, name: str, replicas: int, component: str) -> dict[str, Any]:
    check_scale(kind, replicas)

    def resize(body: dict[str, Any]) -> None:
        body["spec"]["replicas"] = replicas

    return store.patch(cluster, kind, namespace, name, resize, component)


def set_pace(cluster: Cluster, pace: str, delay_ms: int | None = None) -> Cluster:
    if pace not in dict(PACE_CHOICES):
        raise InputError(f'pace: Unsupported value: "{pace}": supported values: "instant", "slow", "paused"')
    if delay_ms is not None and not 50 <= delay_ms <= 60_000:
        raise InputError("delayMs: must be between 50 and 60000")
    cluster.pace = pace
    if delay_ms is not None:
        cluster.pace_delay_ms = delay_ms
    cluster.save(update_fields=["pace", "pace_delay_ms"])
    return cluster


def set_presenter_view(cluster: Cluster, view: dict[str, Any]) -> bool:
    """Keep the presenter's last view, so a follower who joins later starts on the same frame.
    Views may be handled out of order: one older (by its `seq`) than the kept one is dropped (False);
    so is every view while the followers are frozen (`freeze_followers`)."""
    # One conditional UPDATE: atomic on SQLite and PostgreSQL alike, whatever the interleaving.
    newer = Q(presenter_view__seq__isnull=True) | Q(presenter_view__seq__lte=view.get("seq", 0))
    thawed = Q(presenter_view__frozen__isnull=True) | Q(presenter_view__frozen=False)
    if not Cluster.objects.filter(newer, thawed, pk=cluster.pk).update(presenter_view=view):
        return False
    cluster.presenter_view = view
    return True


def freeze_followers(cluster: Cluster, frozen: bool) -> dict[str, Any]:
    """Hold the followers on the view they have (the kept one, marked `frozen`) while the presenter
    looks elsewhere, or let them follow again; returns the kept view."""
    with transaction.atomic():
        row = Cluster.objects.select_for_update().get(pk=cluster.pk)
        view = {**row.presenter_view, "frozen": frozen}
        Cluster.objects.filter(pk=cluster.pk).update(presenter_view=view)
    cluster.presenter_view = view
    return view


def _what_if(cluster: Cluster, text: str | bytes, seed: int, profile: Profile | None) -> Explanation:
    """The explanation of a pod against the current cluster; nothing changes.

    `profile`: the cluster's stored one for the pod's schedulerName unless given."""
    cache = scheduler_cache.synced(cluster)  # the scheduler's own view: no re-read of the cluster
    pod = load_pod(text, "pod.yaml", dict(cache.priority_classes), {})
    if profile is None:
        config, version = profiles.settings_of(cluster)
        profile = profiles.profile_for(config, pod.spec.scheduler_name, version=version)
    table = cache.table()
    try:
        workload = WorkloadIndex(cache.workloads.values()).workload_of(pod.metadata)
        return explain_on(table, pod, profile, seed=seed, workload=workload)
    except Exception:
        cache.drop_table()  # a cycle that failed midway may not have restored what it tried
        raise


def explain_pod(cluster: Cluster, text: str | bytes, seed: int = 0, profile: Profile | None = None) -> dict[str, Any]:
    """What-if: the full explanation for a pod against the current cluster; nothing changes."""
    explanation = _what_if(cluster, text, seed, profile)
    data = result_to_json(explanation)
    data["events"] = wire_events(explanation)
    return data


def explain_cycle(cluster: Cluster, text: str | bytes, seed: int = 0, profile: Profile | None = None) -> dict[str, Any]:
    """What-if as the board plays it: the outcome and the cycle's events in the stream's compact form
    (`encode_cycle`), without the per-node table of `explain_pod` (at 5,000 nodes 0.7 MB, not 9.8 MB,
    and 0.6 s less to build)."""
    explanation = _what_if(cluster, text, seed, profile)
    result, pod = explanation.result, explanation.pod
    assert pod is not None
    if result is None:  # gated: no cycle ran
        summary = result_to_json(explanation)
        return {**summary, "events": wire_events(explanation)}
    return {
        "pod": pod.key,
        "cycle": result.cycle,
        "scheduled": result.scheduled,
        "selectedNode": result.selected_node,
        "message": result.message,
        "code": result.status.code.label,
        "nominatedNode": result.nominated_node or None,
        "tiedTop": [result.table.names[i] for i in result.tied_top],
        "events": encode_cycle(explanation.events, result.table.names),
    }


def fix_pod(cluster: Cluster, text: str | bytes, seed: int = 0) -> dict[str, Any]:
    """Per rejected node, the fixes that would make the pod fit, each verified by running the
    scheduler again on the fixed pod and node (see scheduler_core.fixes); nothing changes."""
    snap = snapshot(cluster)
    classes = {pc.metadata.name: pc for pc in snap.objects.priority_classes}
    pod = load_pod(text, "pod.yaml", classes, {})  # a clear, located error for bad input first
    documents = load_yaml_documents(text, "pod.yaml")
    config, version = profiles.settings_of(cluster)
    profile = profiles.profile_for(config, pod.spec.scheduler_name, version=version)

    def load(body: dict[str, Any]) -> Any:
        return load_pod(json.dumps(body), "pod.yaml", classes, {})

    return suggest_fixes(snap.objects, documents[0].data, load, seed, profile)


BAR_RESOURCES = ("cpu", "memory")


def node_requests(cluster: Cluster) -> dict[str, Any]:
    """Per node, what the scheduler counts as requested of its allocatable (cpu in millicores,
    memory in bytes, pods): the board's bars, from scheduler_core's own accounting (sidecars,
    pod-level resources and overhead included)."""
    cache = scheduler_cache.synced(cluster)  # the scheduler's own view and its resourceVersion
    rv, table = cache.rv, cache.table()
    nodes: dict[str, Any] = {}
    for i, name in enumerate(table.names):
        figures = {
            r: {"requested": int(table.requested[r][i]), "allocatable": int(table.alloc[r][i])} for r in BAR_RESOURCES
        }
        figures["pods"] = {"requested": int(table.pod_count[i]), "allocatable": int(table.alloc["pods"][i])}
        nodes[name] = figures
    return {"resourceVersion": str(rv), "nodes": nodes}


def state(cluster: Cluster) -> dict[str, Any]:
    """Everything, with the resourceVersion it was read at (the stream's snapshot)."""
    cluster.refresh_from_db()
    objects: dict[str, list[dict[str, Any]]] = {}
    with transaction.atomic():
        rv = Cluster.objects.filter(pk=cluster.pk).values_list("resource_version", flat=True).get()
        for row in KubeObject.objects.filter(cluster=cluster).order_by("kind", "namespace", "name"):
            objects.setdefault(row.kind, []).append(row.body)
    return {"cluster": cluster.to_dict(), "resourceVersion": str(rv), "objects": objects}


EXPORT_KINDS = (
    "PriorityClass",
    "Namespace",
    "Node",
    "ConfigMap",
    "Secret",
    "ServiceAccount",
    "LimitRange",
    "ResourceQuota",
    "Service",
    "Deployment",
    "DaemonSet",
    "StatefulSet",
    "Job",
    "Pod",
)
_SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "generation")


def export_yaml(cluster: Cluster) -> str:
    """The cluster as a `kind: List` that `import_snapshot` (and `kubectl apply`) loads again.

    Pods owned by a controller are left out (it recreates them); statuses are left out (the
    controllers write them again), except nodes' (capacity, allocatable).
    """
    items = []
    for kind in EXPORT_KINDS:
        for body in store.list_objects(cluster, kind):
            if kind == "Pod" and body["metadata"].get("ownerReferences"):
                continue
            clean = copy.deepcopy(body)
            for field in _SERVER_FIELDS:
                clean["metadata"].pop(field, None)
            if kind != "Node":
                clean.pop("status", None)
            items.append(clean)
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}, sort_keys=False)


SNAPSHOT_KINDS = ("PriorityClass", "Namespace", "Node", "ReplicaSet", "Pod")


def snapshot_yaml(cluster: Cluster) -> str:
    """What the scheduler sees, as `kubectl get nodes,pods -A -o yaml` would write it (plus the
    PriorityClasses, Namespaces and ReplicaSets it reads): `python -m scheduler_core explain`
    on this file gives the same answers as the app."""
    items = [body for kind in SNAPSHOT_KINDS for body in store.list_objects(cluster, kind)]
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}, sort_keys=False)


def import_snapshot(cluster: Cluster, text: str | bytes, component: str, source: str = "snapshot") -> int:
    """Load `kubectl get nodes,pods -A -o yaml` output (or an export) into an empty cluster."""
    if KubeObject.objects.filter(cluster=cluster).exists():
        raise InputError(f'cluster "{cluster.slug}" is not empty: import into a new cluster')
    documents = load_yaml_documents(text, source)
    _count_objects(documents, source)
    # the scheduler's reading of it must succeed too; it trims what it reads (volume mounts, service
    # accounts…), so it reads a copy of its own, not what is stored
    load_cluster(load_yaml_documents(text, source), source)
    objects = parse_objects(text, source, cluster, documents)
    for body in objects:
        for field in _SERVER_FIELDS:
            body["metadata"].pop(field, None)
    with transaction.atomic():
        for body in objects:
            store.create(cluster, body, component)
    return len(objects)
