"""`manage.py export_scenario SLUG`: the cluster as YAML that loads again."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from clusterviz import services
from clusterviz.models import Cluster


class Command(BaseCommand):
    help = "Write a cluster as a kind: List YAML (import_cluster loads it again)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = Cluster.objects.filter(slug=options["slug"]).first()
        if cluster is None:
            raise CommandError(f'cluster "{options["slug"]}" not found')
        self.stdout.write(services.export_yaml(cluster), ending="")
