"""Realistic large clusters for the transport tests and benchmarks: Nodes as `kubectl get nodes -o json`
prints them on a cloud cluster (zone and instance labels, conditions, addresses, node info and a
list of cached images: about 8 KiB each), and running pods spread over them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.live_server import LiveServer

ZONES = ["us-east-1a", "us-east-1b", "us-east-1c"]
INSTANCE_TYPES = [("m5.xlarge", "4", "16Gi"), ("m5.2xlarge", "8", "32Gi"), ("c5.4xlarge", "16", "32Gi")]
IMAGES = [
    f"123456789012.dkr.ecr.us-east-1.amazonaws.com/team-{t}/service-{s}:v1.{t}.{s}-{'a' * 12}"
    for t in range(5)
    for s in range(5)
]


def node_body(index: int) -> dict[str, Any]:
    """One realistic Node (about 8 KiB of JSON)."""
    name = f"ip-10-0-{index // 250}-{index % 250}.ec2.internal"
    zone = ZONES[index % len(ZONES)]
    kind, cpu, memory = INSTANCE_TYPES[index % len(INSTANCE_TYPES)]
    ip = f"10.0.{index // 250}.{index % 250}"
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": kind,
        "beta.kubernetes.io/os": "linux",
        "eks.amazonaws.com/capacityType": "ON_DEMAND",
        "eks.amazonaws.com/nodegroup": f"pool-{index % 4}",
        "eks.amazonaws.com/nodegroup-image": "ami-0123456789abcdef0",
        "failure-domain.beta.kubernetes.io/region": "us-east-1",
        "failure-domain.beta.kubernetes.io/zone": zone,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": kind,
        "topology.ebs.csi.aws.com/zone": zone,
        "topology.kubernetes.io/region": "us-east-1",
        "topology.kubernetes.io/zone": zone,
    }
    conditions = [
        {
            "type": kind_,
            "status": "False",
            "reason": f"KubeletHas{reason}",
            "message": f"kubelet has {text}",
            "lastHeartbeatTime": "2026-11-30T10:00:00Z",
            "lastTransitionTime": "2026-11-01T10:00:00Z",
        }
        for kind_, reason, text in [
            ("MemoryPressure", "SufficientMemory", "sufficient memory available"),
            ("DiskPressure", "NoDiskPressure", "no disk pressure"),
            ("PIDPressure", "SufficientPID", "sufficient PID available"),
        ]
    ]
    conditions.append(
        {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
            "lastHeartbeatTime": "2026-11-30T10:00:00Z",
            "lastTransitionTime": "2026-11-01T10:00:00Z",
        }
    )
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {
                "alpha.kubernetes.io/provided-node-ip": ip,
                "csi.volume.kubernetes.io/nodeid": f'{{"ebs.csi.aws.com":"i-0{index:016x}"}}',
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {"providerID": f"aws:///{zone}/i-0{index:016x}"},
        "status": {
            "capacity": {"cpu": cpu, "memory": memory, "pods": "58", "ephemeral-storage": "104845292Ki"},
            "allocatable": {"cpu": cpu, "memory": memory, "pods": "58", "ephemeral-storage": "95551679785"},
            "conditions": conditions,
            "addresses": [
                {"type": "InternalIP", "address": ip},
                {"type": "Hostname", "address": name},
                {"type": "InternalDNS", "address": name},
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": f"{index:08x}-1111-2222-3333-444455556666",
                "containerRuntimeVersion": "containerd://1.7.22",
                "kernelVersion": "5.10.227-219.884.amzn2.x86_64",
                "kubeProxyVersion": "v1.32.4-eks-1234567",
                "kubeletVersion": "v1.32.4-eks-1234567",
                "machineID": f"ec2{index:029x}",
                "operatingSystem": "linux",
                "osImage": "Amazon Linux 2",
                "systemUUID": f"ec2{index:05x}-aaaa-bbbb-cccc-dddddddddddd",
            },
            "images": [
                {"names": [f"{image}@sha256:{(index + i):064x}", image], "sizeBytes": 100_000_000 + i}
                for i, image in enumerate(IMAGES)
            ],
        },
    }
    if index % 10 == 0:
        body["spec"]["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    return body


def pod_body(index: int, node: str | None) -> dict[str, Any]:
    """A small running (or, without a node, pending) pod."""
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "app",
                "image": IMAGES[index % len(IMAGES)],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
            }
        ]
    }
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"app-{index:06d}", "namespace": "default", "labels": {"app": f"app-{index % 20}"}},
        "spec": spec,
    }
    if node:  # as a live cluster's dump prints it: bound and running (its kubelet has nothing to do)
        spec["nodeName"] = node
        started = "2026-11-30T10:00:00Z"
        body["status"] = {
            "phase": "Running",
            "conditions": [
                {"type": kind, "status": "True", "lastTransitionTime": started}
                for kind in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
            ],
            "containerStatuses": [
                {
                    "name": "app",
                    "image": spec["containers"][0]["image"],
                    "imageID": "",
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "state": {"running": {"startedAt": started}},
                }
            ],
        }
    return body


def cluster_documents(nodes: int, pods_per_node: int = 0) -> list[dict[str, Any]]:
    """Nodes, then bound pods (`pods_per_node` each)."""
    bodies = [node_body(i) for i in range(nodes)]
    names = [b["metadata"]["name"] for b in bodies]
    pods = [pod_body(i, names[i % nodes]) for i in range(nodes * pods_per_node)]
    return bodies + pods


def import_big_cluster(cluster: Any, nodes: int, pods_per_node: int = 0) -> None:
    """Store a realistic cluster through the services, in batches under the YAML limits."""
    import json

    from clusterviz import services

    documents = cluster_documents(nodes, pods_per_node)
    for start in range(0, len(documents), 250):
        text = json.dumps({"apiVersion": "v1", "kind": "List", "items": documents[start : start + 250]})
        services.create_from_yaml(cluster, text, "kubectl", source="snapshot")


def create_big_cluster(server: LiveServer, slug: str, nodes: int, pods_per_node: int = 0) -> str:
    """`import_big_cluster` into a new cluster of a live server's database; returns its edit link (a URL)."""
    code = (
        "from clusterviz import access, services\n"
        "from tests.big_cluster import import_big_cluster\n"
        f"cluster = services.create_cluster({slug!r})\n"
        f"import_big_cluster(cluster, {nodes}, {pods_per_node})\n"
        "print('edit link:', access.edit_url(cluster))\n"
    )
    output = server.run("shell", "-c", code).stdout
    return server.url + output.rsplit("edit link: ", 1)[1].strip()


