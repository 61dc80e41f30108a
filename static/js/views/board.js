// The board: one card per node (labels, taints, bars, pods, this cycle's verdict) and the pending
// lane. Cards are keyed by node name and updated in place, so streaming never makes the layout jump.

import { h, keyed, replace } from "../lib/dom.js";
import { formatBytes, formatMilliCpu } from "../lib/quantity.js";
import { gettext, interpolate } from "../lib/i18n.js";
import { icon } from "../lib/icons.js";
import { deviceState, devicesOnNode } from "../model/devices.js";
import { deviceSection } from "./devices.js";
import { evictionIn, nodeUsage, nodes, objectKey, pendingPods, podStatus, podsOnNode, schedulingMessage } from "../model/cluster_state.js";
import { leaveNodeMap, renderNodeMap } from "./node_map.js"; // node map: more than COMPACT_ABOVE nodes
import { touchesPod } from "../model/lesson.js"; // lesson: the step's nodes and pods are lit

const COMPACT_ABOVE = 40;

function chip(kind, text, data, readOnly) {
  return h("span", { class: `chip chip-${kind}`, draggable: readOnly ? "false" : "true", dataset: data, title: text, tabindex: "0" }, text);
}

function taintChip(nodeName, taint, readOnly) {
  const text = `${taint.key}${taint.value ? "=" + taint.value : ""}:${taint.effect}`;
  const icon = { NoSchedule: "✕ ", PreferNoSchedule: "⚠ ", NoExecute: "⇥ " }[taint.effect] || "";
  return chip(`taint chip-${taint.effect}`, icon + text, {
    chip: "taint",
    node: nodeName,
    key: taint.key,
    value: taint.value || "",
    effect: taint.effect,
  }, readOnly);
}

function bar(label, used, total, format) {
  const pct = total > 0 ? Math.min(100, (used / total) * 100) : 0;
  return h(
    "div",
    { class: "bar", title: interpolate(gettext("%(resource)s: %(used)s requested of %(total)s allocatable"), { resource: label, used: format(used), total: format(total) }) },
    h("span", { class: "bar-label" }, label),
    h("span", { class: "bar-track" }, h("span", { class: `bar-fill${pct >= 100 ? " full" : ""}`, style: { width: `${pct}%` } })),
    h("span", { class: "bar-text" }, `${format(used)}/${format(total)}`),
  );
}

function podChip(pod, selectedPod, evictIn = null, victim = false, touched = null) {
  const status = podStatus(pod);
  const key = objectKey(pod);
  const priority = pod.spec.priority || 0;
  let title = `${key} · ${status}`;
  if (evictIn !== null) title += " · " + interpolate(gettext("evicted in %(seconds)ss (NoExecute taint, tolerationSeconds)"), { seconds: evictIn });
  if (victim) title += " · " + interpolate(gettext("preemption victim (priority %(priority)s)"), { priority });
  return h(
    "button",
    {
      class: `pod pod-${status}${key === selectedPod ? " selected" : ""}${evictIn !== null ? " evicting" : ""}${victim ? " victim" : ""}${touchesPod(touched, key) ? " touched" : ""}`,
      dataset: { pod: key },
      title,
      type: "button",
    },
    { Running: "● ", Pending: "◌ ", ContainerCreating: "◍ ", Terminating: "✕ " }[status] || "○ ",
    pod.metadata.name,
    victim ? h("span", { class: "priority" }, ` p${priority}`) : null,
    evictIn !== null ? h("span", { class: "countdown", dataset: { seconds: String(evictIn) } }, " ", icon("timer"), `${evictIn}s`) : null,
  );
}

