"""Scheduler profiles in the browser (issue 13): edit a profile in the form and as YAML, see a
located upstream error that stores nothing, then compare two profiles on one pod and see the two
winners differ. Also writes docs/screenshots/profiles-compare.png."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from .conftest import open_cluster, set_editor_text

SHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "profiles-compare.png"
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: incoming}
spec:
  containers: [{name: app, image: x, resources: {requests: {cpu: "1", memory: 2Gi}}}]
"""


def stored_config(api: Any) -> dict[str, Any]:
    with urllib.request.urlopen(f"{api.server.url}/api/clusters/{api.slug}/profile", timeout=10) as response:
        return dict(json.loads(response.read())["config"])


def test_edit_a_profile_then_compare_two_profiles_on_one_pod(page: Page, new_cluster: Any) -> None:
    api = new_cluster("bin-packing-vs-spreading")  # profiles default-scheduler and bin-packing
    open_cluster(page, api.url)
    panel = page.locator("#profiles")
    panel.locator("summary").click()
    panel.get_by_text("plugins per extension point, weights").click()

    # The form: NodeResourcesFit weight 2 and MostAllocated, written into the YAML view.
    panel.get_by_label("NodeResourcesFit weight").fill("2")
    panel.get_by_label("NodeResourcesFit weight").dispatch_event("change")
    panel.get_by_label("scoringStrategy type").select_option("MostAllocated")
    panel.get_by_role("button", name="YAML", exact=True).click()
    yaml_view = panel.get_by_label("KubeSchedulerConfiguration YAML")
    expect(yaml_view).to_have_value(re.compile(r"name: NodeResourcesFit\n\s+weight: 2\n[\s\S]*type: MostAllocated"))

    # A bad value: upstream's message, located, and nothing stored.
    before = stored_config(api)
    yaml_view.fill(yaml_view.input_value().replace("type: MostAllocated", "type: Balanced", 1))
    panel.locator("[data-profile=save]").click()
    expect(panel.locator(".profile-error")).to_contain_text(
        'profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Balanced": supported values: '
        '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
    )
    expect(panel.locator(".profile-error")).to_contain_text("profile.yaml:")
    assert stored_config(api) == before
    # Fixed in the YAML, the form shows it again.
    expect(yaml_view).to_have_value(re.compile("type: Balanced"))  # what was typed is kept
    shape = (
        r"\1type: RequestedToCapacityRatio\n\1requestedToCapacityRatio:\n"
        r"\1  shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]"
    )
    yaml_view.fill(re.sub(r"(?m)^( *)type: Balanced", shape, yaml_view.input_value(), count=1))
    panel.get_by_role("button", name="Form", exact=True).click()
    expect(panel.get_by_label("scoringStrategy type")).to_have_value("RequestedToCapacityRatio")
    expect(panel.get_by_label("shape point 1 score")).to_have_value("10")
    expect(panel.locator(".profile-error")).to_have_count(0)
    panel.get_by_text("plugins per extension point, weights").click()  # folded again

    # Compare: the same pod under the two stored profiles gets two different winners.
    set_editor_text(page, POD)
    panel.get_by_label("compare A").select_option(label="stored: default-scheduler")
    panel.get_by_label("compare B").select_option(label="stored: bin-packing")
    panel.locator("[data-profile=compare]").click()
    result = panel.locator(".compare-result")
    expect(result.locator(".compare-a .compare-winner")).to_have_text("★ node02")
    expect(result.locator(".compare-b .compare-winner")).to_have_text("★ node01")
    expect(result.locator(".compare-different")).to_have_text("Different winners.")
    expect(result.locator('tr[data-node="node01"] td.changed')).to_contain_text("25 → 75")
    panel.screenshot(path=str(SHOT))
    assert page._clusterviz_errors == []  # type: ignore[attr-defined]
