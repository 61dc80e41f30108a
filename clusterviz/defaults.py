"""What kube-apiserver 1.34–1.37 fills in before it stores an object: the API defaults
(pkg/apis/core/v1/defaults.go SetDefaults_PodSpec / _Pod / _Container / _Probe / _Volume /
_HostPathVolumeSource / _ObjectFieldSelector / _ServiceAccountTokenProjection, the volume sources'
defaultMode; pkg/apis/apps/v1/defaults.go SetDefaults_Deployment / _ReplicaSet) and the DefaultTolerationSeconds
admission plugin (plugin/pkg/admission/defaulttolerationseconds: pods tolerate the not-ready and
unreachable NoExecute taints for 300 s unless they say otherwise). Plain dict transforms, no Django.

What only a Pod gets (SetDefaults_Pod: requests from limits, pod-level requests, hostNetwork
ports) is the core model's (`PodSpec.default_as_pod`); `enableServiceLinks` is SetDefaults_Pod's
too, so a workload's template never shows it. The gated defaults do not differ across 1.34–1.37:
PodLevelResources is on from 1.34; ImageVolume's pullPolicy default is not modelled."""

from __future__ import annotations

from typing import Any

__all__ = ["default_namespace", "default_pod", "default_pod_spec", "default_workload", "image_pull_policy"]

Obj = dict[str, Any]
NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
HANDLERS = ("httpGet",)


def image_pull_policy(image: str) -> str:
    """Always for `:latest` or no tag (a digest alone is not a tag), else IfNotPresent."""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.partition(":")[2] if ":" in last else ("" if digest else "latest")
    return "Always" if tag == "latest" else "IfNotPresent"


def _default_probe(probe: Any) -> None:
    if not isinstance(probe, dict):
        return
    probe.setdefault("timeoutSeconds", 1)
    probe.setdefault("periodSeconds", 10)
    probe.setdefault("successThreshold", 1)
    probe.setdefault("failureThreshold", 3)
    if isinstance(probe.get("httpGet"), dict):
        probe["httpGet"].setdefault("path", "/")
        probe["httpGet"].setdefault("scheme", "HTTP")


def _default_container(container: Any) -> None:
    if not isinstance(container, dict):
        return
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    if isinstance(container.get("image"), str) and container["image"]:
        container.setdefault("imagePullPolicy", image_pull_policy(container["image"]))
    container.setdefault("resources", {})
    for env in container.get("env") or []:
        if isinstance(env, dict):
            _default_field_ref(env.get("valueFrom"))
    for port in container.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if port.get("hostPort") == 0:  # an omitempty int32: 0 is never written
                del port["hostPort"]
    for name in PROBES:
        _default_probe(container.get(name))


def default_pod_spec(spec: Obj) -> None:
    """SetDefaults_PodSpec and its containers' defaults (pods and workload templates alike)."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for field in ("initContainers", "containers"):
        for container in spec.get(field) or []:
            _default_container(container)
    for volume in spec.get("volumes") or []:
        if isinstance(volume, dict):
            _default_volume(volume)


def _default_field_ref(holder: Any) -> None:
    """SetDefaults_ObjectFieldSelector: a fieldRef's apiVersion is v1."""
    if isinstance(holder, dict) and isinstance(holder.get("fieldRef"), dict):
        holder["fieldRef"].setdefault("apiVersion", "v1")


def _default_volume(volume: Obj) -> None:
    """SetDefaults_Volume (no source: an emptyDir), the sources' defaultMode, a hostPath's type
    (HostPathUnset, ""), a projected token's expirationSeconds (an hour) and fieldRefs' apiVersion."""
    if not any(isinstance(value, dict) for key, value in volume.items() if key != "name"):
        volume["emptyDir"] = {}
    for source in ("secret", "configMap", "downwardAPI", "projected"):
        if isinstance(volume.get(source), dict):
            volume[source].setdefault("defaultMode", 420)
    if isinstance(volume.get("hostPath"), dict):
        volume["hostPath"].setdefault("type", "")
    for item in (volume.get("downwardAPI") or {}).get("items") or []:
        _default_field_ref(item)
    for projection in (volume.get("projected") or {}).get("sources") or []:
        if not isinstance(projection, dict):
            continue
        if isinstance(projection.get("serviceAccountToken"), dict):
            projection["serviceAccountToken"].setdefault("expirationSeconds", 3600)
        for item in (projection.get("downwardAPI") or {}).get("items") or []:
            _default_field_ref(item)


def _tolerates(tolerations: list[Any], key: str) -> bool:
    return any(
        isinstance(t, dict) and t.get("key", "") in (key, "") and t.get("effect", "") in ("NoExecute", "")
        for t in tolerations
    )


def default_pod(pod: Obj) -> None:
    """A pod as admitted: spec defaults, then DefaultTolerationSeconds."""
    spec = pod.setdefault("spec", {})
    default_pod_spec(spec)
    spec.setdefault("enableServiceLinks", True)
    tolerations = spec.setdefault("tolerations", [])
    for key in (NOT_READY, UNREACHABLE):
        if not _tolerates(tolerations, key):
            tolerations.append(
                {
                    "key": key,
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
                }
            )


def default_workload(obj: Obj) -> None:
    """Deployment and ReplicaSet defaults, with their pod template's."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    if obj.get("kind") == "Deployment":
        strategy = spec.setdefault("strategy", {})
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            rolling.setdefault("maxUnavailable", "25%")
            rolling.setdefault("maxSurge", "25%")
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
    template = spec.get("template")
    if isinstance(template, dict):
        default_pod_spec(template.setdefault("spec", {}))


def default_namespace(namespace: Obj) -> None:
    """Every namespace carries its name as the `kubernetes.io/metadata.name` label, the `kubernetes`
    finalizer and a phase."""
    meta = namespace.setdefault("metadata", {})
    meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta.get("name", "")
    namespace.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    namespace.setdefault("status", {}).setdefault("phase", "Active")
