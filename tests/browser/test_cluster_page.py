"""The cluster page in a real Chromium: drag and drop, Why Pending, Explain vs the CLI, the editor's
errors, the follower view, lessons and the keyboard path. Each test gets a fresh cluster."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from playwright.sync_api import BrowserContext, Locator, Page, expect

from tests.live_server import ROOT

from .conftest import ClusterApi, frames_sent, open_cluster

DEMO_MESSAGE_GPU_TAINT = (
    "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
    "1 node(s) had untolerated taint {gpu: true}, 1 node(s) had untolerated taint {qqq: value1}. "
    "no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
)

POD_KGC = """\
apiVersion: v1
kind: Pod
metadata:
  name: pod-kgc
spec:
  nodeSelector:
    kgc: a
  containers:
  - name: myapp
    image: soscscs/myapp:v1
"""


def card(page: Page, node: str) -> Locator:
    return page.locator(f'#board .node-grid > [data-node="{node}"]')


def palette_chip(page: Page, text: str) -> Locator:
    return page.locator(f'#palette [data-palette="{text}"]')


def finish_cycle_of(page: Page, pod: str) -> None:
    """Wait until the player shows the cycle of `pod`, then jump to its end (no 220 ms/event replay)."""
    expect(page.locator("#pipeline .cycle-info")).to_contain_text(pod)
    page.locator("[data-player=end]").click()
    expect(page.locator("#pipeline .cycle-info")).to_contain_text("→")


def create_in_editor(page: Page, yaml: str, pod: str) -> None:
    """Create the editor's YAML and wait for the end of `pod`'s scheduling cycle."""
    page.locator("#editor textarea").fill(yaml)
    page.locator("[data-editor=create]").click()
    finish_cycle_of(page, pod)


def pod_of(api: ClusterApi, key: str) -> dict[str, Any] | None:
    return api.objects("Pod").get(key)


def no_page_errors(page: Page) -> None:
    assert page._clusterviz_errors == []  # type: ignore[attr-defined]


# 1 ---------------------------------------------------------------------------------------------------


def test_drag_noschedule_taint_onto_the_only_fitting_node_makes_a_new_pod_pending(page: Page, new_cluster: Any) -> None:
    api = new_cluster("demo")  # node02 is the only node with kgc=a; node01 has qqq=value1:NoSchedule
    open_cluster(page, api.url)

    palette_chip(page, "gpu=true:NoSchedule").drag_to(card(page, "node02"))
    expect(card(page, "node02").locator('[data-chip=taint][data-key=gpu][data-effect="NoSchedule"]')).to_be_visible()
    assert {"key": "gpu", "value": "true", "effect": "NoSchedule"} in api.objects("Node")["node02"]["spec"]["taints"]

    create_in_editor(page, POD_KGC, "default/pod-kgc")

    # The node cards carry the reason upstream records for each node (first failing Filter plugin).
    expect(card(page, "node02")).to_have_class("node-card rejected")
    expect(card(page, "node02").locator(".verdict")).to_have_text(
        "✗ TaintToleration: node(s) had untolerated taint {gpu: true}"
    )
    expect(card(page, "node01").locator(".verdict")).to_have_text(
        "✗ TaintToleration: node(s) had untolerated taint {qqq: value1}"
    )
    expect(card(page, "node03").locator(".verdict")).to_have_text(
        "✗ NodeAffinity: node(s) didn't match Pod's node affinity/selector"
    )
    pending = page.locator(".pending-lane .pending-pod").filter(has=page.locator('[data-pod="default/pod-kgc"]'))
    expect(pending.locator(".pending-message")).to_have_text(DEMO_MESSAGE_GPU_TAINT)

    pending.locator("[data-why]").click()
    why = page.locator("[data-panel=why]")
    expect(page.locator("#detail .tab.active")).to_have_text("Why Pending")
    expect(why.locator(".kubectl-message")).to_have_text(
        f"Warning  FailedScheduling  default-scheduler  {DEMO_MESSAGE_GPU_TAINT}"
    )
    group = why.locator(".why-group").filter(has_text="node(s) had untolerated taint {gpu: true}")
    expect(group.locator("h4")).to_have_text("1 node(s) had untolerated taint {gpu: true} — TaintToleration")
    expect(group.locator("li")).to_contain_text("node02 has taint gpu=true:NoSchedule")
    snippet = 'tolerations:\n- key: "gpu"\n  operator: "Equal"\n  value: "true"\n  effect: "NoSchedule"'
    expect(group.locator(".snippet")).to_have_text(snippet)
    expect(group.locator("code")).to_have_text("kubectl taint node node02 gpu:NoSchedule-")

    # The server agrees: the pod's condition and its FailedScheduling event carry the same message…
    body = pod_of(api, "default/pod-kgc")
    assert body is not None and not body["spec"].get("nodeName")
    condition = next(c for c in body["status"]["conditions"] if c["type"] == "PodScheduled")
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False",
        "Unschedulable",
        DEMO_MESSAGE_GPU_TAINT,
    )
    failed = [e for e in api.state()["objects"]["Event"] if e["reason"] == "FailedScheduling"]
    assert [e["message"] for e in failed if e["involvedObject"]["name"] == "pod-kgc"] == [DEMO_MESSAGE_GPU_TAINT]
    # …and the suggested toleration really is the fix.
    fixed = POD_KGC.replace("spec:\n", "spec:\n" + "".join(f"  {line}\n" for line in snippet.splitlines()), 1)
    explanation = api.act({"action": "explain", "yaml": fixed})["explanation"]
    assert (explanation["scheduled"], explanation["selectedNode"]) == (True, "node02")
    no_page_errors(page)


# 2 ---------------------------------------------------------------------------------------------------


def test_drag_matching_label_onto_a_node_schedules_the_pending_pod(page: Page, new_cluster: Any) -> None:
    api = new_cluster("demo")
    open_cluster(page, api.url)
    page.locator("#editor textarea").fill(POD_KGC.replace("kgc: a", "disktype: ssd"))
    page.locator("[data-editor=create]").click()
    expect(page.locator('.pending-lane [data-pod="default/pod-kgc"]')).to_be_visible()
    api.wait_for(
        "pod-kgc to fail scheduling", lambda: (pod_of(api, "default/pod-kgc") or {}).get("status", {}).get("conditions")
    )

    palette_chip(page, "disktype=ssd").drag_to(card(page, "node03"))

    chip = card(page, "node03").locator('[data-pod="default/pod-kgc"]')
    expect(chip).to_be_visible()
    expect(chip).to_have_class(re.compile(r"^pod pod-Running( touched)?$"))  # the demo's step lights pod-kgc
    expect(card(page, "node03").locator("[data-chip=label][data-key=disktype][data-value=ssd]")).to_be_visible()
    expect(page.locator(".pending-lane .pods")).to_have_text("no pending pods")
    body = pod_of(api, "default/pod-kgc")
    assert body is not None and body["spec"]["nodeName"] == "node03"
    assert api.objects("Node")["node03"]["metadata"]["labels"]["disktype"] == "ssd"
    no_page_errors(page)


# 3 ---------------------------------------------------------------------------------------------------

PASTED_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: what-if
spec:
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 7
        preference:
          matchExpressions:
          - {key: kgc, operator: In, values: [a]}
  containers:
  - name: app
    image: soscscs/myapp:v1
    resources:
      requests: {cpu: 300m, memory: 384Mi}
"""

