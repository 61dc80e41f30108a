"""Fields an update may not change, refused as kube-apiserver v1.32 refuses them (422 Invalid, the
same text through kubectl and the browser's `replace` action), with nothing stored."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from .conftest import Cluster

pytestmark = pytest.mark.slow

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - {name: web, image: nginx:1.27}
"""
SERVICE = """\
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports:
  - port: 80
"""
STATEFULSET = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 0
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - {name: db, image: postgres:17}
"""
JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: pi}
spec:
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: pi, image: perl:5.34}
"""
CLAIM = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: standard
  resources:
    requests: {storage: 1Gi}
"""
SELECTOR_PATCH = json.dumps(
    {
        "spec": {
            "selector": {"matchLabels": {"app": "web", "v": "2"}},
            "template": {"metadata": {"labels": {"app": "web", "v": "2"}}},
        }
    }
)
SELECTOR_REFUSED = (
    'The Deployment "web" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:'
    'map[string]string{"app":"web", "v":"2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: '
    "field is immutable"
)
CLUSTER_IP_REFUSED = (
    'The Service "web" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.0.99"}: may not change once set'
)


def _replace(cluster: Cluster, manifest: str) -> Any:
    """The browser's replace action (HTTP, as the owner)."""
    body = {"action": "replace", "yaml": manifest}
    headers = {"Authorization": f"Bearer {cluster.token}"}
    return cluster.server.request("POST", f"/api/clusters/{cluster.slug}/actions", body, headers)


def _stored(cluster: Cluster, kind: str, name: str) -> dict[str, Any]:
    return cluster.objects(kind)[f"default/{name}"]


