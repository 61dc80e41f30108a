"""The objects of a realistic EKS-like cluster, every field real objects carry, as plain dicts.

Nodes in node pools across three zones (20–40 images each, conditions, nodeInfo, managedFields),
pods owned by ReplicaSets, StatefulSets, DaemonSets and Jobs (status, conditions, managedFields,
resources, some affinity and spread constraints), their workload objects, Services, Namespaces,
PriorityClasses, PodDisruptionBudgets, StorageClasses, PersistentVolumes and claims, CSINodes,
and a few ConfigMaps (a kind the scheduler does not read). Objects come out one at a time, in
the order `kubectl get nodes,pods,pvc,pv,storageclasses,csinodes,pdb,ds,sts,jobs,rs,deploy,svc,
ns,priorityclasses` prints them, so a dump of any size is written in bounded memory.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from .dra import dra_objects

__all__ = ["SnapshotSpec", "generate_objects", "pending_pod"]

Obj = dict[str, Any]

REGION = "us-east-1"
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
EPOCH = datetime(2026, 3, 1, 8, 0, 0, tzinfo=UTC)
KUBELET_VERSION = "v1.34.0-eks-4096722"
CSI_DRIVER = "ebs.csi.aws.com"


@dataclass(frozen=True)
class Pool:
    name: str
    instance_type: str
    cpu: int
    memory_gi: int
    share: float
    taints: tuple[Obj, ...] = ()
    extra: tuple[tuple[str, str], ...] = ()
    capacity_type: str = "ON_DEMAND"


POOLS = (
    Pool("general", "m5.2xlarge", 8, 32, 0.55),
    Pool("compute", "c5.4xlarge", 16, 32, 0.2),
    Pool("memory", "r5.2xlarge", 8, 64, 0.12),
    Pool(
        "spot",
        "m5.xlarge",
        4,
        16,
        0.1,
        ({"key": "spot", "value": "true", "effect": "PreferNoSchedule"},),
        capacity_type="SPOT",
    ),
    Pool(
        "gpu",
        "p3.2xlarge",
        8,
        61,
        0.03,
        ({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},),
        (("nvidia.com/gpu", "1"),),
    ),
)

IMAGES = [
    ("602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni", "v1.19.2-eksbuild.1", 62_000_000),
    ("602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/kube-proxy", "v1.34.0-minimal-eksbuild.2", 37_000_000),
    ("602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/pause", "3.10", 299_000),
    ("602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/coredns", "v1.11.4-eksbuild.2", 22_000_000),
    ("public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver", "v1.41.0", 97_000_000),
    ("quay.io/prometheus/node-exporter", "v1.9.0", 12_000_000),
    ("quay.io/prometheus/prometheus", "v3.2.1", 130_000_000),
    ("docker.io/grafana/grafana", "11.5.2", 160_000_000),
    ("docker.io/library/nginx", "1.27.4", 72_000_000),
    ("docker.io/library/redis", "7.4.2", 45_000_000),
    ("docker.io/library/postgres", "17.4", 158_000_000),
    ("docker.io/bitnami/kafka", "3.9.0", 310_000_000),
    ("registry.k8s.io/ingress-nginx/controller", "v1.12.0", 105_000_000),
    ("registry.k8s.io/metrics-server/metrics-server", "v0.7.2", 19_000_000),
    ("ghcr.io/fluxcd/source-controller", "v1.5.0", 48_000_000),
    ("docker.io/fluent/fluent-bit", "3.2.8", 34_000_000),
    ("docker.io/datadog/agent", "7.63.0", 420_000_000),
    ("docker.io/istio/proxyv2", "1.25.0", 95_000_000),
    ("quay.io/jetstack/cert-manager-controller", "v1.17.1", 21_000_000),
    ("docker.io/elastic/elasticsearch", "8.17.3", 720_000_000),
]
for _n in range(60):  # the company's own services
    IMAGES.append((f"123456789012.dkr.ecr.us-east-1.amazonaws.com/team/svc-{_n:02d}", f"1.{_n % 7}.{_n}", 0))

TEAMS = ("payments", "checkout", "search", "catalog", "identity", "ledger", "ads", "mail", "media", "data")
NAME_WORDS = ("api", "worker", "web", "gateway", "sync", "indexer", "cache", "scheduler", "consumer", "proxy")
SYSTEM_DAEMONSETS = (
    ("aws-node", "kube-system", 0, 25, "50Mi"),
    ("kube-proxy", "kube-system", 1, 100, "50Mi"),
    ("ebs-csi-node", "kube-system", 4, 30, "40Mi"),
    ("node-exporter", "monitoring", 5, 50, "64Mi"),
)
PRIORITY_CLASSES = (
    ("system-cluster-critical", 2_000_000_000, False),
    ("system-node-critical", 2_000_001_000, False),
    ("high-priority", 100_000, False),
    ("default-priority", 1_000, True),
    ("batch-low", -10, False),
)


@dataclass(frozen=True)
class SnapshotSpec:
    """What to generate: `nodes` nodes and about `pods` pods (exactly `pods` when they fit)."""

    nodes: int
    pods: int
    seed: int = 0
    configmaps: bool = True  # one kube-root-ca.crt per namespace: a kind the scheduler skips
    dra: bool = False  # GPUs through DRA on the gpu pool: ResourceSlices, claims, training pods (synthetic/dra.py)


@dataclass
class _Workload:
    kind: str  # ReplicaSet | StatefulSet | DaemonSet | Job
    name: str
    namespace: str
    replicas: int
    image: int
    cpu_m: int
    memory_mi: int
    app: str
    priority_class: str | None
    spread: bool = False
    anti_affinity: bool = False
    pool: str | None = None
    deployment: str | None = None
    hash: str = ""
    uid: str = ""
    claims: list[tuple[str, str, str]] = field(default_factory=list)  # (claim, zone, node)


def _time(offset_s: float) -> str:
    return (EPOCH + timedelta(seconds=int(offset_s))).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Generator:
    def __init__(self, spec: SnapshotSpec) -> None:
        self.spec = spec
        self.rng = random.Random(spec.seed)
        self.resource_version = 1000

    # --- small helpers -----------------------------------------------------------------------

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def rv(self) -> str:
        self.resource_version += self.rng.randint(1, 40)
        return str(self.resource_version)

    def suffix(self, length: int = 5) -> str:
        return "".join(self.rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(length))

    def digest(self) -> str:
        return "sha256:" + "".join(self.rng.choice("0123456789abcdef") for _ in range(64))

    def managed(self, manager: str, operation: str, fields: Obj, when: str, subresource: str | None = None) -> Obj:
        entry: Obj = {
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": fields,
            "manager": manager,
            "operation": operation,
            "time": when,
        }
        if subresource:
            entry["subresource"] = subresource
        return entry

    # --- the plan ----------------------------------------------------------------------------

    def plan(self) -> None:
        rng = self.rng
        n = self.spec.nodes
        self.nodes: list[dict[str, Any]] = []
        used: set[str] = set()
        for i in range(n):
            r = rng.random()
            pool = POOLS[-1]
            for candidate in POOLS:
                if r < candidate.share:
                    pool = candidate
                    break
                r -= candidate.share
            zone = ZONES[i % len(ZONES)]
            while True:
                ip = f"10.{rng.randint(0, 3)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
                if ip not in used:
                    used.add(ip)
                    break
            self.nodes.append(
                {
                    "name": f"ip-{ip.replace('.', '-')}.ec2.internal",
                    "ip": ip,
                    "pool": pool,
                    "zone": zone,
                    "cpu_m": pool.cpu * 1000 - 230,
                    "memory_mi": pool.memory_gi * 1024 - 1800,
                    "free_cpu": pool.cpu * 1000 - 230,
                    "free_mem": pool.memory_gi * 1024 - 1800,
                    "pods": 0,
                    "max_pods": 58 if pool.cpu <= 8 else 234,
                    "images": rng.sample(range(len(IMAGES)), rng.randint(20, 40)),
                }
            )
        self.namespaces = ["default", "kube-system", "kube-public", "kube-node-lease", "monitoring"]
        self.namespaces += [f"{team}-{env}" for team in TEAMS for env in ("prod", "staging")][: max(2, n // 20)]
        apps = self.namespaces[5:] or ["default"]
        self.workloads: list[_Workload] = []
        budget = self.spec.pods
        daemonsets = SYSTEM_DAEMONSETS[: max(1, min(4, budget // (4 * max(n, 1))))]
        for name, ns, image, cpu, memory in daemonsets:
            if budget < n:
                break
            self.workloads.append(
                _Workload("DaemonSet", name, ns, n, image, cpu, int(memory[:-2]), name, "system-node-critical")
            )
            budget -= n
        k = 0
        while budget > 0:
            k += 1
            ns = rng.choice(apps)
            word = rng.choice(NAME_WORDS)
            kind = "StatefulSet" if k == 1 else rng.choices(("ReplicaSet", "StatefulSet", "Job"), (0.8, 0.1, 0.1))[0]
            replicas = min(budget, rng.choice((1, 2, 2, 3, 3, 4, 6, 8, 12, 20)) if kind != "Job" else rng.randint(1, 5))
            budget -= replicas
            base = f"{ns.rsplit('-', 1)[0]}-{word}-{k}"
            workload = _Workload(
                kind,
                base,
                ns,
                replicas,
                rng.randint(20, len(IMAGES) - 1),
                rng.choice((50, 100, 100, 250, 250, 500, 1000)),
                rng.choice((64, 128, 256, 256, 512, 1024, 2048)),
                base,
                rng.choice((None, None, None, "high-priority", "default-priority")) if kind != "Job" else "batch-low",
                spread=rng.random() < 0.3,
                anti_affinity=rng.random() < 0.2,
                pool=rng.choice((None, None, None, "compute", "memory")),
            )
            if kind == "ReplicaSet":
                workload.deployment = base
                workload.hash = self.suffix(10)
                workload.name = f"{base}-{workload.hash}"
            self.workloads.append(workload)
        for workload in self.workloads:
            workload.uid = self.uid()

    # --- nodes -------------------------------------------------------------------------------

    def node(self, info: dict[str, Any]) -> Obj:
        rng = self.rng
        pool: Pool = info["pool"]
        name, zone, ip = info["name"], info["zone"], info["ip"]
        created = _time(rng.randint(0, 86_400 * 30))
        heartbeat = _time(86_400 * 45 + rng.randint(0, 600))
        labels = {
            "beta.kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/instance-type": pool.instance_type,
            "beta.kubernetes.io/os": "linux",
            "eks.amazonaws.com/capacityType": pool.capacity_type,
            "eks.amazonaws.com/nodegroup": f"{pool.name}-pool",
            "eks.amazonaws.com/nodegroup-image": "ami-0a1b2c3d4e5f67890",
            "failure-domain.beta.kubernetes.io/region": REGION,
            "failure-domain.beta.kubernetes.io/zone": zone,
            "k8s.io/cloud-provider-aws": "7f3c1a2b9d8e4f5a6b7c8d9e0f1a2b3c",
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "node.kubernetes.io/instance-type": pool.instance_type,
            "pool": pool.name,
            "topology.ebs.csi.aws.com/zone": zone,
            "topology.k8s.aws/zone-id": f"use1-az{ZONES.index(zone) + 1}",
            "topology.kubernetes.io/region": REGION,
            "topology.kubernetes.io/zone": zone,
        }
        capacity = {
            "cpu": str(pool.cpu),
            "ephemeral-storage": "104845292Ki",
            "hugepages-1Gi": "0",
            "hugepages-2Mi": "0",
            "memory": f"{pool.memory_gi * 1024 * 1024 - 500_000}Ki",
            "pods": str(info["max_pods"]),
            **dict(pool.extra),
        }
        allocatable = {
            **capacity,
            "cpu": f"{info['cpu_m']}m",
            "ephemeral-storage": "95551679124",
            "memory": f"{info['memory_mi'] * 1024}Ki",
        }
        conditions = [
            {
                "lastHeartbeatTime": heartbeat,
                "lastTransitionTime": created,
                "message": message,
                "reason": reason,
                "status": status,
                "type": kind,
            }
            for kind, status, reason, message in (
                ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            )
        ]
        images = []
        for index in info["images"]:
            repo, tag, size = IMAGES[index]
            images.append(
                {
                    "names": [f"{repo}@{self.digest()}", f"{repo}:{tag}"],
                    "sizeBytes": size or rng.randint(20_000_000, 400_000_000),
                }
            )
        instance = "i-0" + "".join(rng.choice("0123456789abcdef") for _ in range(16))
        status_fields = {
            "f:allocatable": {f"f:{k}": {} for k in allocatable},
            "f:capacity": {f"f:{k}": {} for k in capacity},
            "f:conditions": {
                "k:{" + f'"type":"{c["type"]}"' + "}": {
                    ".": {},
                    "f:lastHeartbeatTime": {},
                    "f:lastTransitionTime": {},
                    "f:message": {},
                    "f:reason": {},
                    "f:status": {},
                    "f:type": {},
                }
                for c in conditions
            },
            "f:daemonEndpoints": {"f:kubeletEndpoint": {"f:Port": {}}},
            "f:images": {},
            "f:nodeInfo": {f"f:{k}": {} for k in ("architecture", "bootID", "kernelVersion", "kubeletVersion")},
        }
        spec: Obj = {"providerID": f"aws:///{zone}/{instance}"}
        if pool.taints:
            spec["taints"] = [dict(t) for t in pool.taints]
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "annotations": {
                    "alpha.kubernetes.io/provided-node-ip": ip,
                    "csi.volume.kubernetes.io/nodeid": '{"' + CSI_DRIVER + '":"' + instance + '"}',
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                },
                "creationTimestamp": created,
                "labels": labels,
                "managedFields": [
                    self.managed(
                        "kubelet",
                        "Update",
                        {"f:metadata": {"f:annotations": {".": {}}, "f:labels": {f"f:{k}": {} for k in labels}}},
                        created,
                    ),
                    self.managed("kubelet", "Update", {"f:status": status_fields}, heartbeat, "status"),
                ],
                "name": name,
                "resourceVersion": self.rv(),
                "uid": self.uid(),
            },
            "spec": spec,
            "status": {
                "addresses": [
                    {"address": ip, "type": "InternalIP"},
                    {"address": name, "type": "InternalDNS"},
                    {"address": name, "type": "Hostname"},
                ],
                "allocatable": allocatable,
                "capacity": capacity,
                "conditions": conditions,
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "images": images,
                "nodeInfo": {
                    "architecture": "amd64",
                    "bootID": self.uid(),
                    "containerRuntimeVersion": "containerd://1.7.25",
                    "kernelVersion": "6.1.128-136.201.amzn2023.x86_64",
                    "kubeProxyVersion": KUBELET_VERSION,
                    "kubeletVersion": KUBELET_VERSION,
                    "machineID": self.uid().replace("-", ""),
                    "operatingSystem": "linux",
                    "osImage": "Amazon Linux 2023.6.20250303",
                    "systemUUID": self.uid(),
                },
            },
        }

    # --- pods --------------------------------------------------------------------------------

    def place(self, workload: _Workload, index: int) -> dict[str, Any] | None:
        """A node with room for one pod of `workload` (None: the pod stays Pending)."""
        if workload.kind == "DaemonSet":
            info = self.nodes[index]
            info["pods"] += 1
            return info
        if self.rng.random() < 0.01:
            return None
        for _ in range(8):
            info = self.rng.choice(self.nodes)
            pool: Pool = info["pool"]
            if pool.taints or (workload.pool and pool.name != workload.pool):
                continue
            if (
                info["free_cpu"] >= workload.cpu_m
                and info["free_mem"] >= workload.memory_mi
                and info["pods"] < info["max_pods"]
            ):
                info["free_cpu"] -= workload.cpu_m
                info["free_mem"] -= workload.memory_mi
                info["pods"] += 1
                return info
        return None

    def pod(self, workload: _Workload, index: int) -> Obj:
        rng = self.rng
        info = self.place(workload, index)
        if workload.kind == "StatefulSet":
            name = f"{workload.name}-{index}"
        elif workload.kind == "Job":
            name = f"{workload.name}-{self.suffix()}"
        else:
            name = f"{workload.name}-{self.suffix()}"
        created = _time(86_400 * 40 + rng.randint(0, 86_400 * 5))
        started = _time(86_400 * 45 + rng.randint(0, 60))
        repo, tag, _ = IMAGES[workload.image]
        image = f"{repo}:{tag}"
        labels = {"app": workload.app, "app.kubernetes.io/name": workload.app}
        if workload.kind == "ReplicaSet":
            labels["pod-template-hash"] = workload.hash
        elif workload.kind == "StatefulSet":
            labels["apps.kubernetes.io/pod-index"] = str(index)
            labels["statefulset.kubernetes.io/pod-name"] = name
        elif workload.kind == "DaemonSet":
            labels["controller-revision-hash"] = "6d8f7c9b5"
            labels["pod-template-generation"] = "3"
        else:
            labels["batch.kubernetes.io/job-name"] = workload.name
            labels["job-name"] = workload.name
        api_version = "batch/v1" if workload.kind == "Job" else "apps/v1"
        container: Obj = {
            "env": [
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                {"name": "LOG_LEVEL", "value": "info"},
            ],
            "image": image,
            "imagePullPolicy": "IfNotPresent",
            "name": workload.app.rsplit("-", 1)[0][-40:] or "main",
            "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
            "resources": {
                "limits": {"memory": f"{workload.memory_mi * 2}Mi"},
                "requests": {"cpu": f"{workload.cpu_m}m", "memory": f"{workload.memory_mi}Mi"},
            },
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "volumeMounts": [
                {
                    "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                    "name": f"kube-api-access-{self.suffix()}",
                    "readOnly": True,
                }
            ],
        }
        token = container["volumeMounts"][0]["name"]
        volumes: list[Obj] = [
            {
                "name": token,
                "projected": {
                    "defaultMode": 420,
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {
                            "configMap": {
                                "items": [{"key": "ca.crt", "path": "ca.crt"}],
                                "name": "kube-root-ca.crt",
                            }
                        },
                        {
                            "downwardAPI": {
                                "items": [
                                    {
                                        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                        "path": "namespace",
                                    }
                                ]
                            }
                        },
                    ],
                },
            }
        ]
        tolerations: list[Obj] = [
            {"effect": "NoExecute", "key": key, "operator": "Exists", "tolerationSeconds": 300}
            for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
        ]
        spec: Obj = {
            "containers": [container],
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "restartPolicy": "OnFailure" if workload.kind == "Job" else "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {"fsGroup": 65534, "runAsNonRoot": True},
            "serviceAccount": "default",
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "tolerations": tolerations,
            "volumes": volumes,
        }
        if workload.priority_class:
            spec["priorityClassName"] = workload.priority_class
            spec["priority"] = {name: value for name, value, _ in PRIORITY_CLASSES}[workload.priority_class]
        else:
            spec["priority"] = 1_000  # the globalDefault class
            spec["priorityClassName"] = "default-priority"
        if workload.kind == "DaemonSet":
            tolerations += [
                {"effect": "NoSchedule", "operator": "Exists"},
                {"effect": "NoExecute", "operator": "Exists"},
            ]
            spec["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": [self.nodes[index]["name"]]}
                                ]
                            }
                        ]
                    }
                }
            }
            spec["hostNetwork"] = True
            # as the API server stores it: with host networking, hostPort defaults to containerPort
            container["ports"] = [{**port, "hostPort": port["containerPort"]} for port in container["ports"]]
        else:
            affinity: Obj = {}
            if workload.pool:
                affinity["nodeAffinity"] = {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "pool", "operator": "In", "values": [workload.pool]}]}
                        ]
                    }
                }
            if workload.anti_affinity:
                affinity["podAntiAffinity"] = {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "podAffinityTerm": {
                                "labelSelector": {"matchLabels": {"app": workload.app}},
                                "topologyKey": "kubernetes.io/hostname",
                            },
                            "weight": 100,
                        }
                    ]
                }
            if affinity:
                spec["affinity"] = affinity
            if workload.spread:
                spec["topologySpreadConstraints"] = [
                    {
                        "labelSelector": {"matchLabels": {"app": workload.app}},
                        "maxSkew": 1,
                        "topologyKey": "topology.kubernetes.io/zone",
                        "whenUnsatisfiable": "ScheduleAnyway",
                    }
                ]
        if workload.kind == "StatefulSet":
            claim = f"data-{name}"
            volumes.append({"name": "data", "persistentVolumeClaim": {"claimName": claim}})
            container["volumeMounts"].append({"mountPath": "/data", "name": "data"})
            spec["hostname"] = name
            spec["subdomain"] = workload.name
            if info is not None:
                workload.claims.append((claim, info["zone"], info["name"]))
        if info is not None:
            spec["nodeName"] = info["name"]
        owner = {
            "apiVersion": api_version,
            "blockOwnerDeletion": True,
            "controller": True,
            "kind": workload.kind,
            "name": workload.name,
            "uid": workload.uid,
        }
        ip = f"10.{rng.randint(0, 3)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
        condition_types = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
        if info is None:
            status: Obj = {
                "conditions": [
                    {
                        "lastProbeTime": None,
                        "lastTransitionTime": created,
                        "message": "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are "
                        "available: 3 No preemption victims found for incoming pod.",
                        "reason": "Unschedulable",
                        "status": "False",
                        "type": "PodScheduled",
                    }
                ],
                "phase": "Pending",
                "qosClass": "Burstable",
            }
        else:
            status = {
                "conditions": [
                    {"lastProbeTime": None, "lastTransitionTime": started, "status": "True", "type": kind}
                    for kind in condition_types
                ],
                "containerStatuses": [
                    {
                        "containerID": "containerd://" + self.digest()[7:],
                        "image": image,
                        "imageID": f"{repo}@{self.digest()}",
                        "lastState": {},
                        "name": container["name"],
                        "ready": True,
                        "restartCount": rng.choice((0, 0, 0, 1, 2)),
                        "started": True,
                        "state": {"running": {"startedAt": started}},
                        "volumeMounts": [
                            {
                                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                                "name": token,
                                "readOnly": True,
                                "recursiveReadOnly": "Disabled",
                            }
                        ],
                    }
                ],
                "hostIP": info["ip"],
                "hostIPs": [{"ip": info["ip"]}],
                "phase": "Running",
                "podIP": ip,
                "podIPs": [{"ip": ip}],
                "qosClass": "Burstable",
                "startTime": started,
            }
        spec_fields = {
            "f:containers": {
                "k:{" + f'"name":"{container["name"]}"' + "}": {
                    ".": {},
                    "f:image": {},
                    "f:imagePullPolicy": {},
                    "f:name": {},
                    "f:resources": {"f:limits": {"f:memory": {}}, "f:requests": {"f:cpu": {}, "f:memory": {}}},
                    "f:terminationMessagePath": {},
                    "f:terminationMessagePolicy": {},
                }
            },
            "f:dnsPolicy": {},
            "f:enableServiceLinks": {},
            "f:restartPolicy": {},
            "f:schedulerName": {},
            "f:securityContext": {"f:fsGroup": {}, "f:runAsNonRoot": {}},
            "f:terminationGracePeriodSeconds": {},
        }
        managed = [
            self.managed(
                "kube-controller-manager",
                "Update",
                {
                    "f:metadata": {
                        "f:generateName": {},
                        "f:labels": {".": {}, **{f"f:{k}": {} for k in labels}},
                        "f:ownerReferences": {".": {}, "k:{" + f'"uid":"{workload.uid}"' + "}": {}},
                    },
                    "f:spec": spec_fields,
                },
                created,
            ),
        ]
        if info is not None:
            managed.append(
                self.managed(
                    "kubelet",
                    "Update",
                    {
                        "f:status": {
                            "f:conditions": {
                                "k:{" + f'"type":"{kind}"' + "}": {
                                    ".": {},
                                    "f:lastProbeTime": {},
                                    "f:lastTransitionTime": {},
                                    "f:status": {},
                                    "f:type": {},
                                }
                                for kind in condition_types
                            },
                            "f:containerStatuses": {},
                            "f:hostIP": {},
                            "f:hostIPs": {},
                            "f:phase": {},
                            "f:podIP": {},
                            "f:podIPs": {".": {}, 'k:{"ip":"' + ip + '"}': {".": {}, "f:ip": {}}},
                            "f:startTime": {},
                        }
                    },
                    started,
                    "status",
                )
            )
        metadata: Obj = {
            "creationTimestamp": created,
            "generateName": f"{workload.name}-",
            "labels": labels,
            "managedFields": managed,
            "name": name,
            "namespace": workload.namespace,
            "ownerReferences": [owner],
            "resourceVersion": self.rv(),
            "uid": self.uid(),
        }
        if rng.random() < 0.3:
            metadata["annotations"] = {"kubectl.kubernetes.io/restartedAt": _time(86_400 * 39)}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}

    # --- everything else ---------------------------------------------------------------------

    def meta(self, name: str, namespace: str | None = None, **extra: Any) -> Obj:
        meta: Obj = {"creationTimestamp": _time(self.rng.randint(0, 86_400 * 40)), "name": name}
        if namespace is not None:
            meta["namespace"] = namespace
        meta.update(resourceVersion=self.rv(), uid=self.uid(), **extra)
        return meta

    def claims(self) -> Iterator[Obj]:
        """The StatefulSets' claims (bound, WaitForFirstConsumer) and their volumes."""
        volumes = []
        for workload in self.workloads:
            for claim, zone, node in workload.claims:
                pv = f"pvc-{self.uid()}"
                volumes.append((pv, claim, workload.namespace, zone))
                yield {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": self.meta(
                        claim,
                        workload.namespace,
                        annotations={
                            "pv.kubernetes.io/bind-completed": "yes",
                            "volume.kubernetes.io/selected-node": node,
                            "volume.kubernetes.io/storage-provisioner": CSI_DRIVER,
                        },
                        labels={"app": workload.app},
                    ),
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "20Gi"}},
                        "storageClassName": "gp3",
                        "volumeMode": "Filesystem",
                        "volumeName": pv,
                    },
                    "status": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "20Gi"}, "phase": "Bound"},
                }
        for pv, claim, namespace, zone in volumes:
            yield {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": self.meta(pv, annotations={"pv.kubernetes.io/provisioned-by": CSI_DRIVER}),
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "capacity": {"storage": "20Gi"},
                    "claimRef": {
                        "apiVersion": "v1",
                        "kind": "PersistentVolumeClaim",
                        "name": claim,
                        "namespace": namespace,
                    },
                    "csi": {"driver": CSI_DRIVER, "fsType": "ext4", "volumeHandle": "vol-0" + self.suffix(16)},
                    "nodeAffinity": {
                        "required": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}
                                    ]
                                }
                            ]
                        }
                    },
                    "persistentVolumeReclaimPolicy": "Delete",
                    "storageClassName": "gp3",
                    "volumeMode": "Filesystem",
                },
                "status": {"phase": "Bound"},
            }

    def storage(self) -> Iterator[Obj]:
        for name, default in (("gp2", False), ("gp3", True)):
            meta = self.meta(name)
            if default:
                meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
            yield {
                "allowVolumeExpansion": True,
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": meta,
                "parameters": {"type": name, "fsType": "ext4"},
                "provisioner": CSI_DRIVER if name == "gp3" else "kubernetes.io/aws-ebs",
                "reclaimPolicy": "Delete",
                "volumeBindingMode": "WaitForFirstConsumer",
            }
        for info in self.nodes:
            yield {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "CSINode",
                "metadata": self.meta(info["name"]),
                "spec": {
                    "drivers": [
                        {
                            "allocatable": {"count": 25},
                            "name": CSI_DRIVER,
                            "nodeID": "i-0" + self.suffix(16),
                            "topologyKeys": ["kubernetes.io/os", "topology.ebs.csi.aws.com/zone"],
                        }
                    ]
                },
            }

    def selector(self, workload: _Workload) -> Obj:
        return {"matchLabels": {"app": workload.app}}

    def template(self, workload: _Workload) -> Obj:
        repo, tag, _ = IMAGES[workload.image]
        spec: Obj = {
            "containers": [
                {
                    "image": f"{repo}:{tag}",
                    "name": "main",
                    "resources": {"requests": {"cpu": f"{workload.cpu_m}m", "memory": f"{workload.memory_mi}Mi"}},
                }
            ]
        }
        if workload.kind == "Job":  # the API server refuses a Job whose pods restart Always
            spec["restartPolicy"] = "OnFailure"
        return {"metadata": {"labels": {"app": workload.app}}, "spec": spec}

    def controllers(self) -> Iterator[Obj]:
        for workload in self.workloads:
            if workload.kind == "ReplicaSet" and workload.replicas >= 2:
                yield {
                    "apiVersion": "policy/v1",
                    "kind": "PodDisruptionBudget",
                    "metadata": self.meta(workload.deployment or workload.name, workload.namespace),
                    "spec": {"maxUnavailable": 1, "selector": self.selector(workload)},
                    "status": {
                        "currentHealthy": workload.replicas,
                        "desiredHealthy": workload.replicas - 1,
                        "disruptionsAllowed": 1,
                        "expectedPods": workload.replicas,
                        "observedGeneration": 1,
                    },
                }
        order = ("DaemonSet", "StatefulSet", "Job", "ReplicaSet")
        api = {"DaemonSet": "apps/v1", "StatefulSet": "apps/v1", "Job": "batch/v1", "ReplicaSet": "apps/v1"}
        for kind in order:
            for workload in self.workloads:
                if workload.kind != kind:
                    continue
                spec: Obj = {"selector": self.selector(workload), "template": self.template(workload)}
                meta = self.meta(workload.name, workload.namespace, labels={"app": workload.app})
                meta["uid"] = workload.uid
                if kind == "ReplicaSet":
                    spec["replicas"] = workload.replicas
                    meta["ownerReferences"] = [
                        {
                            "apiVersion": "apps/v1",
                            "blockOwnerDeletion": True,
                            "controller": True,
                            "kind": "Deployment",
                            "name": workload.deployment,
                            "uid": self.uid(),
                        }
                    ]
                elif kind == "StatefulSet":
                    spec["replicas"] = workload.replicas
                    spec["serviceName"] = workload.name
                    spec["volumeClaimTemplates"] = [
                        {
                            "metadata": {"name": "data"},
                            "spec": {
                                "accessModes": ["ReadWriteOnce"],
                                "resources": {"requests": {"storage": "20Gi"}},
                                "storageClassName": "gp3",
                            },
                        }
                    ]
                elif kind == "Job":
                    spec["parallelism"] = workload.replicas
                    spec["completions"] = workload.replicas
                    spec["backoffLimit"] = 6
                yield {"apiVersion": api[kind], "kind": kind, "metadata": meta, "spec": spec, "status": {}}
        for workload in self.workloads:
            if workload.kind == "ReplicaSet":
                yield {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "metadata": self.meta(workload.deployment or "", workload.namespace),
                    "spec": {
                        "replicas": workload.replicas,
                        "selector": self.selector(workload),
                        "strategy": {
                            "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                            "type": "RollingUpdate",
                        },
                        "template": self.template(workload),
                    },
                    "status": {"availableReplicas": workload.replicas, "replicas": workload.replicas},
                }
        for workload in self.workloads:
            if workload.kind in ("ReplicaSet", "StatefulSet"):
                yield {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": self.meta(workload.deployment or workload.name, workload.namespace),
                    "spec": {
                        "clusterIP": f"172.20.{self.rng.randint(0, 255)}.{self.rng.randint(1, 254)}",
                        "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}],
                        "selector": {"app": workload.app},
                        "type": "ClusterIP",
                    },
                    "status": {"loadBalancer": {}},
                }

    def cluster_scoped(self) -> Iterator[Obj]:
        for ns in self.namespaces:
            yield {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": self.meta(ns, labels={"kubernetes.io/metadata.name": ns}),
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"},
            }
        for name, value, default in PRIORITY_CLASSES:
            body: Obj = {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": self.meta(name),
                "preemptionPolicy": "PreemptLowerPriority",
                "value": value,
            }
            if default:
                body["globalDefault"] = True
            yield body
        if self.spec.configmaps:
            for ns in self.namespaces:
                yield {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": self.meta("kube-root-ca.crt", ns),
                    "data": {
                        "ca.crt": "-----BEGIN CERTIFICATE-----\nMIIDBTCCAe2gAwIBAgIIY\n-----END CERTIFICATE-----\n"
                    },
                }

    def objects(self) -> Iterator[Obj]:
        self.plan()
        for info in self.nodes:
            yield self.node(info)
        for workload in self.workloads:
            for index in range(workload.replicas):
                yield self.pod(workload, index)
        yield from self.claims()
        yield from self.storage()
        yield from self.controllers()
        yield from self.cluster_scoped()
        if self.spec.dra:
            gpu_nodes = [info["name"] for info in self.nodes if info["pool"].name == "gpu"]
            yield from dra_objects(gpu_nodes, self.spec.seed, _time(86_400 * 30))


def generate_objects(spec: SnapshotSpec) -> Iterator[Obj]:
    """Every object of the cluster, one at a time (deterministic for a given spec)."""
    return _Generator(spec).objects()


def pending_pod(name: str = "checkout-api-7d9f8b6c5-x2x4q", namespace: str = "default") -> Obj:
    """A new pod to explain against a generated cluster: a Deployment's pod, as users paste it."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"labels": {"app": "checkout-api"}, "name": name, "namespace": namespace},
        "spec": {
            "containers": [
                {
                    "image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/team/svc-01:1.1.1",
                    "name": "api",
                    "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}},
                }
            ],
            "topologySpreadConstraints": [
                {
                    "labelSelector": {"matchLabels": {"app": "checkout-api"}},
                    "maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                }
            ],
        },
    }
