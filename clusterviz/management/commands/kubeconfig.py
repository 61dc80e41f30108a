"""`manage.py kubeconfig SLUG --server http://127.0.0.1:8000`: a kubeconfig that points the real
kubectl at the cluster's Kubernetes API (`<server>/k8s/<slug>`).

    python manage.py kubeconfig demo --server http://127.0.0.1:8000 > demo.kubeconfig
    kubectl --kubeconfig demo.kubeconfig get nodes

The cluster's owner token is the user's bearer token (`users[].user.token`), which kubectl sends
over https. Over plain http kubectl sends no user credentials at all (clientcmd reads them only for a
TLS transport), so an http server URL also carries the token as its userinfo
(`http://clusterviz:<token>@host/k8s/<slug>`): Go's HTTP client sends it as `Authorization: Basic`,
never on the request line, so no access log holds it. (The legacy form, the token in the path
`/k8s/<slug>/key/<token>/`, still works; every log line has it redacted.) Reads work without a
token, writes need it; `--read-only` leaves it out, for a follower's kubectl.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import yaml
from django.core.management.base import BaseCommand, CommandError, CommandParser

from clusterviz.models import Cluster

DEFAULT_SERVER = "http://127.0.0.1:8000"
USERINFO_NAME = "clusterviz"


def kubeconfig(slug: str, server: str, namespace: str = "default", token: str = "") -> dict[str, Any]:
    """The kubeconfig document (one cluster, one user, one context, selected)."""
    name = f"clusterviz-{slug}"
    user: dict[str, Any] = {"token": token} if token else {}
    parts = urlsplit(server.rstrip("/"))
    if token and parts.scheme == "http":  # kubectl sends no bearer token over plain http: userinfo → Basic
        parts = parts._replace(netloc=f"{USERINFO_NAME}:{quote(token, safe='')}@{parts.netloc}")
    endpoint = f"{urlunsplit(parts)}/k8s/{slug}"
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": endpoint}}],
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
        parser.add_argument(
            "--read-only", action="store_true", help="leave the owner token out (kubectl may only read)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        slug, server = options["slug"], options["server"]
        cluster = Cluster.objects.filter(slug=slug).first()
        if cluster is None:
            raise CommandError(f'cluster "{slug}" not found (create it first, e.g. manage.py load_scenario demo)')
        parts = urlsplit(server)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
            raise CommandError(f'--server: expected a URL like {DEFAULT_SERVER}, got "{server}"')
        token = "" if options["read_only"] else cluster.owner_token
        document = kubeconfig(slug, server, options["namespace"], token)
        self.stdout.write(yaml.safe_dump(document, sort_keys=False), ending="")
