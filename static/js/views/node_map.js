// The node map: above a few dozen nodes the board draws every node as a small cell on one canvas
// (no DOM element per node), grouped by a label, coloured by the viewed cycle's verdict, its score,
// or cpu / memory / pod use. One reused tooltip shows the hovered (or keyboard-focused) node's card;
// a click or Enter pins it (the `nodemap:pin` event; the page puts it in the detail panel).
// Search highlights; "jump to winner", "sort by score", "only rejected, by reason". The pure part is
// model/node_layout.js.

import { h, replace } from "../lib/dom.js";
import { gettext, interpolate } from "../lib/i18n.js";
import { formatBytes, formatMilliCpu } from "../lib/quantity.js";
import { nodeUsage, objectKey, podStatus } from "../model/cluster_state.js";
import { deviceSection } from "./devices.js";
import {
  BY_REASON,
  COLOURINGS,
  cellAt,
  colourValue,
  defaultGroupKey,
  groupKeyChoices,
  groupNodes,
  layoutGrid,
  matcher,
  moveFocus,
  naturalRanks,
  searchText,
  verdictOf,
} from "../model/node_layout.js";

export const MAP_ABOVE = 40; // the board's COMPACT_ABOVE: more nodes than this are drawn as a map

const VERDICT_COLOURS = { winner: "#1a56db", pass: "#1b7f3b", rejected: "#e4a19c", none: "#c9ced6" };
// The legend's and the menu's words, translated when drawn (the catalog may load after this module).
const VERDICT_WORDS = {
  winner: () => gettext("★ winner (blue, ringed)"),
  pass: () => gettext("✓ feasible (green)"),
  rejected: () => gettext("✗ rejected (pale red, struck)"),
  none: () => gettext("not evaluated (grey)"),
};
const COLOURING_WORDS = {
  verdict: () => gettext("verdict"),
  score: () => gettext("score"),
  cpu: () => gettext("cpu requested"),
  memory: () => gettext("memory requested"),
  pods: () => gettext("pod count"),
};
// A light-to-dark ramp for quantities (no hue of its own: green, red and blue keep their meanings).
const RAMP = Array.from({ length: 11 }, (_, i) => {
  const t = i / 10;
  const mix = (a, b) => Math.round(a + (b - a) * t);
  return `rgb(${mix(230, 31)},${mix(234, 45)},${mix(240, 61)})`;
});
const ZOOMS = [6, 8, 10, 12, 14, 18, 24, 32];

// --- the map's own state, kept on its element ----------------------------------------------------

function mapOf(board) {
  let map = board.querySelector(".node-map");
  if (map) return map._nodeMap;
  const count = board.querySelector(".node-grid");
  const tools = h("div", { class: "map-tools" });
  const legend = h("div", { class: "map-legend", "aria-label": gettext("legend") });
  // The canvas is the size of the visible window (sticky in the scroller); a spacer gives the scroll
  // height, and only the visible rows are painted.
  const canvas = h("canvas", { class: "map-canvas", "aria-hidden": "true" });
  const spacer = h("div", { class: "map-spacer" });
  const scroller = h(
    "div",
    { class: "map-scroll", tabindex: "0", role: "application", "aria-label": gettext("node map: arrow keys move between nodes, Enter pins one in the detail panel") },
    canvas,
    spacer,
  );
  const status = h("div", { class: "map-status", "aria-live": "polite" });
  map = h("div", { class: "node-map" }, tools, legend, scroller, status);
  count.after(map);
  const self = {
    el: map,
    board,
    tools,
    legend,
    scroller,
    canvas,
    spacer,
    status,
    groupKey: null, // null: the default (zone when present)
    colouring: "verdict",
    sortByScore: false,
    onlyRejected: false,
    zoom: null,
    focus: -1,
    hover: -1,
    nodesSeen: [],
    nodeList: [],
    texts: new Map(),
    layout: null,
    layoutKey: null,
    usage: null,
    usageRv: null,
    matches: null,
    matchesKey: null,
    args: null,
    stats: { draws: 0, lastDrawMs: 0, firstPaint: null },
  };
  map._nodeMap = self;
  window.__nodeMap = self.stats;
  buildTools(self);
  wireEvents(self);
  return self;
}

function rerender(self) {
  if (self.args) draw(self, ...self.args);
}

