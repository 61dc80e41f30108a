"""A teacher's action as a lesson step: its `do` (what a lesson performs, messages.parse_action) and
the kubectl command a class types for it — from a browser action as sent, or from a kubectl write as
the object before and after it. Also the texts a recorded step starts with: what to do (`say`) and
what happened (`after`), which the teacher then rewrites."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from .controllers.owners import is_terminating

Obj = dict[str, Any]

# What a lesson file may hold of an object: never what the server sets, never managed fields.
SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink")
KEEPS_STATUS = ("Node", "PersistentVolume")  # capacity and allocatable are the object, not a report
SCALABLE = ("Deployment", "ReplicaSet", "StatefulSet")
MAX_LISTED = 8  # pods an outcome text names before "and N more"


@dataclass(frozen=True)
class Recorded:
    """One recorded action: the step's `do` and the command shown beside it."""

    do: Obj
    command: str


def clean(body: Obj) -> Obj:
    """The object as a lesson file writes it: no server metadata, no status (except a node's)."""
    out = copy.deepcopy(body)
    meta = out.get("metadata") or {}
    for key in SERVER_METADATA:
        meta.pop(key, None)
    annotations = meta.get("annotations") or {}
    annotations.pop("kubectl.kubernetes.io/last-applied-configuration", None)
    if not annotations:
        meta.pop("annotations", None)
    if out.get("kind") not in KEEPS_STATUS:
        out.pop("status", None)
    return out


def manifest(bodies: list[Obj]) -> str:
    """Objects as one multi-document YAML text."""
    return yaml.safe_dump_all([clean(body) for body in bodies], sort_keys=False)


def _where(meta: Obj, namespaced: bool = True) -> str:
    namespace = meta.get("namespace") or "default"
    return f" -n {namespace}" if namespaced and namespace != "default" else ""


def _file_name(bodies: list[Obj]) -> str:
    names = [str((body.get("metadata") or {}).get("name") or "objects") for body in bodies]
    return f"{names[0]}.yaml" if names else "objects.yaml"


def objects_of(text: str) -> list[Obj]:
    """The objects of a YAML text (a List's items each); none when it does not parse (the action's own
    validation reports that when it runs)."""
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return []
    out: list[Obj] = []
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == "List":
            out.extend(item for item in doc.get("items") or [] if isinstance(item, dict))
        elif isinstance(doc, dict):
            out.append(doc)
    return out


def created_objects(text: str) -> Iterator[tuple[str, str]]:
    """(kind, "namespace/name") of each object in a create action's YAML."""
    for body in objects_of(text):
        meta = body.get("metadata")
        if isinstance(body.get("kind"), str) and isinstance(meta, dict):
            yield body["kind"], f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def created(do: Obj) -> list[tuple[str, str]]:
    """What a step's `do` creates (none unless it is a create)."""
    return list(created_objects(str(do.get("yaml", "")))) if do.get("action") == "create" else []


def command_for(do: Obj) -> str:
    """The kubectl command that makes the change `do` describes."""
    kind = do.get("action")
    if kind in ("create", "replace"):
        verb = "apply" if kind == "create" else "replace"
        return f"kubectl {verb} -f {_file_name(objects_of(str(do.get('yaml', ''))))}"
    if kind == "delete":
        namespaced = do.get("kind") not in ("Node", "Namespace", "PriorityClass")
        suffix = _where({"namespace": do.get("namespace")}, namespaced)
        return f"kubectl delete {str(do.get('kind', '')).lower()} {do.get('name')}{suffix}"
    if kind == "label":
        if do.get("value") is None:
            return f"kubectl label node {do['node']} {do['key']}-"
        overwrite = " --overwrite" if do.get("overwrite", True) else ""
        return f"kubectl label node {do['node']} {do['key']}={do['value']}{overwrite}"
    if kind == "taint":
        value = f"={do['value']}" if do.get("value") else ""
        effect = do.get("effect") or "NoSchedule"
        if do.get("remove"):
            return f"kubectl taint node {do['node']} {do['key']}:{effect}-"
        return f"kubectl taint node {do['node']} {do['key']}{value}:{effect}"
    if kind in ("cordon", "uncordon"):
        return f"kubectl {kind} {do['node']}"
    if kind == "scale":
        suffix = _where({"namespace": do.get("namespace")})
        kind_name = str(do.get("kind", "Deployment")).lower()
        return f"kubectl scale {kind_name} {do['name']} --replicas={do['replicas']}{suffix}"
    return ""


