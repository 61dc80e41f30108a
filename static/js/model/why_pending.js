// "Why Pending" in plain words, folded from a cycle's frame (the core's events): the nodes grouped
// by the status upstream records for them, each group with what would fix it. Every fact comes
// from the core — the recorded plugin (`filter.finished`), the untolerated taint, the missing
// labels and the requested / used / allocatable figures (the Filter plugins' `detail`). Nothing
// here re-derives a scheduling rule. Pure functions, no DOM.

import { formatResource } from "../lib/quantity.js";

function quote(value) {
  return JSON.stringify(String(value));
}

export function tolerationSnippet(taint) {
  const lines = ["tolerations:", `- key: ${quote(taint.key)}`];
  if (taint.value) lines.push('  operator: "Equal"', `  value: ${quote(taint.value)}`);
  else lines.push('  operator: "Exists"');
  lines.push(`  effect: ${quote(taint.effect)}`);
  return lines.join("\n");
}

function taintText(taint) {
  return `${taint.key}${taint.value ? "=" + taint.value : ""}:${taint.effect}`;
}

function explainTaint(frame, group) {
  const taint = ((frame.detail.TaintToleration || {}).taints || {})[group.reason];
  if (!taint) return null;
  const many = group.nodes.length > 1;
  return [
    {
      text: `${group.nodes.join(", ")} ${many ? "have" : "has"} taint ${taintText(taint)} — add this toleration to the pod`,
      snippet: tolerationSnippet(taint),
      command: group.nodes.map((n) => `kubectl taint node ${n} ${taint.key}:${taint.effect}-`).join("; "),
    },
  ];
}

function explainAffinity(frame, group) {
  const missing = (frame.detail.NodeAffinity || {}).missingLabels || [];
  return group.nodes.map((name) => {
    const lacks = missing.filter((m) => m.nodes.includes(name)).map((m) => `${m.key}=${m.value}`);
    if (!lacks.length) return { text: `${name} does not satisfy the pod's required node affinity terms` };
    return {
      text: `${name} lacks label ${lacks.join(" ")} that the pod's nodeSelector asks for`,
      command: `kubectl label nodes ${name} ${lacks.join(" ")}`,
    };
  });
}

// The resource a NodeResourcesFit reason names: the core's detail is keyed by resource, and upstream's
// reason is exactly "Insufficient <resource>".
function explainResources(frame, group) {
  const detail = frame.detail.NodeResourcesFit || {};
  const resource = Object.keys(detail).find((r) => group.reason === `Insufficient ${r}`);
  if (!resource) return null;
  const { request, used, allocatable } = detail[resource];
  const fmt = (v) => formatResource(resource, v);
  let freest = null;
  for (const name of group.nodes) {
    const free = allocatable[name] - used[name];
    if (!freest || free > freest.free) freest = { name, free, total: allocatable[name] };
  }
  const item = {
    text: `needs ${fmt(request)}, the freest of these nodes (${freest.name}) has ${fmt(Math.max(0, freest.free))} free of ${fmt(freest.total)}`,
  };
  if (frame.nominatedNode) item.fix = `preemption is making room on ${frame.nominatedNode}: the pod waits for its victims to leave`;
  else item.fix = "lower the pod's request, free capacity (delete pods), or add a bigger node";
  return [item];
}

