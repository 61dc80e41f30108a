"""Record a lesson in the browser (issue 29): the teacher starts recording, pastes a pod into the
editor and labels a node; each change appears in the Record panel as a step with its kubectl
command; the teacher rewrites a step, asks the class a question (a spoiler is refused on its step,
located), downloads the lesson file, loads it on the home page under "Your own lesson", runs it
step by step, and the new cluster ends where the recorded one did."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Page, expect

from .conftest import ClusterApi, open_cluster, set_editor_text

SELECTED = """\
apiVersion: v1
kind: Pod
metadata: {name: picky}
spec:
  nodeSelector: {disk: ssd}
  containers: [{name: app, image: nginx}]
"""


def bare_pods(api: ClusterApi) -> dict[str, str]:
    """Where each pod that is no controller's is (its node, or Pending)."""
    return {
        key: body["spec"].get("nodeName") or "Pending"
        for key, body in api.objects("Pod").items()
        if not body["metadata"].get("ownerReferences") and not body["metadata"].get("deletionTimestamp")
    }


def test_record_edit_export_and_replay_a_lesson(page: Page, new_cluster: Any, tmp_path: Any) -> None:
    api = new_cluster("demo")
    open_cluster(page, api.url)
    panel = page.locator("#recorder")
    panel.locator("summary").click()
    panel.locator("[data-recorder=start]").click()
    expect(panel.locator(".recorder-status")).to_contain_text("● recording — 0 steps")

    # The first change: pasted YAML, created from the editor. picky waits for a node labelled disk=ssd.
    set_editor_text(page, SELECTED)
    page.locator("[data-editor=create]").click()
    steps = panel.locator(".recorded-step")
    expect(steps).to_have_count(1)
    expect(steps.nth(0).locator("[data-field=command]")).to_have_value("kubectl apply -f picky.yaml")
    expect(steps.nth(0).locator("[data-field=say]")).to_have_value("Create Pod picky.")
    # The second: a label (the action the board's drag sends).
    api.act({"action": "label", "node": "node03", "key": "disk", "value": "ssd"})
    expect(steps).to_have_count(2)
    expect(steps.nth(1).locator("[data-field=command]")).to_have_value("kubectl label node node03 disk=ssd --overwrite")
    api.wait_for("picky scheduled", lambda: bare_pods(api).get("default/picky") == "node03")
    panel.locator("[data-recorder=stop]").click()
    expect(panel.locator(".recorder-status")).to_contain_text("recorded — 2 steps")
    expect(steps.nth(0).locator("[data-field=after]")).to_contain_text(
        "default/picky stays Pending: 0/3 nodes are available"
    )
    expect(steps.nth(1).locator("[data-field=after]")).to_have_value("default/picky was scheduled on node03.")

    # The teacher's texts: the lesson's title and name, a question at step 2.
    panel.locator("[data-field=title]").fill("A label makes room")
    panel.locator("[data-field=name]").fill("label-makes-room")
    second = steps.nth(1)
    second.locator("[data-field=ask-class]").check()
    second.locator("[data-field='predict.question']").fill("Which node does picky go to now?")
    # The recorded instruction ("Label node node03 …") names where picky goes, the question does not:
    # a spoiler, refused and marked on the step's field.
    check = panel.locator(".recorder-check")
    expect(check).to_contain_text("steps[1].say: gives the answer away: it names node03")
    expect(check).to_contain_text("label-makes-room.yaml:")
    expect(second.locator("[data-field=say]")).to_have_attribute("aria-invalid", "true")
    second.locator("[data-field='predict.question']").fill("node03 now has disk=ssd. Which node does picky go to?")
    expect(check).to_have_text("✓ label-makes-room.yaml is a valid lesson")
    expect(second.locator("[data-field=say]")).not_to_have_attribute("aria-invalid", "true")
    second.locator("[data-field=after]").fill("picky went to node03, the only node labelled disk=ssd.")

    with page.expect_download() as download_info:
        panel.locator("[data-recorder=download]").click()
    download = download_info.value
    assert download.suggested_filename == "label-makes-room.yaml"
    saved = tmp_path / "label-makes-room.yaml"
    download.save_as(saved)
    text = saved.read_text()
    assert "question: node03 now has disk=ssd. Which node does picky go to?" in text
    assert "after: picky went to node03, the only node labelled disk=ssd." in text
    assert re.search(r"default/picky:\n\s+node: node03", text)
    recorded_end = bare_pods(api)

    # Reloaded, the editor shows the texts the server kept (once the last edit's save has landed).
    def kept_title() -> bool:
        kept = page.evaluate(f"fetch('/api/clusters/{api.slug}/recording').then((r) => r.json())")
        return bool(kept["recording"]["draft"].get("title") == "A label makes room")

    api.wait_for("the draft's title kept", kept_title)
    page.reload()
    page.locator("#recorder summary").click()
    expect(page.locator("#recorder [data-field=title]")).to_have_value("A label makes room")

    # The home page loads the file and starts a class with it; the presenter runs it from the keyboard.
    page.goto(api.server.url + "/")
    own = page.locator(".own-lesson")
    own.locator("input[type=file]").set_input_files(str(saved))
    own.get_by_role("button", name="start a class").click()
    page.wait_for_url(re.compile(r"/clusters/label-makes-room-[0-9a-f]{6}/\?present=1$"))
    page.wait_for_selector("#ws-state[data-state=open]")
    expect(page.locator("#lesson-name")).to_have_text("lesson: A label makes room")
    replay = ClusterApi.__new__(ClusterApi)
    replay.server, replay.slug = api.server, page.url.split("/clusters/", 1)[1].split("/", 1)[0]
    rail = page.locator("#lesson-rail")
    forward = rail.locator("[data-rail=forward]")
    expect(rail.locator(".rail-title")).to_have_text("A label makes room")
    expect(forward).to_contain_text("run step 1")
    page.keyboard.press("ArrowRight")  # step 1 runs
    expect(rail.locator(".rail-after-text")).to_contain_text("default/picky stays Pending")
    page.keyboard.press("ArrowRight")  # step 2's instruction
    expect(forward).to_contain_text("ask & run step 2")
    page.keyboard.press("ArrowRight")  # asked, then run (picky held until the reveal)
    expect(rail.locator(".rail-question .predict-head")).to_contain_text("Which node does picky go to?")
    expect(forward).to_contain_text("reveal")
    page.keyboard.press("r")
    expect(rail.locator(".rail-after-text")).to_have_text("picky went to node03, the only node labelled disk=ssd.")
    expect(forward).to_contain_text("lesson complete")
    replay.wait_for("the replay's end state", lambda: bare_pods(replay) == recorded_end)

    # A file with an error: located, nothing created.
    broken = tmp_path / "broken.yaml"
    broken.write_text(text.replace("action: label", "action: relabel", 1))
    page.goto(api.server.url + "/")
    page.locator(".own-lesson input[type=file]").set_input_files(str(broken))
    page.locator(".own-lesson").get_by_role("button", name="try it alone").click()
    expect(page.locator("#lesson-file-error")).to_contain_text("broken.yaml:")
    expect(page.locator("#lesson-file-error")).to_contain_text("unknown action 'relabel'")


