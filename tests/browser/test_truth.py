"""The browser tells the truth (issue 15): every figure, verdict and explanation on screen is the
core's, every view is current, what-ifs explain themselves. Each test gets a fresh cluster."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

from .conftest import ClusterApi, open_cluster
from .test_cluster_page import card, finish_cycle_of, no_page_errors, pod_of

SIDECAR_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: with-sidecar}
spec:
  nodeName: node03
  initContainers:
  - {name: log-shipper, image: busybox, restartPolicy: Always, resources: {requests: {cpu: 250m}}}
  containers:
  - {name: app, image: soscscs/myapp:v1, resources: {requests: {cpu: 500m}}}
"""

NEEDY_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: needy}
spec:
  nodeSelector: {kubernetes.io/hostname: node03}
  containers:
  - {name: app, image: soscscs/myapp:v1, resources: {requests: {cpu: 600m}}}
"""


def without_deployment(api: ClusterApi) -> None:
    api.act({"action": "delete", "kind": "Deployment", "name": "myapp"})
    api.wait_for("the deployment's pods to go", lambda: not api.objects("Pod"))


def test_bars_and_why_pending_count_a_sidecar_as_the_scheduler_does(page: Page, new_cluster: Any) -> None:
    api = new_cluster("demo")
    without_deployment(api)
    api.act({"action": "create", "yaml": SIDECAR_POD})
    open_cluster(page, api.url)
    # 500m for the app + 250m for the sidecar that keeps running beside it (the core's PodInfo.requests).
    expect(card(page, "node03").locator(".bar").first.locator(".bar-text")).to_have_text("750m/1")

    page.locator("#editor textarea").fill(NEEDY_POD)
    page.locator("[data-editor=create]").click()
    finish_cycle_of(page, "default/needy")
    api.wait_for("needy to fail", lambda: (pod_of(api, "default/needy") or {}).get("status", {}).get("conditions"))
    page.locator('.pending-lane [data-why="default/needy"]').click()
    why = page.locator("[data-panel=why]")
    group = why.locator(".why-group").filter(has_text="Insufficient cpu")
    expect(group.locator("h4")).to_have_text("1 Insufficient cpu — NodeResourcesFit")
    expect(group.locator("li")).to_contain_text(
        "needs 600m CPU, the freest of these nodes (node03) has 250m CPU free of 1 CPU"
    )
    expect(why.locator(".why-source")).to_contain_text("cycle")
    no_page_errors(page)