FILLER = """\
apiVersion: v1
kind: Pod
metadata: {name: filler, labels: {app: filler}}
spec:
  nodeName: node03
  containers:
  - name: app
    image: soscscs/myapp:v1
    resources:
      requests: {cpu: 400m, memory: 1Gi}
"""


# The app's clusters answer as v1.34 (their default); the CLI's default is the newest version.
CLI_OPTS = ("--seed", "0", "--version", "1.34", "-o", "json")


def cli_explain(tmp_path: Path, cluster_yaml: str, pod_yaml: str) -> dict[str, Any]:
    (tmp_path / "cluster.yaml").write_text(cluster_yaml)
    (tmp_path / "pod.yaml").write_text(pod_yaml)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "scheduler_core",
            "explain",
            *("--cluster", "cluster.yaml", "--pod", "pod.yaml"),
            *CLI_OPTS,
        ],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(out.stdout))


def scores_tab(page: Page) -> dict[str, Any]:
    """What the Scores tab shows: per node the rejecting plugin or the score cells, and the filter table."""
    return page.evaluate(
        """() => {
          const panel = document.querySelector("[data-panel=scores]");
          const rows = {};
          for (const tr of panel.querySelectorAll("table.scores tbody tr")) {
            const cells = {};
            for (const td of tr.querySelectorAll("td[data-plugin]")) {
              const d = td.dataset;
              cells[d.plugin] = {raw: d.raw, normalized: d.normalized, weight: d.weight};
            }
            const rejected = tr.querySelector(".rejected-cell");
            rows[tr.dataset.node] = {rejectedBy: tr.dataset.rejectedBy, total: tr.dataset.total, cells,
              winner: tr.classList.contains("winner"), rejectedText: rejected ? rejected.textContent : null};
          }
          const filters = {};
          for (const tr of panel.querySelectorAll("table.filters tbody tr")) {
            const tds = [...tr.querySelectorAll("td")];
            filters[tr.dataset.node] = Object.fromEntries(tds.map((td) => [td.dataset.plugin, td.dataset.code]));
          }
          return {rows, filters};
        }"""
    )


