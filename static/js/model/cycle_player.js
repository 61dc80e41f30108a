// Scheduling cycles as a player: every cycle's events are kept; a cursor walks through them so the
// views can show the pipeline deciding step by step. Pure state, no DOM. Cycles arrive in the compact
// wire form (cycle_wire.js) or as summaries whose events are fetched when shown (`events: null`).

import { decodeEvents } from "./cycle_wire.js";

export const STAGES = ["PreFilter", "Filter", "PostFilter", "PreScore", "Score", "NormalizeScore", "Select", "Bind"];

// What the views show after the first `upto` events of a cycle.
export function frameAt(cycle, upto) {
  const frame = {
    cycle: cycle.cycle,
    pod: cycle.pod,
    stage: null,
    done: new Set(),
    nodes: {},
    preFilter: null,
    skippedScore: [],
    winner: null,
    tiedTop: [],
    message: "",
    finished: false,
    scheduled: false,
    nominatedNode: null,
    preemption: null,
    postFilter: null,
    detail: {}, // Filter plugin → the detail the core gave (requests, taints, missing labels)
    filtersRan: [], // Filter plugins evaluated so far, in order
    filterFinished: false,
    plugin: null, // the plugin of the last event shown
  };
  const node = (name) => (frame.nodes[name] ||= { rejected: null, failures: [], scores: {}, total: null, filtered: false });
  const enter = (stage) => {
    if (frame.stage && frame.stage !== stage) frame.done.add(frame.stage);
    frame.stage = stage;
  };
  const events = cycle.events.slice(0, upto);
  for (const e of events) {
    frame.plugin = e.plugin || null;
    if (e.type === "phase.started") enter(e.point);
    else if (e.type === "plugin.evaluated" && e.point === "PreFilter") {
      const code = e.status && e.status.code;
      if (code === "Unschedulable" || code === "UnschedulableAndUnresolvable") frame.preFilter = e.status;
    } else if (e.type === "plugin.evaluated" && e.point === "Filter") {
      frame.filtersRan.push(e.plugin);
      if (e.detail) frame.detail[e.plugin] = e.detail;
      const verdicts = e.verdicts || {};
      for (const name in verdicts) {
        const verdict = verdicts[name];
        const n = node(name);
        n.filtered = true;
        if (verdict.code !== "Success") n.failures.push({ plugin: e.plugin, code: verdict.code, reasons: verdict.reasons });
      }
    } else if (e.type === "filter.finished") {
      // The core names, per rejected node, the plugin whose status upstream records.
      frame.filterFinished = true;
      for (const [name, plugin] of Object.entries(e.rejectedBy || {})) {
        const n = node(name);
        n.rejected = n.failures.find((f) => f.plugin === plugin) || { plugin, code: "Unschedulable", reasons: [] };
      }
    } else if (e.type === "plugin.evaluated" && e.point === "PostFilter") {
      frame.postFilter = e.status || null;
    } else if (e.type === "node.skipped") {
      for (const name of Object.keys(e.nodes || {})) {
        const n = node(name);
        if (!n.rejected) n.rejected = { plugin: "", code: "UnschedulableAndUnresolvable", reasons: [e.reason] };
      }
    } else if (e.type === "plugin.evaluated" && e.point === "PreScore") {
      if (e.status && e.status.code === "Skip") frame.skippedScore.push(e.plugin);
    } else if (e.type === "plugin.evaluated" && e.point === "Score") {
      const raws = e.raw || {};
      for (const name in raws) node(name).scores[e.plugin] = { raw: raws[name] };
    } else if (e.type === "scores.normalized") {
      // A node's total: the sum of its weighted scores so far (one normalization per plugin).
      const normalized = e.normalized || {};
      for (const name in normalized) {
        const n = node(name);
        const weighted = e.weighted[name];
        const entry = (n.scores[e.plugin] ||= {});
        entry.normalized = normalized[name];
        entry.weight = e.weight;
        entry.weighted = weighted;
        n.total = (n.total || 0) + (weighted || 0);
      }
    } else if (e.type === "preemption.evaluated") {
      frame.preemption = e;
    } else if (e.type === "host.selected") {
      enter("Select");
      frame.winner = e.node;
      frame.tiedTop = e.tiedTop || [];
    } else if (e.type === "cycle.finished") {
      frame.finished = true;
      frame.scheduled = e.scheduled;
      frame.message = e.message;
      frame.nominatedNode = e.nominatedNode;
      if (e.scheduled) enter("Bind");
      if (frame.stage) frame.done.add(frame.stage);
    }
  }
  return frame;
}