def from_action(do: Obj) -> Recorded:
    """A browser action (as parse_action validated it) recorded as it was sent."""
    removes_label = do.get("action") == "label"  # a label's value None removes it: kept
    kept = {
        key: value
        for key, value in do.items()
        if key != "id" and (value is not None or (key == "value" and removes_label))
    }
    return Recorded(kept, command_for(kept))


def _compared(body: Obj) -> Obj:
    out = clean(body)
    out.pop("status", None)
    return out


def _label_change(before: Obj, after: Obj) -> Obj | None:
    old = before["metadata"].get("labels") or {}
    new = after["metadata"].get("labels") or {}
    changed = sorted(key for key in set(old) | set(new) if old.get(key) != new.get(key))
    if len(changed) != 1:
        return None
    key = changed[0]
    return {"action": "label", "node": after["metadata"]["name"], "key": key, "value": new.get(key)}


def _taint_key(taint: Obj) -> tuple[str, str, str]:
    return (str(taint.get("key", "")), str(taint.get("value", "")), str(taint.get("effect", "")))


def _taint_change(before: Obj, after: Obj) -> Obj | None:
    old = {_taint_key(t) for t in (before.get("spec") or {}).get("taints") or []}
    new = {_taint_key(t) for t in (after.get("spec") or {}).get("taints") or []}
    added, removed = new - old, old - new
    node = after["metadata"]["name"]
    if len(added) == 1 and (not removed or {(k, e) for k, _, e in removed} == {(k, e) for k, _, e in added}):
        key, value, effect = next(iter(added))
        return {"action": "taint", "node": node, "key": key, "value": value, "effect": effect}
    if len(removed) == 1 and not added:
        key, _value, effect = next(iter(removed))
        return {"action": "taint", "node": node, "key": key, "effect": effect, "remove": True}
    return None


def _node_change(before: Obj, after: Obj) -> Obj | None:
    """A node write that is one label, one taint or a cordon (what `kubectl label/taint/cordon` send)."""
    was = bool((before.get("spec") or {}).get("unschedulable"))
    now = bool((after.get("spec") or {}).get("unschedulable"))
    if was != now:
        return {"action": "cordon" if now else "uncordon", "node": after["metadata"]["name"]}
    old, new = _compared(before), _compared(after)
    old_labels, new_labels = old["metadata"].pop("labels", None), new["metadata"].pop("labels", None)
    old_taints = (old.get("spec") or {}).pop("taints", None)
    new_taints = (new.get("spec") or {}).pop("taints", None)
    if old != new:
        return None
    if old_labels != new_labels and old_taints == new_taints:
        return _label_change(before, after)
    if old_taints != new_taints and old_labels == new_labels:
        return _taint_change(before, after)
    return None


def _scale_change(kind: str, before: Obj, after: Obj) -> Obj | None:
    old, new = _compared(before), _compared(after)
    replicas = (new.get("spec") or {}).get("replicas")
    (old.get("spec") or {}).pop("replicas", None)
    (new.get("spec") or {}).pop("replicas", None)
    if old != new or not isinstance(replicas, int):
        return None
    meta = after["metadata"]
    return {
        "action": "scale",
        "kind": kind,
        "name": meta["name"],
        "namespace": meta.get("namespace") or "default",
        "replicas": replicas,
    }


def from_write(kind: str, before: Obj | None, after: Obj | None) -> Recorded | None:
    """A kubectl write as a step, from the object before and after it (None: nothing changed, or a
    write of a kind no lesson step performs)."""
    if before is None and after is None:
        return None
    if after is None or (before is not None and is_terminating(after) and not is_terminating(before)):
        meta = (before or after or {})["metadata"]
        do: Obj = {"action": "delete", "kind": kind, "name": meta["name"]}
        if meta.get("namespace"):
            do["namespace"] = meta["namespace"]
        return Recorded(do, command_for(do))
    if before is None:
        do = {"action": "create", "yaml": manifest([after])}
        return Recorded(do, command_for(do))
    if _compared(before) == _compared(after):
        return None
    change = _node_change(before, after) if kind == "Node" else None
    if change is None and kind in SCALABLE:
        change = _scale_change(kind, before, after)
    if change is None:
        change = {"action": "replace", "yaml": manifest([after])}
    return Recorded(change, command_for(change))


# --- the texts a recorded step starts with ----------------------------------------------------------