def compare_with_cli(shown: dict[str, Any], cli: dict[str, Any]) -> None:
    assert set(shown["rows"]) == set(cli["nodes"])
    for name, node in cli["nodes"].items():
        row = shown["rows"][name]
        assert row["winner"] == (name == cli["selectedNode"]), name
        if node["filter"]:
            status = node["filter"]
            assert row["rejectedBy"] == (status["plugin"] or "PreFilter"), name
            assert row["rejectedText"] == f"✗ {status['plugin'] or 'PreFilter'}: {', '.join(status['reasons'])}"
            assert row["cells"] == {}, name
            continue
        assert row["rejectedBy"] == "", name
        assert row["total"] == str(node["total"]), name
        expected = {
            plugin: {"raw": str(s["raw"]), "normalized": str(s["normalized"]), "weight": str(s["weight"])}
            for plugin, s in node["scores"].items()
        }
        assert row["cells"] == expected, name
    # Every plugin column of the filter table: the same code on every node as the CLI's per-plugin verdicts.
    assert shown["filters"], "the filter table is missing"
    for name, by_plugin in shown["filters"].items():
        cli_codes = {f["plugin"]: f["code"] for f in cli["nodes"][name]["filters"]}
        assert by_plugin == {p: cli_codes[p] for p in by_plugin}, name


def test_explain_on_a_pasted_pod_matches_the_cli_on_the_export(page: Page, new_cluster: Any, tmp_path: Path) -> None:
    api = new_cluster("demo")
    # The export leaves out ReplicaSet-owned pods, so keep to pods it carries: no Deployment, a bound filler.
    api.act({"action": "delete", "kind": "Deployment", "name": "myapp"})
    api.act({"action": "create", "yaml": FILLER})
    api.wait_for(
        "filler to run", lambda: (pod_of(api, "default/filler") or {}).get("status", {}).get("phase") == "Running"
    )
    assert [k for k in api.objects("Pod")] == ["default/filler"]
    open_cluster(page, api.url)

    page.locator("#editor textarea").fill(PASTED_POD)
    page.locator("[data-editor=explain]").click()
    finish_cycle_of(page, "what-if · default/what-if")
    expect(page.locator("#detail .tab.active")).to_have_text("Scores")
    expect(page.locator("[data-panel=scores] table.scores tr.winner")).to_have_count(1)

    cli = cli_explain(tmp_path, api.export(), PASTED_POD)
    assert cli["selectedNode"] == "node02" and cli["nodes"]["node01"]["filter"]["plugin"] == "TaintToleration"
    assert len([n for n in cli["nodes"].values() if n["scores"]]) == 2
    compare_with_cli(scores_tab(page), cli)
    assert pod_of(api, "default/what-if") is None  # a what-if creates nothing
    no_page_errors(page)


