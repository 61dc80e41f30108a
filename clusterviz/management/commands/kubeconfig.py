"""`manage.py kubeconfig SLUG --server http://127.0.0.1:8000`: a kubeconfig that points the real
kubectl at the cluster's Kubernetes API (`<server>/k8s/<slug>`).

    python manage.py kubeconfig demo --server http://127.0.0.1:8000 > demo.kubeconfig
    kubectl --kubeconfig demo.kubeconfig get nodes

The user entry has room for a bearer token (`--token`); the endpoint does not check one yet.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import yaml
from django.core.management.base import BaseCommand, CommandError, CommandParser

from clusterviz.models import Cluster

DEFAULT_SERVER = "http://127.0.0.1:8000"


def kubeconfig(slug: str, server: str, namespace: str = "default", token: str = "") -> dict[str, Any]:
    """The kubeconfig document (one cluster, one user, one context, selected)."""
    name = f"clusterviz-{slug}"
    user: dict[str, Any] = {"token": token} if token else {}
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": f"{server.rstrip('/')}/k8s/{slug}"}}],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name, "namespace": namespace}}],
        "current-context": name,
        "preferences": {},
    }


class Command(BaseCommand):
    help = "Print a kubeconfig for the Kubernetes API of a cluster (kubectl --kubeconfig FILE ...)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the cluster")
        parser.add_argument(
            "--server", default=DEFAULT_SERVER, help=f"where clusterviz listens (default: {DEFAULT_SERVER})"
        )
        parser.add_argument("--namespace", default="default", help="the context's namespace (default: default)")
        parser.add_argument("--token", default="", help="a bearer token for the user entry (not checked yet)")

    def handle(self, *args: Any, **options: Any) -> None:
        slug, server = options["slug"], options["server"]
        if not Cluster.objects.filter(slug=slug).exists():
            raise CommandError(f'cluster "{slug}" not found (create it first, e.g. manage.py load_scenario demo)')
        parts = urlsplit(server)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
            raise CommandError(f'--server: expected a URL like {DEFAULT_SERVER}, got "{server}"')
        document = kubeconfig(slug, server, options["namespace"], options["token"])
        self.stdout.write(yaml.safe_dump(document, sort_keys=False), ending="")
