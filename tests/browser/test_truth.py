"""The browser tells the truth (issue 15): every figure, verdict and explanation on screen is the
core's, every view is current, what-ifs explain themselves. Each test gets a fresh cluster."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import BrowserContext, Page, expect

from .conftest import ClusterApi, open_cluster
from .test_cluster_page import card, create_in_editor, finish_cycle_of, no_page_errors, pod_of

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

    create_in_editor(page, NEEDY_POD, "default/needy")
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


PLAIN_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: plain}
spec:
  containers:
  - {name: app, image: soscscs/myapp:v1, resources: {requests: {cpu: 100m}}}
"""


def test_a_node_changed_since_the_viewed_cycle_shows_no_stale_verdict(page: Page, new_cluster: Any) -> None:
    api = new_cluster("demo")
    without_deployment(api)
    open_cluster(page, api.url)
    create_in_editor(page, PLAIN_POD, "default/plain")
    winner = str(
        api.wait_for("plain to be bound", lambda: (pod_of(api, "default/plain") or {}).get("spec", {}).get("nodeName"))
    )
    source = page.locator("#board .verdict-source")
    expect(source).to_contain_text("verdicts of cycle")
    expect(source).to_contain_text("default/plain")
    expect(source).to_contain_text("ago")
    expect(card(page, "node01")).to_have_class("node-card rejected")
    expect(card(page, winner).locator(".verdict")).to_contain_text("★ selected")

    # node01 loses its taint, the winner gains one: neither keeps the verdict of a cluster that is gone.
    api.act(
        {"action": "taint", "node": "node01", "key": "qqq", "value": "value1", "effect": "NoSchedule", "remove": True}
    )
    api.act({"action": "taint", "node": winner, "key": "gpu", "value": "true", "effect": "NoSchedule"})
    expect(card(page, "node01").locator(".verdict")).to_contain_text("⟳ changed since cycle")
    expect(card(page, "node01")).not_to_have_class("node-card rejected")
    expect(card(page, "node01").locator(".verdict")).not_to_contain_text("TaintToleration")
    expect(card(page, winner).locator(".verdict")).to_contain_text("⟳ changed since cycle")
    expect(card(page, winner).locator(".verdict")).not_to_contain_text("★")
    expect(source).to_contain_text("2 node(s) changed since")

    # One click asks the scheduler again: node01 now passes, the tainted winner is rejected.
    card(page, "node01").locator("[data-reexplain]").click()
    expect(source).to_contain_text("verdicts of re-explained default/plain")
    expect(card(page, "node01").locator(".verdict")).to_have_text(re.compile(r"^(★ selected|✓) \d+"))
    expect(card(page, winner).locator(".verdict")).to_have_text(
        "✗ TaintToleration: node(s) had untolerated taint {gpu: true}"
    )

    # Hidden verdicts: the board is the cluster now, nothing faded, nothing crowned.
    source.locator("[data-verdicts=hide]").click()
    expect(page.locator("#board .node-card.rejected, #board .node-card.winner")).to_have_count(0)
    expect(source).to_contain_text("the cluster now")
    no_page_errors(page)


NVME_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: wants-nvme}
spec:
  nodeSelector: {disktype: nvme}
  containers:
  - {name: app, image: soscscs/myapp:v1}