// How long an event stays on screen at ×1 (ms): proportional to the work it stands for — a
// plugin over many nodes takes longer than one phase marker.
export function eventDuration(event) {
  if (!event) return 200;
  const spread = (map) => (map ? Object.keys(map).length : 0);
  if (event.type === "cycle.started") return 80;
  if (event.type === "phase.started") return 350;
  if (event.type === "plugin.evaluated") {
    const nodes = spread(event.verdicts) || spread(event.raw);
    return Math.min(1500, 180 + 60 * nodes);
  }
  if (event.type === "scores.normalized") return Math.min(1200, 150 + 40 * spread(event.normalized));
  if (event.type === "filter.finished" || event.type === "host.selected") return 600;
  return 250;
}

export class CyclePlayer {
  constructor(limit = 200) {
    this.cycles = [];
    this.limit = limit;
    this.index = -1; // which cycle is shown
    this.cursor = 0; // how many of its events are shown
    this.playing = false;
    this.follow = true; // jump to new cycles as they arrive
    this.speed = 1;
    this.memo = null; // the last frame() and what it was folded from
  }

  get current() {
    return this.cycles[this.index] || null;
  }

  // The shown frame, folded once per cycle and cursor (every view asks for it on each render; at
  // 5,000 nodes a fold of a whole cycle costs a few hundred ms). Frames are read-only.
  frame() {
    const cycle = this.current;
    if (!cycle || !cycle.events) return null;
    const memo = this.memo;
    if (memo && memo.cycle === cycle && memo.events === cycle.events && memo.cursor === this.cursor) return memo.frame;
    this.memo = { cycle, events: cycle.events, cursor: this.cursor, frame: frameAt(cycle, this.cursor) };
    return this.memo.frame;
  }

  add(cycle) {
    this.cycles.push({ ...cycle, events: decodeEvents(cycle.events) });
    if (this.cycles.length > this.limit) {
      this.cycles.shift();
      this.index = Math.max(0, this.index - 1);
    }
    if (this.follow) {
      this.index = this.cycles.length - 1;
      this.cursor = 0;
      this.playing = true;
    }
  }

  // The event to show next (for its duration), or null.
  nextEvent() {
    return this.current && this.current.events ? this.current.events[this.cursor] || null : null;
  }

  atEnd() {
    return !this.current || !this.current.events || this.cursor >= this.current.events.length;
  }

  // One event forward; returns false at the end.
  step() {
    if (this.atEnd()) {
      this.playing = false;
      return false;
    }
    this.cursor += 1;
    return true;
  }

  // Forward to the start of the next stage.
  stepStage() {
    const startStage = this.frame() && this.frame().stage;
    while (this.step()) {
      const frame = this.frame();
      if (frame.stage !== startStage) return true;
    }
    return false;
  }

  back() {
    this.cursor = Math.max(0, this.cursor - 1);
    this.playing = false;
  }

  toEnd() {
    if (this.current && this.current.events) this.cursor = this.current.events.length;
    this.playing = false;
  }

  seek(number, cursor = null) {
    const i = this.cycles.findIndex((c) => c.cycle === number);
    if (i < 0) return false;
    this.index = i;
    const length = this.cycles[i].events ? this.cycles[i].events.length : 0;
    this.cursor = cursor === null ? length : Math.min(cursor, length);
    this.follow = i === this.cycles.length - 1;
    return true;
  }

  play() {
    if (this.atEnd()) this.cursor = 0;
    this.playing = true;
  }

  pause() {
    this.playing = false;
  }

  // The events of a cycle known by its summary (fetched over HTTP), in either wire form.
  attachEvents(number, events) {
    const entry = this.cycles.find((c) => c.cycle === number);
    if (entry) entry.events = decodeEvents(events);
    return entry || null;
  }
}

// Insert cycle summaries (events still to fetch) in cycle order, skipping ones already known.
export function mergeSummaries(player, summaries) {
  const known = new Set(player.cycles.map((c) => c.cycle));
  const fresh = summaries.filter((s) => !known.has(s.cycle)).map((s) => ({ ...s, events: null }));
  if (!fresh.length) return;
  const current = player.current;
  player.cycles = [...fresh, ...player.cycles].sort((a, b) => (typeof a.cycle === "number" && typeof b.cycle === "number" ? a.cycle - b.cycle : 0));
  if (current) player.index = player.cycles.indexOf(current);
}