def test_explain_matches_the_cli_on_the_snapshot_with_deployment_pods(
    page: Page, new_cluster: Any, tmp_path: Path
) -> None:
    api = new_cluster("demo")  # myapp's 3 replicas run on node02 and node03
    open_cluster(page, api.url)
    page.locator("#editor textarea").fill(PASTED_POD)
    page.locator("[data-editor=explain]").click()
    finish_cycle_of(page, "what-if · default/what-if")
    compare_with_cli(scores_tab(page), cli_explain(tmp_path, api.snapshot(), PASTED_POD))


# 4 ---------------------------------------------------------------------------------------------------

BAD_QUANTITY = POD_KGC.replace(
    "    image: soscscs/myapp:v1\n", "    image: x\n    resources:\n      requests:\n        cpu: abc\n"
)
BAD_SYNTAX = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: broken\n   labels: [\nspec: {}\n"


@pytest.mark.parametrize(
    ("text", "button", "line", "message"),
    [
        (BAD_QUANTITY, "create", 13, 'spec.containers[0].resources.requests.cpu: "abc" is not a valid quantity'),
        (BAD_SYNTAX, "explain", 5, "mapping values are not allowed here"),
    ],
    ids=["bad-quantity-create", "syntax-error-explain"],
)
def test_yaml_error_is_shown_at_its_line(
    page: Page, new_cluster: Any, text: str, button: str, line: int, message: str
) -> None:
    api = new_cluster("demo")
    open_cluster(page, api.url)
    assert text.splitlines()[line - 1].strip().startswith(("cpu: abc", "labels: ["))
    page.locator("#editor textarea").fill(text)
    page.locator(f"[data-editor={button}]").click()

    error = page.locator("#editor .editor-error")
    expect(error).to_be_visible()
    expect(error).to_have_text(f"line {line}: {message}")
    gutter = page.locator("#editor .gutter .line")
    expect(gutter).to_have_count(len(text.split("\n")))
    expect(page.locator("#editor .gutter .error-line")).to_have_count(1)
    expect(page.locator("#editor .gutter .error-line")).to_have_text(str(line))
    assert [k for k in api.objects("Pod") if not k.startswith("default/myapp-")] == []  # nothing created

    # A good pod clears the error.
    page.locator("#editor textarea").fill(POD_KGC)
    page.locator("[data-editor=explain]").click()
    expect(error).to_be_hidden()
    expect(page.locator("#editor .gutter .error-line")).to_have_count(0)
    no_page_errors(page)


# 5 ---------------------------------------------------------------------------------------------------


def test_follower_follows_the_presenter_and_has_no_editing_controls(context: BrowserContext, new_cluster: Any) -> None:
    api = new_cluster("demo")
    presenter = open_cluster(context.new_page(), api.url)
    follower = open_cluster(context.new_page(), api.url + "?role=follower")

    # No editing controls on the follower.
    for selector in [
        "[data-editor=create]",
        "#palette",
        "#palette form.add-chip",
        "#pace",
        "#step-button",
        "#follower-link",
        "#board .cordon",
    ]:
        locator = follower.locator(selector)
        for i in range(locator.count()):
            expect(locator.nth(i)).to_be_hidden()
    # ...but a student may fork it into a copy of their own.
    expect(follower.locator("form[action$='/fork'] button")).to_be_visible()
    assert follower.locator("#palette [data-palette][draggable=true]").count() == 0
    assert follower.locator("#board [data-chip][draggable=true]").count() == 0
    expect(presenter.locator("[data-editor=create]")).to_be_visible()
    expect(presenter.locator("#board .cordon").first).to_be_visible()

    # A taint added on the presenter shows on the follower's board.
    palette_chip(presenter, "gpu=true:NoSchedule").drag_to(card(presenter, "node03"))
    expect(card(follower, "node03").locator("[data-chip=taint][data-key=gpu]")).to_have_text("✕ gpu=true:NoSchedule")

    # Selecting a pod on the presenter selects it on the follower (the `view` action).
    pod = card(presenter, "node03").locator("[data-pod]").first
    key = pod.get_attribute("data-pod")
    pod.click()
    expect(presenter.locator(f'#board [data-pod="{key}"]')).to_have_class("pod pod-Running selected")
    expect(follower.locator(f'#board [data-pod="{key}"]')).to_have_class("pod pod-Running selected")
    expect(follower.locator("#board .pod.selected")).to_have_count(1)
    # …and switching tabs too.
    presenter.locator("#detail [data-tab=events]").click()
    expect(follower.locator("#detail .tab.active")).to_have_text("Events")
    expect(follower.locator("[data-panel=events] h3")).to_have_text(f"Events of {key}")

    # The follower's own clicks change nothing on the server.
    before = api.state()["resourceVersion"]
    sent_before = frames_sent(follower)
    card(follower, "node01").click()
    follower.locator("#board .chip").first.press("Delete")
    assert frames_sent(follower) == sent_before  # the follower sent nothing: no action to refuse
    assert api.state()["resourceVersion"] == before
    no_page_errors(presenter)
    no_page_errors(follower)


# 6 ---------------------------------------------------------------------------------------------------


def lesson_expectations(name: str) -> dict[str, Any]:
    raw = yaml.safe_load((ROOT / "clusterviz" / "lessons" / f"{name}.yaml").read_text())
    return dict(raw.get("expect") or {})


@pytest.mark.parametrize("lesson", ["demo", "nodeselector", "dra-gpu-pending"])
def test_a_lesson_plays_to_its_end(page: Page, new_cluster: Any, lesson: str) -> None:
    api = new_cluster(lesson)
    open_cluster(page, api.url)
    page.locator("#detail [data-tab=lesson]").click()
    panel = page.locator("[data-panel=lesson]")
    expect(panel.locator("h3")).not_to_be_empty()
    steps = panel.locator("ol.steps li")
    total = steps.count()
    assert total >= 1
    for step in range(1, total + 1):
        button = panel.locator("button.next-step")
        expect(button).to_have_text(f"run step {step} of {total}")
        button.click()
        expect(steps.nth(step - 1)).to_have_class("done")
    expect(panel.locator("p.ok")).to_have_text("Lesson complete.")
    expect(panel.locator("button.next-step")).to_have_count(0)
    # The last question is still open (its pod held Pending): the presenter reveals it. Earlier ones
    # were revealed when the lesson moved on.
    reveal = page.locator("#prediction [data-predict=reveal]")
    if reveal.count():
        reveal.click()
        expect(reveal).to_have_count(0)

    want = lesson_expectations(lesson)
    assert want.get("pods"), f"lesson {lesson} has no expected pods"
    for key, pod in want["pods"].items():
        chip = page.locator(f'#board [data-pod="{key}"]')
        if pod.get("node"):
            chip = card(page, pod["node"]).locator(f'[data-pod="{key}"]')
        if pod.get("pending"):
            chip = page.locator(f'.pending-lane [data-pod="{key}"]')
        expect(chip).to_be_visible()
        if pod.get("phase"):
            expect(chip).to_have_class(re.compile(rf"^pod pod-{pod['phase']}( touched)?$"))  # lit: the last step's
    for key, status in (want.get("deployments") or {}).items():
        deployment = api.objects("Deployment")[key if "/" in key else f"default/{key}"]
        for field, value in status.items():
            assert deployment["status"][field] == value
    assert api.state()["cluster"]["lessonStep"] == total
    no_page_errors(page)


# 7 ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chip", "selector"),
    [
        ("zone=a", "[data-chip=label][data-key=zone][data-value=a]"),
        ("spot=true:PreferNoSchedule", "[data-chip=taint][data-key=spot][data-effect=PreferNoSchedule]"),
    ],
    ids=["label", "taint"],
)
def test_keyboard_enter_on_a_chip_then_on_a_node_applies_it(
    page: Page, new_cluster: Any, chip: str, selector: str
) -> None:
    api = new_cluster("demo")
    open_cluster(page, api.url)
    palette_chip(page, chip).focus()
    page.keyboard.press("Enter")
    expect(palette_chip(page, chip)).to_have_attribute("aria-pressed", "true")
    expect(palette_chip(page, chip)).to_be_focused()
    expect(page.locator("#palette .hint")).to_contain_text("now choose a node")

    card(page, "node03").focus()
    page.keyboard.press("Enter")
    expect(card(page, "node03").locator(selector)).to_be_visible()
    expect(palette_chip(page, chip)).to_have_attribute("aria-pressed", "false")
    node = api.objects("Node")["node03"]
    if "=" in chip and ":" not in chip:
        assert node["metadata"]["labels"]["zone"] == "a"
    else:
        assert {"key": "spot", "value": "true", "effect": "PreferNoSchedule"} in node["spec"]["taints"]
    # Only node03 changed.
    assert card(page, "node02").locator(selector).count() == 0
    no_page_errors(page)


