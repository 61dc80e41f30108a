"""`meta.k8s.io/v1` Table responses: the columns and server-computed cells of the real 1.32 printers
(pkg/printers/internalversion/printers.go). kubectl has no client-side printers for these types any
more, so everything `kubectl get` shows (AGE, STATUS, ROLES, ...) is computed here."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from . import events_v1
from .accept import negotiate
from .events_v1 import to_core
from .resources import Resource
from .selectors import format_label_selector

__all__ = ["human_duration", "table", "table_version"]

Obj = dict[str, Any]
Column = tuple[str, str, str, int, str]  # name, type, format, priority, description


def table_version(accept: str) -> str | None:
    """ "v1" or "v1beta1" when the Accept header asks for a Table (first acceptable wins), else None."""
    return negotiate(accept, "Table", "meta.k8s.io", ("v1", "v1beta1"))


def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


def _since(stamp: str | None, now: datetime) -> str:
    """translateTimestampSince: `<unknown>` for a missing timestamp."""
    if not stamp:
        return "<unknown>"
    try:
        then = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return "<unknown>"
    return human_duration((now - then).total_seconds())


def _containers(obj: Obj, template: bool = True) -> list[Obj]:
    spec = obj.get("spec", {})
    if template:
        spec = spec.get("template", {}).get("spec", {})
    return spec.get("containers", [])


# --- pods ---------------------------------------------------------------------------------


def pod_status(pod: Obj) -> tuple[str, int, int]:
    """(STATUS, ready containers, restarts) as printPod computes them."""
    status = pod.get("status", {})
    reason = status.get("reason") or status.get("phase") or ""
    for condition in status.get("conditions", []):
        if condition.get("type") == "PodScheduled" and condition.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    ready = restarts = 0
    has_running = False
    for container in reversed(status.get("containerStatuses", [])):
        restarts += int(container.get("restartCount", 0))
        state = container.get("state", {})
        waiting, terminated = state.get("waiting"), state.get("terminated")
        if waiting is not None and waiting.get("reason"):
            reason = waiting["reason"]
        elif terminated is not None and terminated.get("reason"):
            reason = terminated["reason"]
        elif terminated is not None:
            signal = terminated.get("signal")
            reason = f"Signal:{signal}" if signal else f"ExitCode:{terminated.get('exitCode', 0)}"
        elif container.get("ready") and state.get("running") is not None:
            has_running = True
            ready += 1
    if reason == "Completed" and has_running:
        ready_condition = any(
            c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions", [])
        )
        reason = "Running" if ready_condition else "NotReady"
    if pod.get("metadata", {}).get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else reason
        if status.get("phase") not in ("Succeeded", "Failed") and status.get("reason") != "NodeLost":
            reason = "Terminating"
    return reason, ready, restarts


def _pod_cells(pod: Obj, now: datetime) -> list[Any]:
    reason, ready, restarts = pod_status(pod)
    status, spec = pod.get("status", {}), pod.get("spec", {})
    ips = status.get("podIPs") or ([{"ip": status["podIP"]}] if status.get("podIP") else [])
    gates = spec.get("readinessGates") or []
    gate_text = "<none>"
    if gates:
        conditions = {c.get("type"): c.get("status") for c in status.get("conditions", [])}
        passed = sum(1 for g in gates if conditions.get(g.get("conditionType")) == "True")
        gate_text = f"{passed}/{len(gates)}"
    return [
        pod["metadata"].get("name", ""),
        f"{ready}/{len(spec.get('containers', []))}",
        reason,
        str(restarts),
        _since(pod["metadata"].get("creationTimestamp"), now),
        ips[0]["ip"] if ips else "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        gate_text,
    ]


# --- nodes --------------------------------------------------------------------------------


def _node_cells(node: Obj, now: datetime) -> list[Any]:
    meta, spec, status = node["metadata"], node.get("spec", {}), node.get("status", {})
    states: list[str] = []
    for condition in status.get("conditions", []):
        if condition.get("type") == "Ready":
            states.append("Ready" if condition.get("status") == "True" else "NotReady")
    if not states:
        states.append("Unknown")
    if spec.get("unschedulable"):
        states.append("SchedulingDisabled")
    roles: set[str] = set()
    for key, value in (meta.get("labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/") and key != "node-role.kubernetes.io/":
            roles.add(key.removeprefix("node-role.kubernetes.io/"))
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    addresses = status.get("addresses", [])
    internal = next((a["address"] for a in addresses if a.get("type") == "InternalIP"), "<none>")
    external = next((a["address"] for a in addresses if a.get("type") == "ExternalIP"), "<none>")
    info = status.get("nodeInfo", {})
    return [
        meta.get("name", ""),
        ",".join(states),
        ",".join(sorted(roles)) or "<none>",
        _since(meta.get("creationTimestamp"), now),
        info.get("kubeletVersion", ""),
        internal,
        external,
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


# --- events -------------------------------------------------------------------------------


def _event_cells(event: Obj, now: datetime) -> list[Any]:
    first = _since(event.get("firstTimestamp") or event.get("eventTime"), now)
    last = _since(event["lastTimestamp"], now) if event.get("lastTimestamp") else first
    involved = event.get("involvedObject", {})
    kind = str(involved.get("kind", "")).lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = event.get("source", {})
    component = source.get("component") or event.get("reportingComponent", "")
    instance = source.get("host") or event.get("reportingInstance", "")
    return [
        last,
        event.get("type", ""),
        event.get("reason", ""),
        target,
        involved.get("fieldPath", ""),
        f"{component}, {instance}" if instance else component,
        str(event.get("message", "")).strip(),
        first,
        int(event.get("count") or 1),
        event["metadata"].get("name", ""),
    ]


# --- workloads and the rest ---------------------------------------------------------------


def _workload_tail(obj: Obj) -> list[Any]:
    containers = _containers(obj)
    return [
        ",".join(c.get("name", "") for c in containers),
        ",".join(c.get("image", "") for c in containers),
        format_label_selector(obj.get("spec", {}).get("selector")),
    ]


def _deployment_cells(obj: Obj, now: datetime) -> list[Any]:
    spec, status = obj.get("spec", {}), obj.get("status", {})
    return [
        obj["metadata"].get("name", ""),
        f"{int(status.get('readyReplicas', 0))}/{int(spec.get('replicas', 1))}",
        int(status.get("updatedReplicas", 0)),
        int(status.get("availableReplicas", 0)),
        _since(obj["metadata"].get("creationTimestamp"), now),
        *_workload_tail(obj),
    ]


def _replicaset_cells(obj: Obj, now: datetime) -> list[Any]:
    spec, status = obj.get("spec", {}), obj.get("status", {})
    return [
        obj["metadata"].get("name", ""),
        int(spec.get("replicas", 1)),
        int(status.get("replicas", 0)),
        int(status.get("readyReplicas", 0)),
        _since(obj["metadata"].get("creationTimestamp"), now),
        *_workload_tail(obj),
    ]


def _namespace_cells(obj: Obj, now: datetime) -> list[Any]:
    return [
        obj["metadata"].get("name", ""),
        obj.get("status", {}).get("phase", "Active"),
        _since(obj["metadata"].get("creationTimestamp"), now),
    ]


def _priorityclass_cells(obj: Obj, now: datetime) -> list[Any]:
    return [
        obj["metadata"].get("name", ""),
        int(obj.get("value", 0)),
        bool(obj.get("globalDefault", False)),
        _since(obj["metadata"].get("creationTimestamp"), now),
        obj.get("preemptionPolicy", "PreemptLowerPriority"),
    ]


def _lease_cells(obj: Obj, now: datetime) -> list[Any]:
    return [
        obj["metadata"].get("name", ""),
        obj.get("spec", {}).get("holderIdentity", ""),
        _since(obj["metadata"].get("creationTimestamp"), now),
    ]


# --- kinds run by clusterviz/controllers (printers.go printDaemonSet, printJob, printService ...) ----


def _labels_text(labels: dict[str, str] | None) -> str:
    """labels.FormatLabels: `k=v,k2=v2` sorted, `<none>` when empty."""
    return ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items())) or "<none>"


def _template_tail(obj: Obj, selector: bool = True) -> list[Any]:
    containers = _containers(obj)
    tail = [",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers)]
    if selector:
        tail.append(format_label_selector(obj.get("spec", {}).get("selector")))
    return tail


def _daemonset_cells(obj: Obj, now: datetime) -> list[Any]:
    status = obj.get("status", {})
    node_selector = obj.get("spec", {}).get("template", {}).get("spec", {}).get("nodeSelector")
    return [
        obj["metadata"].get("name", ""),
        int(status.get("desiredNumberScheduled", 0)),
        int(status.get("currentNumberScheduled", 0)),
        int(status.get("numberReady", 0)),
        int(status.get("updatedNumberScheduled", 0)),
        int(status.get("numberAvailable", 0)),
        _labels_text(node_selector),
        _since(obj["metadata"].get("creationTimestamp"), now),
        *_template_tail(obj),
    ]


def _statefulset_cells(obj: Obj, now: datetime) -> list[Any]:
    spec, status = obj.get("spec", {}), obj.get("status", {})
    return [
        obj["metadata"].get("name", ""),
        f"{int(status.get('readyReplicas', 0))}/{int(spec.get('replicas', 1))}",
        _since(obj["metadata"].get("creationTimestamp"), now),
        *_template_tail(obj, selector=False),
    ]


def _has_condition(obj: Obj, kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in obj.get("status", {}).get("conditions", []))


def _job_status(obj: Obj) -> str:
    if _has_condition(obj, "Complete"):
        return "Complete"
    if _has_condition(obj, "Failed"):
        return "Failed"
    if obj["metadata"].get("deletionTimestamp"):
        return "Terminating"
    if _has_condition(obj, "Suspended"):
        return "Suspended"
    if _has_condition(obj, "FailureTarget"):
        return "FailureTarget"
    return "Running"


def _stamp(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _job_cells(obj: Obj, now: datetime) -> list[Any]:
    spec, status = obj.get("spec", {}), obj.get("status", {})
    succeeded = int(status.get("succeeded", 0))
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{int(spec['completions'])}"
    else:
        parallelism = int(spec.get("parallelism") or 0)
        completions = f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    started, finished = _stamp(status.get("startTime")), _stamp(status.get("completionTime"))
    duration = ""
    if started is not None:
        duration = human_duration(((finished or now) - started).total_seconds())
    return [
        obj["metadata"].get("name", ""),
        _job_status(obj),
        completions,
        duration,
        _since(obj["metadata"].get("creationTimestamp"), now),
        *_template_tail(obj),
    ]


def _service_cells(obj: Obj, now: datetime) -> list[Any]:
    spec = obj.get("spec", {})
    kind = spec.get("type", "ClusterIP")
    external = spec.get("externalIPs") or []
    if kind == "LoadBalancer":
        ingress = [
            i.get("ip") or i.get("hostname") for i in obj.get("status", {}).get("loadBalancer", {}).get("ingress", [])
        ]
        external_text = ",".join([*ingress, *external]) or "<pending>"
    elif kind == "ExternalName":
        external_text = spec.get("externalName", "")
    else:
        external_text = ",".join(external) or "<none>"
    ports = []
    for port in spec.get("ports", []):
        node_port = f":{port['nodePort']}" if int(port.get("nodePort") or 0) > 0 else ""
        ports.append(f"{port.get('port')}{node_port}/{port.get('protocol', 'TCP')}")
    return [
        obj["metadata"].get("name", ""),
        kind,
        (spec.get("clusterIPs") or ["<none>"])[0],
        external_text,
        ",".join(ports) or "<none>",
        _since(obj["metadata"].get("creationTimestamp"), now),
        _labels_text(spec.get("selector")),
    ]


def _more(items: list[str]) -> str:
    """formatEndpoints' cap: three shown, then ` + N more...`."""
    if not items:
        return "<none>"
    text = ",".join(items[:3])
    return text + (f" + {len(items) - 3} more..." if len(items) > 3 else "")


