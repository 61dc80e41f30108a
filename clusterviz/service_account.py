"""ServiceAccounts as a default kube-apiserver and kube-controller-manager keep them: the `default`
ServiceAccount of every namespace (the serviceaccount controller's; served computed where none is
stored, as the built-in namespaces are), and the ServiceAccount admission plugin
(plugin/pkg/admission/serviceaccount/admission.go) on every new pod: `serviceAccountName` defaults to
`default`, the account must exist, and unless automounting is off (the pod's
automountServiceAccountToken, else the account's) the pod gets the projected `kube-api-access-<5>`
volume — a bound token, the cluster's CA bundle (ConfigMap kube-root-ca.crt), the namespace — mounted
read-only at /var/run/secrets/kubernetes.io/serviceaccount in each container that mounts nothing there."""

from __future__ import annotations

import copy
import secrets
from typing import Any

from . import store
from .models import Cluster

__all__ = ["TOKEN_MOUNT_PATH", "ServiceAccountMissing", "default_service_account", "with_service_account"]

Obj = dict[str, Any]
TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_EXPIRATION_SECONDS = 3607  # serviceaccount.DefaultTokenExpirationSeconds (an hour and 7 s)
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # utilrand.String: no vowels, no look-alikes


class ServiceAccountMissing(store.Forbidden):
    """`pods "p" is forbidden: error looking up service account ns/name: serviceaccount "name" not found`."""


def default_service_account(cluster: Cluster, namespace: str, created: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {
            "name": "default",
            "namespace": namespace,
            "uid": f"serviceaccount-{cluster.pk}-{namespace}",
            "resourceVersion": "1",
            "creationTimestamp": created,
        },
    }


def _account(cluster: Cluster, namespace: str, name: str) -> Obj | None:
    try:
        return store.get(cluster, "ServiceAccount", namespace, name)
    except store.NotFound:
        return {} if name == "default" else None  # the controller's, computed: automounting on


def _token_volume(name: str) -> Obj:
    return {
        "name": name,
        "projected": {
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {
                    "downwardAPI": {
                        "items": [
                            {"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}
                        ]
                    }
                },
            ],
            "defaultMode": 420,
        },
    }


def with_service_account(cluster: Cluster, pod: Obj) -> Obj:
    """The ServiceAccount admission plugin on a new pod (module docstring)."""
    meta = pod["metadata"]
    if MIRROR_ANNOTATION in (meta.get("annotations") or {}):
        return pod
    out = copy.deepcopy(pod)
    spec = out.setdefault("spec", {})
    name = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    spec["serviceAccountName"] = spec["serviceAccount"] = name
    namespace = meta.get("namespace") or "default"
    account = _account(cluster, namespace, name)
    if account is None:
        shown = meta.get("name") or meta.get("generateName") or ""
        raise ServiceAccountMissing(
            f'pods "{shown}" is forbidden: error looking up service account {namespace}/{name}: '
            f'serviceaccount "{name}" not found'
        )
    automount = spec.get("automountServiceAccountToken")
    if automount is None:
        automount = account.get("automountServiceAccountToken")
    if automount is False:
        return out
    containers = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    needing = [
        c for c in containers if not any(m.get("mountPath") == TOKEN_MOUNT_PATH for m in c.get("volumeMounts") or [])
    ]
    if not needing:
        return out
    volume = f"kube-api-access-{''.join(secrets.choice(NAME_ALPHABET) for _ in range(5))}"
    spec.setdefault("volumes", []).append(_token_volume(volume))
    for container in needing:
        container.setdefault("volumeMounts", []).append(
            {"name": volume, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}
        )
    return out