// What the viewed cycle's preemption says about a node: nominated (with its victims), a candidate
// that lost, or nothing.
function preemptionOf(frame, name) {
  const e = frame && frame.preemption;
  if (!e) return null;
  const victimsOf = (list) => (list || []).map((v) => (typeof v === "string" ? { pod: v } : v));
  // `candidates`: one entry per candidate node, with its victims (pod, priority) and the
  // pickOneNodeForPreemption criterion that ruled it out (`eliminatedBy`).
  const mine = (e.candidates || []).find((c) => c.node === name);
  if (e.nominatedNode === name) return { nominated: true, victims: victimsOf(mine ? mine.victims : e.victims) };
  if (mine) return { nominated: false, victims: victimsOf(mine.victims), reason: mine.eliminatedBy || "" };
  return null;
}

function preemptionLine(info, state) {
  const names = info.victims.map((v) => {
    const pod = state.objects.Pod.get(v.pod);
    const priority = v.priority ?? (pod ? pod.spec.priority || 0 : "?");
    return h("s", { class: "victim-name", title: interpolate(gettext("victim, priority %(priority)s"), { priority }) }, `${v.pod.split("/").pop()} (p${priority})`);
  });
  const joined = names.flatMap((n, i) => (i ? [", ", n] : [n]));
  if (info.nominated) return h("div", { class: "preemption-line nominated" }, "◎ " + gettext("nominated: preemption evicts") + " ", joined);
  return h("div", { class: "preemption-line candidate" }, "⚔ " + gettext("candidate, not chosen"), info.reason ? ` (${info.reason})` : "", gettext(": would evict") + " ", joined);
}

function verdictLine(nodeName, frame, ui) {
  if (!frame) return h("div", { class: "verdict verdict-none" }, " ");
  if (ui.stale.has(nodeName)) {
    return h(
      "div",
      { class: "verdict verdict-stale" },
      "⟳ " + interpolate(gettext("changed since %(cycle)s"), { cycle: ui.verdictSource.label }) + " ",
      h("button", { type: "button", class: "reexplain", dataset: { reexplain: nodeName }, title: gettext("ask the scheduler again, with the cluster as it is now") }, gettext("re-explain")),
    );
  }
  const info = frame.nodes[nodeName];
  if (frame.winner === nodeName) {
    const total = info && info.total !== null ? ` ${info.total}` : "";
    return h("div", { class: "verdict verdict-winner" }, "★ " + gettext("selected") + total);
  }
  if (info && info.rejected) {
    const plugin = info.rejected.plugin || "PreFilter";
    return h(
      "div",
      { class: "verdict verdict-rejected", title: info.rejected.reasons.join(", ") },
      `✗ ${plugin}: ${info.rejected.reasons.join(", ")}`,
    );
  }
  if (info && info.total !== null) {
    const parts = Object.entries(info.scores)
      .filter(([, s]) => s.weighted !== undefined)
      .map(([, s]) => s.weighted);
    return h("div", { class: "verdict verdict-pass" }, `✓ ${info.total} = ${parts.join("+")}`);
  }
  if (info && info.failures.length) {
    const plugins = info.failures.map((f) => f.plugin).join(", ");
    return h("div", { class: "verdict verdict-failing" }, `✗ ${plugins} ` + gettext("(filters running)"));
  }
  if (frame.filterFinished) return h("div", { class: "verdict verdict-pass" }, "✓ " + gettext("passed filters"));
  if (!frame.finished && (frame.stage === "PreFilter" || frame.stage === "Filter")) {
    const ran = frame.filtersRan.length ? " " + interpolate(gettext("(%(count)s filters ran)"), { count: frame.filtersRan.length }) : "";
    return h("div", { class: "verdict verdict-waiting" }, icon("hourglass"), gettext("waiting for its filters") + ran);
  }
  return h("div", { class: "verdict verdict-none" }, " ");
}