const PLAIN = {
  "node(s) were unschedulable": (nodes) =>
    nodes.map((n) => ({ text: `${n} is cordoned (spec.unschedulable)`, command: `kubectl uncordon ${n}` })),
  "node(s) didn't have free ports for the requested pod ports": (nodes) =>
    nodes.map((n) => ({ text: `a pod on ${n} already uses the same hostPort`, fix: "choose another hostPort or drop it" })),
  "node(s) didn't match the requested node name": (nodes) => nodes.map((n) => ({ text: `spec.nodeName asks for another node than ${n}` })),
  "node(s) didn't match pod topology spread constraints": (nodes) => [
    { text: `placing it on ${nodes.join(", ")} would skew the spread beyond maxSkew`, fix: "add room in another topology domain, raise maxSkew, or use whenUnsatisfiable: ScheduleAnyway" },
  ],
  "node(s) didn't match pod topology spread constraints (missing required label)": (nodes) => [{ text: `${nodes.join(", ")} lack the constraint's topologyKey label` }],
  "node(s) didn't match pod affinity rules": (nodes) => [{ text: `no pod matching the pod's required affinity runs in the topology of ${nodes.join(", ")}` }],
  "node(s) didn't match pod anti-affinity rules": (nodes) => [{ text: `a pod matching the pod's required anti-affinity already runs in the topology of ${nodes.join(", ")}` }],
  "node(s) didn't satisfy existing pods anti-affinity rules": (nodes) => [{ text: `a pod already on ${nodes.join(", ")} has an anti-affinity rule that forbids this pod` }],
  "Too many pods": (nodes) => nodes.map((n) => ({ text: `${n} already runs as many pods as its allocatable pods allows` })),
};

const BY_PLUGIN = { TaintToleration: explainTaint, NodeAffinity: explainAffinity, NodeResourcesFit: explainResources };

// Groups of nodes by the (plugin, reason) upstream records, largest first, each with plain words.
export function whyPending(frame) {
  if (frame.preFilter) {
    const group = { plugin: frame.preFilter.plugin, reason: frame.preFilter.reasons.join(", "), nodes: [] };
    return { message: frame.message, scheduled: false, groups: [{ ...group, items: [{ text: "PreFilter rejected the pod before any node was looked at" }] }], preemption: preemption(frame) };
  }
  const groups = new Map();
  for (const [name, node] of Object.entries(frame.nodes)) {
    if (!node.rejected) continue;
    for (const reason of node.rejected.reasons) {
      const key = `${node.rejected.plugin}|${reason}`;
      if (!groups.has(key)) groups.set(key, { plugin: node.rejected.plugin, reason, code: node.rejected.code, nodes: [] });
      groups.get(key).nodes.push(name);
    }
  }
  const out = [];
  for (const group of groups.values()) {
    group.nodes.sort();
    const explainer = BY_PLUGIN[group.plugin];
    const items =
      (explainer && explainer(frame, group)) ||
      (PLAIN[group.reason] && PLAIN[group.reason](group.nodes)) || [{ text: `${group.nodes.join(", ")}: ${group.reason}` }];
    out.push({ ...group, items });
  }
  out.sort((a, b) => b.nodes.length - a.nodes.length || a.reason.localeCompare(b.reason));
  return { message: frame.message, scheduled: frame.scheduled, winner: frame.winner, groups: out, preemption: preemption(frame) };
}

// Preemption in plain words, from the core's `preemption.evaluated` event and PostFilter status.
export function preemption(frame) {
  const event = frame.preemption;
  if (frame.nominatedNode || (event && event.nominatedNode)) {
    const node = frame.nominatedNode || event.nominatedNode;
    const victims = (event && event.victims.length ? event.victims : []).join(", ") || "lower-priority pods";
    return { text: `Preemption makes room on ${node} by evicting ${victims}; the pod is nominated there.`, nominated: node };
  }
  if (!frame.postFilter || frame.postFilter.code === "Success") return null;
  const parts = [];
  if (event) {
    if (event.notHelpful.length) {
      parts.push(`on ${event.notHelpful.join(", ")} the reasons are ones evicting pods cannot fix (taints, labels, cordon, ports, or a request larger than the whole node)`);
    }
    const byReason = new Map();
    for (const [name, status] of Object.entries(event.statuses || {})) {
      const reason = (status.reasons || []).join(", ");
      if (!byReason.has(reason)) byReason.set(reason, []);
      byReason.get(reason).push(name);
    }
    for (const [reason, nodes] of byReason) parts.push(`on ${nodes.sort().join(", ")}: ${reason}`);
  }
  return {
    text: parts.length ? `Why preemption did not help: ${parts.join("; ")}.` : "Preemption did not help.",
    status: (frame.postFilter.reasons || []).join(", "),
  };
}
