"""No server log line holds a cluster's owner key while kubectl drives the cluster — with the
kubeconfig `manage.py kubeconfig` writes (the token as Basic credentials over http, a bearer token
over https), with a legacy kubeconfig (the key in the server path: redacted) and with the browser's
edit link (`?key=`: redacted)."""

from __future__ import annotations

import base64
import logging
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from clusterviz.log_redaction import REDACTED, redact

from .conftest import Cluster, KubeServer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def logging_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeServer]:
    """A server of its own that logs every request (LOG_LEVEL=INFO: daphne's access lines)."""
    server = KubeServer(tmp_path_factory.mktemp("logged"), pool_size=2)
    server.env["LOG_LEVEL"] = "INFO"
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_redact_replaces_path_and_query_keys() -> None:
    assert redact("GET /k8s/demo/key/s3cr3t-_x/api/v1/nodes 200") == f"GET /k8s/demo/key/{REDACTED}/api/v1/nodes 200"
    assert redact("/clusters/demo/?key=abc&x=1") == f"/clusters/demo/?key={REDACTED}&x=1"


def test_every_logger_s_records_are_redacted_and_keep_their_shape(caplog: pytest.LogCaptureFixture) -> None:
    """The record factory (settings.py) redacts uvicorn's access records too, whose formatter reads
    their arguments as a 5-tuple, and a traceback's text."""
    access = logging.getLogger("uvicorn.access")
    with caplog.at_level(logging.INFO, logger="uvicorn.access"):
        access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", "/k8s/d/key/SECRET1/api", "1.1", 200)
        try:
            raise ValueError("/clusters/d/?key=SECRET2")
        except ValueError:
            logging.getLogger("django.request").exception("failed: %s", "/k8s/d/key/SECRET3/api")
    assert isinstance(caplog.records[0].args, tuple) and len(caplog.records[0].args) == 5
    assert "SECRET" not in caplog.text
    assert f"/k8s/d/key/{REDACTED}/api" in caplog.text


def test_no_log_line_holds_the_owner_key(logging_server: KubeServer, kube_cache: Path, tmp_path: Path) -> None:
    cluster = Cluster(logging_server, logging_server.pool[0], tmp_path / "new", kube_cache)
    token = cluster.token
    assert cluster.kubectl("get", "nodes").rows()[1][0] == "node01"
    assert cluster.kubectl("label", "node", "node01", "a=b").stdout == "node/node01 labeled\n"  # a write: the owner
    cluster.kubectl("get", "pod", "ghost", ok=False)  # a 404, which Django logs as a warning

    legacy = tmp_path / "legacy.kubeconfig"
    document = yaml.safe_load(cluster.kubeconfig.read_text())
    document["clusters"][0]["cluster"]["server"] = f"{logging_server.url}/k8s/{cluster.slug}/key/{token}"
    document["users"][0]["user"] = {}
    legacy.write_text(yaml.safe_dump(document))
    old = cluster.kubectl("--kubeconfig", str(legacy), "label", "node", "node02", "c=d")
    assert old.stdout == "node/node02 labeled\n"  # the legacy form still writes
    cluster.kubectl("--kubeconfig", str(legacy), "get", "pod", "ghost", ok=False)

    with urllib.request.urlopen(f"{logging_server.url}/clusters/{cluster.slug}/?key={token}", timeout=10) as page:
        assert page.status == 200
    # Bearer and Basic both name the owner (what an https kubeconfig and an http one send)
    basic = base64.b64encode(f"clusterviz:{token}".encode()).decode()
    for header in (f"Bearer {token}", f"Basic {basic}"):
        reply = logging_server.request(
            "POST",
            f"/k8s/{cluster.slug}/api/v1/namespaces/default/configmaps",
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "c-"}},
            {"Authorization": header},
        )
        assert reply.status == 201, reply.body

    logging_server.stop()
    log = logging_server.log.read_text()
    assert f"/k8s/{cluster.slug}/api/v1/nodes" in log  # the access log was on
    assert f"/k8s/{cluster.slug}/key/{REDACTED}/api/v1/nodes/node02" in log
    assert f"?key={REDACTED}" in log
    assert [line for line in log.splitlines() if token in line] == []
