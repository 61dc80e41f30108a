"""Property-based tests: whatever the input, the core answers or names the problem — never crashes."""

from __future__ import annotations

import json
import re

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scheduler_core.api.loading import InputError, load_cluster, load_pod
from scheduler_core.api.quantity import MAX_INT64, QuantityError, parse_quantity
from scheduler_core.explain import explain, result_to_json

LOCATED = re.compile(r"^[^:]+(:\d+(:\d+)?)?: .+")

names = st.from_regex(r"[a-z][a-z0-9-]{0,8}[a-z0-9]", fullmatch=True)
label_values = st.from_regex(r"[a-z0-9]{1,6}", fullmatch=True)
quantities = st.one_of(
    st.from_regex(r"[0-9]{1,4}(\.[0-9]{1,3})?(m|Ki|Mi|Gi|k|M|G)?", fullmatch=True),
    st.integers(min_value=0, max_value=10**6),
)
junk = st.one_of(
    st.text(max_size=12),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)
effects = st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])


@st.composite
def nodes(draw: st.DrawFn, name: str) -> dict:
    labels = draw(st.dictionaries(st.sampled_from(["zone", "kgc", "qqq", "disk"]), label_values, max_size=3))
    labels["kubernetes.io/hostname"] = name
    taints = draw(
        st.lists(
            st.fixed_dictionaries({"key": st.sampled_from(["qqq", "spot"]), "value": label_values, "effect": effects}),
            max_size=2,
        )
    )
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {"taints": taints, "unschedulable": draw(st.booleans())},
        "status": {
            "allocatable": {"cpu": draw(quantities), "memory": draw(quantities), "pods": draw(st.integers(0, 20))}
        },
    }


@st.composite
def pods(draw: st.DrawFn, name: str, node_names: list[str], bound: bool) -> dict:
    spec: dict = {
        "containers": [
            {
                "name": "c",
                "image": "pause",
                "resources": {"requests": {"cpu": draw(quantities), "memory": draw(quantities)}},
                "ports": draw(
                    st.lists(
                        st.fixed_dictionaries({"containerPort": st.integers(1, 100), "hostPort": st.integers(0, 3)}),
                        max_size=1,
                    )
                ),
            }
        ],
        "tolerations": draw(
            st.lists(
                st.fixed_dictionaries({"key": st.sampled_from(["qqq", "spot"]), "operator": st.just("Exists")}),
                max_size=1,
            )
        ),
        "nodeSelector": draw(st.dictionaries(st.sampled_from(["zone", "kgc"]), label_values, max_size=1)),
        "priority": draw(st.integers(0, 100)),
    }
    if draw(st.booleans()):
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "kubernetes.io/hostname"}
                ]
            }
        }
    if draw(st.booleans()):
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": draw(st.integers(1, 3)),
                "topologyKey": "zone",
                "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
                "labelSelector": {"matchLabels": {"app": "a"}},
            }
        ]
    if bound and node_names:
        spec["nodeName"] = draw(st.sampled_from(node_names))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": draw(st.sampled_from(["a", "b"]))}},
        "spec": spec,
        "status": {"phase": "Running" if bound else "Pending"},
    }


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[dict], dict]:
    node_names = draw(st.lists(names, min_size=0, max_size=5, unique=True))
    objects = [draw(nodes(n)) for n in node_names]
    existing = draw(st.lists(names, max_size=5, unique=True))
    objects += [draw(pods(f"e-{n}", node_names, bound=True)) for n in existing]
    return objects, draw(pods("incoming", node_names, bound=False))


def _dump(obj: object) -> str:
    return yaml.safe_dump(obj)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.integers(0, 5))
def test_valid_clusters_always_get_an_answer(cluster: tuple[list[dict], dict], seed: int) -> None:
    objects, incoming = cluster
    loaded = load_cluster(_dump({"apiVersion": "v1", "kind": "List", "items": objects}), "c.yaml")
    pod = load_pod(_dump(incoming), "p.yaml")
    data = result_to_json(explain(loaded, pod, seed=seed))
    json.dumps(data)
    if data["scheduled"]:
        assert data["selectedNode"] in data["nodes"]
        assert data["nodes"][data["selectedNode"]]["feasible"]
        assert data["message"] == f"Successfully assigned default/incoming to {data['selectedNode']}"
    else:
        assert data["message"].startswith(f"0/{len(data['nodes'])} nodes are available") or data["message"] == (
            "no nodes available to schedule pods"
        )
        assert not any(n["feasible"] for n in data["nodes"].values())
    totals = {n: v["total"] for n, v in data["nodes"].items() if v["total"] is not None}
    if data["scheduled"] and totals:
        assert totals[data["selectedNode"]] == max(totals.values())
        for node in data["nodes"].values():
            for score in node["scores"].values():
                assert 0 <= score["normalized"] <= 100
                assert score["weighted"] == score["normalized"] * score["weight"]


@st.composite
def broken_pods(draw: st.DrawFn) -> object:
    """A pod with one field replaced by junk, or a mangled document."""
    base: dict = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]},
    }
    where = draw(
        st.sampled_from(
            ["cpu", "kind", "containers", "tolerations", "nodeSelector", "priority", "affinity", "ports", "root"]
        )
    )
    value = draw(junk)
    if where == "cpu":
        base["spec"]["containers"][0]["resources"]["requests"]["cpu"] = value
    elif where == "kind":
        base["kind"] = value
    elif where == "containers":
        base["spec"]["containers"] = value
    elif where == "tolerations":
        base["spec"]["tolerations"] = [{"key": "k", "operator": value}]
    elif where == "nodeSelector":
        base["spec"]["nodeSelector"] = value
    elif where == "priority":
        base["spec"]["priority"] = value
    elif where == "affinity":
        base["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": value}}
    elif where == "ports":
        base["spec"]["containers"][0]["ports"] = [{"containerPort": value}]
    else:
        return value
    return base


@settings(max_examples=300, deadline=None)
@given(broken_pods())
@example(  # a map key that is a line break: the message stays on one line
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
     "spec": {"containers": [{"name": "c", "image": "x"}], "nodeSelector": {"\n": 0}}}
)  # fmt: skip
def test_broken_pods_fail_with_a_located_error_or_load(document: object) -> None:
    try:
        text = yaml.safe_dump(document)
    except yaml.YAMLError:
        return
    try:
        load_pod(text, "pod.yaml")
    except InputError as exc:
        message = str(exc)
        assert "\n" not in message
        assert LOCATED.match(message), message
        assert message.startswith("pod.yaml")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
@example("\r0:")  # a carriage return is a YAML line break: an error's line is found past it
@example("a: 1\u2028b: [")
def test_arbitrary_text_never_crashes_the_loader(text: str) -> None:
    try:
        load_cluster(text, "c.yaml")
    except InputError as exc:
        assert str(exc).startswith("c.yaml")


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(max_size=20), st.integers(), st.floats()))
def test_quantities_parse_or_say_why(raw: object) -> None:
    try:
        q = parse_quantity(raw)
    except QuantityError as exc:
        assert "quantity" in str(exc) or "range" in str(exc)
        return
    assert q.milli_value() <= MAX_INT64
    if 0 <= q.value() * 1000 <= MAX_INT64:
        # Both round up: the milli value lies within one unit below value * 1000.
        assert q.value() * 1000 - 1000 < q.milli_value() <= q.value() * 1000