function nodeCard(state, node, frame, ui) {
  const name = node.metadata.name;
  const usage = nodeUsage(state, node);
  const info = frame && frame.nodes[name];
  const classes = ["node-card"];
  if (node.spec.unschedulable) classes.push("cordoned");
  const preempt = preemptionOf(frame, name);
  if (preempt && preempt.nominated && !ui.stale.has(name)) classes.push("nominated");
  if (frame && ui.stale.has(name)) classes.push("stale");
  else if (frame && frame.winner === name) classes.push("winner");
  else if (info && info.rejected) classes.push("rejected");
  if (ui.selectedNode === name) classes.push("selected");
  if (ui.touched && ui.touched.nodes.has(name)) classes.push("touched");
  const capacity = ui.capacity && ui.capacity.get(name); // a capacity what-if: drained, or took pods
  if (capacity) classes.push(`capacity-${capacity.kind}`);
  const labels = Object.entries(node.metadata.labels || {}).filter(([k]) => ui.showSystemLabels || !k.startsWith("kubernetes.io/hostname"));
  return h(
    "article",
    { class: classes.join(" "), dataset: { node: name }, tabindex: "0", "aria-label": interpolate(gettext("node %(name)s"), { name }) },
    h(
      "header",
      {},
      h("span", { class: "node-name" }, name),
      node.spec.unschedulable ? h("span", { class: "badge badge-cordoned" }, gettext("cordoned")) : null,
      capacity ? capacityBadge(capacity) : null,
      h("button", { class: "cordon presenter-only", type: "button", dataset: { cordon: name }, title: node.spec.unschedulable ? gettext("uncordon") : gettext("cordon") }, node.spec.unschedulable ? gettext("uncordon") : gettext("cordon")),
      h("button", { class: "delete-node presenter-only", type: "button", dataset: { act: "delete-node", name }, title: interpolate(gettext("delete node %(name)s"), { name }), "aria-label": interpolate(gettext("delete node %(name)s"), { name }) }, "✕"),
    ),
    h("div", { class: "chips labels" }, labels.map(([k, v]) => chip("label", `${k}=${v}`, { chip: "label", node: name, key: k, value: v }, ui.readOnly))),
    h("div", { class: "chips taints" }, (node.spec.taints || []).map((t) => taintChip(name, t, ui.readOnly))),
    h(
      "div",
      { class: "bars" },
      usage ? bar(gettext("cpu"), usage.cpu.used, usage.cpu.total, formatMilliCpu) : null,
      usage ? bar(gettext("mem"), usage.memory.used, usage.memory.total, formatBytes) : null,
      usage ? bar(gettext("pods"), usage.pods.used, usage.pods.total, (v) => String(v)) : null,
    ),
    h(
      "div",
      { class: "pods" },
      podsOnNode(state, name).map((p) => {
        const key = objectKey(p);
        return podChip(p, ui.selectedPod, evictionIn(state, key), Boolean(preempt && preempt.nominated && preempt.victims.some((v) => v.pod === key)), ui.touched);
      }),
    ),
    deviceSection(state, name),
    preempt && !ui.stale.has(name) ? preemptionLine(preempt, state) : null,
    verdictLine(name, frame, ui),
  );
}

// What a capacity what-if did to a node: drained (its pods before → after), or the pods it took.
function capacityBadge(mark) {
  const text =
    mark.kind === "drained"
      ? interpolate(gettext("what-if: drained (%(before)s → %(after)s pods)"), { before: mark.before ?? 0, after: mark.after ?? 0 })
      : mark.delta > 0
        ? interpolate(gettext("what-if: +%(count)s pods"), { count: mark.delta })
        : interpolate(gettext("what-if: %(count)s pods"), { count: mark.delta });
  return h("span", { class: `badge badge-capacity badge-capacity-${mark.kind}` }, text);
}

