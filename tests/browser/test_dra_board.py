"""DRA on the board, in a real browser: a GPU pod whose claim template does not exist waits in the
Pending lane; pasting the template in the editor lets the claim controller make the claim and the
scheduler place the pod live, on the node whose device it got, and the device shows it."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

from .conftest import open_cluster, set_editor_text
from .test_cluster_page import no_page_errors

GPUS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node02-gpus}
spec:
  driver: gpu.example.com
  nodeName: node02
  pool: {name: node02, resourceSliceCount: 1}
  devices:
  - {name: gpu-0}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  containers: [{name: train, image: trainer:1, resources: {requests: {cpu: 100m}, claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: single-gpu}]
"""
TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: single-gpu}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
"""


def test_creating_the_missing_template_schedules_the_gpu_pod_live(page: Page, new_cluster: Any) -> None:
    api = new_cluster("demo")
    api.act({"action": "create", "yaml": GPUS})
    open_cluster(page, api.url)
    pending = page.locator('.pending-lane [data-pod="default/trainer"]')
    expect(pending).to_be_visible()
    devices = page.locator('#board [data-devices="node02"]')
    expect(devices.locator(".devices-title")).to_have_text("devices: 0 of 1 allocated")

    set_editor_text(page, TEMPLATE)
    page.locator("[data-editor=create]").click()
    expect(pending).to_have_count(0)
    expect(page.locator('#board .node-grid > [data-node="node02"] [data-pod="default/trainer"]')).to_be_visible()
    expect(devices.locator(".devices-title")).to_have_text("devices: 1 of 1 allocated")
    expect(devices.locator(".device-held")).to_contain_text("gpu-0")
    [claim] = api.objects("ResourceClaim").values()
    assert claim["status"]["reservedFor"][0]["name"] == "trainer"
    no_page_errors(page)