# A Deployment of no replicas that the scale-up benchmark and test scale (`scale-web`).
SCALE_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: scale-web}
spec:
  replicas: 0
  selector: {matchLabels: {app: scale-web}}
  template:
    metadata: {labels: {app: scale-web}}
    spec:
      containers: [{name: app, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}]
"""


def web_pod_yaml(cpu: str, memory: str | None = None) -> str:
    """The pod `web` (one nginx container requesting `cpu`, and `memory`) that the browser tests explain."""
    memory_line = f"\n        memory: {memory}" if memory else ""
    return f"""apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: web
    image: nginx
    resources:
      requests:
        cpu: "{cpu}"{memory_line}
"""


def list_json(nodes: int, pods_per_node: int = 0) -> str:
    """The cluster as one `kind: List` (what `kubectl get nodes,pods -A -o json` writes)."""
    import json

    return json.dumps({"apiVersion": "v1", "kind": "List", "items": cluster_documents(nodes, pods_per_node)})


def one_cycle(nodes: int) -> tuple[list[Any], list[str]]:
    """One scheduling cycle's events over `nodes` realistic nodes, and the node names: a pod asking for
    6 cpu and 20Gi fits the larger instance types; the smaller fail on both (two reasons), every tenth
    is tainted."""
    from scheduler_core.api.objects import Node, Pod
    from scheduler_core.framework.events import Event
    from scheduler_core.framework.node_table import NodeTable
    from scheduler_core.framework.pod_info import PodInfo
    from scheduler_core.schedule_one import Scheduler

    table = NodeTable.build([Node.model_validate(node_body(i)) for i in range(nodes)])
    container = {"name": "c", "image": IMAGES[0], "resources": {"requests": {"cpu": "6", "memory": "20Gi"}}}
    pod = Pod.model_validate({"metadata": {"name": "web", "namespace": "default"}, "spec": {"containers": [container]}})
    pod.spec.priority = 0
    events: list[Event] = []
    scheduler = Scheduler(seed=0)
    scheduler.subscribe(events.append)
    scheduler.schedule_pod(table, PodInfo.of(pod))
    return events, table.names
