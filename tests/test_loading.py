"""scheduler_core/api/loading.py: YAML to objects, API-server defaulting and admission, located errors.

Messages follow the API server's field errors (`<path>: Unsupported value: ...`, `Required value`,
`Invalid value: ...`) prefixed with `file:line` (and `:column` for YAML syntax errors).
Admission: plugin/pkg/admission/priority (priority and preemptionPolicy from the PriorityClass,
the globalDefault class, built-in system classes), plugin/pkg/admission/runtimeclass (overhead).
"""

from __future__ import annotations

import re
import textwrap

import pytest

from scheduler_core.api.loading import (
    MAX_YAML_BYTES,
    InputError,
    admit_pod,
    load_cluster,
    load_pod,
    load_yaml_documents,
    parse_object,
)
from scheduler_core.api.objects import Node, Pod, PriorityClass, RuntimeClass


def yaml_text(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


POD = yaml_text(
    """
    apiVersion: v1
    kind: Pod
    metadata:
      name: web
    spec:
      containers:
      - name: c
        image: nginx
    """
)


def error_of(call, *args) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as caught:
        call(*args)
    message = str(caught.value)
    assert "\n" not in message
    return message


# --- YAML documents ------------------------------------------------------------------------------


def test_multi_document_stream_skips_empty_documents() -> None:
    docs = load_yaml_documents("---\na: 1\n---\n---\nb: 2\n...\n", "x.yaml")
    assert [d.data for d in docs] == [{"a": 1}, {"b": 2}]


def test_unquoted_timestamps_stay_strings() -> None:
    """Kubernetes carries timestamps as strings; YAML 1.1 would make them datetimes."""
    text = POD.replace("  name: web\n", "  name: web\n  creationTimestamp: 2024-05-01T10:00:00Z\n")
    text += "status:\n  startTime: 2024-05-01T10:00:05Z\n"
    pod = load_pod(text, "pod.yaml")
    assert pod.metadata.creation_timestamp == "2024-05-01T10:00:00Z"
    assert pod.status.start_time == "2024-05-01T10:00:05Z"


def test_anchors_and_merge_keys_within_limits_load() -> None:
    text = yaml_text(
        """
        base: &res {cpu: 100m, memory: 64Mi}
        a: *res
        b: {<<: *res, cpu: 200m}
        """
    )
    (doc,) = load_yaml_documents(text, "x.yaml")
    assert doc.data["a"] == {"cpu": "100m", "memory": "64Mi"}
    assert doc.data["b"] == {"cpu": "200m", "memory": "64Mi"}


def billion_laughs(levels: int = 9) -> str:
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("a: 1\nb: [1, 2\n", r"^x\.yaml:3:1: expected ',' or '\]', but got '<stream end>'$", id="syntax"),
        pytest.param("a:\n  b: 1\n  b: 2\n", r"^x\.yaml:3:3: duplicate key 'b'$", id="duplicate key"),
        pytest.param("? [a]\n: 1\n", r"^x\.yaml:1:3: mapping key is not a scalar$", id="list as key"),
        pytest.param(billion_laughs(), r"^x\.yaml:6:\d+: excessive aliasing: aliases expand to more than", id="bomb"),
        pytest.param(
            "a: " + "[" * 150 + "]" * 150 + "\n", r"^x\.yaml:1:\d+: nesting deeper than 100 levels$", id="deep"
        ),
        pytest.param("a: *nope\n", r"^x\.yaml:1:4: found undefined alias 'nope'$", id="undefined alias"),
        pytest.param(
            "a: " + "9" * 5000 + "\n", r"^x\.yaml:1:4: integer with more than 4000 digits$", id="huge integer"
        ),
        pytest.param("a: 1\nb: c\x00\n", r"^x\.yaml:2:5: unacceptable character #x0000: special characters", id="NUL"),
        pytest.param("a: !!python/object:os.system x\n", r"^x\.yaml:1:4: could not determine a constructor", id="tag"),
        pytest.param(b"a: \xff\n", r"^x\.yaml:1:4: not valid UTF-8 \(byte 3\)$", id="invalid UTF-8"),
    ],
)
def test_yaml_errors(text: str | bytes, expected: str) -> None:
    message = error_of(load_yaml_documents, text, "x.yaml")
    assert re.search(expected, message), message