function compactTile(node, frame, ui) {
  const name = node.metadata.name;
  const info = frame && frame.nodes[name];
  let cls = "tile";
  let mark = "";
  if (frame && ui.stale.has(name)) {
    cls += " stale";
    mark = "⟳";
  } else if (frame && frame.winner === name) {
    cls += " winner";
    mark = "★";
  } else if (info && info.rejected) {
    cls += " rejected";
    mark = "✗";
  } else if (info && info.total !== null) {
    cls += " pass";
    mark = "✓";
  }
  if (node.spec.unschedulable) cls += " cordoned";
  if (ui.selectedNode === name) cls += " selected";
  const capacity = ui.capacity && ui.capacity.get(name);
  if (capacity) cls += ` capacity-${capacity.kind}`;
  const title = info && info.rejected ? `${name}: ${info.rejected.plugin} ${info.rejected.reasons.join(", ")}` : name;
  return h("button", { class: cls, dataset: { node: name }, title, type: "button" }, mark ? `${mark} ` : "", name);
}

function matchesFilter(node, query) {
  if (!query) return true;
  const haystack = [
    node.metadata.name,
    ...Object.entries(node.metadata.labels || {}).map(([k, v]) => `${k}=${v}`),
    ...(node.spec.taints || []).map((t) => `${t.key}=${t.value || ""}:${t.effect}`),
  ].join(" ");
  return haystack.toLowerCase().includes(query.toLowerCase());
}

// What the lesson's shown step lights on one card: the node itself, and which of its pods.
function touchSig(touched, name, pods) {
  if (!touched) return null;
  return [touched.nodes.has(name), pods.filter(([key]) => touchesPod(touched, key)).map(([key]) => key)];
}

export function renderBoard(root, state, frame, ui) {
  // node map: above COMPACT_ABOVE nodes a canvas (node_map.js) replaces the tiles; the lane stays.
  const mapped = state.objects.Node.size > COMPACT_ABOVE;
  if (mapped) renderNodeMap(root, state, frame, ui);
  else leaveNodeMap(root);
  const all = mapped ? [] : nodes(state);
  const shown = all.filter((n) => matchesFilter(n, ui.nodeFilter));
  const compact = all.length > COMPACT_ABOVE || ui.compact;
  root.classList.toggle("compact", compact);
  const grid = root.querySelector(".node-grid");
  keyed(
    grid,
    shown.map((n) => {
      const name = n.metadata.name;
      const pods = compact ? [] : podsOnNode(state, name).map((p) => [objectKey(p), podStatus(p), evictionIn(state, objectKey(p))]);
      const sig = JSON.stringify([
        compact,
        n.metadata.resourceVersion,
        state.requested && state.requested.nodes[name],
        pods,
        frame && frame.nodes[name],
        frame && frame.preemption && frame.preemption.seq,
        frame && frame.winner === name,
        frame && frame.stage,
        frame && frame.filterFinished,
        frame && frame.plugin,
        frame && frame.filtersRan.length,
        ui.stale.has(name),
        ui.verdictSource && ui.verdictSource.label,
        ui.selectedNode === name,
        ui.selectedPod,
        ui.capacity && ui.capacity.get(name),
        ui.showSystemLabels,
        touchSig(ui.touched, name, pods),
        compact ? null : devicesOnNode(state, name).map((d) => [d.id, deviceState(d)]),
      ]);
      return { key: name, sig, build: () => (compact ? compactTile(n, frame, ui) : nodeCard(state, n, frame, ui)) };
    }),
  );
  if (!mapped) root.querySelector(".node-count").textContent = interpolate(gettext("%(shown)s/%(total)s nodes"), { shown: shown.length, total: all.length });
  renderVerdictSource(root.querySelector(".verdict-source"), ui);
  renderSelection(root.querySelector(".selection"), state, ui);
  const lane = root.querySelector(".pending-lane .pods");
  const pending = pendingPods(state);
  keyed(
    lane,
    pending.length
      ? pending.map((p) => {
          const key = objectKey(p);
          const message = schedulingMessage(p) || podStatus(p);
          return {
            key,
            sig: JSON.stringify([podStatus(p), message, key === ui.selectedPod, touchesPod(ui.touched, key)]),
            build: () =>
              h(
                "div",
                { class: "pending-pod" },
                podChip(p, ui.selectedPod, null, false, ui.touched),
                h("span", { class: "pending-message" }, message),
                h("button", { class: "why", type: "button", dataset: { why: key } }, gettext("why?")),
              ),
          };
        })
      : [{ key: "", sig: "", build: () => h("span", { class: "empty" }, gettext("no pending pods")) }],
  );
}

