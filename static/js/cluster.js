// Entry point of the cluster page: wires the stream, the pure models and the views.

import { $, frameBatcher, h } from "./lib/dom.js";
import { ClusterSocket } from "./lib/socket.js";
import { applySnapshot, applyWatch, emptyState, objectKey } from "./model/cluster_state.js";
import { CyclePlayer, mergeSummaries } from "./model/cycle_player.js";
import { readView, writeView } from "./model/url_state.js";
import { whyPending } from "./model/why_pending.js";
import { renderBoard } from "./views/board.js";
import { renderEvents, renderLesson, renderListWatch, renderScores, renderTabs, renderWhy } from "./views/detail.js";
import { Editor } from "./views/editor.js";
import { Palette, chipAction, wireBoardDragAndDrop } from "./views/palette.js";
import { renderPipeline } from "./views/pipeline.js";
import { MAP_ABOVE, renderPinnedNode } from "./views/node_map.js"; // node map
import { renderScoreboard, wantsScoreboard } from "./views/scoreboard.js"; // node map

const page = $("#cluster-page");
const slug = page.dataset.slug;
let lesson = null;
const view = readView(location.search);
// Read-only when following, or when this browser does not hold the cluster's edit link.
const readOnly = view.role === "follower" || page.dataset.canWrite !== "true";
document.body.classList.toggle("follower", readOnly);
document.body.classList.toggle("projector", view.projector);

let state = emptyState();
const player = new CyclePlayer();
const ui = {
  readOnly,
  selectedPod: view.pod || null,
  selectedNode: view.node || null,
  tab: view.tab || "why",
  nodeFilter: "",
  compact: false,
  showSystemLabels: false,
  why: null,
  whyLoading: false,
  whyFor: null,
  change: null,
  changeHop: 0,
};
let whatIfCount = 0;
const pendingCycleSeek = view.cycle !== null ? { cycle: view.cycle, step: view.step } : null;

function toast(text, kind = "info") {
  const box = $("#toasts");
  const item = h("div", { class: `toast toast-${kind}`, role: kind === "error" ? "alert" : "status" }, text);
  box.append(item);
  setTimeout(() => item.remove(), kind === "error" ? 8000 : 3000);
}

// The stream's problems stay visible until it is healthy again, and a little while after.
const banner = h("div", { id: "stream-banner", class: "stream-banner", role: "alert", hidden: true });
document.body.prepend(banner);
let bannerTimer = null;
function showProblem(text) {
  clearTimeout(bannerTimer);
  if (text) {
    banner.textContent = text;
    banner.dataset.state = "problem";
    banner.hidden = false;
  } else if (!banner.hidden) {
    banner.textContent = `${banner.textContent} — resynced at rv ${socket.lastRv}`;
    banner.dataset.state = "resolved";
    bannerTimer = setTimeout(() => (banner.hidden = true), 10000);
  }
}

const socket = new ClusterSocket(slug, {
  onMessage: handle,
  onState: (s) => {
    const el = $("#ws-state");
    el.textContent = s === "open" ? "● live" : s;
    el.dataset.state = s;
  },
  onProblem: showProblem,
});

function apply(action, card) {
  if (readOnly) return Promise.resolve();
  if (card) card.classList.add("pending-change");
  return socket
    .send(action)
    .catch((err) => {
      toast(err.message, "error");
      throw err;
    })
    .finally(() => card && card.classList.remove("pending-change"));
}

const palette = new Palette($("#palette"), { apply: (a) => apply(a).catch(() => {}), notify: toast, readOnly });
wireBoardDragAndDrop($("#board"), { apply: (a, card) => apply(a, card).catch(() => {}), readOnly });

const editor = new Editor($("#editor"), {
  readOnly,
  explain: (text) =>
    socket
      .send({ action: "explain", yaml: text })
      .then((msg) => {
        editor.showError(null);
        const ex = msg.explanation;
        player.follow = false;
        whatIfCount += 1;
        player.cycles.push({ cycle: `what-if-${whatIfCount}`, pod: ex.pod, events: ex.events, whatIf: true, explanation: ex });
        player.index = player.cycles.length - 1;
        player.cursor = 0;
        player.playing = true;
        ui.tab = "scores";
        toast(`what-if: ${ex.message}`);
        rerender();
      })
      .catch((err) => editor.showError(err.message)),
  create: (text) => {
    // Follow the new pod's cycle: it can stream in before the create's result does.
    player.follow = true;
    return socket
      .send({ action: "create", yaml: text })
      .then((msg) => {
        editor.showError(null);
        toast(`created ${msg.created.join(", ")}`);
      })
      .catch((err) => editor.showError(err.message));
  },
});