def test_moderate_nesting_is_fine() -> None:
    (doc,) = load_yaml_documents("a: " + "[" * 60 + "]" * 60 + "\n", "x.yaml")
    value, depth = doc.data["a"], 0
    while value:
        value, depth = value[0], depth + 1
    assert depth == 59


def test_size_limit() -> None:
    assert error_of(load_yaml_documents, b" " * (MAX_YAML_BYTES + 1), "big.yaml") == "big.yaml: larger than 16 MiB"


# --- objects and field errors ----------------------------------------------------------------------


def pod_with(spec_lines: str) -> str:
    return yaml_text(
        """
        apiVersion: v1
        kind: Pod
        metadata:
          name: web
        spec:
        """
    ) + textwrap.indent(yaml_text(spec_lines), "  ")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            pod_with(
                """
                containers:
                - name: c
                  resources:
                    requests:
                      cpu: 1x
                """
            ),
            'pod.yaml:10: spec.containers[0].resources.requests.cpu: "1x" is not a valid quantity',
            id="invalid quantity",
        ),
        pytest.param(
            pod_with(
                """
                containers:
                - name: c
                  resources:
                    limits:
                      memory: "-1Gi"
                """
            ),
            'pod.yaml:10: spec.containers[0].resources.limits[memory]: Invalid value: "-1Gi": '
            "must be greater than or equal to 0",
            id="negative quantity",
        ),
        pytest.param(
            pod_with(
                """
                containers:
                - name: c
                affinity:
                  nodeAffinity:
                    requiredDuringSchedulingIgnoredDuringExecution:
                      nodeSelectorTerms:
                      - matchExpressions:
                        - key: zone
                          operator: Within
                """
            ),
            "pod.yaml:14: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
            '.nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Within": '
            'supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
            id="unsupported operator",
        ),
        pytest.param(pod_with("nodeName: n1\n"), "pod.yaml:5: spec.containers: Required value", id="no containers"),
        pytest.param(
            pod_with("containers:\n- image: nginx\n"),
            "pod.yaml:7: spec.containers[0].name: Required value",
            id="container without name",
        ),
        pytest.param(
            pod_with("priority: 3000000000\ncontainers:\n- name: c\n"),
            'pod.yaml:6: spec.priority: Invalid value: "3000000000": must be less than or equal to 2147483647',
            id="priority beyond int32",
        ),
        pytest.param(
            pod_with("priority: high\ncontainers:\n- name: c\n"),
            'pod.yaml:6: spec.priority: Invalid value: "high": must be an integer',
            id="priority not a number",
        ),
        pytest.param(
            pod_with("nodeSelector: {1: a}\ncontainers:\n- name: c\n"),
            'pod.yaml:6: spec.nodeSelector: Invalid value: "1": keys must be strings',
            id="label key not a string",
        ),
        pytest.param(
            pod_with("tolerations:\n- operator: Equal\n  value: x\ncontainers:\n- name: c\n"),
            "pod.yaml:7: spec.tolerations[0]: operator must be Exists when `key` is empty",
            id="toleration without key",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n",
            'pod.yaml:2: kind: unsupported kind "Node" (expected Pod)',
            id="wrong kind",
        ),
        pytest.param("- a\n- b\n", "pod.yaml: expected a Kubernetes object (a mapping), got list", id="not a mapping"),
        pytest.param(POD + "---\n" + POD, "pod.yaml: expected exactly one Pod, found 2 documents", id="two pods"),
        pytest.param(
            pod_with("priorityClassName: gold\ncontainers:\n- name: c\n"),
            'pod.yaml:6: spec.priorityClassName: pods "web" is forbidden: no PriorityClass with name gold was found',
            id="unknown PriorityClass",
        ),
    ],
)
def test_pod_errors(text: str, expected: str) -> None:
    assert error_of(load_pod, text, "pod.yaml").startswith(expected)


def test_unknown_fields_are_tolerated_and_kept() -> None:
    text = POD.replace("kind: Pod\n", "kind: Pod\nfutureField: {a: 1}\n").replace(
        "    image: nginx\n", "    image: nginx\n    someNewKnob: true\n"
    )
    pod = load_pod(text, "pod.yaml")
    assert pod.model_extra == {"futureField": {"a": 1}}
    assert pod.spec.containers[0].model_extra == {"someNewKnob": True}


