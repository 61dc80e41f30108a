// The node map's pure model (no DOM): natural order of names, grouping by a label or by rejection
// reason, search, each node's verdict and value under the chosen colouring, the grid layout with hit
// testing and keyboard moves, and the what-if scoreboard's top nodes and reason tally.

import { gettext, interpolate } from "../lib/i18n.js";

// Label keys worth grouping by, in the order they are offered (the first present is the default).
export const GROUP_KEYS = [
  "topology.kubernetes.io/zone",
  "node.kubernetes.io/instance-type",
  "eks.amazonaws.com/nodegroup",
  "cloud.google.com/gke-nodepool",
  "kubernetes.azure.com/agentpool",
  "karpenter.sh/nodepool",
  "topology.kubernetes.io/region",
];
export const BY_REASON = "reason"; // the "show only rejected, grouped by reason" grouping
export const COLOURINGS = ["verdict", "score", "cpu", "memory", "pods"];

// `ip-10-0-0-2` before `ip-10-0-0-10`: runs of digits compare as numbers, the rest as text.
const CHUNK = /(\d+)/;
const PARTS = new Map(); // name → its chunks: a sort of 5,000 names splits each once, not at every comparison
function partsOf(text) {
  let parts = PARTS.get(text);
  if (!parts) {
    if (PARTS.size >= 100_000) PARTS.clear();
    parts = text.split(CHUNK);
    PARTS.set(text, parts);
  }
  return parts;
}

export function naturalCompare(a, b) {
  if (a === b) return 0;
  return compareParts(partsOf(a), partsOf(b));
}

function compareParts(x, y) {
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    if (x[i] === y[i]) continue;
    if (i % 2 === 1) {
      const d = Number(x[i]) - Number(y[i]);
      if (d) return d;
      return x[i].length - y[i].length; // "01" after "1"
    }
    return x[i] < y[i] ? -1 : 1;
  }
  return x.length - y.length;
}

export function defaultGroupKey(nodes) {
  return GROUP_KEYS.find((key) => nodes.some((n) => key in (n.metadata.labels || {}))) || "";
}

// The label keys present on the nodes that split them into a few groups (2..64 values).
export function groupKeyChoices(nodes) {
  const values = new Map();
  for (const n of nodes) {
    for (const [k, v] of Object.entries(n.metadata.labels || {})) {
      let set = values.get(k);
      if (!set) values.set(k, (set = new Set()));
      if (set.size <= 64) set.add(v);
    }
  }
  const useful = [...values].filter(([, set]) => set.size >= 2 && set.size <= 64).map(([k]) => k);
  const known = GROUP_KEYS.filter((k) => values.has(k));
  return [...known, ...useful.filter((k) => !known.includes(k)).sort()];
}

// What the viewed cycle says of a node: winner, rejected, pass (feasible), or none (not evaluated).
export function verdictOf(frame, name) {
  if (!frame) return "none";
  if (frame.winner === name) return "winner";
  const info = frame.nodes[name];
  if (!info) return "none";
  if (info.rejected) return "rejected";
  if (info.total !== null && info.total !== undefined) return "pass";
  // Passed only once every filter ran (frameAt's filterFinished), never before a rejection shows.
  if ("filterFinished" in frame) return frame.filterFinished ? "pass" : "none";
  return frame.done.has("Filter") ? "pass" : "none";
}

function rejectionReason(info) {
  const r = info.rejected;
  return { plugin: r.plugin || "PreFilter", reason: r.reasons.join(", ") || r.code };
}

// The first `count` items of `items` in `compare` order (all of them sorted when count is Infinity),
// without sorting the rest: a scoreboard of 5,000 nodes shows ten.
export function firstInOrder(items, count, compare) {
  if (count >= items.length) return [...items].sort(compare);
  const out = [];
  if (count <= 0) return out;
  for (const item of items) {
    if (out.length === count && compare(item, out[count - 1]) >= 0) continue;
    let i = out.length;
    while (i > 0 && compare(item, out[i - 1]) < 0) i--;
    out.splice(i, 0, item);
    if (out.length > count) out.pop();
  }
  return out;
}