def _endpoints_cells(obj: Obj, now: datetime) -> list[Any]:
    items = []
    for subset in obj.get("subsets", []):
        ports = subset.get("ports") or [{}]
        for address in subset.get("addresses", []):
            for port in ports:
                items.append(f"{address.get('ip')}:{port['port']}" if "port" in port else address.get("ip", ""))
    return [obj["metadata"].get("name", ""), _more(items), _since(obj["metadata"].get("creationTimestamp"), now)]


def _endpointslice_cells(obj: Obj, now: datetime) -> list[Any]:
    ports = [str(p["port"]) if p.get("port") is not None else "<unset>" for p in obj.get("ports") or []]
    addresses = [a for e in obj.get("endpoints") or [] for a in e.get("addresses", [])]
    return [
        obj["metadata"].get("name", ""),
        obj.get("addressType", ""),
        ",".join(ports) or "<unset>",
        _more(addresses) if addresses else "<unset>",
        _since(obj["metadata"].get("creationTimestamp"), now),
    ]


def _configmap_cells(obj: Obj, now: datetime) -> list[Any]:
    count = len(obj.get("data") or {}) + len(obj.get("binaryData") or {})
    return [obj["metadata"].get("name", ""), count, _since(obj["metadata"].get("creationTimestamp"), now)]