def describe(do: Obj) -> str:
    """What the class is told to do (a recorded step's first `say`): the action, never its outcome."""
    kind = do.get("action")
    if kind in ("create", "replace"):
        objects = objects_of(str(do.get("yaml", "")))
        names = ", ".join(f"{o.get('kind')} {(o.get('metadata') or {}).get('name')}" for o in objects) or "objects"
        return (_("Create %(objects)s.") if kind == "create" else _("Change %(objects)s.")) % {"objects": names}
    if kind == "delete":
        return _("Delete %(kind)s %(name)s.") % {"kind": do.get("kind"), "name": do.get("name")}
    if kind == "label":
        if do.get("value") is None:
            return _("Remove the label %(key)s from node %(node)s.") % do
        return _("Label node %(node)s with %(key)s=%(value)s.") % do
    if kind == "taint":
        taint = f"{do['key']}{'=' + do['value'] if do.get('value') else ''}:{do.get('effect') or 'NoSchedule'}"
        if do.get("remove"):
            return _("Remove the taint %(taint)s from node %(node)s.") % {"taint": taint, "node": do["node"]}
        return _("Taint node %(node)s with %(taint)s.") % {"taint": taint, "node": do["node"]}
    if kind == "cordon":
        return _("Cordon node %(node)s.") % do
    if kind == "uncordon":
        return _("Uncordon node %(node)s.") % do
    if kind == "scale":
        return ngettext(
            "Scale %(kind)s %(name)s to %(replicas)d replica.",
            "Scale %(kind)s %(name)s to %(replicas)d replicas.",
            int(do.get("replicas", 0)),
        ) % {"kind": do.get("kind", "Deployment"), "name": do.get("name"), "replicas": do.get("replicas", 0)}
    return _("Run the step.")


def _listed(lines: list[str]) -> list[str]:
    if len(lines) <= MAX_LISTED:
        return lines
    more = len(lines) - MAX_LISTED
    return [*lines[:MAX_LISTED], ngettext("And %(count)d more.", "And %(count)d more.", more) % {"count": more}]


def _owner_prefix(key: str) -> str:
    """A controller's pod by its generated name less the random suffix ("default/web-5d4f8-x7k2q" →
    "default/web-5d4f8"): a replay makes the pod again under another name."""
    return key.rpartition("-")[0] or key


def outcome(before: dict[str, str], after: dict[str, str], messages: dict[str, str], named: set[str]) -> str:
    """What happened (a recorded step's first `after`), from where the pods were before and after:
    "namespace/name" → node ("" while Pending); `messages`: the Pending pods' scheduling message;
    pods not `named` by the lesson (a controller's) are counted by owner, not named."""
    lines: list[str] = []
    scheduled: dict[tuple[str, str], int] = {}
    pending: dict[str, int] = {}
    gone: dict[str, int] = {}
    for key in sorted(after):
        node = after[key]
        if key in before and before[key] == node:
            continue
        if key not in named:
            if node:
                scheduled[(_owner_prefix(key), node)] = scheduled.get((_owner_prefix(key), node), 0) + 1
            elif key not in before:
                pending[_owner_prefix(key)] = pending.get(_owner_prefix(key), 0) + 1
        elif node:
            lines.append(_("%(pod)s was scheduled on %(node)s.") % {"pod": key, "node": node})
        elif key not in before:
            message = messages.get(key, "")
            text = _("%(pod)s stays Pending: %(message)s") if message else _("%(pod)s stays Pending.")
            lines.append(text % {"pod": key, "message": message})
    for key in sorted(set(before) - set(after)):
        if key in named:
            lines.append(_("%(pod)s is gone.") % {"pod": key})
        else:
            gone[_owner_prefix(key)] = gone.get(_owner_prefix(key), 0) + 1
    for (owner, node), count in sorted(scheduled.items()):
        text = ngettext(
            "%(count)d pod of %(owner)s was scheduled on %(node)s.",
            "%(count)d pods of %(owner)s were scheduled on %(node)s.",
            count,
        )
        lines.append(text % {"count": count, "owner": owner, "node": node})
    for owner, count in sorted(pending.items()):
        text = ngettext("%(count)d pod of %(owner)s stays Pending.", "%(count)d pods of %(owner)s stay Pending.", count)
        lines.append(text % {"count": count, "owner": owner})
    for owner, count in sorted(gone.items()):
        text = ngettext("%(count)d pod of %(owner)s is gone.", "%(count)d pods of %(owner)s are gone.", count)
        lines.append(text % {"count": count, "owner": owner})
    if not lines:
        return _("No pod was scheduled, evicted or removed.")
    return " ".join(_listed(lines))
