"""How long a cluster nobody opens is kept: `CLUSTERVIZ_RETENTION_DAYS` (default 30; 0 keeps every
cluster). Opening its page, its stream or any kubectl request counts as opening it (recorded at most
once an hour, so a busy class costs no writes). Expired clusters are removed when a new cluster is
created (at most once an hour per process) and by `manage.py prune_clusters` (for cron)."""

from __future__ import annotations

import os
import time
from datetime import datetime, timedelta

from django.utils import timezone

from .models import STAGING_PREFIX, Cluster

__all__ = ["RECORD_EVERY", "atouch", "maybe_prune", "prune", "retention_days", "touch"]

DEFAULT_DAYS = 30
RECORD_EVERY = timedelta(hours=1)
PRUNE_EVERY_SECONDS = 3600.0
_last_prune = 0.0


def retention_days() -> int:
    """The retention in days from the environment; a bad value is a clear error, not a silent default."""
    text = os.environ.get("CLUSTERVIZ_RETENTION_DAYS", "").strip()
    if not text:
        return DEFAULT_DAYS
    if not text.isdigit():
        raise ValueError(f"CLUSTERVIZ_RETENTION_DAYS: Invalid value: {text!r}: must be a whole number of days")
    return int(text)


_recorded: dict[tuple[int, datetime], datetime] = {}  # (cluster, its creation) → when this process last recorded it


def _due(cluster: Cluster, now: datetime) -> bool:
    """Whether this process has not recorded an opening of `cluster` within RECORD_EVERY (then it
    notes one now): the requests in between cost no statement at all."""
    key = (cluster.pk, cluster.created_at)
    last = _recorded.get(key)
    if last is not None and now - last < RECORD_EVERY:
        return False
    _recorded[key] = now
    return True


def touch(cluster: Cluster, now: datetime | None = None) -> None:
    """Record that someone opened the cluster (one UPDATE per process at most every RECORD_EVERY)."""
    now = now or timezone.now()
    if _due(cluster, now):
        Cluster.objects.filter(pk=cluster.pk, last_opened_at__lt=now - RECORD_EVERY).update(last_opened_at=now)


async def atouch(cluster: Cluster) -> None:
    now = timezone.now()
    if _due(cluster, now):
        await Cluster.objects.filter(pk=cluster.pk, last_opened_at__lt=now - RECORD_EVERY).aupdate(last_opened_at=now)


def prune(days: int | None = None, now: datetime | None = None, dry_run: bool = False) -> list[str]:
    """Remove the clusters nobody opened for `days` (their objects, changes and cycles with them);
    the slugs removed. Clusters being imported (staging) and those a control loop holds are kept."""
    days = retention_days() if days is None else days
    if days <= 0:
        return []
    now = now or timezone.now()
    expired = (
        Cluster.objects.filter(last_opened_at__lt=now - timedelta(days=days))
        .exclude(slug__startswith=STAGING_PREFIX)
        .exclude(lease_until__gt=time.time())
    )
    slugs = sorted(expired.values_list("slug", flat=True))
    if not dry_run and slugs:
        Cluster.objects.filter(slug__in=slugs).delete()
    return slugs


def maybe_prune() -> None:
    """`prune`, at most once every PRUNE_EVERY_SECONDS in this process."""
    global _last_prune
    if time.monotonic() - _last_prune < PRUNE_EVERY_SECONDS and _last_prune:
        return
    _last_prune = time.monotonic()
    prune()
