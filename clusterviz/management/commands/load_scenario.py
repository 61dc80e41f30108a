"""`manage.py load_scenario NAME --cluster SLUG` (creates the cluster) and `--list`."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from clusterviz import services, store
from clusterviz.access import edit_url
from clusterviz.controllers.runner import reconcile
from clusterviz.lessons import all_lessons, load_lesson
from clusterviz.models import Cluster
from scheduler_core.api.loading import InputError


class Command(BaseCommand):
    help = "Create a cluster from a lesson (scenario), or list the lessons."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", nargs="?")
        parser.add_argument("--cluster", help="slug of the cluster to create (default: the lesson's name)")
        parser.add_argument("--list", action="store_true", help="list the lessons")
        parser.add_argument("--if-missing", action="store_true", help="do nothing if the cluster exists")
        parser.add_argument("--base-url", default="http://127.0.0.1:8000", help="for the printed edit link")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["list"]:
            for lesson in all_lessons().values():
                self.stdout.write(f"{lesson.name:28} {lesson.title}")
            return
        name = options["name"]
        if not name:
            raise CommandError("give a lesson name, or --list")
        slug = options["cluster"] or name
        existing = Cluster.objects.filter(slug=slug).first()
        if options["if_missing"] and existing is not None:
            self.stdout.write(f"cluster {slug} exists; edit link: {edit_url(existing, options['base_url'])}")
            return
        try:
            with transaction.atomic():  # a lesson that fails to load leaves no empty cluster behind
                cluster = services.create_cluster(slug)
                load_lesson(cluster, name)
        except (InputError, store.StoreError) as exc:
            raise CommandError(str(exc)) from None
        reconcile(cluster)
        self.stdout.write(
            f"cluster {slug} loaded from lesson {name}; edit link: {edit_url(cluster, options['base_url'])}"
        )