def test_a_deployment_selector_is_immutable_through_kubectl_and_the_browser(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("web.yaml", DEPLOYMENT))
    cluster.wait(lambda: cluster.objects("ReplicaSet"), what="the ReplicaSet")
    replicasets = set(cluster.objects("ReplicaSet"))
    refused = cluster.kubectl("patch", "deployment", "web", "-p", SELECTOR_PATCH, ok=False)
    assert refused.stderr.strip() == SELECTOR_REFUSED

    current = yaml.safe_load(cluster.kubectl("get", "deployment", "web", "-o", "yaml").stdout)
    current["spec"]["selector"]["matchLabels"]["v"] = "2"
    current["spec"]["template"]["metadata"]["labels"]["v"] = "2"
    response = _replace(cluster, yaml.safe_dump(current))
    assert response.status == 422, response.body
    status = response.json()
    assert (status["reason"], status["message"]) == ("Invalid", SELECTOR_REFUSED)
    # nothing stored by either door: the selector and the ReplicaSets are as they were
    assert _stored(cluster, "Deployment", "web")["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert set(cluster.objects("ReplicaSet")) == replicasets

    # what may change still does, through the same action
    current["spec"]["selector"]["matchLabels"].pop("v")
    current["spec"]["template"]["metadata"]["labels"].pop("v")
    current["spec"]["replicas"] = 2
    current["metadata"].pop("resourceVersion")
    assert _replace(cluster, yaml.safe_dump(current)).json()["replaced"] == ["Deployment/web"]
    assert _stored(cluster, "Deployment", "web")["spec"]["replicas"] == 2


def test_replica_and_daemon_set_selectors_are_immutable(cluster: Cluster) -> None:
    replicaset = DEPLOYMENT.replace("kind: Deployment", "kind: ReplicaSet").replace("replicas: 1", "replicas: 0")
    daemonset = DEPLOYMENT.replace("kind: Deployment", "kind: DaemonSet").replace("  replicas: 1\n", "")
    cluster.kubectl("apply", "-f", cluster.write("rs.yaml", replicaset.replace("name: web", "name: rs")))
    cluster.kubectl("apply", "-f", cluster.write("ds.yaml", daemonset.replace("name: web", "name: ds")))
    for kind, name in (("ReplicaSet", "rs"), ("DaemonSet", "ds")):
        refused = cluster.kubectl("patch", kind.lower(), name, "-p", SELECTOR_PATCH, ok=False)
        assert refused.stderr.strip() == SELECTOR_REFUSED.replace('Deployment "web"', f'{kind} "{name}"')
        assert _stored(cluster, kind, name)["spec"]["selector"] == {"matchLabels": {"app": "web"}}


def test_a_service_cluster_ip_may_not_change_once_set(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("svc.yaml", SERVICE))
    allocated = _stored(cluster, "Service", "web")["spec"]
    patch = json.dumps({"spec": {"clusterIP": "10.96.0.99"}})
    refused = cluster.kubectl("patch", "service", "web", "-p", patch, ok=False)
    assert refused.stderr.strip() == CLUSTER_IP_REFUSED
    families = cluster.kubectl(
        "patch", "service", "web", "--type=merge", "-p", '{"spec":{"ipFamilies":["IPv6"]}}', ok=False
    )
    assert families.stderr.strip() == (
        'The Service "web" is invalid: spec.ipFamilies[0]: Invalid value: []core.IPFamily{"IPv6"}: '
        "may not change once set"
    )
    # a replace that leaves the address out keeps it (the allocator's patchAllocatedValues)
    cluster.kubectl("replace", "-f", "svc.yaml")
    assert _stored(cluster, "Service", "web")["spec"]["clusterIPs"] == allocated["clusterIPs"]

    moved = yaml.safe_load(cluster.kubectl("get", "service", "web", "-o", "yaml").stdout)
    moved["spec"]["clusterIP"] = "10.96.0.99"  # clusterIPs as they are: the change is mirrored into them
    response = _replace(cluster, yaml.safe_dump(moved))
    assert (response.status, response.json()["message"]) == (422, CLUSTER_IP_REFUSED)
    assert _stored(cluster, "Service", "web")["spec"]["clusterIP"] == allocated["clusterIP"]


def test_a_statefulset_spec_beyond_the_updatable_fields_is_forbidden(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("db.yaml", STATEFULSET))
    refused = cluster.kubectl("patch", "sts", "db", "-p", '{"spec":{"serviceName":"other"}}', ok=False)
    assert refused.stderr.strip() == (
        'The StatefulSet "db" is invalid: spec: Forbidden: updates to statefulset spec for fields other than '
        "'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
        "'minReadySeconds' are forbidden"
    )
    cluster.kubectl("scale", "sts", "db", "--replicas=1")  # replicas may change
    assert _stored(cluster, "StatefulSet", "db")["spec"]["serviceName"] == "db"


def test_a_job_template_and_completions_are_immutable(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("pi.yaml", JOB))
    image = '{"spec":{"template":{"spec":{"containers":[{"name":"pi","image":"perl:5.36"}]}}}}'
    refused = cluster.kubectl("patch", "job", "pi", "-p", image, ok=False)
    assert refused.stderr.strip() == (
        'The Job "pi" is invalid: spec.template: Invalid value: core.PodTemplateSpec{…}: field is immutable'
    )
    completions = cluster.kubectl("patch", "job", "pi", "-p", '{"spec":{"completions":5}}', ok=False)
    assert (
        completions.stderr.strip() == 'The Job "pi" is invalid: spec.completions: Invalid value: 5: field is immutable'
    )
    both = '{"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}}}}}'
    selector = cluster.kubectl("patch", "job", "pi", "-p", both, ok=False).stderr.splitlines()
    assert selector[0] == 'The Job "pi" is invalid: '
    assert selector[1].startswith(
        '* spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"a":"b", '
    )
    assert selector[1].endswith("MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable")
    assert selector[2] == "* spec.template: Invalid value: core.PodTemplateSpec{…}: field is immutable"
    assert _stored(cluster, "Job", "pi")["spec"]["completions"] == 2


def test_a_claim_spec_is_immutable_and_its_request_never_shrinks(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("data.yaml", CLAIM))
    refused = cluster.kubectl("patch", "pvc", "data", "-p", '{"spec":{"storageClassName":"fast"}}', ok=False)
    assert refused.stderr.strip() == (
        'The PersistentVolumeClaim "data" is invalid: spec: Forbidden: spec is immutable after creation except '
        "resources.requests for bound claims"
    )
    shrink = cluster.kubectl(
        "patch", "pvc", "data", "-p", '{"spec":{"resources":{"requests":{"storage":"512Mi"}}}}', ok=False
    )
    assert "* spec.resources.requests.storage: Forbidden: field can not be less than previous value" in shrink.stderr
    assert _stored(cluster, "PersistentVolumeClaim", "data")["spec"]["storageClassName"] == "standard"


def test_metadata_uid_is_immutable_and_creation_timestamp_is_the_servers(cluster: Cluster) -> None:
    cluster.kubectl("run", "web", "--image=nginx")
    stored = cluster.pods()["default/web"]["metadata"]
    refused = cluster.kubectl("patch", "pod", "web", "--type=merge", "-p", '{"metadata":{"uid":"x"}}', ok=False)
    assert refused.stderr.strip() == 'The Pod "web" is invalid: metadata.uid: Invalid value: "x": field is immutable'
    # BeforeUpdate puts the stored creationTimestamp back: the write changes nothing
    patch = '{"metadata":{"creationTimestamp":"2001-01-01T00:00:00Z"}}'
    assert cluster.kubectl("patch", "pod", "web", "--type=merge", "-p", patch).stdout == "pod/web patched (no change)\n"
    after = cluster.pods()["default/web"]["metadata"]
    assert (after["uid"], after["creationTimestamp"]) == (stored["uid"], stored["creationTimestamp"])


def test_pod_spec_changes_beyond_the_mutable_fields_are_refused_by_the_browser_too(cluster: Cluster) -> None:
    cluster.kubectl("run", "web", "--image=nginx")
    pod = yaml.safe_load(cluster.kubectl("get", "pod", "web", "-o", "yaml").stdout)
    pod["spec"]["nodeSelector"] = {"disk": "ssd"}
    response = _replace(cluster, yaml.safe_dump(pod))
    assert response.status == 422
    assert response.json()["message"].startswith(
        'The Pod "web" is invalid: spec: Forbidden: pod updates may not change fields other than '
    )
    pod["spec"].pop("nodeSelector")
    pod["spec"]["containers"][0]["image"] = "nginx:1.27"
    pod["metadata"].pop("resourceVersion")
    assert _replace(cluster, yaml.safe_dump(pod)).status == 200
    assert cluster.pods()["default/web"]["spec"]["containers"][0]["image"] == "nginx:1.27"
