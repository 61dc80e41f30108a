"""The cluster's kube-scheduler version on the board, in a real browser: the owner switches it, the
pending pod is tried again and its message changes as upstream's did (#134740, v1.35) for the
presenter and the follower, whose control only shows the version."""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import Browser, Page, expect

from .conftest import open_cluster

ON_NODE01 = """\
apiVersion: v1
kind: Pod
metadata: {name: on-node01, namespace: default}
spec:
  nodeSelector: {kubernetes.io/hostname: node01}
  containers: [{name: c, image: nginx}]
"""


def pending_message(page: Page) -> Any:
    lane = page.locator(".pending-lane .pending-pod").filter(has=page.locator('[data-pod="default/on-node01"]'))
    return lane.locator(".pending-message")


def test_the_owner_switches_the_version_and_the_pending_pod_is_answered_again(
    page: Page, browser: Browser, new_cluster: Any
) -> None:
    api = new_cluster("demo")  # node01 carries qqq=value1:NoSchedule
    open_cluster(page, api.url)
    follower = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    open_cluster(follower, api.url + "?role=follower")
    expect(page.locator("#k8s-version")).to_have_value("1.34")
    expect(follower.locator("#k8s-version")).to_be_disabled()

    api.act({"action": "create", "yaml": ON_NODE01})
    for viewer in (page, follower):
        expect(pending_message(viewer)).to_contain_text("1 node(s) had untolerated taint {qqq: value1}, 2 node(s)")

    page.locator("#k8s-version").select_option("1.35")
    expect(page.locator("#toasts")).to_contain_text("the scheduler now answers as Kubernetes v1.35")
    for viewer in (page, follower):
        expect(pending_message(viewer)).to_contain_text("1 node(s) had untolerated taint(s), 2 node(s)")
    expect(follower.locator("#k8s-version")).to_have_value("1.35")
    assert json.loads(api._get("version"))["version"] == "1.35"
    assert page._clusterviz_errors == [] and follower._clusterviz_errors == []  # type: ignore[attr-defined]
