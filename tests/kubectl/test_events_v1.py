"""events.k8s.io/v1: the cluster's Events in that group's shape (regarding, note, reportingController,
deprecatedCount…), as kube-apiserver serves them beside core v1's, read with the real kubectl."""

from __future__ import annotations

import json

import pytest

from .conftest import Cluster

pytestmark = pytest.mark.slow


def test_events_read_through_events_k8s_io(cluster: Cluster) -> None:
    cluster.kubectl("run", "p", "--image=nginx")
    cluster.wait_running("p")
    listed = json.loads(cluster.kubectl("get", "events.v1.events.k8s.io", "-o", "json").stdout)
    assert listed["apiVersion"] == "v1" and listed["kind"] == "List"
    scheduled = next(e for e in listed["items"] if e["reason"] == "Scheduled")
    assert scheduled["apiVersion"] == "events.k8s.io/v1" and scheduled["kind"] == "Event"
    assert scheduled["regarding"]["kind"] == "Pod" and scheduled["regarding"]["name"] == "p"
    assert scheduled["note"] == "Successfully assigned default/p to " + cluster.pods()["default/p"]["spec"]["nodeName"]
    assert scheduled["type"] == "Normal"
    assert "involvedObject" not in scheduled and "message" not in scheduled
    # the table is the core one's: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE
    header, *rows = cluster.kubectl("get", "events.events.k8s.io").rows()
    assert header == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert any(row[1:4] == ["Normal", "Scheduled", "pod/p"] for row in rows), rows
    # and the same Event, by name, in both groups
    name = scheduled["metadata"]["name"]
    core = json.loads(cluster.kubectl("get", "event", name, "-o", "json").stdout)
    assert core["message"] == scheduled["note"] and core["involvedObject"] == scheduled["regarding"]