"""

NVME_MESSAGE = (
    "0/3 nodes are available: 1 node(s) had untolerated taint {qqq: value1}, "
    "2 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/3 nodes are "
    "available: 3 Preemption is not helpful for scheduling."
)


def test_explain_fills_every_tab_a_created_pod_would(page: Page, new_cluster: Any) -> None:
    api = new_cluster("demo")
    open_cluster(page, api.url)
    page.locator("#editor textarea").fill(NVME_POD)
    page.locator("[data-editor=explain]").click()
    finish_cycle_of(page, "what-if · default/wants-nvme")

    page.locator("#detail [data-tab=why]").click()
    why = page.locator("[data-panel=why]")
    expect(why.locator("h3")).to_have_text("default/wants-nvme (what-if)")
    expect(why.locator(".kubectl-message")).to_have_text(
        f"Warning  FailedScheduling  default-scheduler  {NVME_MESSAGE}"
    )
    group = why.locator(".why-group").filter(has_text="didn't match Pod's node affinity/selector")
    expect(group.locator("li").first).to_have_text(
        "node02 lacks label disktype=nvme that the pod's nodeSelector asks for"
        "fix: kubectl label nodes node02 disktype=nvme"
    )
    taint = why.locator(".why-group").filter(has_text="untolerated taint {qqq: value1}")
    expect(taint.locator(".snippet")).to_contain_text('key: "qqq"')

    page.locator("#detail [data-tab=scores]").click()
    expect(page.locator("[data-panel=scores] table.scores tbody tr")).to_have_count(3)
    page.locator("#detail [data-tab=events]").click()
    events = page.locator("[data-panel=events]")
    expect(events.locator("h3")).to_contain_text("what-if, nothing was created")
    expect(events.locator("tbody tr")).to_have_text(f"WarningFailedSchedulingwhat-ifdefault-scheduler{NVME_MESSAGE}")
    expect(page.locator("#pipeline .stage-done")).not_to_have_count(0)
    assert "default/wants-nvme" not in api.objects("Pod")
    no_page_errors(page)


SSD_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: wants-ssd}
spec:
  nodeSelector: {disktype: ssd}
  containers:
  - {name: app, image: soscscs/myapp:v1}
"""


def test_fixes_are_verified_by_the_scheduler_and_applying_them_schedules_the_pod(page: Page, new_cluster: Any) -> None:
    api = new_cluster("demo")
    api.act({"action": "taint", "node": "node02", "key": "gpu", "value": "true", "effect": "NoSchedule"})
    open_cluster(page, api.url)
    create_in_editor(page, SSD_POD, "default/wants-ssd")
    page.locator('.pending-lane [data-why="default/wants-ssd"]').click()

    # node02 fails two plugins: both get their fix, and the pair is checked by scheduling again.
    fix = page.locator('[data-panel=why] .fix-node[data-fix-node="node02"]')
    expect(fix.locator("h5")).to_have_text(
        "node02 ✓ make it fit on node02: verified, the scheduler then places it there"
    )
    expect(fix.locator("li[data-plugin=TaintToleration] .fix")).to_have_text(
        "fix: tolerate gpu=true:NoSchedule (or kubectl taint node node02 gpu:NoSchedule-)"
    )
    expect(fix.locator("li[data-plugin=NodeAffinity] .fix")).to_have_text(
        "fix: label node02 disktype=ssd — kubectl label nodes node02 disktype=ssd --overwrite"
    )
    expect(fix.locator("pre.diff")).to_contain_text("+  - key: gpu")

    fix.locator("[data-fix-whatif]").click()
    expect(page.locator("#board .verdict-source")).to_contain_text("what-if: fixed for node02")
    expect(card(page, "node02").locator(".verdict")).to_contain_text("★ selected")
    fixed_yaml = page.locator("#editor textarea").input_value()
    assert "tolerations" in fixed_yaml

    # Doing it for real: the kubectl command on the node, the fixed pod in place of the old one.
    api.act({"action": "label", "node": "node02", "key": "disktype", "value": "ssd"})
    api.act({"action": "delete", "kind": "Pod", "name": "wants-ssd"})
    api.wait_for("the old pod to go", lambda: "default/wants-ssd" not in api.objects("Pod"))
    page.locator("[data-editor=create]").click()
    api.wait_for(
        "the fixed pod on node02",
        lambda: (pod_of(api, "default/wants-ssd") or {}).get("spec", {}).get("nodeName") == "node02",
    )
    no_page_errors(page)


def cycle_info(page: Page) -> str:
    """The pipeline's cycle line once the page has drawn its latest state (two animation frames)."""
    return str(
        page.evaluate(
            """() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() =>
                 done(document.querySelector("#pipeline .cycle-info").innerText))))"""
        )
    )