// Whose verdicts the cards show: the viewed cycle, its pod and age — or none (the cluster now).
function renderVerdictSource(el, ui) {
  const source = ui.verdictSource;
  const sig = JSON.stringify([source, ui.stale.size, ui.hideVerdicts]);
  if (el._sig === sig) return;
  el._sig = sig;
  if (!source) {
    replace(
      el,
      h("span", {}, gettext("the cluster now, no cycle's verdicts")),
      ui.hideVerdicts ? h("button", { type: "button", dataset: { verdicts: "show" } }, gettext("show verdicts")) : null,
    );
    return;
  }
  replace(
    el,
    h("strong", {}, interpolate(gettext("verdicts of %(cycle)s"), { cycle: source.label })),
    ` · ${source.pod} · ${source.age}`,
    ui.stale.size ? h("span", { class: "stale-count" }, " · " + interpolate(gettext("%(count)s node(s) changed since"), { count: ui.stale.size })) : null,
    " ",
    h("button", { type: "button", dataset: { verdicts: "hide" } }, gettext("hide verdicts")),
  );
}

// The Deployment a pod belongs to (pod → ReplicaSet → Deployment), or null.
function deploymentOf(state, pod) {
  const ns = pod.metadata.namespace || "default";
  const rsRef = (pod.metadata.ownerReferences || []).find((r) => r.kind === "ReplicaSet");
  const rs = rsRef && state.objects.ReplicaSet.get(`${ns}/${rsRef.name}`);
  const depRef = rs && (rs.metadata.ownerReferences || []).find((r) => r.kind === "Deployment");
  return (depRef && state.objects.Deployment.get(`${ns}/${depRef.name}`)) || null;
}

// What can be done to the selection: delete the pod, scale its Deployment.
function renderSelection(el, state, ui) {
  const pod = ui.selectedPod ? state.objects.Pod.get(ui.selectedPod) : null;
  const deployment = pod ? deploymentOf(state, pod) : null;
  const sig = JSON.stringify([ui.selectedPod, pod && pod.metadata.resourceVersion, deployment && deployment.metadata.resourceVersion, ui.readOnly]);
  if (el._sig === sig) return;
  el._sig = sig;
  if (!pod || ui.readOnly) {
    replace(el);
    return;
  }
  const ns = pod.metadata.namespace || "default";
  const parts = [h("span", {}, interpolate(gettext("pod %(name)s"), { name: objectKey(pod) }) + " "), h("button", { type: "button", dataset: { act: "delete-pod", name: pod.metadata.name, namespace: ns } }, gettext("delete pod"))];
  if (deployment) {
    const replicas = deployment.spec.replicas ?? 1;
    const scale = (n) => ({ act: "scale", name: deployment.metadata.name, namespace: ns, replicas: String(n) });
    parts.push(
      h("span", { class: "scale" }, " · " + interpolate(gettext("deployment %(name)s:"), { name: deployment.metadata.name }) + " "),
      h("button", { type: "button", dataset: scale(replicas - 1), "aria-label": gettext("scale down"), disabled: replicas <= 0 }, "−"),
      h("span", { class: "replicas" }, " " + interpolate(gettext("%(count)s replicas"), { count: replicas }) + " "),
      h("button", { type: "button", dataset: scale(replicas + 1), "aria-label": gettext("scale up") }, "+"),
    );
  }
  replace(el, parts);
}