function buildTools(self) {
  const group = h("select", { class: "map-group", "aria-label": gettext("group nodes by") });
  const colour = h("select", { class: "map-colour", "aria-label": gettext("colour cells by") }, COLOURINGS.map((c) => h("option", { value: c }, COLOURING_WORDS[c]())));
  const sort = h("button", { type: "button", class: "map-sort", "aria-pressed": "false", title: gettext("order each group by the viewed cycle's total") }, gettext("sort by score"));
  const rejected = h(
    "button",
    { type: "button", class: "map-rejected", "aria-pressed": "false", title: gettext("show only the rejected nodes, grouped by the reason upstream records") },
    gettext("only rejected, by reason"),
  );
  const winner = h("button", { type: "button", class: "map-winner", title: gettext("focus the viewed cycle's winner") }, gettext("jump to winner"));
  const out = h("button", { type: "button", class: "map-zoom-out", "aria-label": gettext("smaller cells") }, "−");
  const zoomIn = h("button", { type: "button", class: "map-zoom-in", "aria-label": gettext("larger cells") }, "+");
  group.addEventListener("change", () => {
    self.groupKey = group.value;
    rerender(self);
  });
  colour.addEventListener("change", () => {
    self.colouring = colour.value;
    rerender(self);
  });
  sort.addEventListener("click", () => {
    self.sortByScore = !self.sortByScore;
    rerender(self);
  });
  rejected.addEventListener("click", () => {
    self.onlyRejected = !self.onlyRejected;
    self.focus = -1;
    rerender(self);
  });
  winner.addEventListener("click", () => jumpToWinner(self));
  out.addEventListener("click", () => zoomBy(self, -1));
  zoomIn.addEventListener("click", () => zoomBy(self, 1));
  replace(self.tools, h("label", {}, gettext("group "), group), h("label", {}, gettext("colour "), colour), sort, rejected, winner, h("span", { class: "map-zoom" }, out, zoomIn));
  Object.assign(self, { groupSelect: group, colourSelect: colour, sortButton: sort, rejectedButton: rejected, winnerButton: winner });
}

function zoomBy(self, direction) {
  const at = ZOOMS.findIndex((z) => z >= cellSize(self));
  self.zoom = ZOOMS[Math.min(ZOOMS.length - 1, Math.max(0, (at < 0 ? ZOOMS.length - 1 : at) + direction))];
  rerender(self);
}

function cellSize(self) {
  if (self.zoom) return self.zoom;
  const big = document.body.classList.contains("projector");
  const n = self.nodeList.length;
  return (n > 2000 ? 10 : n > 400 ? 14 : 18) + (big ? 4 : 0);
}

function jumpToWinner(self) {
  const frame = self.args && self.args[2];
  if (!frame || !frame.winner || !self.layout) return;
  const i = self.layout.index.get(frame.winner);
  if (i === undefined) return;
  setFocus(self, i, true);
}

function setFocus(self, index, showTip) {
  self.focus = index;
  rerender(self);
  if (index < 0 || !self.layout) return;
  const { xs, ys, cell } = self.layout;
  const top = ys[index];
  const sc = self.scroller;
  if (top < sc.scrollTop || top + cell > sc.scrollTop + sc.clientHeight) sc.scrollTop = Math.max(0, top - sc.clientHeight / 2);
  if (showTip) {
    const box = self.canvas.getBoundingClientRect();
    showCard(self, index, box.left + xs[index] + cell, box.top + ys[index] - sc.scrollTop + cell);
  }
}

function pin(self, index) {
  if (index < 0 || !self.layout) return;
  self.board.dispatchEvent(new CustomEvent("nodemap:pin", { bubbles: true, detail: { node: self.layout.names[index] } }));
}