def test_keyboard_escape_cancels_the_armed_chip(page: Page, new_cluster: Any) -> None:
    api = new_cluster("demo")
    open_cluster(page, api.url)
    palette_chip(page, "zone=a").focus()
    page.keyboard.press("Enter")
    expect(palette_chip(page, "zone=a")).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("Escape")
    expect(palette_chip(page, "zone=a")).to_have_attribute("aria-pressed", "false")
    before = api.state()["resourceVersion"]
    card(page, "node03").focus()
    page.keyboard.press("Enter")
    expect(card(page, "node03")).to_have_class("node-card selected")
    assert api.state()["resourceVersion"] == before


# Removing and moving chips ------------------------------------------------------------------------


def test_drag_a_node_chip_onto_the_palette_removes_it_and_onto_another_node_moves_it(
    page: Page, new_cluster: Any
) -> None:
    api = new_cluster("demo")
    open_cluster(page, api.url)

    card(page, "node02").locator("[data-chip=label][data-key=kgc]").drag_to(page.locator("#palette"))
    expect(card(page, "node02").locator("[data-chip=label][data-key=kgc]")).to_have_count(0)
    assert "kgc" not in api.objects("Node")["node02"]["metadata"]["labels"]

    card(page, "node01").locator("[data-chip=taint][data-key=qqq]").drag_to(card(page, "node03"))
    expect(card(page, "node03").locator("[data-chip=taint][data-key=qqq]")).to_have_text("✕ qqq=value1:NoSchedule")
    expect(card(page, "node01").locator("[data-chip=taint]")).to_have_count(0)
    nodes = api.objects("Node")
    assert nodes["node03"]["spec"]["taints"] == [{"key": "qqq", "value": "value1", "effect": "NoSchedule"}]
    assert "taints" not in nodes["node01"]["spec"]

    # The keyboard way: Delete on a node's chip removes it.
    card(page, "node03").locator("[data-chip=taint][data-key=qqq]").press("Delete")
    expect(card(page, "node03").locator("[data-chip=taint]")).to_have_count(0)
    assert "taints" not in api.objects("Node")["node03"]["spec"]
    no_page_errors(page)