def test_api_server_defaults() -> None:
    pod = load_pod(
        pod_with(
            """
            containers:
            - name: c
              resources:
                limits: {cpu: "2", memory: 1Gi}
                requests: {cpu: 500m}
              ports:
              - containerPort: 80
                hostPort: 8080
            """
        ),
        "pod.yaml",
    )
    assert pod.metadata.namespace == "default"
    assert pod.spec.scheduler_name == "default-scheduler"
    requests = pod.spec.containers[0].resources.requests
    assert {k: q.text for k, q in requests.items()} == {"cpu": "500m", "memory": "1Gi"}  # limits fill the gaps
    assert pod.spec.containers[0].ports[0].protocol == "TCP"
    assert (pod.spec.priority, pod.spec.preemption_policy) == (0, "PreemptLowerPriority")


# --- admission -------------------------------------------------------------------------------------


def priority_class(name: str, value: int, global_default: bool = False, policy: str | None = None) -> PriorityClass:
    body = {"metadata": {"name": name}, "value": value, "globalDefault": global_default}
    if policy:
        body["preemptionPolicy"] = policy
    return PriorityClass.model_validate(body)


def bare_pod(**spec: object) -> Pod:
    return Pod.model_validate({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}], **spec}})


@pytest.mark.parametrize(
    ("spec", "classes", "priority", "policy", "class_name"),
    [
        pytest.param({}, [], 0, "PreemptLowerPriority", "", id="no class: 0"),
        pytest.param(
            {"priorityClassName": "gold"},
            [priority_class("gold", 1000, policy="Never")],
            1000,
            "Never",
            "gold",
            id="named class gives value and preemptionPolicy",
        ),
        pytest.param(
            {},
            [priority_class("low", -5), priority_class("std", 50, global_default=True)],
            50,
            "PreemptLowerPriority",
            "std",
            id="globalDefault class",
        ),
        pytest.param(
            {"priorityClassName": "system-cluster-critical"},
            [],
            2000000000,
            "PreemptLowerPriority",
            "system-cluster-critical",
            id="built-in system-cluster-critical",
        ),
        pytest.param(
            {"priorityClassName": "system-node-critical"},
            [],
            2000001000,
            "PreemptLowerPriority",
            "system-node-critical",
            id="built-in system-node-critical",
        ),
        pytest.param(
            {"priority": 7, "priorityClassName": "missing"},
            [],
            7,
            "PreemptLowerPriority",
            "missing",
            id="an admitted pod keeps its priority",
        ),
        pytest.param({"preemptionPolicy": "Never"}, [], 0, "Never", "", id="explicit preemptionPolicy is kept"),
    ],
)
def test_priority_admission(
    spec: dict[str, object], classes: list[PriorityClass], priority: int, policy: str, class_name: str
) -> None:
    pod = bare_pod(**spec)
    admit_pod(pod, {pc.metadata.name: pc for pc in classes}, {})
    assert (pod.spec.priority, pod.spec.preemption_policy, pod.spec.priority_class_name) == (
        priority,
        policy,
        class_name,
    )


def test_runtime_class_overhead() -> None:
    rc = RuntimeClass.model_validate(
        {"metadata": {"name": "kata"}, "handler": "kata", "overhead": {"podFixed": {"cpu": "250m"}}}
    )
    pod = bare_pod(runtimeClassName="kata")
    admit_pod(pod, {}, {"kata": rc})
    assert {k: q.text for k, q in pod.spec.overhead.items()} == {"cpu": "250m"}


# --- clusters ----------------------------------------------------------------------------------------

CLUSTER_LIST = yaml_text(
    """
    apiVersion: v1
    kind: List
    items:
    - apiVersion: v1
      kind: Node
      metadata: {name: n1}
      status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
    - apiVersion: scheduling.k8s.io/v1
      kind: PriorityClass
      metadata: {name: gold}
      value: 1000
    - apiVersion: v1
      kind: Pod
      metadata: {name: a, namespace: team}
      spec:
        nodeName: n1
        priorityClassName: gold
        containers: [{name: c}]
    - apiVersion: v1
      kind: Service
      metadata: {name: svc}
      spec: {selector: {app: a}}
    - apiVersion: v1
      kind: Namespace
      metadata: {name: team, labels: {tier: one}}
    """
)


def test_kind_list() -> None:
    cluster = load_cluster(CLUSTER_LIST, "cluster.yaml")
    assert [n.name for n in cluster.nodes] == ["n1"]
    assert [p.key for p in cluster.pods] == ["team/a"]
    assert cluster.pods[0].spec.priority == 1000  # PriorityClass listed before or after: admitted after loading
    assert [w.kind for w in cluster.workloads] == ["Service"]
    assert [ns.metadata.name for ns in cluster.namespaces] == ["team"]