function wireEvents(self) {
  const { canvas, scroller } = self;
  const at = (event) => (self.layout ? cellAt(self.layout, event.offsetX, event.offsetY + scroller.scrollTop) : -1);
  let scrollQueued = false;
  scroller.addEventListener("scroll", () => {
    if (scrollQueued) return;
    scrollQueued = true;
    requestAnimationFrame(() => {
      scrollQueued = false;
      if (self.args) paint(self, self.args[0], self.args[2], self.args[3]);
    });
  });
  // Hover: the latest pointer position is handled once per frame (a mouse reports several moves per
  // frame; each would lay out the tooltip again).
  let pointer = null;
  const hover = () => {
    const { i, x, y } = pointer;
    pointer = null;
    if (i === self.hover) {
      if (i >= 0) placeTip(x, y);
      return;
    }
    self.hover = i;
    if (i < 0) hideTip();
    else showCard(self, i, x, y);
  };
  canvas.addEventListener("mousemove", (event) => {
    if (!pointer) requestAnimationFrame(() => pointer && hover());
    pointer = { i: at(event), x: event.clientX, y: event.clientY };
  });
  canvas.addEventListener("mouseleave", () => {
    pointer = null;
    self.hover = -1;
    hideTip();
  });
  canvas.addEventListener("click", (event) => {
    const i = at(event);
    if (i < 0) return;
    self.focus = i;
    pin(self, i);
  });
  scroller.addEventListener("keydown", (event) => {
    if (!self.layout) return;
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      pin(self, self.focus < 0 ? 0 : self.focus);
      return;
    }
    if (event.key === "Escape") {
      hideTip();
      return;
    }
    const next = moveFocus(self.layout, self.focus, event.key);
    if (next === self.focus && self.focus >= 0) return;
    if (!["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End"].includes(event.key)) return;
    event.preventDefault();
    setFocus(self, next, true);
  });
  scroller.addEventListener("blur", hideTip);
  scroller.addEventListener(
    "wheel",
    (event) => {
      if (!event.ctrlKey) return;
      event.preventDefault();
      zoomBy(self, event.deltaY < 0 ? 1 : -1);
    },
    { passive: false },
  );
  new ResizeObserver(() => {
    if (self.layout && Math.abs(self.layout.width - scroller.clientWidth) > 1) rerender(self);
  }).observe(scroller);
}

// --- the reused tooltip --------------------------------------------------------------------------

let tip = null;
function tipElement() {
  if (!tip) {
    tip = h("div", { class: "map-tip", role: "tooltip", hidden: true });
    document.body.append(tip);
  }
  return tip;
}

function placeTip(x, y) {
  const el = tipElement();
  const w = el.offsetWidth;
  const ht = el.offsetHeight;
  el.style.left = `${Math.max(4, Math.min(x + 14, innerWidth - w - 4))}px`;
  el.style.top = `${y + 14 + ht > innerHeight ? Math.max(4, y - ht - 8) : y + 14}px`;
}

function hideTip() {
  if (tip) tip.hidden = true;
}

function showCard(self, index, x, y) {
  const [state, , frame] = self.args;
  const name = self.layout.names[index];
  const node = state.objects.Node.get(name);
  if (!node) return hideTip();
  const el = tipElement();
  replace(el, nodeCard(state, node, frame, { groupKey: effectiveGroupKey(self), podsOf: podsIndex(self, state) }));
  el.hidden = false;
  placeTip(x, y);
  self.status.textContent = `${name}: ${verdictText(frame, name)}`;
}

// --- a node's card: the tooltip and the pinned panel ---------------------------------------------

export function verdictText(frame, name) {
  const v = verdictOf(frame, name);
  const info = frame && frame.nodes[name];
  if (v === "winner") return info && info.total !== null ? interpolate(gettext("★ selected %(total)s"), { total: info.total }) : gettext("★ selected");
  if (v === "rejected") return `✗ ${info.rejected.plugin || "PreFilter"}: ${info.rejected.reasons.join(", ") || info.rejected.code}`;
  if (v === "pass" && info && info.total !== null && info.total !== undefined) {
    const parts = Object.values(info.scores).filter((s) => s.weighted !== undefined).map((s) => s.weighted);
    return `✓ ${info.total}${parts.length ? ` = ${parts.join("+")}` : ""}`;
  }
  if (v === "pass") return gettext("✓ passed filters");
  return frame ? gettext("not evaluated in this cycle") : gettext("no cycle viewed");
}

function usageLine(label, u, format) {
  const pct = u.total > 0 ? ` (${Math.round((u.used / u.total) * 100)}%)` : "";
  return h("div", { class: "card-usage" }, `${label} ${format(u.used)} / ${format(u.total)}${pct}`);
}

