// "Why Pending" in plain words: the explanation of a pending pod (the server's what-if), grouped by
// the reason upstream reports, with what would fix it. Pure functions, no DOM.

import { formatBytes, formatCpu, parseQuantity } from "../lib/quantity.js";
import { nodeUsage } from "./cluster_state.js";

function podRequest(pod, resource) {
  let total = 0;
  for (const c of pod.spec.containers || []) total += parseQuantity(((c.resources || {}).requests || {})[resource]);
  for (const c of pod.spec.initContainers || []) {
    total = Math.max(total, parseQuantity(((c.resources || {}).requests || {})[resource]));
  }
  return total;
}

function quote(value) {
  return JSON.stringify(String(value));
}

function tolerationSnippet(taint) {
  const lines = ["tolerations:", `- key: ${quote(taint.key)}`];
  if (taint.value) lines.push('  operator: "Equal"', `  value: ${quote(taint.value)}`);
  else lines.push('  operator: "Exists"');
  lines.push(`  effect: ${quote(taint.effect)}`);
  return lines.join("\n");
}

function nodeObject(state, name) {
  return state.objects.Node.get(name);
}

function explainTaint(state, names, reason) {
  const m = /untolerated taint \{(.*?): (.*)\}$/.exec(reason);
  const byTaint = new Map();
  for (const name of names) {
    const node = nodeObject(state, name);
    const taint =
      ((node && node.spec.taints) || []).find(
        (t) => m && t.key === m[1] && (t.value || "") === m[2] && t.effect !== "PreferNoSchedule",
      ) || (m ? { key: m[1], value: m[2], effect: "NoSchedule" } : null);
    if (!taint) continue;
    const shown = `${taint.key}${taint.value ? "=" + taint.value : ""}:${taint.effect}`;
    if (!byTaint.has(shown)) byTaint.set(shown, { taint, nodes: [] });
    byTaint.get(shown).nodes.push(name);
  }
  return [...byTaint.entries()].map(([shown, { taint, nodes }]) => ({
    text: `${nodes.join(", ")} ${nodes.length > 1 ? "have" : "has"} taint ${shown} — add this toleration to the pod`,
    snippet: tolerationSnippet(taint),
    command: nodes.map((n) => `kubectl taint node ${n} ${taint.key}:${taint.effect}-`).join("; "),
  }));
}

function explainSelector(state, pod, names) {
  const selector = pod.spec.nodeSelector || {};
  const items = [];
  for (const name of names) {
    const labels = (nodeObject(state, name) || { metadata: {} }).metadata.labels || {};
    const missing = Object.entries(selector).filter(([k, v]) => labels[k] !== v);
    if (missing.length) {
      const wanted = missing.map(([k, v]) => `${k}=${v}`).join(" ");
      items.push({
        text: `${name} lacks label ${wanted} that the pod's nodeSelector asks for`,
        command: `kubectl label nodes ${name} ${wanted}`,
      });
    } else {
      items.push({ text: `${name} does not satisfy the pod's required node affinity terms` });
    }
  }
  return items;
}

function explainResources(state, pod, names, resource) {
  const request = podRequest(pod, resource);
  let freest = null;
  for (const name of names) {
    const node = nodeObject(state, name);
    if (!node) continue;
    const usage = nodeUsage(state, node)[resource === "cpu" ? "cpu" : "memory"];
    const free = usage.total - usage.used;
    if (!freest || free > freest.free) freest = { name, free, total: usage.total };
  }
  const fmt = resource === "cpu" ? (v) => `${formatCpu(v)} CPU` : (v) => formatBytes(v);
  if (!freest) return [{ text: `the pod needs ${fmt(request)}` }];
  return [
    {
      text: `needs ${fmt(request)}, the freest node (${freest.name}) has ${fmt(Math.max(0, freest.free))} free of ${fmt(freest.total)}`,
      fix: "lower the pod's request, free capacity (delete pods), or add a bigger node",
    },
  ];
}