def _secret_cells(obj: Obj, now: datetime) -> list[Any]:
    return [
        obj["metadata"].get("name", ""),
        obj.get("type", "Opaque"),
        len(obj.get("data") or {}),
        _since(obj["metadata"].get("creationTimestamp"), now),
    ]


def _resourcequota_cells(obj: Obj, now: datetime) -> list[Any]:
    """printResourceQuota: `resource: used/hard` of each resource, the limits.* ones under LIMIT."""
    status = obj.get("status") or {}
    hard, used = status.get("hard") or {}, status.get("used") or {}
    requests, limits = [], []
    for name in sorted(hard):
        cell = f"{name}: {used.get(name, '0')}/{hard[name]}"
        (limits if name.split(".")[0] == "limits" and "." in name else requests).append(cell)
    return [
        obj["metadata"].get("name", ""),
        _since(obj["metadata"].get("creationTimestamp"), now),
        ", ".join(requests),
        ", ".join(limits),
    ]


def _limitrange_cells(obj: Obj, now: datetime) -> list[Any]:
    """printLimitRange: the name and the creation time as RFC 3339."""
    return [obj["metadata"].get("name", ""), obj["metadata"].get("creationTimestamp") or ""]


def _serviceaccount_cells(obj: Obj, now: datetime) -> list[Any]:
    return [
        obj["metadata"].get("name", ""),
        len(obj.get("secrets") or []),
        _since(obj["metadata"].get("creationTimestamp"), now),
    ]