export function nodeCard(state, node, frame, { groupKey = "", podsOf = null, pinned = false } = {}) {
  const name = node.metadata.name;
  const labels = node.metadata.labels || {};
  const verdict = verdictOf(frame, name);
  const pods = podsOf ? podsOf.get(name) || new Map() : null;
  const usage = nodeUsage(state, node); // the scheduler's requested / allocatable figures (null until fetched)
  const shown = ["topology.kubernetes.io/zone", "node.kubernetes.io/instance-type", groupKey].filter((k, i, all) => k && k !== BY_REASON && k in labels && all.indexOf(k) === i);
  const podList = [...(pods || new Map()).values()];
  return h(
    "div",
    { class: `node-map-card verdict-${verdict}`, dataset: { node: name } },
    h("div", { class: "card-name" }, name, node.spec.unschedulable ? h("span", { class: "badge badge-cordoned" }, gettext("cordoned")) : null),
    h("div", { class: `card-verdict verdict-${verdict === "winner" ? "winner" : verdict === "rejected" ? "rejected" : verdict === "pass" ? "pass" : "none"}` }, verdictText(frame, name)),
    shown.map((k) => h("div", { class: "card-label" }, `${k}=${labels[k]}`)),
    usage ? usageLine(gettext("cpu"), usage.cpu, formatMilliCpu) : null,
    usage ? usageLine(gettext("mem"), usage.memory, formatBytes) : null,
    usage ? usageLine(gettext("pods"), usage.pods, (v) => String(Math.round(v))) : h("div", { class: "card-usage" }, gettext("requested: loading…")),
    (node.spec.taints || []).length
      ? h("div", { class: "chips" }, node.spec.taints.map((t) => h("span", { class: `chip chip-taint chip-${t.effect}` }, `${t.key}${t.value ? "=" + t.value : ""}:${t.effect}`)))
      : null,
    deviceSection(state, name, { limit: pinned ? 128 : 4 }),
    pinned && podList.length
      ? h("div", { class: "pods" }, podList.slice(0, 30).map((p) => h("span", { class: `pod pod-${podStatus(p)}`, title: objectKey(p) }, p.metadata.name)), podList.length > 30 ? interpolate(gettext("… %(count)s more"), { count: podList.length - 30 }) : null)
      : null,
    pinned
      ? h("details", { class: "card-labels" }, h("summary", {}, interpolate(gettext("all %(count)s labels"), { count: Object.keys(labels).length })), Object.entries(labels).map(([k, v]) => h("div", {}, `${k}=${v}`)))
      : null,
  );
}

// The pinned node in the detail panel (only in map mode; the cards of the small board show it all).
export function renderPinnedNode(el, state, frame, ui) {
  if (!el) return;
  const board = document.querySelector("#board .node-map");
  const mapped = board && board.closest(".board").classList.contains("node-map-mode");
  const node = mapped && ui.selectedNode ? state.objects.Node.get(ui.selectedNode) : null;
  el.hidden = !node;
  if (!node) return;
  const sig = [node, frame && frame.cycle, verdictText(frame, node.metadata.name), state.rv];
  if (el._sig && el._sig.every((v, i) => v === sig[i])) return;
  el._sig = sig;
  const self = board._nodeMap;
  replace(
    el,
    h("div", { class: "pinned-head" }, h("strong", {}, gettext("pinned node")), h("button", { type: "button", class: "unpin", "aria-label": gettext("unpin") }, "✕")),
    nodeCard(state, node, frame, { groupKey: effectiveGroupKey(self), podsOf: podsIndex(self, state), pinned: true }),
  );
  el.querySelector(".unpin").onclick = () => board.closest(".board").dispatchEvent(new CustomEvent("nodemap:pin", { bubbles: true, detail: { node: null } }));
}

// --- caches --------------------------------------------------------------------------------------

// The node list, re-sorted only when a Node object changed (the store replaces changed objects).
function refreshNodes(self, state) {
  const objs = state.objects.Node;
  let same = objs.size === self.nodesSeen.length;
  if (same) {
    let i = 0;
    for (const n of objs.values()) {
      if (n !== self.nodesSeen[i++]) {
        same = false;
        break;
      }
    }
  }
  if (same) return false;
  self.nodesSeen = [...objs.values()];
  self.nodeList = self.nodesSeen;
  self.texts = null; // the search texts, made at the first search
  self.defaultKey = defaultGroupKey(self.nodeList);
  // The label keys offered for grouping: after the first paint.
  const list = self.nodeList;
  setTimeout(() => {
    if (self.nodeList !== list) return;
    self.choices = groupKeyChoices(list);
    rerender(self);
  }, 0);
  self.rank = naturalRanks(self.nodeList.map((n) => n.metadata.name));
  self.groups = null;
  self.layoutKey = null;
  self.matchesKey = null;
  return true;
}

