"""`kubectl explain` on every served kind at any path: the OpenAPI v3 documents carry each kind's
schema (components.schemas, generated from the Kubernetes 1.32 client's models) with the field docs."""

from __future__ import annotations

import pytest

from .conftest import Cluster

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("path", "printed"),
    [
        ("pods", ["KIND:       Pod", "Pod is a collection of containers that can run on a host."]),
        (
            "pod.spec.affinity",
            ["FIELD: affinity <Affinity>", "nodeAffinity\t<NodeAffinity>", "podAntiAffinity\t<PodAntiAffinity>"],
        ),
        (
            "pod.spec.nodeSelector",
            ["FIELD: nodeSelector <map[string]string>", "NodeSelector is a selector which must be true for the pod"],
        ),
        ("pod.spec.containers.name", ["FIELD: name <string>", "Name of the container specified as a DNS_LABEL."]),
        ("pod.spec.containers", ["FIELD: containers <[]Container>", "name\t<string> -required-"]),
        ("pod.spec.volumes.emptyDir.sizeLimit", ["FIELD: sizeLimit <string>"]),
        ("nodes.spec.taints.effect", ["FIELD: effect <string>", "Required. The effect of the taint on pods"]),
        ("deployment.spec.replicas", ["GROUP:      apps", "FIELD: replicas <integer>", "Number of desired pods."]),
        ("rs.spec.template.spec.tolerations", ["FIELD: tolerations <[]Toleration>"]),
        ("priorityclass.value", ["GROUP:      scheduling.k8s.io", "FIELD: value <integer>"]),
        ("ns.status.phase", ["FIELD: phase <string>"]),
        (
            "deployment.spec.strategy.rollingUpdate.maxSurge",
            ["FIELD: maxSurge <IntOrString>", "IntOrString is a type that can hold an int32 or a string."],
        ),
        ("deployment.spec.strategy.rollingUpdate", ["maxSurge\t<IntOrString>", "maxUnavailable\t<IntOrString>"]),
        ("events.involvedObject", ["FIELD: involvedObject <ObjectReference>"]),
        ("priorityclasses", ["value\t<integer> -required-"]),
        ("leases.spec.holderIdentity", ["FIELD: holderIdentity <string>"]),
    ],
)
def test_explain_prints_the_field_docs(cluster: Cluster, path: str, printed: list[str]) -> None:
    out = cluster.kubectl("explain", path).stdout
    for line in printed:
        assert line in out, out


def test_explain_recursive_and_a_missing_field(cluster: Cluster) -> None:
    recursive = cluster.kubectl("explain", "pod.spec.affinity", "--recursive").stdout
    assert "requiredDuringSchedulingIgnoredDuringExecution\t<NodeSelector>" in recursive
    missing = cluster.kubectl("explain", "pod.spec.nodeSelecter", ok=False)
    assert 'field "nodeSelecter" does not exist' in missing.stderr


def test_explain_an_object_field_prints_its_description_and_its_fields(cluster: Cluster) -> None:
    """As a 1.32 server: the field's description, then its type's, then each field with its own."""
    out = cluster.kubectl("explain", "pod.spec.affinity").stdout
    assert (
        "DESCRIPTION:\n    If specified, the pod's scheduling constraints\n"
        "    Affinity is a group of affinity scheduling rules.\n"
    ) in out, out
    assert "  nodeAffinity\t<NodeAffinity>\n    Describes node affinity scheduling rules for the pod.\n" in out, out
    budget = cluster.kubectl("explain", "pdb.spec.selector").stdout
    assert "GROUP:      policy" in budget
    assert "A label selector is a label query over a set of resources." in budget, budget
    assert "Revision indicates the revision of the state represented by Data." in (
        cluster.kubectl("explain", "controllerrevisions.revision").stdout
    )
