"""Clusters nobody opens are removed after CLUSTERVIZ_RETENTION_DAYS; opening one keeps it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone

from clusterviz import retention, services
from clusterviz.models import Cluster, KubeObject

from .conftest import node_yaml

pytestmark = pytest.mark.django_db


def age(slug: str, days: float) -> None:
    Cluster.objects.filter(slug=slug).update(last_opened_at=timezone.now() - timedelta(days=days))


def test_clusters_not_opened_for_the_retention_are_removed_with_their_objects(make_cluster: Any) -> None:
    make_cluster("old", node_yaml("n1"))
    make_cluster("recent", node_yaml("n1"))
    Cluster.objects.create(slug="import.staging")
    age("old", 31)
    age("recent", 29)
    age("import.staging", 90)  # an import's staging cluster belongs to the import
    assert retention.prune(30) == ["old"]
    assert sorted(Cluster.objects.values_list("slug", flat=True)) == ["import.staging", "recent"]
    assert not KubeObject.objects.filter(cluster__slug="old").exists()


def test_opening_the_page_keeps_a_cluster(make_cluster: Any) -> None:
    make_cluster("kept")
    age("kept", 31)
    Client().get("/clusters/kept/?role=follower")
    assert retention.prune(30) == []


def test_kubectl_keeps_a_cluster(make_cluster: Any, client: Client) -> None:
    make_cluster("kept")
    age("kept", 31)
    assert client.get("/k8s/kept/api/v1/nodes").status_code == 200
    assert retention.prune(30) == []


def test_a_cluster_a_control_loop_holds_is_kept(make_cluster: Any) -> None:
    make_cluster("busy")
    age("busy", 31)
    Cluster.objects.filter(slug="busy").update(lease_until=timezone.now().timestamp() + 60)
    assert retention.prune(30) == []


def test_creating_a_cluster_prunes_at_most_once_an_hour(make_cluster: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    make_cluster("old")
    age("old", 45)
    monkeypatch.setattr(retention, "_last_prune", 0.0)
    services.create_cluster("new")
    assert list(Cluster.objects.values_list("slug", flat=True)) == ["new"]
    make_cluster("old-again")
    age("old-again", 45)
    services.create_cluster("newer")  # within the hour: not pruned yet
    assert Cluster.objects.filter(slug="old-again").exists()


def test_the_command_and_its_settings(make_cluster: Any, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    make_cluster("old")
    age("old", 10)
    call_command("prune_clusters", "--days", "7", "--dry-run")
    assert capsys.readouterr().out == "would remove 1 cluster(s) nobody opened for 7 days\n  old\n"
    assert Cluster.objects.filter(slug="old").exists()
    monkeypatch.setenv("CLUSTERVIZ_RETENTION_DAYS", "0")
    call_command("prune_clusters")
    assert capsys.readouterr().out == "retention is 0 days: every cluster is kept\n"
    monkeypatch.setenv("CLUSTERVIZ_RETENTION_DAYS", "9")
    call_command("prune_clusters")
    assert capsys.readouterr().out == "removed 1 cluster(s) nobody opened for 9 days\n  old\n"
    monkeypatch.setenv("CLUSTERVIZ_RETENTION_DAYS", "a week")
    with pytest.raises(CommandError, match="CLUSTERVIZ_RETENTION_DAYS: Invalid value: 'a week': must be a whole"):
        call_command("prune_clusters")
    with pytest.raises(CommandError, match="--days: Invalid value: -1"):
        call_command("prune_clusters", "--days", "-1")