function selectedPodObject() {
  return ui.selectedPod ? state.objects.Pod.get(ui.selectedPod) : null;
}

function askWhy(force = false) {
  const pod = selectedPodObject();
  if (!pod || pod.spec.nodeName) {
    ui.why = null;
    return;
  }
  const stamp = `${objectKey(pod)}@${state.rv}`;
  if (!force && ui.whyFor === stamp) return;
  ui.whyFor = stamp;
  ui.whyLoading = true;
  socket
    .send({ action: "explain", yaml: JSON.stringify(pod) })
    .then((msg) => {
      if (ui.whyFor !== stamp) return;
      ui.why = whyPending(msg.explanation, pod, state);
    })
    .catch((err) => toast(err.message, "error"))
    .finally(() => {
      ui.whyLoading = false;
      rerender();
    });
}

function selectPod(key) {
  ui.selectedPod = key;
  ui.why = null;
  ui.whyFor = null;
  const pod = selectedPodObject();
  if (pod && !pod.spec.nodeName) {
    ui.tab = "why";
    askWhy(true);
  }
  broadcastView();
  rerender();
}

function broadcastView() {
  writeView({ ...view, pod: ui.selectedPod, node: ui.selectedNode, tab: ui.tab, cycle: player.current && !player.current.whatIf ? player.current.cycle : null, step: player.cursor });
  if (!readOnly && socket.ws && socket.ws.readyState === WebSocket.OPEN) {
    socket
      .send({ action: "view", pod: ui.selectedPod, node: ui.selectedNode, tab: ui.tab, cycle: player.current && !player.current.whatIf ? player.current.cycle : null })
      .catch(() => {});
  }
}

function handle(msg) {
  if (msg.type === "snapshot") {
    state = applySnapshot(state, msg);
    socket.explainOverHttp ||= state.objects.Node.size > MAP_ABOVE; // node map: large what-ifs over HTTP
    loadRecentCycles();
    loadLesson(state.cluster.lesson);
    askWhy();
  } else if (msg.type === "watch") {
    applyWatch(state, msg);
    ui.change = msg;
    ui.changeHop = 0;
    if (ui.selectedPod && msg.kind === "Pod" && objectKey(msg.object) === ui.selectedPod) askWhy();
  } else if (msg.type === "scheduler.cycle") {
    player.add(msg);
    if (!msg.events && player.follow) loadLatestCycle();
  } else if (msg.type === "eviction.scheduled") {
    state.evictions.set(msg.pod, msg.deadline);
  } else if (msg.type === "cluster.updated") {
    state.cluster = { ...state.cluster, ...msg.cluster };
  } else if (msg.type === "presenter.view" && readOnly) {
    followPresenter(msg);
  } else if (msg.type === "error" && !msg.id) {
    toast(msg.message, "error");
  } else {
    return;
  }
  rerender();
}

function followPresenter(msg) {
  ui.selectedPod = msg.pod || null;
  ui.selectedNode = msg.node || null;
  if (msg.tab) ui.tab = msg.tab;
  if (msg.cycle !== null && msg.cycle !== undefined) player.seek(msg.cycle);
  if (ui.tab === "why") askWhy(true);
}

function loadLesson(name) {
  if (!name || (lesson && lesson.name === name)) return;
  fetch("/api/lessons")
    .then((r) => r.json())
    .then((data) => {
      lesson = data.lessons.find((l) => l.name === name) || null;
      const label = $("#lesson-name");
      if (label && lesson) {
        label.textContent = `lesson: ${lesson.title}`;
        label.title = lesson.title;
      }
      rerender();
    });
}

