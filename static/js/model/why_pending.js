// "Why Pending" in plain words, folded from a cycle's frame (the core's events): the nodes grouped
// by the status upstream records for them, each group with what would fix it. Every fact comes
// from the core — the recorded plugin (`filter.finished`), the untolerated taint, the missing
// labels and the requested / used / allocatable figures (the Filter plugins' `detail`). Nothing
// here re-derives a scheduling rule. Pure functions, no DOM.

import { gettext, interpolate, ngettext } from "../lib/i18n.js";
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

function taintFix(taint, nodes) {
  return {
    text: interpolate(
      ngettext("%(nodes)s has taint %(taint)s — add this toleration to the pod", "%(nodes)s have taint %(taint)s — add this toleration to the pod", nodes.length),
      { nodes: nodes.join(", "), taint: taintText(taint) },
    ),
    snippet: tolerationSnippet(taint),
    command: nodes.map((n) => `kubectl taint node ${n} ${taint.key}:${taint.effect}-`).join("; "),
  };
}

function explainTaint(frame, group) {
  const detail = frame.detail.TaintToleration || {};
  // v1.35+: one reason for every taint; the core says which nodes have which
  if (detail.taintNodes) {
    const mine = new Set(group.nodes);
    return detail.taintNodes
      .map((t) => [t, t.nodes.filter((n) => mine.has(n))])
      .filter(([, nodes]) => nodes.length)
      .map(([t, nodes]) => taintFix(t, nodes));
  }
  const taint = (detail.taints || {})[group.reason];
  return taint ? [taintFix(taint, group.nodes)] : null;
}

function explainAffinity(frame, group) {
  const missing = (frame.detail.NodeAffinity || {}).missingLabels || [];
  return group.nodes.map((name) => {
    const lacks = missing.filter((m) => m.nodes.includes(name)).map((m) => `${m.key}=${m.value}`);
    if (!lacks.length) return { text: interpolate(gettext("%(node)s does not satisfy the pod's required node affinity terms"), { node: name }) };
    return {
      text: interpolate(gettext("%(node)s lacks label %(labels)s that the pod's nodeSelector asks for"), { node: name, labels: lacks.join(" ") }),
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
    text: interpolate(gettext("needs %(request)s, the freest of these nodes (%(node)s) has %(free)s free of %(total)s"), {
      request: fmt(request),
      node: freest.name,
      free: fmt(Math.max(0, freest.free)),
      total: fmt(freest.total),
    }),
  };
  if (frame.nominatedNode) item.fix = interpolate(gettext("preemption is making room on %(node)s: the pod waits for its victims to leave"), { node: frame.nominatedNode });
  else item.fix = gettext("lower the pod's request, free capacity (delete pods), or add a bigger node");
  return [item];
}

// Keyed by upstream's reason (kept as the scheduler writes it); the plain words are translated when
// asked for.
const PLAIN = {
  "node(s) were unschedulable": (nodes) =>
    nodes.map((n) => ({ text: interpolate(gettext("%(node)s is cordoned (spec.unschedulable)"), { node: n }), command: `kubectl uncordon ${n}` })),
  "node(s) didn't have free ports for the requested pod ports": (nodes) =>
    nodes.map((n) => ({ text: interpolate(gettext("a pod on %(node)s already uses the same hostPort"), { node: n }), fix: gettext("choose another hostPort or drop it") })),
  "node(s) didn't match the requested node name": (nodes) => nodes.map((n) => ({ text: interpolate(gettext("spec.nodeName asks for another node than %(node)s"), { node: n }) })),
  "node(s) didn't match pod topology spread constraints": (nodes) => [
    {
      text: interpolate(gettext("placing it on %(nodes)s would skew the spread beyond maxSkew"), { nodes: nodes.join(", ") }),
      fix: gettext("add room in another topology domain, raise maxSkew, or use whenUnsatisfiable: ScheduleAnyway"),
    },
  ],
  "node(s) didn't match pod topology spread constraints (missing required label)": (nodes) => [
    { text: interpolate(gettext("%(nodes)s lack the constraint's topologyKey label"), { nodes: nodes.join(", ") }) },
  ],
  "node(s) didn't match pod affinity rules": (nodes) => [
    { text: interpolate(gettext("no pod matching the pod's required affinity runs in the topology of %(nodes)s"), { nodes: nodes.join(", ") }) },
  ],
  "node(s) didn't match pod anti-affinity rules": (nodes) => [
    { text: interpolate(gettext("a pod matching the pod's required anti-affinity already runs in the topology of %(nodes)s"), { nodes: nodes.join(", ") }) },
  ],
  "node(s) didn't satisfy existing pods anti-affinity rules": (nodes) => [
    { text: interpolate(gettext("a pod already on %(nodes)s has an anti-affinity rule that forbids this pod"), { nodes: nodes.join(", ") }) },
  ],
  "Too many pods": (nodes) => nodes.map((n) => ({ text: interpolate(gettext("%(node)s already runs as many pods as its allocatable pods allows"), { node: n }) })),
};

const BY_PLUGIN = { TaintToleration: explainTaint, NodeAffinity: explainAffinity, NodeResourcesFit: explainResources };

// Groups of nodes by the (plugin, reason) upstream records, largest first, each with plain words.
export function whyPending(frame) {
  if (frame.preFilter) {
    const group = { plugin: frame.preFilter.plugin, reason: frame.preFilter.reasons.join(", "), nodes: [] };
    return { message: frame.message, scheduled: false, groups: [{ ...group, items: [{ text: gettext("PreFilter rejected the pod before any node was looked at") }] }], preemption: preemption(frame) };
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
    const victims = (event && event.victims.length ? event.victims : []).join(", ") || gettext("lower-priority pods");
    return { text: interpolate(gettext("Preemption makes room on %(node)s by evicting %(victims)s; the pod is nominated there."), { node, victims }), nominated: node };
  }
  if (!frame.postFilter || frame.postFilter.code === "Success") return null;
  const parts = [];
  if (event) {
    if (event.notHelpful.length) {
      parts.push(
        interpolate(gettext("on %(nodes)s the reasons are ones evicting pods cannot fix (taints, labels, cordon, ports, or a request larger than the whole node)"), {
          nodes: event.notHelpful.join(", "),
        }),
      );
    }
    const byReason = new Map();
    for (const [name, status] of Object.entries(event.statuses || {})) {
      const reason = (status.reasons || []).join(", ");
      if (!byReason.has(reason)) byReason.set(reason, []);
      byReason.get(reason).push(name);
    }
    for (const [reason, nodes] of byReason) parts.push(interpolate(gettext("on %(nodes)s: %(reason)s"), { nodes: nodes.sort().join(", "), reason }));
  }
  return {
    text: parts.length ? interpolate(gettext("Why preemption did not help: %(reasons)s."), { reasons: parts.join("; ") }) : gettext("Preemption did not help."),
    status: (frame.postFilter.reasons || []).join(", "),
  };
}