# The view in the URL ------------------------------------------------------------------------------


def test_a_link_with_pod_tab_and_cycle_shows_the_same_view(page: Page, new_cluster: Any) -> None:
    api = new_cluster("demo")
    api.act({"action": "create", "yaml": POD_KGC.replace("kgc: a", "disktype: ssd")})
    api.wait_for("pod-kgc to fail", lambda: pod_status(api, "default/pod-kgc"))
    cycles = json.loads(api._get("cycles"))["cycles"]
    cycle = next(c for c in cycles if c["pod"] == "default/pod-kgc")
    events = len(json.loads(api._get(f"cycles/{cycle['cycle']}"))["events"])

    open_cluster(page, f"{api.url}?pod=default/pod-kgc&tab=events&cycle={cycle['cycle']}&step=5")
    expect(page.locator('#board .pod.selected[data-pod="default/pod-kgc"]')).to_be_visible()
    expect(page.locator("#detail .tab.active")).to_have_text("Events")
    row = page.locator("[data-panel=events] table.events tbody tr").filter(has_text="FailedScheduling")
    expect(row.locator("td")).to_have_text(
        ["Warning", "FailedScheduling", re.compile(r"^\d+s$"), "default-scheduler", pod_status(api, "default/pod-kgc")]
    )
    expect(page.locator("#pipeline .cycle-info")).to_have_text(
        f"cycle {cycle['cycle']} · default/pod-kgc · event 5/{events}"
    )
    expect(page.locator("#pipeline select.cycle-picker")).to_have_value(str(cycle["cycle"]))

    # Choosing another tab and pod writes them back into the URL.
    page.locator("#detail [data-tab=why]").click()
    expect(page.locator("[data-panel=why] .kubectl-message")).to_contain_text("FailedScheduling")
    expect(page).to_have_url(re.compile(r"[?&]tab=why(&|$)"))
    expect(page).to_have_url(re.compile(r"[?&]pod=default%2Fpod-kgc(&|$)"))
    no_page_errors(page)


