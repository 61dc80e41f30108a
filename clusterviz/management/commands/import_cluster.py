"""`manage.py import_cluster SLUG FILE`: load `kubectl get nodes,pods -A -o yaml` output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from clusterviz import services, store
from clusterviz.access import edit_url
from clusterviz.controllers.runner import reconcile
from clusterviz.models import Cluster
from scheduler_core.api.loading import InputError


class Command(BaseCommand):
    help = "Create a cluster from a snapshot file (a kind: List or a multi-document YAML)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("file")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        try:
            text = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"{path}: {exc.strerror}") from None
        try:
            cluster = Cluster.objects.filter(slug=options["slug"]).first() or services.create_cluster(options["slug"])
            count = services.import_snapshot(cluster, text, "kubectl", source=str(path))
        except (InputError, store.StoreError) as exc:
            raise CommandError(str(exc)) from None
        reconcile(cluster)
        self.stdout.write(f"imported {count} objects into cluster {cluster.slug}; edit link: {edit_url(cluster)}")
