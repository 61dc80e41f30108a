"""Import through the page: a generated 1,000-node dump uploaded with its progress bar; a bad paste
shows its located error and stores nothing; a follower gets no import panel."""

from __future__ import annotations

import json
import os
import re
import urllib.request
from itertools import count
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from bench.cluster_dump import dump_json

from .conftest import LiveServer

_slugs = count(1)


def new_empty_cluster(page: Page, server: LiveServer) -> str:
    """Create an empty cluster from the home page form, as a person does (the browser holds its edit link)."""
    slug = f"imp-{os.getpid()}-{next(_slugs)}"
    page.goto(server.url + "/")
    page.fill('form.create input[name="slug"]', slug)
    page.click('form.create button[type="submit"]')
    page.wait_for_url(re.compile(f"/clusters/{slug}/$"))
    return slug


def state(server: LiveServer, slug: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{server.url}/api/clusters/{slug}/state", timeout=30) as response:
        return dict(json.loads(response.read()))


def test_upload_a_1000_node_dump_with_its_progress_bar(page: Page, cv_server: LiveServer, tmp_path: Path) -> None:
    slug = new_empty_cluster(page, cv_server)
    dump = tmp_path / "cluster.json"
    # 11,000 objects, the kubelets at v1.36 (the generator's are v1.34): the import suggests v1.36
    dump.write_bytes(dump_json(1000, 10).replace(b'"kubeletVersion": "v1.34.0"', b'"kubeletVersion": "v1.36.2"'))
    panel = page.locator("#import")
    expect(panel).to_be_visible()
    panel.locator("input[type=file]").set_input_files(str(dump))
    panel.locator('[data-import="start"]').click()
    status = panel.locator(".import-status")
    # Mid-way: objects read and stored, the bar between empty and full, the cancel button offered.
    expect(status).to_have_text(re.compile(r"^read [\d,]+ / 11,000 objects · stored [1-9][\d,]*$"), timeout=60_000)
    fraction = float(panel.locator("progress").get_attribute("value") or "0")
    assert 0 < fraction < 1, fraction
    expect(panel.locator('[data-import="cancel"]')).to_be_enabled()
    # Done: the page reloads with the imported cluster; the panel (for empty clusters) is gone.
    expect(page.locator("#import")).to_have_count(0, timeout=120_000)
    objects = state(cv_server, slug)["objects"]
    assert (len(objects["Node"]), len(objects["Pod"])) == (1000, 10_000)
    assert page.url.endswith(f"/clusters/{slug}/")
    # the cluster answers as the version its kubelets suggest, and the board says why
    expect(page.locator("#k8s-version")).to_have_value("1.36")
    expect(page.locator("#version-hint")).to_have_text("suggested by the nodes' kubelets: v1.36 ×1000")


def test_a_bad_paste_shows_the_located_error_and_stores_nothing(page: Page, cv_server: LiveServer) -> None:
    slug = new_empty_cluster(page, cv_server)
    panel = page.locator("#import")
    bad = {"apiVersion": "v1", "kind": "List", "items": [json.loads(dump_json(1, 0))["items"][0]]}
    bad["items"][0]["status"]["allocatable"]["cpu"] = "four"
    panel.locator("textarea").fill(json.dumps(bad, indent=2))
    panel.locator('[data-import="start"]').click()
    error = panel.locator(".import-error")
    expect(error).to_be_visible(timeout=30_000)
    expect(error).to_contain_text("pasted:24: items[0].status.allocatable.cpu")
    expect(error).to_contain_text('"four"')
    assert state(cv_server, slug)["objects"] == {}
    # malformed JSON: line and column
    panel.locator("textarea").fill('{"kind": "List",\n "items": [}')
    panel.locator('[data-import="start"]').click()
    expect(error).to_have_text(re.compile(r"^pasted:2:12: Expecting value"), timeout=30_000)
    # not a Kubernetes dump at all
    panel.locator("textarea").fill("shopping:\n- milk\n- bread\n")
    panel.locator('[data-import="start"]').click()
    expect(error).to_have_text(
        "pasted:1: not a Kubernetes object (a mapping with kind, apiVersion and metadata)", timeout=30_000
    )
    assert state(cv_server, slug)["objects"] == {}


def test_a_follower_has_no_import_panel_and_cannot_upload(page: Page, cv_server: LiveServer, browser: Any) -> None:
    slug = new_empty_cluster(page, cv_server)
    follower = browser.new_page()
    follower.goto(f"{cv_server.url}/clusters/{slug}/")
    expect(follower.locator("#cluster-page")).to_be_visible()
    expect(follower.locator("#import")).to_have_count(0)
    status = follower.evaluate(
        """async (url) => (await fetch(url, {
            method: "POST", body: "{}", headers: {"Content-Type": "application/json"}})).status""",
        f"{cv_server.url}/api/clusters/{slug}/imports",
    )
    assert status == 403
    follower.close()