// Pods by node name, rebuilt once per resourceVersion.
function podsIndex(self, state) {
  if (self.podsRv === state.rv && self.pods) return self.pods;
  const index = new Map();
  for (const pod of state.objects.Pod.values()) {
    const on = pod.spec.nodeName;
    if (!on) continue;
    if (!index.has(on)) index.set(on, new Map());
    index.get(on).set(objectKey(pod), pod);
  }
  self.pods = index;
  self.podsRv = state.rv;
  return index;
}

function usages(self, state) {
  if (self.usageOf === state.requested && self.usage) return self.usage;
  const out = new Map();
  let pods = 0;
  for (const node of self.nodeList) {
    const usage = nodeUsage(state, node);
    out.set(node.metadata.name, usage);
    if (usage) pods += usage.pods.used;
  }
  self.usage = out;
  self.stats.podsCounted = pods; // the pods the cells coloured by usage show (benchmarks read it)
  self.usageOf = state.requested;
  return out;
}

function effectiveGroupKey(self) {
  if (self.onlyRejected) return BY_REASON;
  return self.groupKey === null ? self.defaultKey : self.groupKey;
}

// --- drawing -------------------------------------------------------------------------------------

function draw(self, state, board, frame, ui) {
  const started = performance.now();
  const groupKey = effectiveGroupKey(self);
  const width = Math.max(120, self.scroller.clientWidth || board.clientWidth - 20);
  const cell = cellSize(self);
  const frameSensitive = self.sortByScore || groupKey === BY_REASON;
  const groupsKey = `${groupKey}|${self.sortByScore}`;
  if (groupsKey !== self.groupsKey || frameSensitive || !self.groups) {
    self.groups = groupNodes(self.nodeList, frame, { groupKey, sortByScore: self.sortByScore, rank: self.rank });
    self.groupsKey = groupsKey;
    self.layoutKey = null;
    self.layouts = new Map(); // by width and cell size, for these groups: zooming back and forth lays out once
  }
  const key = `${groupsKey}|${width}|${cell}`;
  const relayout = key !== self.layoutKey;
  if (relayout) {
    const sized = `${width}|${cell}`;
    if (!self.layouts.has(sized)) {
      if (self.layouts.size >= 16) self.layouts.clear(); // widths seen while a window is resized
      self.layouts.set(sized, layoutGrid(self.groups, { width, cell, gap: cell >= 14 ? 3 : 2, header: 22 }));
    }
    self.layout = self.layouts.get(sized);
    self.layoutKey = key;
    if (self.focus >= self.layout.names.length) self.focus = -1;
  }
  const query = ui.nodeFilter || "";
  if (relayout || self.matchesKey !== query) {
    const match = matcher(query);
    if (match && !self.texts) self.texts = new Map(self.nodeList.map((n) => [n.metadata.name, searchText(n)]));
    self.matches = match ? new Set(self.layout.names.filter((n) => match(self.texts.get(n) || ""))) : null;
    self.matchesKey = query;
  }
  paint(self, state, frame, ui);
  syncTools(self, frame, groupKey);
  const total = self.nodeList.length;
  const countText =
    interpolate(gettext("%(shown)s/%(total)s nodes"), { shown: self.layout.names.length, total }) +
    (self.matches ? interpolate(gettext(" · %(count)s match “%(query)s”"), { count: self.matches.size, query }) : "") +
    (groupKey === BY_REASON ? gettext(" · only rejected") : "");
  const count = board.querySelector(".node-count");
  if (count.textContent !== countText) count.textContent = countText;
  const ms = performance.now() - started;
  self.stats.draws += 1;
  self.stats.lastDrawMs = ms;
  self.stats.cells = self.layout.names.length;
  if (self.stats.firstPaint === null && self.layout.names.length) self.stats.firstPaint = performance.now();
  self.canvas.dataset.cells = String(self.layout.names.length);
  self.canvas.dataset.groupKey = groupKey;
  self.canvas.dataset.matches = self.matches ? String(self.matches.size) : "";
  self.canvas.dataset.winner = (frame && frame.winner) || "";
  self.canvas.dataset.focus = self.focus >= 0 ? self.layout.names[self.focus] : "";
}