_ACCESS_MODES = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}
BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"


def access_modes_text(modes: Any) -> str:
    """helper.GetAccessModesAsString: each mode held, once, in the order RWO, ROX, RWX, RWOP."""
    held = set(modes or [])
    return ",".join(short for mode, short in _ACCESS_MODES.items() if mode in held)


def _volume_cells(obj: Obj, now: datetime) -> list[Any]:
    """printPersistentVolume: the claim as namespace/name, the class (the beta annotation first,
    helper.GetPersistentVolumeClass), `Terminating` while deleted."""
    meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
    ref = spec.get("claimRef")
    claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if isinstance(ref, dict) else ""
    phase = "Terminating" if meta.get("deletionTimestamp") else status.get("phase", "")
    storage_class = (meta.get("annotations") or {}).get(BETA_STORAGE_CLASS, spec.get("storageClassName", ""))
    return [
        meta.get("name", ""),
        (spec.get("capacity") or {}).get("storage", "0"),
        access_modes_text(spec.get("accessModes")),
        spec.get("persistentVolumeReclaimPolicy", ""),
        phase,
        claim,
        storage_class,
        spec.get("volumeAttributesClassName") or "<unset>",
        status.get("reason", ""),
        _since(meta.get("creationTimestamp"), now),
        spec.get("volumeMode") or "<unset>",
    ]


def _csi_node_cells(obj: Obj, now: datetime) -> list[Any]:
    """printCSINode: how many drivers the node has registered."""
    drivers = (obj.get("spec") or {}).get("drivers") or []
    return [obj["metadata"].get("name", ""), len(drivers), _age(obj, now)]


def _claim_cells(obj: Obj, now: datetime) -> list[Any]:
    spec, status = obj.get("spec", {}), obj.get("status", {})
    bound = status.get("phase") == "Bound"
    modes = status.get("accessModes") if bound else []
    return [
        obj["metadata"].get("name", ""),
        status.get("phase", "Pending"),
        spec.get("volumeName", ""),
        (status.get("capacity") or {}).get("storage", "") if bound else "",
        access_modes_text(modes),
        spec.get("storageClassName", ""),
        spec.get("volumeAttributesClassName") or "<unset>",
        _since(obj["metadata"].get("creationTimestamp"), now),
        spec.get("volumeMode", "Filesystem"),
    ]


def _budget_cells(obj: Obj, now: datetime) -> list[Any]:
    """printPodDisruptionBudget: the IntOrString budgets as written, `N/A` when unset."""
    spec = obj.get("spec", {})
    budgets = [str(spec[key]) if spec.get(key) is not None else "N/A" for key in ("minAvailable", "maxUnavailable")]
    allowed = int((obj.get("status") or {}).get("disruptionsAllowed", 0))
    return [obj["metadata"].get("name", ""), *budgets, allowed, _since(obj["metadata"].get("creationTimestamp"), now)]


