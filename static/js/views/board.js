// The board: one card per node (labels, taints, bars, pods, this cycle's verdict) and the pending
// lane. Cards are keyed by node name and updated in place, so streaming never makes the layout jump.

import { h, keyed } from "../lib/dom.js";
import { formatBytes, formatCpu } from "../lib/quantity.js";
import { nodeUsage, nodes, objectKey, pendingPods, podStatus, podsOnNode, schedulingMessage } from "../model/cluster_state.js";
import { leaveNodeMap, renderNodeMap } from "./node_map.js"; // node map: more than COMPACT_ABOVE nodes

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
    { class: "bar", title: `${label}: ${format(used)} requested of ${format(total)} allocatable` },
    h("span", { class: "bar-label" }, label),
    h("span", { class: "bar-track" }, h("span", { class: `bar-fill${pct >= 100 ? " full" : ""}`, style: { width: `${pct}%` } })),
    h("span", { class: "bar-text" }, `${format(used)}/${format(total)}`),
  );
}

function podChip(pod, selectedPod) {
  const status = podStatus(pod);
  const key = objectKey(pod);
  return h(
    "button",
    {
      class: `pod pod-${status}${key === selectedPod ? " selected" : ""}`,
      dataset: { pod: key },
      title: `${key} · ${status}`,
      type: "button",
    },
    { Running: "● ", Pending: "◌ ", ContainerCreating: "◍ ", Terminating: "✕ " }[status] || "○ ",
    pod.metadata.name,
  );
}

function verdictLine(nodeName, frame) {
  if (!frame) return h("div", { class: "verdict verdict-none" }, " ");
  const info = frame.nodes[nodeName];
  if (frame.winner === nodeName) {
    const total = info && info.total !== null ? ` ${info.total}` : "";
    return h("div", { class: "verdict verdict-winner" }, `★ selected${total}`);
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
  if (frame.done.has("Filter") || frame.stage === "Filter") return h("div", { class: "verdict verdict-pass" }, "✓ passed filters");
  return h("div", { class: "verdict verdict-none" }, " ");
}

function nodeCard(state, node, frame, ui) {
  const name = node.metadata.name;
  const usage = nodeUsage(state, node);
  const info = frame && frame.nodes[name];
  const classes = ["node-card"];
  if (node.spec.unschedulable) classes.push("cordoned");
  if (frame && frame.winner === name) classes.push("winner");
  else if (info && info.rejected) classes.push("rejected");
  if (ui.selectedNode === name) classes.push("selected");
  const labels = Object.entries(node.metadata.labels || {}).filter(([k]) => ui.showSystemLabels || !k.startsWith("kubernetes.io/hostname"));
  return h(
    "article",
    { class: classes.join(" "), dataset: { node: name }, tabindex: "0", "aria-label": `node ${name}` },
    h(
      "header",
      {},
      h("span", { class: "node-name" }, name),
      node.spec.unschedulable ? h("span", { class: "badge badge-cordoned" }, "cordoned") : null,
      h("button", { class: "cordon presenter-only", type: "button", dataset: { cordon: name }, title: node.spec.unschedulable ? "uncordon" : "cordon" }, node.spec.unschedulable ? "uncordon" : "cordon"),
    ),
    h("div", { class: "chips labels" }, labels.map(([k, v]) => chip("label", `${k}=${v}`, { chip: "label", node: name, key: k, value: v }, ui.readOnly))),
    h("div", { class: "chips taints" }, (node.spec.taints || []).map((t) => taintChip(name, t, ui.readOnly))),
    h(
      "div",
      { class: "bars" },
      bar("cpu", usage.cpu.used, usage.cpu.total, formatCpu),
      bar("mem", usage.memory.used, usage.memory.total, formatBytes),
      bar("pods", usage.pods.used, usage.pods.total, (v) => String(Math.round(v))),
    ),
    h("div", { class: "pods" }, podsOnNode(state, name).map((p) => podChip(p, ui.selectedPod))),
    verdictLine(name, frame),
  );
}

function compactTile(node, frame, ui) {
  const name = node.metadata.name;
  const info = frame && frame.nodes[name];
  let cls = "tile";
  let mark = "";
  if (frame && frame.winner === name) {
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
      const pods = compact ? [] : podsOnNode(state, name).map((p) => [objectKey(p), podStatus(p)]);
      const sig = JSON.stringify([
        compact,
        n.metadata.resourceVersion,
        pods,
        frame && frame.nodes[name],
        frame && frame.winner === name,
        frame && frame.stage,
        ui.selectedNode === name,
        ui.selectedPod,
        ui.showSystemLabels,
      ]);
      return { key: name, sig, build: () => (compact ? compactTile(n, frame, ui) : nodeCard(state, n, frame, ui)) };
    }),
  );
  if (!mapped) root.querySelector(".node-count").textContent = `${shown.length}/${all.length} nodes`;
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
            sig: JSON.stringify([podStatus(p), message, key === ui.selectedPod]),
            build: () =>
              h(
                "div",
                { class: "pending-pod" },
                podChip(p, ui.selectedPod),
                h("span", { class: "pending-message" }, message),
                h("button", { class: "why", type: "button", dataset: { why: key } }, "why?"),
              ),
          };
        })
      : [{ key: "", sig: "", build: () => h("span", { class: "empty" }, "no pending pods") }],
  );
}