function paint(self, state, frame, ui) {
  const { canvas, layout } = self;
  const dpr = window.devicePixelRatio || 1;
  const height = Math.min(layout.height, Math.max(160, Math.floor(innerHeight * 0.62)));
  if (canvas._w !== layout.width || canvas._h !== height || canvas._dpr !== dpr) {
    canvas.width = Math.round(layout.width * dpr);
    canvas.height = Math.round(height * dpr);
    canvas.style.width = `${layout.width}px`;
    canvas.style.height = `${height}px`;
    Object.assign(canvas, { _w: layout.width, _h: height, _dpr: dpr });
  }
  const spacer = `${Math.max(0, layout.height - height)}px`;
  if (self.spacer.style.height !== spacer) self.spacer.style.height = spacer;
  const top = Math.min(self.scroller.scrollTop, Math.max(0, layout.height - height));
  const bottom = top + height;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, -top * dpr);
  ctx.clearRect(0, top, layout.width, height);
  const bigText = document.body.classList.contains("projector");
  ctx.font = `600 ${bigText ? 17 : 13}px system-ui, sans-serif`;
  ctx.fillStyle = "#1d1d1f";
  ctx.textBaseline = "top";
  for (const hd of layout.headers) if (hd.y + 22 >= top && hd.y <= bottom) ctx.fillText(hd.title, hd.x, hd.y + 3, layout.width - 8);

  const { names, xs, ys, cell } = layout;
  const colouring = self.colouring;
  const usage = colouring === "cpu" || colouring === "memory" || colouring === "pods" ? usages(self, state) : null;
  let maxTotal = 0;
  if (colouring === "score" && frame) for (const info of Object.values(frame.nodes)) if (!info.rejected && info.total > maxTotal) maxTotal = info.total;
  const matches = self.matches;
  const nodesMap = state.objects.Node;
  const struck = [];
  const cordoned = [];
  const batches = new Map(); // "colour|dimmed" → cell indices: one path and fill per colour
  // The visible cells: from the first row reaching `top` to the last starting above `bottom`.
  let first = 0;
  for (let lo = 0, hi = ys.length - 1; lo <= hi; ) {
    const mid = (lo + hi) >> 1;
    if (ys[mid] + cell + 4 < top) lo = first = mid + 1;
    else hi = mid - 1;
  }
  for (let i = first; i < names.length && ys[i] - 4 <= bottom; i++) {
    const name = names[i];
    const verdict = verdictOf(frame, name);
    let fill;
    if (colouring === "verdict") fill = VERDICT_COLOURS[verdict];
    else {
      const v = colourValue(colouring, { frame, name, usage: usage && usage.get(name), maxTotal });
      fill = v === null ? "#f4f5f7" : RAMP[Math.round(v * 10)];
    }
    const key = matches && !matches.has(name) ? `${fill}|1` : `${fill}|0`;
    let batch = batches.get(key);
    if (!batch) batches.set(key, (batch = []));
    batch.push(i);
    if (verdict === "rejected") struck.push(i);
    const node = nodesMap.get(name);
    if (node && node.spec.unschedulable) cordoned.push(i);
  }
  for (const [key, cells] of batches) {
    const [fill, dimmed] = key.split("|");
    ctx.globalAlpha = dimmed === "1" ? 0.18 : 1;
    ctx.fillStyle = fill;
    ctx.beginPath();
    for (const i of cells) ctx.rect(xs[i], ys[i], cell, cell);
    ctx.fill();
  }
  ctx.globalAlpha = 1;
  // Shapes beside colour: rejected cells are struck through, cordoned ones hatched.
  ctx.lineWidth = Math.max(1, cell / 8);
  ctx.strokeStyle = colouring === "verdict" ? "#8c1d18" : "#b3261e";
  ctx.beginPath();
  for (const i of struck) {
    ctx.moveTo(xs[i] + 1, ys[i] + cell - 1);
    ctx.lineTo(xs[i] + cell - 1, ys[i] + 1);
  }
  ctx.stroke();
  ctx.strokeStyle = "#444";
  ctx.beginPath();
  for (const i of cordoned) {
    ctx.moveTo(xs[i], ys[i]);
    ctx.lineTo(xs[i] + cell, ys[i] + cell);
  }
  ctx.stroke();
  if (matches) {
    ctx.strokeStyle = "#b26a00";
    ctx.lineWidth = 2;
    ctx.beginPath();
    for (const name of matches) {
      const i = layout.index.get(name);
      if (i !== undefined) ctx.rect(xs[i] - 1, ys[i] - 1, cell + 2, cell + 2);
    }
    ctx.stroke();
  }
  const ring = (name, colour, width, dash = []) => {
    const i = name === null ? -1 : layout.index.get(name);
    if (i === undefined || i < 0) return;
    ctx.strokeStyle = colour;
    ctx.lineWidth = width;
    ctx.setLineDash(dash);
    ctx.strokeRect(xs[i] - width / 2 - 1, ys[i] - width / 2 - 1, cell + width + 2, cell + width + 2);
    ctx.setLineDash([]);
  };
  // a capacity what-if: drained nodes ringed dark red and dashed, the nodes that took pods green
  if (ui.capacity) for (const [name, mark] of ui.capacity) ring(name, mark.kind === "drained" ? "#8c1d18" : mark.kind === "gained" ? "#1b7f3b" : "#b26a00", 2, mark.kind === "drained" ? [3, 2] : []);
  if (frame && frame.winner) ring(frame.winner, "#0b2f80", 3);
  if (ui.selectedNode) ring(ui.selectedNode, "#1d1d1f", 2); // pinned: solid ink
  if (self.focus >= 0) ring(names[self.focus], "#1d1d1f", 3, [3, 2]); // keyboard focus: dashed ink
}