// The rejected nodes by the reason upstream records, most frequent first: per reason its `count`
// and its nodes in natural order (only the first `examples` of them when given).
export function reasonTally(frame, examples = Infinity) {
  if (!frame) return [];
  const byReason = new Map();
  for (const name in frame.nodes) {
    const info = frame.nodes[name];
    if (!info.rejected || frame.winner === name) continue;
    const { plugin, reason } = rejectionReason(info);
    const key = `${plugin}\u0000${reason}`;
    let entry = byReason.get(key);
    if (!entry) byReason.set(key, (entry = { plugin, reason, nodes: [] }));
    entry.nodes.push(name);
  }
  const out = [...byReason.values()];
  for (const e of out) {
    e.count = e.nodes.length;
    e.nodes = firstInOrder(e.nodes, examples, naturalCompare);
  }
  return out.sort((a, b) => b.count - a.count || naturalCompare(a.reason, b.reason));
}

// The scoreboard's order: total, highest first (the winner first among equals), then name.
function byRank(frame) {
  return (a, b) => b.total - a.total || (b.name === frame.winner) - (a.name === frame.winner) || naturalCompare(a.name, b.name);
}

function scored(frame) {
  const out = [];
  for (const name in frame.nodes) {
    const info = frame.nodes[name];
    if (!info.rejected && info.total !== null && info.total !== undefined) out.push({ name, total: info.total });
  }
  return out;
}

// Scored nodes by total, highest first (the winner first among equals), then name.
export function rankedScores(frame) {
  return frame ? scored(frame).sort(byRank(frame)) : [];
}

// The first `count` of `rankedScores` and how many nodes were scored in all.
export function topScores(frame, count) {
  if (!frame) return { top: [], scored: 0 };
  const all = scored(frame);
  return { top: firstInOrder(all, count, byRank(frame)), scored: all.length };
}

// Every node of a cycle for the scoreboard's pages: scored ones by total, then the rejected by name.
export function scoreboardRows(frame) {
  const ranked = rankedScores(frame);
  const seen = new Set(ranked.map((r) => r.name));
  const rest = Object.keys(frame ? frame.nodes : {})
    .filter((n) => !seen.has(n))
    .sort(naturalCompare)
    .map((name) => ({ name, total: null }));
  return [...ranked, ...rest];
}

export function page(rows, index, size) {
  const pages = Math.max(1, Math.ceil(rows.length / size));
  const at = Math.min(Math.max(0, index), pages - 1);
  return { rows: rows.slice(at * size, at * size + size), index: at, pages };
}

// The text a search runs against: name, labels as key=value, taints as key=value:Effect.
export function searchText(node) {
  const parts = [node.metadata.name];
  for (const [k, v] of Object.entries(node.metadata.labels || {})) parts.push(`${k}=${v}`);
  for (const t of node.spec.taints || []) parts.push(`${t.key}=${t.value || ""}:${t.effect}`);
  if (node.spec.unschedulable) parts.push("cordoned unschedulable");
  return parts.join(" ").toLowerCase();
}

// Every whitespace-separated term must occur (case-insensitive); an empty query matches nothing.
export function matcher(query) {
  const terms = (query || "").toLowerCase().split(/\s+/).filter(Boolean);
  if (!terms.length) return null;
  return (text) => terms.every((t) => text.includes(t));
}