def test_followers_follow_replays_steps_speed_what_ifs_and_late_joiners_land_on_the_same_frame(
    context: BrowserContext, new_cluster: Any
) -> None:
    api = new_cluster("demo")
    presenter = open_cluster(context.new_page(), api.url)
    follower = open_cluster(context.new_page(), api.url + "?role=follower")
    create_in_editor(presenter, PLAIN_POD, "default/plain")
    number = re.search(r"cycle (\d+)", cycle_info(presenter)).group(1)  # type: ignore[union-attr]

    # A replay paused at a step, at ×4: the follower shows the same frame and speed.
    presenter.locator("#pipeline select.speed").select_option("4")
    presenter.locator("#pipeline select.cycle-picker").select_option(number)
    presenter.locator("[data-player=play]").click()  # pause the replay
    for _ in range(3):
        presenter.locator("[data-player=step]").click()
    frame = cycle_info(presenter)
    assert f"cycle {number}" in frame and "event " in frame
    expect(follower.locator("#pipeline .cycle-info")).to_have_text(frame)
    expect(follower.locator("#pipeline select.speed")).to_have_value("4")
    presenter.locator("#detail [data-tab=scores]").click()
    expect(follower.locator("#detail .tab.active")).to_have_text("Scores")

    # A student who joins now lands on that frame (not "loading…").
    late = open_cluster(context.new_page(), api.url + "?role=follower")
    expect(late.locator("#pipeline .cycle-info")).to_have_text(frame)
    expect(late.locator("#detail .tab.active")).to_have_text("Scores")

    # A what-if on the presenter: the followers see it, its Why Pending included.
    presenter.locator("#editor textarea").fill(NVME_POD)
    presenter.locator("[data-editor=explain]").click()
    presenter.locator("[data-player=end]").click()
    presenter.locator("#detail [data-tab=why]").click()
    for page in (follower, late):
        expect(page.locator("#pipeline .cycle-info")).to_contain_text("what-if · default/wants-nvme")
        expect(page.locator("#detail .tab.active")).to_have_text("Why Pending")
        expect(page.locator("[data-panel=why] h3")).to_have_text("default/wants-nvme (what-if)")
    expect(follower.locator("#pipeline .cycle-info")).to_have_text(cycle_info(presenter))
    for page in (presenter, follower, late):
        no_page_errors(page)


def preempt_for_the_vip(api: ClusterApi) -> str:
    """Step the preemption lesson until myapp-vip, which preempts a replica, is bound; returns its node."""
    api.act({"action": "lesson.next"})
    api.wait_for(
        "two replicas running",
        lambda: sum(1 for p in api.objects("Pod").values() if p.get("status", {}).get("phase") == "Running") == 2,
    )
    api.act({"action": "lesson.next"})
    api.act({"action": "lesson.next"})
    vip = api.wait_for(
        "myapp-vip bound", lambda: (pod_of(api, "default/myapp-vip") or {}).get("spec", {}).get("nodeName")
    )
    return str(vip)


def pick_first_cycle_of(page: Page, pod: str) -> None:
    """Choose the first scheduling cycle of `pod` in the player's cycle picker."""
    picker = page.locator("#pipeline select.cycle-picker")
    picker.select_option(str(picker.locator("option", has_text=pod).first.get_attribute("value")))


def test_preemption_is_drawn_and_the_victims_event_names_the_preemptor(page: Page, new_cluster: Any) -> None:
    api = new_cluster("preemption")
    vip = preempt_for_the_vip(api)
    open_cluster(page, api.url)
    pick_first_cycle_of(page, "default/myapp-vip")
    page.locator("[data-player=end]").click()

    nominated = card(page, str(vip))
    expect(nominated).to_have_class(re.compile(r"\bnominated\b"))
    line = nominated.locator(".preemption-line")
    expect(line).to_have_text(re.compile(r"^◎ nominated: preemption evicts myapp-[a-z0-9-]+ \(p0\)$"))
    expect(line.locator("s")).to_have_count(1)  # struck through
    other = "node02" if vip == "node01" else "node01"
    expect(card(page, other).locator(".preemption-line")).to_have_text(
        re.compile(r"^⚔ candidate, not chosen.*: would evict myapp-[a-z0-9-]+ \(p0\)$")
    )
    # The Preempted event keeps upstream's message (the preemptor's UID) and names it beside.
    page.locator("#detail [data-tab=events]").click()
    row = page.locator("[data-panel=events] tbody tr").filter(has_text="Preempted")
    expect(row.first).to_contain_text("Preempted by pod ")
    expect(row.first.locator(".related")).to_have_text(" — pod default/myapp-vip")
    no_page_errors(page)