function syncTools(self, frame, groupKey) {
  const choices = self.choices || [];
  const sig = choices.join("|");
  if (self.groupSelect._sig !== sig) {
    self.groupSelect._sig = sig;
    replace(self.groupSelect, h("option", { value: "" }, gettext("nothing")), choices.map((k) => h("option", { value: k }, k)));
  }
  const selected = self.groupKey === null ? self.defaultKey : self.groupKey;
  if (self.groupSelect.value !== selected) self.groupSelect.value = selected;
  self.groupSelect.disabled = groupKey === BY_REASON;
  self.sortButton.setAttribute("aria-pressed", String(self.sortByScore));
  self.rejectedButton.setAttribute("aria-pressed", String(self.onlyRejected));
  self.winnerButton.disabled = !(frame && frame.winner);
  const legendKey = `${self.colouring}|${frame ? "f" : ""}`;
  if (self.legend._sig === legendKey) return;
  self.legend._sig = legendKey;
  if (self.colouring === "verdict") {
    replace(
      self.legend,
      Object.entries(VERDICT_WORDS).map(([v, words]) => h("span", { class: `legend-item legend-${v}` }, h("span", { class: "swatch", style: { background: VERDICT_COLOURS[v] } }), words())),
      h("span", { class: "legend-item" }, h("span", { class: "swatch swatch-cordoned" }), gettext("cordoned (hatched)")),
      h("span", { class: "legend-item" }, h("span", { class: "swatch swatch-match" }), gettext("search match (amber frame)")),
      h("span", { class: "legend-item" }, h("span", { class: "swatch swatch-pinned" }), gettext("pinned (black frame; dashed: keyboard focus)")),
    );
  } else {
    replace(
      self.legend,
      h(
        "span",
        { class: "legend-item" },
        interpolate(gettext("%(colouring)s: low "), { colouring: COLOURING_WORDS[self.colouring]() }),
        h("span", { class: "ramp", style: { background: `linear-gradient(90deg, ${RAMP[0]}, ${RAMP[10]})` } }),
        self.colouring === "score" ? gettext(" highest total") : gettext(" full"),
      ),
      h("span", { class: "legend-item" }, h("span", { class: "swatch", style: { background: "#f4f5f7" } }), self.colouring === "score" ? gettext("not scored (✗ struck: rejected)") : gettext("no data")),
    );
  }
}

// Map mode for the board: draw (or redraw) the map from the state, the viewed frame and the ui.
export function renderNodeMap(board, state, frame, ui) {
  const self = mapOf(board);
  board.classList.add("node-map-mode");
  if (board.parentElement) board.parentElement.classList.add("map-mode");
  refreshNodes(self, state);
  self.args = [state, board, frame, ui];
  draw(self, state, board, frame, ui);
}

// Back to cards: hide the map.
export function leaveNodeMap(board) {
  board.classList.remove("node-map-mode");
  if (board.parentElement) board.parentElement.classList.remove("map-mode");
  hideTip();
}
