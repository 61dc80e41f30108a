"""ControllerRevisions of DaemonSets and StatefulSets (pkg/controller/history, daemon/update.go
`constructHistory`, statefulset/stateful_set_control.go `getStatefulSetRevisions`), one write per step.

A revision holds the patch that restores its pod template — `{"spec":{"template":{…,"$patch":"replace"}}}`,
keys sorted and Go's always-written fields present, as kubectl's `getDaemonSetPatch` builds it, so that
`kubectl rollout undo` sees an unchanged template as "already matches" — its `revision` number, the
`controller-revision-hash` label and a controller ownerReference. The newest template gets the next
number; an old template brought back (`rollout undo`) has its revision renumbered to the next one,
as upstream does, and revisions beyond `revisionHistoryLimit` that no live pod uses are deleted.
"""

from __future__ import annotations

import copy
from typing import Any

from .. import store
from ..models import Cluster, KubeObject
from ..validation import admit
from .owners import owned_by, owner_ref

__all__ = ["HASH_LABEL", "owned_revisions", "sorted_keys", "sync_history", "template_patch"]

HASH_LABEL = "controller-revision-hash"
Obj = dict[str, Any]


def _go_marshalled(template: Obj) -> Obj:
    """The template as Go's json.Marshal of a typed PodTemplateSpec writes it: `creationTimestamp: null`
    and every container's `resources` struct present, every map's keys sorted."""
    template = copy.deepcopy(template)
    template.setdefault("metadata", {}).setdefault("creationTimestamp", None)
    spec = template.setdefault("spec", {})
    for field in ("initContainers", "containers"):
        for container in spec.get(field) or []:
            container.setdefault("resources", {})
    return sorted_keys(template)


def sorted_keys(value: Any) -> Any:
    """`value` with every map's keys in Go's json.Marshal order (sorted)."""
    if isinstance(value, dict):
        return {key: sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(item) for item in value]
    return value


def template_patch(owner: Obj) -> Obj:
    """getPatch: the strategic merge patch that replaces the owner's pod template with its current one."""
    template = _go_marshalled(owner["spec"]["template"])
    return {"spec": {"template": sorted_keys({**template, "$patch": "replace"})}}


def owned_revisions(cluster: Cluster, owner: Obj) -> list[Obj]:
    """The owner's ControllerRevisions, oldest revision first."""
    uid = owner["metadata"]["uid"]
    rows = KubeObject.objects.filter(
        cluster=cluster, kind="ControllerRevision", namespace=owner["metadata"].get("namespace", "default")
    )
    revisions = [row.body for row in rows if owned_by(row.body, uid)]
    return sorted(revisions, key=lambda r: (int(r.get("revision", 0)), r["metadata"]["name"]))


def _new_revision(owner: Obj, template_hash: str, number: int, component: str) -> Obj:
    meta = owner["metadata"]
    labels = {**(owner["spec"]["template"].get("metadata", {}).get("labels") or {}), HASH_LABEL: template_hash}
    revision_meta: Obj = {
        "name": f"{meta['name']}-{template_hash}",
        "namespace": meta.get("namespace", "default"),
        "labels": labels,
        "ownerReferences": [owner_ref(owner)],
    }
    if meta.get("annotations"):
        revision_meta["annotations"] = dict(meta["annotations"])
    body = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": revision_meta,
        "data": template_patch(owner),
        "revision": number,
    }
    return admit(body, component, None)


def _renumber(cluster: Cluster, revision: Obj, number: int, component: str) -> None:
    def update(body: Obj) -> None:
        body["revision"] = number

    meta = revision["metadata"]
    store.patch(cluster, "ControllerRevision", meta["namespace"], meta["name"], update, component)


def sync_history(cluster: Cluster, owner: Obj, template_hash: str, in_use: set[str], component: str) -> bool:
    """One write toward the owner's history (True if one was made): the current template's revision
    created or made the newest, then the oldest unused revision past the history limit deleted.
    `in_use`: the hash labels of the owner's live pods."""
    revisions = owned_revisions(cluster, owner)
    newest = max((int(r.get("revision", 0)) for r in revisions), default=0)
    current = [r for r in revisions if r["metadata"].get("labels", {}).get(HASH_LABEL) == template_hash]
    if not current:
        try:
            store.create(cluster, _new_revision(owner, template_hash, newest + 1, component), component)
        except store.AlreadyExists:  # a name taken by another owner's revision: leave it (hash collision)
            return False
        return True
    if int(current[0].get("revision", 0)) < newest:
        _renumber(cluster, current[0], newest + 1, component)
        return True
    limit = int(owner["spec"].get("revisionHistoryLimit", 10))
    old = [r for r in revisions if r is not current[0]]
    unused = [r for r in old if r["metadata"].get("labels", {}).get(HASH_LABEL) not in in_use]
    if len(old) > limit and unused:
        meta = unused[0]["metadata"]
        store.delete(cluster, "ControllerRevision", meta["namespace"], meta["name"], component)
        return True
    return False
