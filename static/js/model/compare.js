// Compare: one pod explained by the server under two profiles, lined up node by node.
// Pure: the inputs are two `explain -o json` results; no scheduling rule is re-derived here.

import { gettext, interpolate } from "../lib/i18n.js";

// A node's verdict in one explanation: the winner, feasible (with its total), rejected (by whom), or
// not evaluated (left out by PreFilter or sampling).
export function verdictOf(explanation, node) {
  const entry = explanation.nodes && explanation.nodes[node];
  if (!entry) return { kind: "absent", text: gettext("not in the cluster") };
  if (explanation.selectedNode === node) return { kind: "winner", text: interpolate(gettext("★ winner (%(total)s)"), { total: entry.total }) };
  if (entry.feasible) return { kind: "feasible", text: entry.total === null ? gettext("feasible") : interpolate(gettext("feasible (%(total)s)"), { total: entry.total }) };
  if (entry.filter) {
    const reason = entry.filter.reasons && entry.filter.reasons.length ? `: ${entry.filter.reasons.join(", ")}` : "";
    return { kind: "rejected", text: interpolate(gettext("rejected by %(plugin)s%(reason)s"), { plugin: entry.filter.plugin, reason }) };
  }
  return { kind: "rejected", text: gettext("not evaluated") };
}

function naturalCompare(a, b) {
  return a.localeCompare(b, undefined, { numeric: true });
}

function weighted(entry, plugin) {
  const s = entry && entry.scores && entry.scores[plugin];
  return s ? { normalized: s.normalized, weight: s.weight, weighted: s.weighted } : null;
}

// Per node: both totals, both verdicts and every score plugin's normalized × weight on each side.
function nodeRow(a, b, node) {
  const ea = a.nodes[node];
  const eb = b.nodes[node];
  const plugins = [...new Set([...Object.keys((ea && ea.scores) || {}), ...Object.keys((eb && eb.scores) || {})])];
  const va = verdictOf(a, node);
  const vb = verdictOf(b, node);
  const totalA = ea && ea.total !== undefined ? ea.total : null;
  const totalB = eb && eb.total !== undefined ? eb.total : null;
  return {
    node,
    a: { total: totalA, verdict: va },
    b: { total: totalB, verdict: vb },
    delta: totalA !== null && totalB !== null ? totalB - totalA : null,
    verdictChanged: va.kind !== vb.kind,
    plugins: plugins.map((name) => {
      const sa = weighted(ea, name);
      const sb = weighted(eb, name);
      return { name, a: sa, b: sb, delta: sa && sb ? sb.weighted - sa.weighted : null };
    }),
  };
}

// The best total a node reached on either side (unscored nodes last).
function bestTotal(row) {
  const totals = [row.a.total, row.b.total].filter((t) => t !== null);
  return totals.length ? Math.max(...totals) : -Infinity;
}

/**
 * Line up two explanations of the same pod.
 * Returns the two winners, whether they differ, the top `top` nodes (best total on either side first,
 * the winners always among them) with per-plugin differences, and every node whose verdict changed.
 */
export function compareExplanations(a, b, { top = 10 } = {}) {
  const names = [...new Set([...Object.keys(a.nodes || {}), ...Object.keys(b.nodes || {})])].sort(naturalCompare);
  const rows = names.map((node) => nodeRow(a, b, node));
  rows.sort((x, y) => bestTotal(y) - bestTotal(x) || naturalCompare(x.node, y.node));
  const winners = new Set([a.selectedNode, b.selectedNode].filter(Boolean));
  const shown = rows.slice(0, top);
  for (const row of rows.slice(top)) if (winners.has(row.node)) shown.push(row);
  return {
    a: { winner: a.selectedNode || null, message: a.message || "", scheduled: !!a.scheduled, schedulerName: a.schedulerName },
    b: { winner: b.selectedNode || null, message: b.message || "", scheduled: !!b.scheduled, schedulerName: b.schedulerName },
    differentWinner: (a.selectedNode || null) !== (b.selectedNode || null),
    rows: shown,
    hidden: rows.length - shown.length,
    verdictChanges: rows.filter((row) => row.verdictChanged),
  };
}
