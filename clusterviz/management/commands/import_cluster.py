"""`manage.py import_cluster SLUG FILE [--base-url URL]`: load a `kubectl get … -o json|yaml` dump."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from clusterviz import imports, store
from clusterviz.access import edit_url
from clusterviz.controllers.runner import reconcile
from clusterviz.models import ImportJob
from scheduler_core.api.loading import InputError

DEFAULT_BASE_URL = "http://127.0.0.1:8000"  # where `./dev run` serves


class Command(BaseCommand):
    help = (
        "Create a cluster from a dump (`kubectl get nodes,pods -A -o json|yaml`: a List, a multi-document "
        "YAML or one object), or fill an existing empty one; prints its edit link."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("file")
        parser.add_argument(
            "--base-url",
            default=os.environ.get("CLUSTERVIZ_BASE_URL", DEFAULT_BASE_URL),
            help=f"the server's address, for the edit link (default: $CLUSTERVIZ_BASE_URL or {DEFAULT_BASE_URL})",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        try:
            if path.stat().st_size > imports.max_bytes():
                limit = imports.max_bytes() // 2**20
                raise CommandError(f"{path}: larger than {limit} MiB (CLUSTERVIZ_IMPORT_MAX_BYTES)")
            held = [path.read_bytes()]  # run() holds the only reference: the bytes go once decoded
        except OSError as exc:
            raise CommandError(f"{path}: {exc.strerror}") from None
        interactive = sys.stderr.isatty()

        def progress(job: ImportJob) -> None:
            if interactive:
                self.stderr.write(f"\rread {job.read}/{job.total}, stored {job.stored}", ending="")

        try:
            job = imports.new_job(options["slug"], str(path))
            cluster = imports.run(job, held.pop(), progress)
        except (InputError, store.StoreError) as exc:
            raise CommandError(str(exc)) from None
        finally:
            if interactive:
                self.stderr.write("")
        reconcile(cluster)
        left_out = ", ".join(f"{n} {kind}" for kind, n in sorted(job.skipped.items()))
        note = f" (left out: {left_out})" if left_out else ""
        link = edit_url(cluster, options["base_url"].rstrip("/"))
        self.stdout.write(f"imported {job.stored} objects into cluster {cluster.slug}{note}; edit link: {link}")