UNDER_A_TOAST = """() => {
  // Every visible control, scrolled into view (to the window's foot, the worst place): does the toasts' bar (opaque,
  // the toasts inside it) lie over it?
  const over = [document.querySelector('#toasts'), ...document.querySelectorAll('#toasts .toast')];
  const toasts = over.map((t) => t.getBoundingClientRect());
  const controls = document.querySelectorAll('button, input, select, textarea, summary, a[href]');
  const covered = [];
  for (const el of controls) {
    if (!el.checkVisibility({ visibilityProperty: true })) continue; // not drawn (in a closed <details>, say)
    el.scrollIntoView({ block: 'end' });
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height) continue;
    const hit = toasts.some((t) => r.left < t.right && t.left < r.right && r.top < t.bottom && t.top < r.bottom);
    const name = el.textContent.trim().slice(0, 30) || el.getAttribute('aria-label') || el.name || el.type;
    if (hit) covered.push(`${el.tagName.toLowerCase()} ${name} ${Math.round(r.top)}-${Math.round(r.bottom)}`);
  }
  return { covered, toasts: toasts.length };
}"""


def test_toasts_never_lie_over_a_control_on_the_board(page: Page, new_cluster: Any) -> None:
    api = new_cluster("demo")
    open_cluster(page, api.url)
    page.locator("#recorder summary").click()
    page.locator("#profiles summary").click()
    set_editor_text(page, SELECTED)
    page.locator("[data-editor=create]").click()
    expect(page.locator("#toasts .toast").last).to_have_text("created Pod/picky")  # shown for 3 s
    result = page.evaluate(UNDER_A_TOAST)
    assert result["toasts"] >= 1
    assert result["covered"] == [], result["covered"]
    # The last control of the page, scrolled to, stays clear of the status bar.
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    bar = page.locator("#toasts").bounding_box()
    last = page.locator("#cluster-page button:visible").last.bounding_box()
    assert bar is not None and last is not None
    assert last["y"] + last["height"] <= bar["y"], (last, bar)
