"""The List-Watch tab: a real `kubectl label` travels the diagram as it happens."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from tests.tools import missing_tool

from .conftest import open_cluster

KUBECTL = os.environ.get("KUBECTL") or shutil.which("kubectl") or "/usr/bin/kubectl"

# Every distinct set of hops the diagram shows, with the change it belongs to (its resourceVersion).
RECORD_HOPS = """() => {
  window.__hops = [];
  const panel = document.querySelector('[data-panel=listwatch]');
  new MutationObserver(() => {
    const svg = panel.querySelector('svg.lw-diagram');
    if (!svg) return;
    const hops = [...svg.querySelectorAll('.lw-hop')].map((g) => `${g.dataset.kind}:${g.dataset.step}:${g.dataset.to}`);
    const sig = `${svg.dataset.rv}|${hops.join(',')}`;
    const last = window.__hops[window.__hops.length - 1];
    if (!last || last.sig !== sig) window.__hops.push({ sig, rv: svg.dataset.rv, hops });
  }).observe(panel, { childList: true, subtree: true });
}"""

LABEL_TRIP = [
    "write:2:kube-apiserver",
    "store:3:etcd",
    "ack:3:kubectl",
    "event:4:kube-apiserver",
    "watch:5:controller-manager",
    "watch:9:scheduler",
    "watch:12:kubelet",
]


def kubectl(server: Any, slug: str, workdir: Path, *args: str) -> str:
    """The real kubectl, with the cluster's kubeconfig and a scratch HOME, against 127.0.0.1."""
    if not Path(KUBECTL).exists():
        missing_tool(f"kubectl not found ({KUBECTL}): install it (or set KUBECTL)")
    config = workdir / "kubeconfig"
    if not config.exists():
        config.write_text(server.manage("kubeconfig", slug, "--server", server.url))
    env = {"HOME": str(workdir), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    argv = [KUBECTL, "--kubeconfig", str(config), "--cache-dir", str(workdir / "cache"), *args]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=workdir, timeout=30)
    assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
    return done.stdout


def test_a_kubectl_label_travels_the_diagram(page: Page, new_cluster: Any, tmp_path: Path) -> None:
    cluster = new_cluster("demo")
    open_cluster(page, cluster.url)
    page.click("[data-tab=listwatch]")
    expect(page.locator("svg.lw-diagram [data-box=etcd]")).to_be_visible()
    page.evaluate(RECORD_HOPS)

    assert (
        kubectl(cluster.server, cluster.slug, tmp_path, "label", "nodes", "node01", "lw=on") == "node/node01 labeled\n"
    )
    rv = cluster.objects("Node")["node01"]["metadata"]["resourceVersion"]

    # The change plays hop after hop, each with the seed notes' step number, in order (after any
    # change still queued before it).
    expect(page.locator(f"svg.lw-diagram[data-rv='{rv}'] .lw-hop")).to_have_count(len(LABEL_TRIP), timeout=30_000)
    shown = [entry["hops"] for entry in page.evaluate("window.__hops") if entry["rv"] == rv]
    assert shown == [LABEL_TRIP[:n] for n in range(1, 5)] + [LABEL_TRIP], json.dumps(shown, indent=1)
    expect(page.locator(".lw-what")).to_contain_text(
        f"rv {rv} · MODIFIED Node node01 · by kubectl · changed metadata.labels.lw"
    )
    expect(page.locator(f".lw-trail li[data-rv='{rv}'] .lw-chip")).to_have_text(
        ["② write", "③ etcd", "③ ack", "④ event", "⑤ controller-manager", "⑨ scheduler", "⑫ kubelet"]
    )

    # Clicking the etcd hop shows the node as stored there, with the new label.
    page.locator(f"svg.lw-diagram[data-rv='{rv}'] .lw-hop[data-kind=store]").click()
    shown_object = page.locator(f".lw-object[data-rv='{rv}']")
    expect(shown_object.locator("h4")).to_have_text(
        f"③ kube-apiserver → etcd: Node node01 as stored in etcd, resourceVersion {rv}"
    )
    stored = json.loads(shown_object.locator("pre").inner_text())
    assert stored["metadata"]["labels"]["lw"] == "on"
    assert stored["metadata"]["resourceVersion"] == rv
    assert page._clusterviz_errors == []  # type: ignore[attr-defined]
