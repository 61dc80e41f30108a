"""LimitRanges and the LimitRanger admission plugin, through the real kubectl: a namespace's default
request reaches every new pod (kubectl's and a Deployment's) and the scheduler counts it — a pod
that would fit anywhere stays Pending; max, min and ratio refuse a pod with upstream's Forbidden
text; a LimitRange that contradicts itself is Invalid, with upstream's message; nothing is stored
on a refusal."""

from __future__ import annotations

import pytest

from clusterviz.limit_ranges import ANNOTATION

from .conftest import Cluster

pytestmark = pytest.mark.slow

DEFAULT_REQUEST = """\
apiVersion: v1
kind: LimitRange
metadata: {name: cpu-default}
spec:
  limits:
  - type: Container
    defaultRequest: {cpu: "3"}
"""
MAX_ONE_CPU = """\
apiVersion: v1
kind: LimitRange
metadata: {name: max-one-cpu, namespace: team}
spec:
  limits:
  - type: Container
    max: {cpu: "1"}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  containers:
  - name: app
    image: nginx
{resources}"""


def pod(name: str, namespace: str = "default", resources: str = "") -> str:
    return POD.format(name=name, namespace=namespace, resources=resources)


def test_a_default_request_keeps_a_pod_pending_that_would_fit_anywhere(cluster: Cluster) -> None:
    cluster.kubectl("run", "before", "--image=nginx")
    cluster.wait(lambda: cluster.pods()["default/before"]["spec"].get("nodeName"), what="before bound")

    created = cluster.kubectl("apply", "-f", cluster.write("lr.yaml", DEFAULT_REQUEST))
    assert created.stdout == "limitrange/cpu-default created\n"
    table = cluster.kubectl("get", "limitrange").rows()
    assert table[0] == ["NAME", "CREATED", "AT"] and table[1][0] == "cpu-default"
    described = cluster.kubectl("describe", "limits", "cpu-default").stdout
    assert "Type        Resource  Min  Max  Default Request  Default Limit  Max Limit/Request Ratio" in described
    assert "Container   cpu       -    -    3                -              -" in described

    cluster.kubectl("run", "after", "--image=nginx")
    after = cluster.wait(
        lambda: next(
            (c for c in cluster.pods()["default/after"]["status"].get("conditions", []) if c["type"] == "PodScheduled"),
            None,
        ),
        what="after's scheduling attempt",
    )
    body = cluster.pods()["default/after"]
    assert body["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "3"}}
    assert body["metadata"]["annotations"][ANNOTATION] == "LimitRanger plugin set: cpu request for container after"
    assert after["reason"] == "Unschedulable"
    # more cpu than any node has: upstream v1.34's words (DynamicResources' PostFilter, then preemption's)
    assert after["message"] == (
        "0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are "
        "available: 3 Preemption is not helpful for scheduling."
    )
    # pods made by a controller are admitted the same way
    cluster.kubectl("create", "deployment", "web", "--image=nginx")
    web = cluster.wait(lambda: [p for k, p in cluster.pods().items() if k.startswith("default/web-")], what="web's pod")
    assert web[0]["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "3"}}
    assert "default/before" in cluster.pods() and cluster.pods()["default/before"]["spec"]["nodeName"]


def test_max_refuses_a_pod_and_defaults_the_limit(cluster: Cluster) -> None:
    cluster.kubectl("create", "namespace", "team")
    cluster.kubectl("apply", "-f", cluster.write("max.yaml", MAX_ONE_CPU))
    stored = cluster.objects("LimitRange")["team/max-one-cpu"]["spec"]["limits"][0]
    assert stored == {"type": "Container", "max": {"cpu": "1"}, "default": {"cpu": "1"}, "defaultRequest": {"cpu": "1"}}

    before = cluster.dump()
    big = pod("big", "team", '    resources: {limits: {cpu: "2"}}\n')
    refused = cluster.kubectl("apply", "-f", cluster.write("big.yaml", big), ok=False)
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): error when creating "big.yaml": pods "big" is forbidden: '
        "maximum cpu usage per Container is 1, but limit is 2."
    )
    assert cluster.dump() == before

    cluster.kubectl("apply", "-f", cluster.write("small.yaml", pod("small", "team")))
    small = cluster.pods()["team/small"]
    assert small["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}
    assert small["metadata"]["annotations"][ANNOTATION] == (
        "LimitRanger plugin set: cpu request for container app; cpu limit for container app"
    )


def test_a_limit_range_that_contradicts_itself_is_invalid(cluster: Cluster) -> None:
    bad = MAX_ONE_CPU.replace("namespace: team", "namespace: default").replace(
        'max: {cpu: "1"}', 'max: {cpu: "1"}\n    defaultRequest: {cpu: "2"}'
    )
    refused = cluster.kubectl("apply", "-f", cluster.write("bad.yaml", bad), ok=False)
    assert 'The LimitRange "max-one-cpu" is invalid: spec.limits[0].defaultRequest[cpu]: Invalid value: "2": ' in (
        refused.stderr
    )
    assert "default request value 2 is greater than max value 1" in refused.stderr
    pod_type = bad.replace("type: Container", "type: Pod")
    refused = cluster.kubectl("apply", "-f", cluster.write("pod-type.yaml", pod_type), ok=False)
    assert "spec.limits[0].defaultRequest: Forbidden: may not be specified when `type` is 'Pod'" in refused.stderr
    assert cluster.objects("LimitRange") == {}
