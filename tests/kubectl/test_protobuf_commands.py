"""kubectl's generator commands, which send protobuf (`application/vnd.kubernetes.protobuf`, read
with the messages generated from upstream's generated.proto: clusterviz/kube_api/protobuf.py), answer
as a v1.32 cluster prints them and store what a real server stores; responses are protobuf when the
client prefers it; a body that is no protobuf message is upstream's 400, nothing stored."""

from __future__ import annotations

import base64

import pytest

from clusterviz.kube_api.pb.k8s_io.api.core.v1 import generated_pb2 as core
from clusterviz.kube_api.pb.k8s_io.apimachinery.pkg.runtime import generated_pb2 as runtime
from clusterviz.kube_api.protobuf import MAGIC, decode

from .conftest import Cluster, KubeServer

pytestmark = pytest.mark.slow
PROTOBUF = "application/vnd.kubernetes.protobuf"


def test_create_namespace_configmap_secret_and_service(cluster: Cluster) -> None:
    assert cluster.kubectl("create", "namespace", "team").stdout == "namespace/team created\n"
    team = cluster.objects("Namespace")["team"]
    assert team["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team"}
    assert team["status"] == {"phase": "Active"}

    made = cluster.kubectl(
        "create", "configmap", "settings", "-n", "team", "--from-literal=mode=fast", "--from-literal=level=3"
    )
    assert made.stdout == "configmap/settings created\n"
    settings = cluster.objects("ConfigMap")["team/settings"]
    assert settings["data"] == {"mode": "fast", "level": "3"}

    secret = cluster.kubectl("create", "secret", "generic", "token", "--from-literal=key=s3cr3t")
    assert secret.stdout == "secret/token created\n"
    stored = cluster.objects("Secret")["default/token"]
    assert stored["type"] == "Opaque"
    assert base64.b64decode(stored["data"]["key"]) == b"s3cr3t"

    service = cluster.kubectl("create", "service", "clusterip", "web", "--tcp=80:8080")
    assert service.stdout == "service/web created\n"
    web = cluster.objects("Service")["default/web"]
    assert web["spec"]["ports"] == [{"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}]
    assert web["spec"]["selector"] == {"app": "web"}
    assert web["spec"]["type"] == "ClusterIP" and web["spec"]["clusterIP"]
    listed = cluster.kubectl("get", "service", "web", "-o", "jsonpath={.spec.ports[0].targetPort}")
    assert listed.stdout == "8080"

    again = cluster.kubectl("create", "namespace", "team", ok=False)
    assert again.stderr.strip() == 'Error from server (AlreadyExists): namespaces "team" already exists'


def test_create_deployment_and_job_schedule_their_pods(cluster: Cluster) -> None:
    made = cluster.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2", "--port=80")
    assert made.stdout == "deployment.apps/web created\n"
    deployment = cluster.objects("Deployment")["default/web"]
    template = deployment["spec"]["template"]
    assert deployment["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert template["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert template["spec"]["restartPolicy"] == "Always"  # defaulted as for JSON: Go's zero "" is unset
    cluster.wait(
        lambda: sum(1 for p in cluster.pods().values() if p["spec"].get("nodeName")) == 2, what="2 web pods bound"
    )
    rollout = cluster.kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    assert 'deployment "web" successfully rolled out' in rollout.stdout

    job = cluster.kubectl("create", "job", "once", "--image=busybox", "--", "echo", "hi")
    assert job.stdout == "job.batch/once created\n"
    spec = cluster.objects("Job")["default/once"]["spec"]["template"]["spec"]
    assert spec["containers"][0]["command"] == ["echo", "hi"]
    assert spec["restartPolicy"] == "Never"
    cluster.wait(lambda: any(k.startswith("default/once-") for k in cluster.pods()), what="the job's pod")


def test_debug_node_creates_its_pod_on_that_node(cluster: Cluster) -> None:
    debug = cluster.kubectl("debug", "node/node02", "--image=busybox")
    assert debug.stdout.startswith("Creating debugging pod node-debugger-node02-")
    assert debug.stdout.rstrip().endswith("with container debugger on node node02.")
    (pod,) = [p for key, p in cluster.pods().items() if key.startswith("default/node-debugger-node02-")]
    spec = pod["spec"]
    assert spec["nodeName"] == "node02"
    assert spec["hostNetwork"] is True and spec["hostPID"] is True and spec["hostIPC"] is True
    assert spec["containers"][0]["image"] == "busybox"
    assert spec["containers"][0]["volumeMounts"][0] == {"mountPath": "/host", "name": "host-root"}
    assert spec["volumes"][0]["name"] == "host-root" and spec["volumes"][0]["hostPath"]["path"] == "/"
    assert spec["tolerations"] == [{"operator": "Exists"}]


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    unknown = runtime.Unknown(raw=raw)
    unknown.typeMeta.apiVersion, unknown.typeMeta.kind = api_version, kind
    return MAGIC + unknown.SerializeToString()


def test_protobuf_answers_and_refusals(cluster: Cluster, kube_server: KubeServer) -> None:
    base = f"/k8s/{cluster.slug}/api/v1"
    auth = {"Authorization": f"Bearer {cluster.token}"}
    # a client that prefers protobuf gets it, as from kube-apiserver; JSON otherwise
    got = kube_server.request("GET", f"{base}/nodes/node01", headers={**auth, "Accept": f"{PROTOBUF}, */*"})
    assert got.status == 200 and got.headers["Content-Type"] == PROTOBUF
    node = decode(got.body, "Node", "v1")
    assert node["metadata"]["name"] == "node01" and node["status"]["capacity"]["cpu"] == "2"
    listed = kube_server.request("GET", f"{base}/nodes", headers={**auth, "Accept": f"{PROTOBUF}, */*"})
    nodes = core.NodeList.FromString(runtime.Unknown.FromString(listed.body[len(MAGIC) :]).raw)
    assert [item.metadata.name for item in nodes.items] == ["node01", "node02", "node03"]
    plain = kube_server.request("GET", f"{base}/nodes/node01", headers={**auth, "Accept": "application/json"})
    assert plain.headers["Content-Type"] == "application/json"

    # a protobuf create; the response in protobuf too
    config = core.ConfigMap()
    config.metadata.name = "raw"
    config.data["a"] = "1"
    headers = {**auth, "Content-Type": PROTOBUF, "Accept": f"{PROTOBUF}, */*"}
    created = kube_server.request(
        "POST",
        f"{base}/namespaces/default/configmaps",
        _envelope("v1", "ConfigMap", config.SerializeToString()),
        headers,
    )
    assert created.status == 201, created.body
    assert decode(created.body, "ConfigMap", "v1")["data"] == {"a": "1"}

    before = cluster.dump()
    for body, message in (
        (b"", "the object provided is unrecognized (must be of type ConfigMap): empty data"),
        (b"{}", "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"),
        (MAGIC, "the object provided is unrecognized (must be of type ConfigMap): empty body"),
        (MAGIC + b"\x12\xff", "the object provided is unrecognized (must be of type ConfigMap): unexpected EOF"),
        (
            _envelope("v1", "ConfigMap", b"\x0a\x05\x0a\x01"),
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: unexpected EOF',
        ),
        (
            _envelope("v1", "Widget", b""),
            'Widget in version "v1" cannot be handled as a ConfigMap: no kind "Widget" is registered for version "v1"',
        ),
    ):
        refused = kube_server.request(
            "POST", f"{base}/namespaces/default/configmaps", body, {**auth, "Content-Type": PROTOBUF}
        )
        assert refused.status == 400, (body, refused.body)
        status = refused.json()
        assert status["reason"] == "BadRequest" and message in status["message"], status
    assert cluster.dump() == before


def _frames(body: bytes) -> list[bytes]:
    """The length-delimited frames of a protobuf watch stream."""
    out, pos = [], 0
    while pos < len(body):
        size = int.from_bytes(body[pos : pos + 4], "big")
        out.append(body[pos + 4 : pos + 4 + size])
        pos += 4 + size
    return out


def test_a_typed_client_watches_in_protobuf(cluster: Cluster, kube_server: KubeServer) -> None:
    from clusterviz.kube_api.pb.k8s_io.apimachinery.pkg.apis.meta.v1 import generated_pb2 as meta

    auth = {"Authorization": f"Bearer {cluster.token}", "Accept": f"{PROTOBUF}, */*"}
    got = kube_server.request("GET", f"/k8s/{cluster.slug}/api/v1/nodes?watch=1&timeoutSeconds=1", headers=auth)
    assert got.status == 200 and got.headers["Content-Type"] == "application/vnd.kubernetes.protobuf;stream=watch"
    events = [meta.WatchEvent.FromString(frame) for frame in _frames(got.body)]
    assert [event.type for event in events] == ["ADDED", "ADDED", "ADDED"]
    names = [decode(event.object.raw, "Node", "v1")["metadata"]["name"] for event in events]
    assert names == ["node01", "node02", "node03"]
    # a watch from a compacted or future version ends with an ERROR event carrying a Status
    ahead = kube_server.request("GET", f"/k8s/{cluster.slug}/api/v1/nodes?watch=1&resourceVersion=999999", headers=auth)
    (error,) = [meta.WatchEvent.FromString(frame) for frame in _frames(ahead.body)]
    assert error.type == "ERROR"
    status = meta.Status.FromString(runtime.Unknown.FromString(error.object.raw[len(MAGIC) :]).raw)
    assert status.code == 504 and status.reason == "Timeout"