def pod_status(api: ClusterApi, key: str) -> str:
    """The message of the pod's PodScheduled=False condition ("" while it has none)."""
    body = pod_of(api, key) or {}
    condition = next((c for c in body.get("status", {}).get("conditions", []) if c["type"] == "PodScheduled"), {})
    return str(condition.get("message", "")) if condition.get("status") == "False" else ""


def test_without_the_edit_link_the_page_is_read_only(browser: Any, new_cluster: Any) -> None:
    """A browser that never opened the edit link may watch, explain and fork — not change anything."""
    api = new_cluster("demo")
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto(api.url)
        page.wait_for_selector("#ws-state[data-state=open]")
        page.wait_for_selector("#board [data-node]")
        expect(page.locator("[data-editor=create]")).to_be_hidden()
        expect(page.locator("#step-button")).to_be_hidden()
        assert page.locator("#board [data-chip][draggable=true]").count() == 0
        before = api.state()["resourceVersion"]
        # A forged action over the page's own socket is refused by the server.
        reply = page.evaluate(
            """() => new Promise((resolve) => {
                const slug = document.querySelector('#cluster-page').dataset.slug;
                const ws = new WebSocket(`ws://${location.host}/ws/clusters/${slug}/`);
                ws.onmessage = (e) => {
                    const m = JSON.parse(e.data);
                    if (m.type === "error" || m.type === "result") resolve(m);
                };
                ws.onopen = () => ws.send(JSON.stringify({action: "cordon", node: "node01", id: "x"}));
            })"""
        )
        assert reply["type"] == "error" and reply["reason"] == "Forbidden"
        assert api.state()["resourceVersion"] == before
        # The fork is the student's own: there they may edit.
        page.locator("form[action$='/fork'] button").click()
        page.wait_for_selector("#ws-state[data-state=open]")
        expect(page.locator("[data-editor=create]")).to_be_visible()
        assert "/clusters/demo-" in page.url and page.url.rstrip("/") != api.url.rstrip("/")
    finally:
        context.close()