// Groups of node names: by a label's value (natural order, nodes without the label last), or — with
// BY_REASON — only the rejected nodes, by reason, most frequent first. `sortByScore` orders each
// group by the cycle's total (highest first; unscored last), else by name.
// `rank` (name → position in natural order, from `naturalRanks`) makes the sorts cheap on every frame.
export function naturalRanks(names) {
  const keyed = names.map((name) => ({ name, parts: name.split(CHUNK) }));
  keyed.sort((a, b) => compareParts(a.parts, b.parts) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return new Map(keyed.map((k, i) => [k.name, i]));
}

export function groupNodes(nodes, frame, { groupKey = "", sortByScore = false, rank = null } = {}) {
  const byName = rank ? (a, b) => rank.get(a) - rank.get(b) : naturalCompare;
  let groups;
  if (groupKey === BY_REASON) {
    groups = reasonTally(frame).map((r) => ({ title: `✗ ${r.plugin}: ${r.reason}`, value: r.reason, names: r.nodes }));
  } else if (!groupKey) {
    groups = [{ title: gettext("all nodes"), value: "", names: nodes.map((n) => n.metadata.name).sort(byName) }];
  } else {
    const byValue = new Map();
    for (const n of nodes) {
      const labels = n.metadata.labels || {};
      const value = groupKey in labels ? labels[groupKey] : null;
      if (!byValue.has(value)) byValue.set(value, []);
      byValue.get(value).push(n.metadata.name);
    }
    const values = [...byValue.keys()].filter((v) => v !== null).sort(naturalCompare);
    if (byValue.has(null)) values.push(null);
    groups = values.map((value) => ({
      title: value === null ? interpolate(gettext("(no %(key)s)"), { key: groupKey }) : `${groupKey}=${value}`,
      value,
      names: byValue.get(value).sort(byName),
    }));
  }
  if (sortByScore && frame) {
    const total = (name) => {
      const info = frame.nodes[name];
      return info && !info.rejected && info.total !== null && info.total !== undefined ? info.total : -Infinity;
    };
    for (const g of groups) g.names = [...g.names].sort((a, b) => total(b) - total(a) || byName(a, b));
  }
  for (const g of groups) g.title = `${g.title} · ${g.names.length}`;
  return groups;
}

// Cells in rows under each group's header: positions in CSS pixels for drawing and hit testing.
export function layoutGrid(groups, { width, cell, gap = 2, header = 22, pad = 4 }) {
  const step = cell + gap;
  const columns = Math.max(1, Math.floor((width - 2 * pad + gap) / step));
  const names = [];
  const xs = [];
  const ys = [];
  const rowStarts = []; // per cell: [first index of its row, row length], for arrow-key moves
  const headers = [];
  let y = pad;
  for (const g of groups) {
    headers.push({ title: g.title, x: pad, y });
    y += header;
    for (let i = 0; i < g.names.length; i++) {
      const col = i % columns;
      if (col === 0 && i) y += step;
      names.push(g.names[i]);
      xs.push(pad + col * step);
      ys.push(y);
    }
    if (g.names.length) y += step;
    y += gap * 3;
  }
  const index = new Map(names.map((n, i) => [n, i]));
  return { names, xs, ys, headers, columns, cell, step, pad, height: y + pad, width, index };
}

// The cell under a point, or -1. Rows are in increasing y, so a binary search finds the row.
export function cellAt(layout, x, y) {
  const { xs, ys, cell } = layout;
  let lo = 0;
  let hi = ys.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ys[mid] + cell < y) lo = mid + 1;
    else hi = mid - 1;
  }
  for (let i = lo; i < ys.length && ys[i] <= y; i++) {
    if (x >= xs[i] && x < xs[i] + cell && y >= ys[i] && y < ys[i] + cell) return i;
  }
  return -1;
}

// Arrow keys, Home/End: the next focus cell (left/right along the order; up/down to the nearest
// cell in the row above or below, across group boundaries).
export function moveFocus(layout, from, key) {
  const last = layout.names.length - 1;
  if (last < 0) return -1;
  if (from < 0) return 0;
  if (key === "ArrowLeft") return Math.max(0, from - 1);
  if (key === "ArrowRight") return Math.min(last, from + 1);
  if (key === "Home") return 0;
  if (key === "End") return last;
  if (key !== "ArrowUp" && key !== "ArrowDown") return from;
  const dir = key === "ArrowDown" ? 1 : -1;
  const { xs, ys } = layout;
  let i = from;
  while (i + dir >= 0 && i + dir <= last && ys[i + dir] === ys[from]) i += dir; // to the row's end
  i += dir;
  if (i < 0 || i > last) return from;
  const row = ys[i];
  let best = i;
  while (i >= 0 && i <= last && ys[i] === row) {
    if (Math.abs(xs[i] - xs[from]) < Math.abs(xs[best] - xs[from])) best = i;
    i += dir;
  }
  return best;
}

// A node's value under a colouring, 0..1 (null: nothing to show), and its words for the card.
export function colourValue(colouring, { frame, name, usage, maxTotal }) {
  if (colouring === "score") {
    const info = frame && frame.nodes[name];
    if (!info || info.rejected || info.total === null || info.total === undefined) return null;
    return maxTotal > 0 ? info.total / maxTotal : 1;
  }
  if (!usage) return null;
  const u = usage[colouring === "memory" ? "memory" : colouring];
  if (!u || !(u.total > 0)) return null;
  return Math.min(1, u.used / u.total);
}
