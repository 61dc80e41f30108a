"""The admission plugins that read the cluster's other objects, run on every new object whatever
door it came through (kubectl, the browser, a controller), in kube-apiserver's order after the
object's own validation and defaults: LimitRanger then ServiceAccount for pods
(clusterviz/limit_ranges.py, service_account.py), DefaultStorageClass for PersistentVolumeClaims, and
last ResourceQuota for every kind a quota counts (clusterviz/resource_quotas.py)
(plugin/pkg/admission/storage/storageclass/setdefault/admission.go)."""

from __future__ import annotations

import copy
from typing import Any

from . import store
from .limit_ranges import apply_limit_ranges
from .models import Cluster
from .resource_quotas import check_quotas
from .service_account import with_service_account

__all__ = ["DEFAULT_CLASS_ANNOTATIONS", "admit_new", "default_storage_class"]

Obj = dict[str, Any]
DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)


def default_storage_class(cluster: Cluster) -> Obj | None:
    """GetDefaultClass (pkg/volume/util/storageclass.go): of the classes annotated default, the
    newest, then the first by name."""
    defaults = [
        body
        for body in store.list_objects(cluster, "StorageClass")
        if any((body["metadata"].get("annotations") or {}).get(key) == "true" for key in DEFAULT_CLASS_ANNOTATIONS)
    ]
    if not defaults:
        return None
    defaults.sort(key=lambda body: body["metadata"]["name"])
    defaults.sort(key=lambda body: body["metadata"].get("creationTimestamp") or "", reverse=True)
    return defaults[0]


def _with_default_class(cluster: Cluster, claim: Obj) -> Obj:
    """A claim that names no class (not even "") gets the default one, if there is one."""
    spec = claim.get("spec") or {}
    if "storageClassName" in spec:
        return claim
    default = default_storage_class(cluster)
    if default is None:
        return claim
    out = copy.deepcopy(claim)
    out.setdefault("spec", {})["storageClassName"] = default["metadata"]["name"]
    return out


def admit_new(
    cluster: Cluster, body: Obj, limit_ranges: list[Obj] | None = None, alongside: list[Obj] | tuple[Obj, ...] = ()
) -> Obj:
    """A new, admitted object after the plugins that read the cluster (`limit_ranges`: a pod's
    namespace's, when the caller read them already; `alongside`: what the same bulk write admitted
    before it); store.Forbidden when one refuses it."""
    kind = body.get("kind")
    if kind == "Pod":
        body = with_service_account(cluster, apply_limit_ranges(cluster, body, limit_ranges))
    elif kind == "PersistentVolumeClaim":
        body = _with_default_class(cluster, body)
    check_quotas(cluster, body, alongside)  # ResourceQuota, the last plugin: it counts what the others set
    return body
