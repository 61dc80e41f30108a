"""`manage.py prune_clusters [--days N] [--dry-run]`: remove the clusters nobody opened for N days."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from clusterviz import retention


class Command(BaseCommand):
    help = "Remove the clusters nobody opened for CLUSTERVIZ_RETENTION_DAYS (default 30) or --days."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, help="retention in days (default: CLUSTERVIZ_RETENTION_DAYS or 30)")
        parser.add_argument("--dry-run", action="store_true", help="list what would be removed, remove nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            days = retention.retention_days() if options["days"] is None else options["days"]
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if days < 0:
            raise CommandError(f"--days: Invalid value: {days}: must be 0 (keep every cluster) or more")
        slugs = retention.prune(days, dry_run=options["dry_run"])
        verb = "would remove" if options["dry_run"] else "removed"
        if days == 0:
            self.stdout.write("retention is 0 days: every cluster is kept")
            return
        listed = "".join(f"\n  {slug}" for slug in slugs)
        self.stdout.write(f"{verb} {len(slugs)} cluster(s) nobody opened for {days} days{listed}")