def _revision_cells(obj: Obj, now: datetime) -> list[Any]:
    """printControllerRevision: the controller as `daemonset.apps/name`."""
    ref = next((r for r in obj["metadata"].get("ownerReferences", []) if r.get("controller")), None)
    controller = "<none>"
    if ref is not None:
        group = str(ref.get("apiVersion", "")).rpartition("/")[0]
        kind = str(ref.get("kind", ""))
        controller = f"{kind}.{group}".lower() if group else kind.lower()
        controller = f"{controller}/{ref.get('name', '')}"
    return [
        obj["metadata"].get("name", ""),
        controller,
        obj.get("revision", 0),
        _since(obj["metadata"].get("creationTimestamp"), now),
    ]


def _age(obj: Obj, now: datetime) -> str:
    return _since(obj["metadata"].get("creationTimestamp"), now)


def _name_age_cells(obj: Obj, now: datetime) -> list[Any]:
    """DeviceClass, ResourceClaimTemplate: the name and the age."""
    return [obj["metadata"].get("name", ""), _age(obj, now)]


def resource_claim_state(obj: Obj) -> str:
    """resourceClaimState: deleted, pending, allocated, reserved — those that hold, joined by commas."""
    status = obj.get("status") or {}
    states = []
    deleted = bool(obj["metadata"].get("deletionTimestamp"))
    if deleted:
        states.append("deleted")
    if status.get("allocation") is None:
        if not deleted:
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
    return ",".join(states)


def _resource_claim_cells(obj: Obj, now: datetime) -> list[Any]:
    return [obj["metadata"].get("name", ""), resource_claim_state(obj), _age(obj, now)]


def _resource_slice_cells(obj: Obj, now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    pool = (spec.get("pool") or {}).get("name", "")
    return [obj["metadata"].get("name", ""), spec.get("nodeName", ""), spec.get("driver", ""), pool, _age(obj, now)]


_DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)


def _storage_class_cells(obj: Obj, now: datetime) -> list[Any]:
    """printStorageClass: `(default)` after the default class's name."""
    meta = obj["metadata"]
    name = meta.get("name", "")
    if any((meta.get("annotations") or {}).get(key) == "true" for key in _DEFAULT_CLASS_ANNOTATIONS):
        name += " (default)"
    return [
        name,
        obj.get("provisioner", ""),
        obj.get("reclaimPolicy") or "Delete",
        obj.get("volumeBindingMode") or "Immediate",
        bool(obj.get("allowVolumeExpansion", False)),
        _age(obj, now),
    ]


def _csi_driver_cells(obj: Obj, now: datetime) -> list[Any]:
    """printCSIDriver: the spec's switches with the API's defaults; token audiences and modes joined."""
    spec = obj.get("spec") or {}
    audiences = [str(t.get("audience", "")) for t in spec.get("tokenRequests") or []]
    modes = spec.get("volumeLifecycleModes") or []
    return [
        obj["metadata"].get("name", ""),
        bool(spec.get("attachRequired", True)),
        bool(spec.get("podInfoOnMount", False)),
        bool(spec.get("storageCapacity", False)),
        ",".join(audiences) if audiences else "<unset>",
        bool(spec.get("requiresRepublish", False)),
        ",".join(modes) if modes else "<none>",
        _age(obj, now),
    ]


def _storage_capacity_cells(obj: Obj, now: datetime) -> list[Any]:
    """printCSIStorageCapacity: no age; `<unset>` without a capacity."""
    capacity = obj.get("capacity")
    return [
        obj["metadata"].get("name", ""),
        obj.get("storageClassName", ""),
        "<unset>" if capacity is None else capacity,
    ]


_NAME = ("Name", "string", "name", 0, "Name must be unique within a namespace.")
_AGE = ("Age", "string", "", 0, "CreationTimestamp is the time this object was created.")
_WORKLOAD_TAIL: list[Column] = [
    ("Containers", "string", "", 1, "Names of each container in the template."),
    ("Images", "string", "", 1, "Images referenced by each container in the template."),
    ("Selector", "string", "", 1, "Label selector for pods."),
]