def test_a_pod_with_toleration_seconds_shows_a_live_countdown_to_its_eviction(page: Page, new_cluster: Any) -> None:
    api = new_cluster("taints-noexecute")
    open_cluster(page, api.url)
    api.act({"action": "lesson.next"})  # node01 gets qqq=value1:NoExecute; myapp03 tolerates it for 60 s
    countdown = card(page, "node01").locator('[data-pod="default/myapp03"] .countdown')
    expect(countdown).to_have_text(re.compile(r"^ (60|59|58|57|56)s$"))
    expect(countdown.locator(".icon-timer")).to_be_visible()  # an SVG icon, not a glyph fonts may lack
    first = int(str(countdown.get_attribute("data-seconds")))
    expect(countdown).not_to_have_attribute("data-seconds", str(first), timeout=3000)  # it ticks
    assert int(str(countdown.get_attribute("data-seconds"))) < first
    expect(card(page, "node01").locator('[data-pod="default/myapp02"] .countdown')).to_have_count(0)
    # A board opened later (a student joining the class) counts down too: the stream tells it on connect.
    late = open_cluster(page.context.new_page(), api.url + "?role=follower")
    late_countdown = card(late, "node01").locator('[data-pod="default/myapp03"] .countdown')
    expect(late_countdown).to_have_text(re.compile(r"^ \d+s$"))
    assert int(str(late_countdown.get_attribute("data-seconds"))) <= first
    no_page_errors(page)
    no_page_errors(late)


GPU_TAINTED_KGC_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: pod-kgc}
spec:
  nodeSelector: {kgc: a}
  containers:
  - {name: app, image: soscscs/myapp:v1}
"""


def test_the_animation_waits_for_filters_and_names_the_running_plugin(page: Page, new_cluster: Any) -> None:
    api = new_cluster("demo")
    api.act({"action": "taint", "node": "node02", "key": "gpu", "value": "true", "effect": "NoSchedule"})
    open_cluster(page, api.url)
    create_in_editor(page, GPU_TAINTED_KGC_POD, "default/pod-kgc")
    pick_first_cycle_of(page, "default/pod-kgc")
    page.locator("[data-player=play]").click()  # pause at the start
    page.locator("[data-player=back]").click()
    for _ in range(5):
        page.locator("[data-player=back]").click()
    expect(page.locator("#pipeline .cycle-info")).to_contain_text("event 0/")

    running = page.locator("#pipeline .running")
    verdict = card(page, "node02").locator(".verdict")
    seen: list[tuple[str, str]] = []
    for number in range(1, 41):
        page.locator("[data-player=event]").click()
        # read each event's frame once it is drawn (a read before the redraw skips an event)
        expect(page.locator("#pipeline .cycle-info")).to_contain_text(f"event {number}/")
        seen.append((running.inner_text(), verdict.inner_text()))
        if seen[-1][0].startswith("Filter · NodeResourcesFit"):
            break
    runs = [r for r, _ in seen]
    # PreFilter shows at once what runs, and the plugin named with what it checks.
    assert any(r.startswith("PreFilter") for r in runs[:3]), runs[:3]
    assert any(r.startswith("Filter · TaintToleration: does the pod tolerate") for r in runs), runs
    # node02 waits until its filters ran; it never reads "passed" before TaintToleration rejects it.
    verdicts = [v for _, v in seen]
    assert any(v.startswith("waiting for its filters") for v in verdicts), verdicts
    assert not any("passed filters" in v for v in verdicts), verdicts
    assert any(v.startswith("✗ TaintToleration") for v in verdicts), verdicts
    page.locator("[data-player=end]").click()
    expect(verdict).to_have_text("✗ TaintToleration: node(s) had untolerated taint {gpu: true}")
    no_page_errors(page)