// The cycles that ran before this page opened: summaries first, events when one is shown.
function loadRecentCycles() {
  fetch(`/api/clusters/${slug}/cycles`)
    .then((r) => (r.ok ? r.json() : { cycles: [] }))
    .then(({ cycles }) => {
      mergeSummaries(player, cycles);
      if (pendingCycleSeek) loadCycle(pendingCycleSeek.cycle, pendingCycleSeek.step);
      else if (!player.current && player.cycles.length) loadCycle(player.cycles[player.cycles.length - 1].cycle, null);
      rerender();
    });
}

function fetchCycle(number) {
  return fetch(`/api/clusters/${slug}/cycles/${number}`).then((r) => (r.ok ? r.json() : null));
}

function loadCycle(number, step) {
  const known = player.cycles.find((c) => c.cycle === number);
  if (known && known.events) {
    player.seek(number, step);
    return;
  }
  fetchCycle(number).then((cycle) => {
    if (!cycle) return;
    if (!known) mergeSummaries(player, [cycle]);
    player.attachEvents(number, cycle.events);
    player.seek(number, step);
    rerender();
  });
}

// A large cycle streams as its summary: while following, fetch the newest one's events (one fetch at
// a time; cycles that stream in meanwhile are skipped to the newest, as a person watching would).
let latestLoading = false;
function loadLatestCycle() {
  if (latestLoading) return;
  const latest = player.cycles[player.cycles.length - 1];
  if (!latest || latest.events || typeof latest.cycle !== "number") return;
  latestLoading = true;
  fetchCycle(latest.cycle)
    .then((cycle) => {
      if (!cycle) return;
      player.attachEvents(latest.cycle, cycle.events);
      if (player.follow && player.current === latest) {
        player.cursor = 0;
        player.playing = true;
      }
      rerender();
    })
    .finally(() => {
      latestLoading = false;
      const newest = player.cycles[player.cycles.length - 1];
      if (newest && !newest.events && player.follow && newest !== latest) loadLatestCycle();
    });
}

// Draw a panel only when what it shows changed: rebuilding it on every frame would lose clicks,
// focus and text selection while the player or the List-Watch animation runs.
const drawn = new Map();
function drawIf(key, deps, draw) {
  const last = drawn.get(key);
  if (last && last.length === deps.length && last.every((d, i) => d === deps[i])) return;
  drawn.set(key, deps);
  draw();
}

const render = () => {
  const frame = player.frame();
  renderBoard($("#board"), state, frame, ui);
  renderPipeline($("#pipeline"), player);
  renderTabs($("#detail"), ui.tab);
  for (const panel of document.querySelectorAll("#detail [data-panel]")) panel.hidden = panel.dataset.panel !== ui.tab;
  const pod = selectedPodObject();
  if (ui.tab === "why") drawIf("why", [pod, ui.why, ui.whyLoading], () => renderWhy($("[data-panel=why]"), { pod, why: ui.why, loading: ui.whyLoading }));
  // node map: a large cycle's scoreboard is redrawn per stage, not per event.
  const big = wantsScoreboard(frame);
  const scoreDeps = big ? [player.current, frame.stage, frame.finished, frame.winner] : [player.current, player.cursor];
  if (ui.tab === "scores") drawIf("scores", scoreDeps, () => (big ? renderScoreboard : renderScores)($("[data-panel=scores]"), frame));
  renderPinnedNode($("#pinned-node"), state, frame, ui); // node map
  if (ui.tab === "events") drawIf("events", [state.rv, pod, Math.floor(Date.now() / 5000)], () => renderEvents($("[data-panel=events]"), state, pod));
  if (ui.tab === "listwatch") drawIf("listwatch", [ui.change, ui.changeHop], () => renderListWatch($("[data-panel=listwatch]"), ui.change, ui.changeHop));
  if (ui.tab === "lesson") {
    const step = state.cluster.lessonStep || 0;
    drawIf("lesson", [lesson, step], () => renderLesson($("[data-panel=lesson]"), lesson, step, { next: nextLessonStep, readOnly }));
  }
  $("#rv").textContent = state.rv;
  const pace = $("#pace");
  if (pace && state.cluster.pace && document.activeElement !== pace) pace.value = state.cluster.pace;
};
const rerender = frameBatcher(render);

function nextLessonStep() {
  apply({ action: "lesson.next" })
    .then((msg) => msg.say && toast(msg.say))
    .catch(() => {});
}