def test_multi_document_cluster_equals_the_list() -> None:
    stream = yaml_text(
        """
        apiVersion: v1
        kind: Pod
        metadata: {name: a, namespace: team}
        spec:
          nodeName: n1
          priorityClassName: gold
          containers: [{name: c}]
        ---
        apiVersion: v1
        kind: Node
        metadata: {name: n1}
        ---
        apiVersion: scheduling.k8s.io/v1
        kind: PriorityClass
        metadata: {name: gold}
        value: 1000
        """
    )
    cluster = load_cluster(stream, "cluster.yaml")
    assert [n.name for n in cluster.nodes] == ["n1"]
    assert [(p.key, p.spec.priority) for p in cluster.pods] == [("team/a", 1000)]


def test_typed_list_items_without_kind() -> None:
    """`GET /api/v1/nodes` returns a NodeList whose items carry no kind."""
    text = "apiVersion: v1\nkind: NodeList\nitems:\n- metadata: {name: n1}\n- metadata: {name: n2}\n"
    assert [n.name for n in load_cluster(text, "nodes.yaml").nodes] == ["n1", "n2"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "kind: List\nitems:\n- kind: Node\n  metadata: {name: n1}\n- kind: Node\n  metadata: {name: n2}\n"
            "  status:\n    allocatable: {cpu: lots}\n",
            'cluster.yaml:8: items[1].status.allocatable.cpu: "lots" is not a valid quantity',
            id="bad item names its index and line",
        ),
        pytest.param(
            "kind: List\nitems:\n- kind: [Node]\n  metadata: {name: w}\n",
            "cluster.yaml:3: items[0].kind: unsupported kind \"['Node']\"",
            id="kind not a string",
        ),
        pytest.param("kind: List\nitems: {a: 1}\n", "cluster.yaml:2: items: must be a list", id="items not a list"),
        pytest.param(
            "kind: Node\nmetadata: {name: n1}\n---\nkind: Node\nmetadata: {name: n1}\n",
            "cluster.yaml: duplicate node 'n1'",
            id="duplicate node",
        ),
        pytest.param(
            "kind: List\nitems:\n- kind: Pod\n  metadata: {name: a}\n  spec:\n    priorityClassName: gold\n"
            "    containers: [{name: c}]\n",
            'cluster.yaml:6: items[0].spec.priorityClassName: pods "a" is forbidden: no PriorityClass with name gold',
            id="unknown PriorityClass in a list",
        ),
        pytest.param(
            "kind: Node\nmetadata: {}\n", "cluster.yaml:2: metadata.name: Required value", id="node without name"
        ),
        pytest.param(
            "kind: PriorityClass\nmetadata: {name: x}\nvalue: 1e12\n",
            "cluster.yaml:3: value: Invalid value",
            id="PriorityClass value not int32",
        ),
    ],
)
def test_cluster_errors(text: str, expected: str) -> None:
    assert error_of(load_cluster, text, "cluster.yaml").startswith(expected)


def test_kinds_the_scheduler_does_not_read_are_skipped_and_counted() -> None:
    text = CLUSTER_LIST.replace(
        "items:\n",
        "items:\n- {kind: ConfigMap, metadata: {name: a}, data: {x: y}}\n- {kind: Secret, metadata: {name: s}}\n"
        "- {kind: ConfigMap, metadata: {name: b}}\n",
    )
    text += "---\nkind: Event\nmetadata: {name: e}\n"
    cluster = load_cluster(text, "cluster.yaml")
    assert [n.name for n in cluster.nodes] == ["n1"]
    assert cluster.skipped == {"ConfigMap": 2, "Secret": 1, "Event": 1}
    assert cluster.skipped_notice() == (
        "skipped 4 objects of kinds the scheduler does not read: ConfigMap (2), Event (1), Secret (1)"
    )
    assert load_cluster(CLUSTER_LIST, "cluster.yaml").skipped_notice() is None


def test_parse_object_restricts_kinds() -> None:
    node = parse_object({"kind": "Node", "metadata": {"name": "n"}}, "x.yaml", kinds=("Node",))
    assert isinstance(node, Node)
    assert error_of(parse_object, {"kind": "Pod"}, "x.yaml", None, ("Node",)) == (
        'x.yaml: kind: unsupported kind "Pod" (expected Node)'
    )