PRINTERS: dict[str, tuple[list[Column], Callable[[Obj, datetime], list[Any]]]] = {
    "Pod": (
        [
            _NAME,
            ("Ready", "string", "", 0, "The aggregate readiness state of this pod for accepting traffic."),
            ("Status", "string", "", 0, "The aggregate status of the containers in this pod."),
            ("Restarts", "string", "", 0, "The number of times the containers in this pod have been restarted."),
            _AGE,
            ("IP", "string", "", 1, "IP address allocated to the pod."),
            ("Node", "string", "", 1, "Name of the node the pod is assigned to."),
            ("Nominated Node", "string", "", 1, "Name of the node the pod is nominated to."),
            ("Readiness Gates", "string", "", 1, "The readiness gates of the pod."),
        ],
        _pod_cells,
    ),
    "Node": (
        [
            _NAME,
            ("Status", "string", "", 0, "The status of the node"),
            ("Roles", "string", "", 0, "The roles of the node"),
            _AGE,
            ("Version", "string", "", 0, "Kubelet Version reported by the node."),
            ("Internal-IP", "string", "", 1, "List of internal IPs for the node."),
            ("External-IP", "string", "", 1, "List of external IPs for the node."),
            ("OS-Image", "string", "", 1, "OS Image reported by the node."),
            ("Kernel-Version", "string", "", 1, "Kernel Version reported by the node."),
            ("Container-Runtime", "string", "", 1, "Container Runtime Version reported by the node."),
        ],
        _node_cells,
    ),
    "Event": (
        [
            ("Last Seen", "string", "", 0, "The time at which the most recent occurrence of this event was recorded."),
            ("Type", "string", "", 0, "Type of this event (Normal, Warning)."),
            ("Reason", "string", "", 0, "This should be a short, machine understandable string."),
            ("Object", "string", "", 0, "The object that this event is about."),
            ("Subobject", "string", "", 1, "The subobject (field path) that this event is about."),
            ("Source", "string", "", 1, "The component reporting this event."),
            ("Message", "string", "", 0, "A human-readable description of the status of this operation."),
            ("First Seen", "string", "", 1, "The time at which the event was first recorded."),
            ("Count", "integer", "", 1, "The number of times this event has occurred."),
            ("Name", "string", "name", 1, "Name must be unique within a namespace."),
        ],
        _event_cells,
    ),
    "Deployment": (
        [
            _NAME,
            ("Ready", "string", "", 0, "Number of the pod with ready state"),
            ("Up-to-date", "integer", "", 0, "Total number of non-terminated pods targeted by this deployment."),
            ("Available", "integer", "", 0, "Total number of available pods (ready for at least minReadySeconds)."),
            _AGE,
            *_WORKLOAD_TAIL,
        ],
        _deployment_cells,
    ),
    "ReplicaSet": (
        [
            _NAME,
            ("Desired", "integer", "", 0, "Number of desired pods."),
            ("Current", "integer", "", 0, "Number of actual replicas."),
            ("Ready", "integer", "", 0, "The number of ready replicas for this replica set."),
            _AGE,
            *_WORKLOAD_TAIL,
        ],
        _replicaset_cells,
    ),
    "Namespace": (
        [_NAME, ("Status", "string", "", 0, "The status of the namespace"), _AGE],
        _namespace_cells,
    ),
    "PriorityClass": (
        [
            _NAME,
            ("Value", "integer", "", 0, "The value of this priority class."),
            ("Global-Default", "boolean", "", 0, "Whether this priority class is the global default."),
            _AGE,
            ("PreemptionPolicy", "string", "", 0, "The preemption policy of this priority class."),
        ],
        _priorityclass_cells,
    ),
    "Lease": (
        [_NAME, ("Holder", "string", "", 0, "The holder of the lease."), _AGE],
        _lease_cells,
    ),
    "DaemonSet": (
        [
            _NAME,
            ("Desired", "integer", "", 0, "The desired number of pods."),
            ("Current", "integer", "", 0, "The current number of pods."),
            ("Ready", "integer", "", 0, "The number of pods ready."),
            ("Up-to-date", "integer", "", 0, "The number of pods updated."),
            ("Available", "integer", "", 0, "The number of pods available."),
            ("Node Selector", "string", "", 0, "The node selector of the pod template."),
            _AGE,
            *_WORKLOAD_TAIL,
        ],
        _daemonset_cells,
    ),
    "StatefulSet": (
        [
            _NAME,
            ("Ready", "string", "", 0, "Number of the pod with ready state"),
            _AGE,
            ("Containers", "string", "", 1, "Names of each container in the template."),
            ("Images", "string", "", 1, "Images referenced by each container in the template."),
        ],
        _statefulset_cells,
    ),
    "Job": (
        [
            _NAME,
            ("Status", "string", "", 0, "Status of the job."),
            ("Completions", "string", "", 0, "The completion status of the job."),
            ("Duration", "string", "", 0, "Time required to complete the job."),
            _AGE,
            *_WORKLOAD_TAIL,
        ],
        _job_cells,
    ),
    "Service": (
        [
            _NAME,
            ("Type", "string", "", 0, "The type of the service."),
            ("Cluster-IP", "string", "", 0, "The cluster IP of the service."),
            ("External-IP", "string", "", 0, "The external IP of the service."),
            ("Port(s)", "string", "", 0, "The ports of the service."),
            _AGE,
            (
                "Selector",
                "string",
                "",
                1,
                "Route service traffic to pods with label keys and values matching this selector.",
            ),
        ],
        _service_cells,
    ),
    "Endpoints": (
        [_NAME, ("Endpoints", "string", "", 0, "Endpoints of the service."), _AGE],
        _endpoints_cells,
    ),
    "EndpointSlice": (
        [
            _NAME,
            ("AddressType", "string", "", 0, "The type of addresses in this EndpointSlice."),
            ("Ports", "string", "", 0, "The ports of this EndpointSlice."),
            ("Endpoints", "string", "", 0, "The endpoints of this EndpointSlice."),
            _AGE,
        ],
        _endpointslice_cells,
    ),
    "ConfigMap": (
        [_NAME, ("Data", "string", "", 0, "The number of entries in the configmap."), _AGE],
        _configmap_cells,
    ),
    "Secret": (
        [
            _NAME,
            ("Type", "string", "", 0, "The type of the secret."),
            ("Data", "string", "", 0, "The number of entries in the secret."),
            _AGE,
        ],
        _secret_cells,
    ),
    "ResourceQuota": (
        [
            _NAME,
            _AGE,
            (
                "Request",
                "string",
                "",
                0,
                "Request represents a minimum amount of cpu/memory that a container may consume.",
            ),
            (
                "Limit",
                "string",
                "",
                0,
                "Limits control the maximum amount of cpu/memory that a container may use independent of contention "
                "on the node.",
            ),
        ],
        _resourcequota_cells,
    ),
    "LimitRange": (
        [_NAME, ("Created At", "date", "", 0, "CreationTimestamp is the time this object was created.")],
        _limitrange_cells,
    ),
    "ServiceAccount": (
        [_NAME, ("Secrets", "string", "", 0, "The number of secrets of the service account."), _AGE],
        _serviceaccount_cells,
    ),
    "PodDisruptionBudget": (
        [
            _NAME,
            ("Min Available", "string", "", 0, "The minimum number of pods that must be available."),
            ("Max Unavailable", "string", "", 0, "The maximum number of pods that may be unavailable."),
            ("Allowed Disruptions", "integer", "", 0, "Calculated number of pods that may be disrupted at this time."),
            _AGE,
        ],
        _budget_cells,
    ),
    "ControllerRevision": (
        [
            _NAME,
            ("Controller", "string", "", 0, "Controller of the object"),
            ("Revision", "string", "", 0, "Revision indicates the revision of the state represented by Data."),
            _AGE,
        ],
        _revision_cells,
    ),
    "PersistentVolumeClaim": (
        [
            _NAME,
            ("Status", "string", "", 0, "The status of the claim."),
            ("Volume", "string", "", 0, "The volume bound to the claim."),
            ("Capacity", "string", "", 0, "The capacity of the bound volume."),
            ("Access Modes", "string", "", 0, "The access modes of the bound volume."),
            ("StorageClass", "string", "", 0, "The storage class of the claim."),
            ("VolumeAttributesClass", "string", "", 0, "The volume attributes class of the claim."),
            _AGE,
            ("VolumeMode", "string", "", 1, "The volume mode of the claim."),
        ],
        _claim_cells,
    ),
    "PersistentVolume": (
        [
            _NAME,
            (
                "Capacity",
                "string",
                "",
                0,
                "capacity is the description of the persistent volume's resources and capacity.",
            ),
            ("Access Modes", "string", "", 0, "accessModes contains all ways the volume can be mounted."),
            (
                "Reclaim Policy",
                "string",
                "",
                0,
                "persistentVolumeReclaimPolicy defines what happens to a persistent volume when "
                "released from its claim.",
            ),
            (
                "Status",
                "string",
                "",
                0,
                "phase indicates if a volume is available, bound to a claim, or released by a claim.",
            ),
            (
                "Claim",
                "string",
                "",
                0,
                "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.",
            ),
            ("StorageClass", "string", "", 0, "StorageClass of the pv"),
            ("VolumeAttributesClass", "string", "", 0, "VolumeAttributesClass of the pv"),
            (
                "Reason",
                "string",
                "",
                0,
                "reason is a brief CamelCase string that describes any failure and is meant for "
                "machine parsing and tidy display in the CLI.",
            ),
            _AGE,
            (
                "VolumeMode",
                "string",
                "",
                1,
                "volumeMode defines if a volume is intended to be used with a formatted filesystem "
                "or to remain in raw block state.",
            ),
        ],
        _volume_cells,
    ),
    "CSINode": (
        [
            _NAME,
            ("Drivers", "integer", "", 0, "Drivers indicates the number of CSI drivers registered on the node"),
            _AGE,
        ],
        _csi_node_cells,
    ),
    "DeviceClass": ([_NAME, _AGE], _name_age_cells),
    "ResourceClaimTemplate": ([_NAME, _AGE], _name_age_cells),
    "ResourceClaim": (
        [
            _NAME,
            ("State", "string", "", 0, "A summary of the current state (allocated, pending, reserved, etc.)."),
            _AGE,
        ],
        _resource_claim_cells,
    ),
    "ResourceSlice": (
        [
            _NAME,
            ("Node", "string", "", 0, "NodeName identifies the node which provides the resources in this pool."),
            ("Driver", "string", "", 0, "Driver identifies the DRA driver providing the capacity information."),
            ("Pool", "string", "", 0, "Name is used to identify the pool."),
            _AGE,
        ],
        _resource_slice_cells,
    ),
    "StorageClass": (
        [
            _NAME,
            ("Provisioner", "string", "", 0, "Indicates the type of the provisioner."),
            ("ReclaimPolicy", "string", "", 0, "Indicates the type of the reclaim policy."),
            ("VolumeBindingMode", "string", "", 0, "Indicates how PersistentVolumeClaims should be bound."),
            ("AllowVolumeExpansion", "string", "", 0, "Indicates whether the storage class allow volume expand"),
            _AGE,
        ],
        _storage_class_cells,
    ),
    "CSIDriver": (
        [
            _NAME,
            (
                "AttachRequired",
                "boolean",
                "",
                0,
                "attachRequired indicates this CSI volume driver requires an attach operation.",
            ),
            (
                "PodInfoOnMount",
                "boolean",
                "",
                0,
                "podInfoOnMount indicates this CSI volume driver requires additional pod information.",
            ),
            (
                "StorageCapacity",
                "boolean",
                "",
                0,
                "storageCapacity indicates that the CSI driver wants pod scheduling to consider the storage capacity.",
            ),
            (
                "TokenRequests",
                "string",
                "",
                0,
                "tokenRequests indicates the CSI driver needs pods' service account tokens.",
            ),
            (
                "RequiresRepublish",
                "boolean",
                "",
                0,
                "requiresRepublish indicates the CSI driver wants NodePublishVolume being periodically called.",
            ),
            (
                "Modes",
                "string",
                "",
                0,
                "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports.",
            ),
            _AGE,
        ],
        _csi_driver_cells,
    ),
    "CSIStorageCapacity": (
        [
            _NAME,
            (
                "StorageClassName",
                "string",
                "",
                0,
                "storageClassName represents the name of the StorageClass that the reported capacity applies to.",
            ),
            (
                "Capacity",
                "string",
                "",
                0,
                "capacity is the value reported by the CSI driver in its GetCapacityResponse.",
            ),
        ],
        _storage_capacity_cells,
    ),
}


def _row_object(obj: Obj, include: str) -> Obj | None:
    if include == "None":
        return None
    if include == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata", {})}


def table(
    res: Resource,
    objects: list[Obj],
    resource_version: str,
    include_object: str = "Metadata",
    version: str = "v1",
    now: datetime | None = None,
) -> Obj:
    """A Table of `objects` (already presented); every column, wide ones included, in every row."""
    now = now or datetime.now(UTC)
    columns, cells = PRINTERS.get(res.kind, ([_NAME, _AGE], _default_cells))
    rows = []
    for obj in objects:
        row: Obj = {"cells": cells(to_core(obj) if res.group == events_v1.GROUP else obj, now)}
        embedded = _row_object(obj, include_object)
        if embedded is not None:
            row["object"] = embedded
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": {"resourceVersion": resource_version},
        "columnDefinitions": [
            {"name": name, "type": type_, "format": fmt, "description": desc, "priority": priority}
            for name, type_, fmt, priority, desc in columns
        ],
        "rows": rows,
    }


def _default_cells(obj: Obj, now: datetime) -> list[Any]:
    return [obj["metadata"].get("name", ""), _since(obj["metadata"].get("creationTimestamp"), now)]