// --- controls -----------------------------------------------------------------------------------

$("#board").addEventListener("click", (event) => {
  const cordon = event.target.closest("[data-cordon]");
  if (cordon) {
    const node = state.objects.Node.get(cordon.dataset.cordon);
    apply({ action: node && node.spec.unschedulable ? "uncordon" : "cordon", node: cordon.dataset.cordon }).catch(() => {});
    return;
  }
  const pod = event.target.closest("[data-pod]");
  if (pod) {
    selectPod(pod.dataset.pod);
    return;
  }
  const why = event.target.closest("[data-why]");
  if (why) {
    selectPod(why.dataset.why);
    return;
  }
  const card = event.target.closest("[data-node]");
  if (card) {
    if (palette.chooseNode(card.dataset.node)) return;
    ui.selectedNode = ui.selectedNode === card.dataset.node ? null : card.dataset.node;
    broadcastView();
    rerender();
  }
});

$("#board").addEventListener("keydown", (event) => {
  const chip = event.target.closest("[data-chip]");
  if (chip && (event.key === "Delete" || event.key === "Backspace")) {
    event.preventDefault();
    const d = chip.dataset;
    apply(chipAction({ type: d.chip, key: d.key, value: d.value, effect: d.effect }, d.node, true)).catch(() => {});
    return;
  }
  const card = event.target.closest("[data-node]");
  if (card && event.target === card && event.key === "Enter") {
    event.preventDefault();
    if (!palette.chooseNode(card.dataset.node)) {
      ui.selectedNode = card.dataset.node;
      rerender();
    }
  }
});

document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") palette.cancel();
});

// node map: a click or Enter on a cell pins that node (or applies the armed chip); ✕ unpins (node null).
$("#board").addEventListener("nodemap:pin", (event) => {
  const name = event.detail.node;
  if (name && palette.chooseNode(name)) return;
  ui.selectedNode = name;
  broadcastView();
  rerender();
});

$("#detail").addEventListener("click", (event) => {
  const tab = event.target.closest("[data-tab]");
  if (tab) {
    ui.tab = tab.dataset.tab;
    if (ui.tab === "why") askWhy();
    broadcastView();
    rerender();
  }
});

$("#node-filter").addEventListener("input", (event) => {
  ui.nodeFilter = event.target.value;
  rerender();
});

$("#pipeline").addEventListener("click", (event) => {
  const control = event.target.closest("[data-player]");
  if (!control) return;
  const what = control.dataset.player;
  if (what === "play") (player.playing ? player.pause() : player.play());
  else if (what === "step") {
    player.pause();
    player.stepStage();
  } else if (what === "back") player.back();
  else if (what === "end") player.toEnd();
  else if (what === "live") {
    player.follow = true;
    if (player.cycles.length) player.seek(player.cycles[player.cycles.length - 1].cycle);
  }
  broadcastView();
  rerender();
});

$("#pipeline select.cycle-picker").addEventListener("change", (event) => {
  const value = event.target.value;
  const cycle = player.cycles.find((c) => String(c.cycle) === value);
  if (cycle && cycle.events) {
    player.seek(cycle.cycle, 0);
    player.play();
  } else if (cycle) loadCycle(cycle.cycle, 0);
  broadcastView();
  rerender();
});

$("#pipeline select.speed").addEventListener("change", (event) => {
  player.speed = parseFloat(event.target.value);
});

const paceSelect = $("#pace");
if (paceSelect) {
  paceSelect.addEventListener("change", () => apply({ action: "pace", pace: paceSelect.value }).catch(() => {}));
  $("#step-button").addEventListener("click", () => apply({ action: "step" }).catch(() => {}));
}

// The player's clock and the List-Watch animation.
let last = performance.now();
function tick(now) {
  const interval = 220 / player.speed;
  if (now - last >= interval) {
    last = now;
    let dirty = false;
    if (player.playing) dirty = player.step() || true;
    if (ui.change && ui.changeHop < ui.change.path.length - 1) {
      ui.changeHop += 1;
      dirty = true;
    }
    if (dirty) rerender();
  }
  requestAnimationFrame(tick);
}
requestAnimationFrame(tick);
if (ui.tab === "why") askWhy();
rerender();
