"""`kubectl --as` is refused with the impersonation filter's 403 (nothing here grants `impersonate`),
and `kubectl auth can-i --list` (a SelfSubjectRulesReview) answers the requester's rules."""

from __future__ import annotations

import pytest
import yaml

from .conftest import Cluster

pytestmark = pytest.mark.slow


def test_impersonation_is_forbidden_and_nothing_is_written(cluster: Cluster) -> None:
    before = cluster.node("node01")["metadata"].get("labels", {})
    refused = cluster.kubectl("--as=alice", "label", "node", "node01", "x=y", ok=False)
    assert (
        'Error from server (Forbidden): users "alice" is forbidden: User "clusterviz:owner" cannot impersonate '
        'resource "users" in API group "" at the cluster scope'
    ) in refused.stderr
    assert cluster.node("node01")["metadata"].get("labels", {}) == before
    group = cluster.kubectl("--as=alice", "--as-group=admins", "get", "pods", ok=False)
    assert 'users "alice" is forbidden: User "clusterviz:owner" cannot impersonate resource "users"' in group.stderr


def test_auth_can_i_list(cluster: Cluster) -> None:
    owner = cluster.kubectl("auth", "can-i", "--list").rows()
    assert owner[0] == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert ["*.*", "[]", "[]", "[*]"] in owner

    config = yaml.safe_load(cluster.kubeconfig.read_text())
    config["clusters"][0]["cluster"]["server"] = f"{cluster.server.url}/k8s/{cluster.slug}"
    config["users"][0]["user"] = {}
    reader = cluster.scratch / "reader.kubeconfig"
    reader.write_text(yaml.safe_dump(config))
    rows = cluster.kubectl("--kubeconfig", str(reader), "auth", "can-i", "--list").rows()
    assert ["*.*", "[]", "[]", "[get", "list", "watch]"] in rows
    assert ["selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]"] in rows
