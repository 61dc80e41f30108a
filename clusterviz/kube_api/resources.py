"""The resource types the endpoint serves: names, groups, scope, verbs — what discovery advertises
and what the request router resolves a URL against."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GROUPS", "RESOURCES", "Resource", "by_kind", "find", "subresource_kind"]

ALL_VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")
READ_VERBS = ("get", "list", "watch")


@dataclass(frozen=True)
class Resource:
    """One served resource type (`pods`, `deployments.apps`, ...)."""

    plural: str
    singular: str
    kind: str
    group: str  # "" is the core group
    version: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[str, ...] = ()
    synthetic: bool = False  # computed on read (leases), never stored

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """How a real API server names the resource in messages: `pods`, `deployments.apps`."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    def allows(self, verb: str) -> bool:
        return verb in self.verbs


RESOURCES: tuple[Resource, ...] = (
    Resource("pods", "pod", "Pod", "", "v1", True, ("po",), ("all",), subresources=("eviction", "status")),
    Resource("nodes", "node", "Node", "", "v1", False, ("no",), subresources=("status",)),
    Resource("events", "event", "Event", "", "v1", True, ("ev",), verbs=(*READ_VERBS, "delete")),
    Resource("namespaces", "namespace", "Namespace", "", "v1", False, ("ns",), subresources=("status",)),
    Resource(
        "deployments",
        "deployment",
        "Deployment",
        "apps",
        "v1",
        True,
        ("deploy",),
        ("all",),
        subresources=("scale", "status"),
    ),
    Resource(
        "replicasets",
        "replicaset",
        "ReplicaSet",
        "apps",
        "v1",
        True,
        ("rs",),
        ("all",),
        subresources=("scale", "status"),
    ),
    # the same Events in events.k8s.io/v1's shape (events_v1.py); the group after apps, as upstream lists it
    Resource("events", "event", "Event", "events.k8s.io", "v1", True, ("ev",), verbs=(*READ_VERBS, "delete")),
    Resource("priorityclasses", "priorityclass", "PriorityClass", "scheduling.k8s.io", "v1", False, ("pc",)),
    # workload and service kinds run by clusterviz/controllers (daemonset, statefulset, job, endpoints)
    Resource("services", "service", "Service", "", "v1", True, ("svc",), ("all",), subresources=("status",)),
    Resource("endpoints", "endpoints", "Endpoints", "", "v1", True, ("ep",), verbs=(*READ_VERBS, "delete")),
    Resource("configmaps", "configmap", "ConfigMap", "", "v1", True, ("cm",)),
    Resource("secrets", "secret", "Secret", "", "v1", True),
    Resource("serviceaccounts", "serviceaccount", "ServiceAccount", "", "v1", True, ("sa",)),
    Resource("limitranges", "limitrange", "LimitRange", "", "v1", True, ("limits",)),
    Resource("resourcequotas", "resourcequota", "ResourceQuota", "", "v1", True, ("quota",)),
    Resource(
        "persistentvolumeclaims",
        "persistentvolumeclaim",
        "PersistentVolumeClaim",
        "",
        "v1",
        True,
        ("pvc",),
        subresources=("status",),
    ),
    Resource("daemonsets", "daemonset", "DaemonSet", "apps", "v1", True, ("ds",), ("all",), subresources=("status",)),
    Resource(
        "statefulsets",
        "statefulset",
        "StatefulSet",
        "apps",
        "v1",
        True,
        ("sts",),
        ("all",),
        subresources=("scale", "status"),
    ),
    Resource("jobs", "job", "Job", "batch", "v1", True, (), ("all",), subresources=("status",)),
    Resource(
        "endpointslices",
        "endpointslice",
        "EndpointSlice",
        "discovery.k8s.io",
        "v1",
        True,
        verbs=(*READ_VERBS, "delete"),
    ),
    Resource(
        "poddisruptionbudgets",
        "poddisruptionbudget",
        "PodDisruptionBudget",
        "policy",
        "v1",
        True,
        ("pdb",),
        subresources=("status",),
    ),
    Resource("controllerrevisions", "controllerrevision", "ControllerRevision", "apps", "v1", True),
    # Dynamic Resource Allocation (GA in v1.34) and the storage kinds VolumeBinding reads
    Resource("deviceclasses", "deviceclass", "DeviceClass", "resource.k8s.io", "v1", False),
    Resource(
        "resourceclaims", "resourceclaim", "ResourceClaim", "resource.k8s.io", "v1", True, subresources=("status",)
    ),
    Resource("resourceclaimtemplates", "resourceclaimtemplate", "ResourceClaimTemplate", "resource.k8s.io", "v1", True),
    Resource("resourceslices", "resourceslice", "ResourceSlice", "resource.k8s.io", "v1", False),
    Resource("storageclasses", "storageclass", "StorageClass", "storage.k8s.io", "v1", False, ("sc",)),
    Resource("csidrivers", "csidriver", "CSIDriver", "storage.k8s.io", "v1", False),
    Resource("csinodes", "csinode", "CSINode", "storage.k8s.io", "v1", False),
    Resource(
        "persistentvolumes", "persistentvolume", "PersistentVolume", "", "v1", False, ("pv",), subresources=("status",)
    ),
    Resource("csistoragecapacities", "csistoragecapacity", "CSIStorageCapacity", "storage.k8s.io", "v1", True),
    Resource("leases", "lease", "Lease", "coordination.k8s.io", "v1", True, verbs=READ_VERBS, synthetic=True),
    # answered for the requester, never stored (`kubectl auth can-i`, `kubectl auth whoami`)
    Resource(
        "selfsubjectaccessreviews",
        "selfsubjectaccessreview",
        "SelfSubjectAccessReview",
        "authorization.k8s.io",
        "v1",
        False,
        verbs=("create",),
        synthetic=True,
    ),
    Resource(
        "selfsubjectrulesreviews",
        "selfsubjectrulesreview",
        "SelfSubjectRulesReview",
        "authorization.k8s.io",
        "v1",
        False,
        verbs=("create",),
        synthetic=True,
    ),
    Resource(
        "selfsubjectreviews",
        "selfsubjectreview",
        "SelfSubjectReview",
        "authentication.k8s.io",
        "v1",
        False,
        verbs=("create",),
        synthetic=True,
    ),
)
REVIEW_KINDS = ("SelfSubjectAccessReview", "SelfSubjectRulesReview", "SelfSubjectReview")

# subresource → (group, version, kind, verbs) of what it takes and answers; others serve their parent's kind
SUBRESOURCE_KINDS: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    "scale": ("autoscaling", "v1", "Scale", ("get", "patch", "update")),
    "eviction": ("policy", "v1", "Eviction", ("create",)),
}
SUBRESOURCE_VERBS = ("get", "patch", "update")


def subresource_kind(res: Resource, sub: str) -> tuple[str, str, str, tuple[str, ...]]:
    """(group, version, kind, verbs) that discovery advertises for `res/sub`."""
    return SUBRESOURCE_KINDS.get(sub, (res.group, res.version, res.kind, SUBRESOURCE_VERBS))


# group → its (only) version, in the order discovery lists them
GROUPS: dict[str, str] = {}
for _res in RESOURCES:
    GROUPS.setdefault(_res.group, _res.version)


def find(group: str, version: str, plural: str) -> Resource | None:
    for res in RESOURCES:
        if res.group == group and res.version == version and res.plural == plural:
            return res
    return None


def by_kind(kind: str) -> Resource | None:
    for res in RESOURCES:
        if res.kind == kind:
            return res
    return None