const PLAIN = {
  "node(s) were unschedulable": (names) =>
    names.map((n) => ({ text: `${n} is cordoned (spec.unschedulable)`, command: `kubectl uncordon ${n}` })),
  "node(s) didn't have free ports for the requested pod ports": (names) =>
    names.map((n) => ({ text: `a pod on ${n} already uses the same hostPort`, fix: "choose another hostPort or drop it" })),
  "node(s) didn't match the requested node name": (names) =>
    names.map((n) => ({ text: `spec.nodeName asks for another node than ${n}` })),
  "node(s) didn't match pod topology spread constraints": (names) => [
    { text: `placing it on ${names.join(", ")} would skew the spread beyond maxSkew`, fix: "add room in another topology domain, raise maxSkew, or use whenUnsatisfiable: ScheduleAnyway" },
  ],
  "node(s) didn't match pod topology spread constraints (missing required label)": (names) => [
    { text: `${names.join(", ")} lack the constraint's topologyKey label` },
  ],
  "node(s) didn't match pod affinity rules": (names) => [
    { text: `no pod matching the pod's required affinity runs in the topology of ${names.join(", ")}` },
  ],
  "node(s) didn't match pod anti-affinity rules": (names) => [
    { text: `a pod matching the pod's required anti-affinity already runs in the topology of ${names.join(", ")}` },
  ],
  "node(s) didn't satisfy existing pods anti-affinity rules": (names) => [
    { text: `a pod already on ${names.join(", ")} has an anti-affinity rule that forbids this pod` },
  ],
  "Too many pods": (names) => names.map((n) => ({ text: `${n} already runs as many pods as its allocatable pods allows` })),
};

// Groups of nodes by the reason upstream reports, each with plain-language items.
export function whyPending(explanation, pod, state) {
  const groups = new Map();
  if (explanation.preFilter) {
    return {
      message: explanation.message,
      groups: [{ plugin: explanation.preFilter.plugin, reason: explanation.preFilter.reasons.join(", "), nodes: [], items: [{ text: "PreFilter rejected the pod before any node was looked at" }] }],
      preemption: preemptionText(explanation, pod),
    };
  }
  for (const [name, node] of Object.entries(explanation.nodes || {})) {
    if (!node.filter) continue;
    for (const reason of node.filter.reasons) {
      const key = `${node.filter.plugin}|${reason}`;
      if (!groups.has(key)) groups.set(key, { plugin: node.filter.plugin, reason, code: node.filter.code, nodes: [] });
      groups.get(key).nodes.push(name);
    }
  }
  const out = [];
  for (const group of groups.values()) {
    let items;
    if (group.plugin === "TaintToleration") items = explainTaint(state, group.nodes, group.reason);
    else if (group.plugin === "NodeAffinity" && group.reason.includes("affinity/selector")) items = explainSelector(state, pod, group.nodes);
    else if (group.reason === "Insufficient cpu") items = explainResources(state, pod, group.nodes, "cpu");
    else if (group.reason === "Insufficient memory") items = explainResources(state, pod, group.nodes, "memory");
    else if (PLAIN[group.reason]) items = PLAIN[group.reason](group.nodes);
    else items = [{ text: `${group.nodes.join(", ")}: ${group.reason}` }];
    out.push({ ...group, items });
  }
  out.sort((a, b) => b.nodes.length - a.nodes.length || a.reason.localeCompare(b.reason));
  return { message: explanation.message, groups: out, preemption: preemptionText(explanation, pod) };
}

export function preemptionText(explanation, pod) {
  if (explanation.nominatedNode) {
    const victims = (explanation.victims || []).join(", ") || "lower-priority pods";
    return `Preemption makes room on ${explanation.nominatedNode} by evicting ${victims}; the pod is nominated there.`;
  }
  const message = (explanation.postFilter && explanation.postFilter.reasons.join(", ")) || explanation.message || "";
  if (message.includes("preemptionPolicy=Never")) return "Preemption did not help: the pod has preemptionPolicy: Never.";
  const parts = [];
  if (message.includes("No preemption victims found")) {
    parts.push(`on some nodes every pod has a priority at least as high as this pod's (${pod.spec.priority || 0}), so there is nothing to evict`);
  }
  if (message.includes("Preemption is not helpful")) {
    parts.push("some nodes were rejected for reasons that evicting pods cannot fix (taints, labels, cordon, ports, or a request larger than the whole node)");
  }
  if (/preemption: 0\/\d+ nodes are available: .*Insufficient/.test(message)) {
    parts.push("even with every lower-priority pod gone, some nodes would still lack resources");
  }
  if (!parts.length) return "";
  return "Why preemption did not help: " + parts.join("; ") + ".";
}
