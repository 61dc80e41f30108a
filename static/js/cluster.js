// Entry point of the cluster page: wires the stream, the pure models and the views.

import { $, frameBatcher, h } from "./lib/dom.js";
import { gettext, interpolate, localized } from "./lib/i18n.js";
import { callJson } from "./lib/http.js";
import { ClusterSocket } from "./lib/socket.js";
import { ageOf, applyEviction, applyRequested, applySnapshot, applyWatch, emptyState, nodesChangedSince, objectKey } from "./model/cluster_state.js";
import { CyclePlayer, eventDuration, frameAt, mergeSummaries } from "./model/cycle_player.js";
import { History, describe, inverseOf, inverseOfCreate } from "./model/history.js";
import { readView, writeView } from "./model/url_state.js";
import { whyPending } from "./model/why_pending.js";
import { renderBoard } from "./views/board.js";
import { CapacityPanel } from "./views/capacity.js";
import { renderEvents, renderLesson, renderScores, renderTabs, renderWhy } from "./views/detail.js";
import { ListWatchFlow } from "./model/list_watch.js"; // list-watch
import { renderListWatch } from "./views/list_watch.js"; // list-watch
import { Editor } from "./views/editor.js";
import { Palette, chipAction, wireBoardDragAndDrop } from "./views/palette.js";
import { renderPipeline } from "./views/pipeline.js";
import { MAP_ABOVE, renderPinnedNode } from "./views/node_map.js"; // node map
import { renderScoreboard, wantsScoreboard } from "./views/scoreboard.js"; // node map
import { mountProfiles } from "./views/profiles.js"; // profiles
import { PredictionPanel } from "./views/prediction.js"; // prediction
import { LessonPlayer } from "./views/lesson_player.js"; // lesson
import { wireJoinCard } from "./views/join_card.js"; // classroom: the join code and its QR code
import { mountRecorder } from "./views/recorder.js"; // record a lesson

const page = $("#cluster-page");
const slug = page.dataset.slug;
const view = readView(location.search);
// Read-only when following, or when this browser does not hold the cluster's edit link.
const readOnly = view.role === "follower" || page.dataset.canWrite !== "true";
document.body.classList.toggle("follower", readOnly);
document.body.classList.toggle("projector", view.projector || view.present);
document.body.classList.toggle("present", view.present); // presenter mode: the lesson as a rail beside the board

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
  hideVerdicts: false, // the board shows only the cluster now, no cycle's verdicts
  stale: new Set(), // nodes changed since the viewed cycle
  verdictSource: null,
  whyExplained: null, // a server what-if of the selected pod when no cycle of it is at hand
  fixes: null, // { for: cycle, loading, data }: fixes verified by the scheduler for the Why cycle
  whyLoading: false,
  whyFor: null,
  capacity: null, // a capacity what-if's marks: node → {kind: drained | gained | lost, delta}
};
const listWatch = new ListWatchFlow(); // list-watch: every change travels the diagram
let whatIfCount = 0;
const pendingCycleSeek = view.cycle !== null ? { cycle: view.cycle, step: view.step } : null;

const MAX_TOASTS = 4;

function toast(text, kind = "info") {
  const box = $("#toasts");
  const item = h("div", { class: `toast toast-${kind}`, role: kind === "error" ? "alert" : "status", title: text }, text);
  box.append(item);
  while (box.children.length > MAX_TOASTS) box.firstElementChild.remove(); // the status bar shows the newest
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
    banner.textContent = `${banner.textContent} — ` + interpolate(gettext("resynced at rv %(rv)s"), { rv: socket.lastRv });
    banner.dataset.state = "resolved";
    bannerTimer = setTimeout(() => (banner.hidden = true), 10000);
  }
}

// The stream's states as shown (socket.js names them; the name stays in data-state).
const SOCKET_STATES = {
  loading: () => gettext("loading"),
  connecting: () => gettext("connecting"),
  resyncing: () => gettext("resyncing"),
  closed: () => gettext("closed"),
  failed: () => gettext("failed"),
};

const socket = new ClusterSocket(slug, {
  follower: view.role === "follower", // the class's view of the lesson, even in the presenter's own browser
  onMessage: handle,
  onState: (s) => {
    const el = $("#ws-state");
    el.textContent = s === "open" ? "● " + gettext("live") : (SOCKET_STATES[s] || (() => s))();
    el.dataset.state = s;
  },
  onProblem: showProblem,
});

const history = new History();

// prediction: the class question; on the reveal every board follows the cycle that answers it.
const prediction = new PredictionPanel($("#prediction"), {
  readOnly,
  slug,
  nickname: page.dataset.nickname || "", // given at /join
  send: (action) => socket.send(action),
  toast,
  onRevealing: () => {
    player.follow = true;
  },
});

// lesson: what the server lets this board see of the lesson; in presenter mode a rail with its keys.
const lesson = new LessonPlayer({
  slug,
  readOnly,
  rail: view.present ? $("#lesson-rail") : null,
  prediction,
  apply: (action) => apply(action),
  toast,
  changed: () => rerender(),
  moved: () => broadcastView(),
});

// Send one action; remember it with its inverse for undo (unless it is an undo/redo itself).
function apply(action, card, record = true) {
  if (readOnly) return Promise.resolve();
  if (card) card.classList.add("pending-change");
  const inverse = record && action.action !== "create" ? inverseOf(action, state) : null;
  return socket
    .send(action)
    .then((result) => {
      if (record && CHANGES.has(action.action)) history.record(action, action.action === "create" ? inverseOfCreate(result) : inverse);
      renderHistory();
      return result;
    })
    .catch((err) => {
      toast(err.message, "error");
      throw err;
    })
    .finally(() => card && card.classList.remove("pending-change"));
}

const CHANGES = new Set(["create", "delete", "label", "taint", "cordon", "uncordon", "scale"]);

function renderHistory() {
  const undo = $("#undo");
  const redo = $("#redo");
  if (!undo) return;
  undo.disabled = !history.canUndo();
  redo.disabled = !history.canRedo();
  undo.title = history.canUndo() ? interpolate(gettext("undo: %(action)s"), { action: describe(history.done[history.done.length - 1].action) }) : gettext("nothing to undo");
  redo.title = history.canRedo() ? interpolate(gettext("redo: %(action)s"), { action: describe(history.undone[history.undone.length - 1].action) }) : gettext("nothing to redo");
}

function undoOrRedo(which) {
  const step = which === "undo" ? history.undo() : history.redo();
  renderHistory();
  if (!step) return;
  const action = which === "undo" ? step.inverse : step.action;
  apply(action, null, false)
    .then((result) => {
      // A re-created object has a new name only if the server chose one; deleting it stays the inverse.
      if (which === "redo" && action.action === "create") step.inverse = inverseOfCreate(result) || step.inverse;
      toast(interpolate(which === "undo" ? gettext("undo: %(action)s") : gettext("redo: %(action)s"), { action: describe(action) }));
    })
    .catch(() => {});
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
        player.cycles.push(whatIfCycle(ex, text));
        player.index = player.cycles.length - 1;
        player.cursor = 0;
        player.playing = true;
        ui.selectedPod = null;
        ui.tab = "scores";
        broadcastView();
        toast(interpolate(gettext("what-if: %(message)s"), { message: ex.message }));
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
        toast(interpolate(gettext("created %(names)s"), { names: msg.created.join(", ") }));
      })
      .catch((err) => editor.showError(err.message));
  },
});

const profilesPanel = mountProfiles($("#profiles"), { slug, readOnly, toast, pods: () => [...state.objects.Pod.values()], editorText: () => editor.textarea.value }); // profiles

const recorder = readOnly ? null : mountRecorder($("#recorder"), { slug, toast }); // record a lesson

// capacity what-ifs: the marks of the shown answer are drawn on the board and the map
const capacityPanel = new CapacityPanel($("#capacity"), {
  slug,
  readOnly,
  toast,
  editorText: () => editor.textarea.value,
  onChange: () => {
    ui.capacity = capacityPanel.marks;
    broadcastView();
    rerender();
  },
});

function selectedPodObject() {
  return ui.selectedPod ? state.objects.Pod.get(ui.selectedPod) : null;
}

// The cycle Why Pending explains: the what-if being viewed, else the selected pod's latest cycle.
function whyCycle() {
  const current = player.current;
  if (current && current.whatIf && !ui.selectedPod) return current;
  const pod = selectedPodObject();
  if (!pod) return null;
  const key = objectKey(pod);
  for (let i = player.cycles.length - 1; i >= 0; i -= 1) {
    const cycle = player.cycles[i];
    if (cycle.pod === key && !cycle.whatIf) return cycle;
  }
  if (ui.whyExplained && ui.whyExplained.pod === key) return ui.whyExplained;
  return null;
}

// The pod of a cycle as YAML the server reads: the what-if's text, or the live pod without status.
function podTextOf(cycle) {
  if (cycle.yaml) return cycle.yaml;
  const pod = state.objects.Pod.get(cycle.pod);
  if (!pod) return null;
  const copy = JSON.parse(JSON.stringify(pod));
  delete copy.status;
  if (copy.spec) delete copy.spec.nodeName;
  return JSON.stringify(copy);
}

// Fixes for the pod of a failed cycle, each verified by the scheduler (server-side).
function askFixes(cycle, why) {
  if (!cycle || !why || why.scheduled || !why.groups.length) return;
  if (ui.fixes && ui.fixes.for === cycle) return;
  const text = podTextOf(cycle);
  if (!text) return;
  const entry = { for: cycle, loading: true, data: null, text };
  ui.fixes = entry;
  socket
    .send({ action: "fixes", yaml: text })
    .then((msg) => {
      entry.data = msg.fixes;
    })
    .catch((err) => {
      entry.error = err.message;
    })
    .finally(() => {
      entry.loading = false;
      rerender();
    });
}

// "Make it fit on node X": the verifying cycle becomes a what-if, its pod goes to the editor.
function showFix(nodeName) {
  const entry = ui.fixes && ui.fixes.data && ui.fixes.data.nodes.find((n) => n.node === nodeName);
  if (!entry || !entry.verified) return;
  whatIfCount += 1;
  player.follow = false;
  player.cycles.push({
    cycle: `what-if-${whatIfCount}`,
    pod: ui.fixes.data.pod,
    events: entry.events,
    whatIf: true,
    yaml: entry.fixedPod,
    followYaml: ui.fixes.text,
    fixFor: nodeName,
    commands: entry.commands,
    receivedAt: Date.now(),
    resourceVersion: state.rv,
  });
  player.index = player.cycles.length - 1;
  player.toEnd();
  ui.selectedPod = null;
  editor.setText(entry.fixedPod);
  broadcastView();
  toast(
    entry.commands.length
      ? interpolate(gettext("what-if with the fixes for %(node)s (and %(commands)s)"), { node: nodeName, commands: entry.commands.join("; ") })
      : interpolate(gettext("what-if with the fixes for %(node)s"), { node: nodeName }),
  );
  rerender();
}

function whyOf(cycle) {
  return cycle && cycle.events ? whyPending(frameAt(cycle, cycle.events.length)) : null;
}

// No cycle of the pod at hand (it ran before the kept history, or never): the fetched cycle's
// events, or the server's what-if of it, folded the same way.
function askWhy(force = false) {
  const pod = selectedPodObject();
  if (!pod || pod.spec.nodeName) return;
  const cycle = whyCycle();
  if (cycle && !cycle.whatIf && !cycle.events && typeof cycle.cycle === "number") {
    loadCycleEvents(cycle.cycle);
    return;
  }
  if (cycle && !force) return;
  const stamp = `${objectKey(pod)}@${state.rv}`;
  if (!force && ui.whyFor === stamp) return;
  ui.whyFor = stamp;
  ui.whyLoading = true;
  socket
    .send({ action: "explain", yaml: JSON.stringify(pod) })
    .then((msg) => {
      if (ui.whyFor !== stamp) return;
      const ex = msg.explanation;
      ui.whyExplained = { cycle: "explained", pod: objectKey(pod), events: ex.events, explained: true };
    })
    .catch((err) => toast(err.message, "error"))
    .finally(() => {
      ui.whyLoading = false;
      rerender();
    });
}

function selectPod(key) {
  ui.selectedPod = key;
  ui.whyFor = null;
  const pod = selectedPodObject();
  if (pod && !pod.spec.nodeName) {
    ui.tab = "why";
    askWhy();
  }
  broadcastView();
  rerender();
}

// Everything a follower needs to show the presenter's frame; `seq` orders the views.
let viewSeq = 0;
function presenterView() {
  const c = player.current;
  viewSeq = Math.max(viewSeq + 1, Date.now() * 1000);
  const v = { pod: ui.selectedPod, node: ui.selectedNode, tab: ui.tab, cycle: null, step: player.cursor, speed: player.speed, playing: player.playing, follow: player.follow, whatIf: null, lessonFocus: lesson.shownIndex(), seq: viewSeq, capacity: capacityPanel.request };
  if (c && c.whatIf && c.followYaml) v.whatIf = { yaml: c.followYaml, fixFor: c.fixFor || null, reexplained: !!c.reexplained };
  else if (c && !c.whatIf) v.cycle = c.cycle;
  return v;
}

function broadcastView() {
  const v = presenterView();
  writeView({ ...view, pod: v.pod, node: v.node, tab: v.tab, cycle: v.cycle, step: v.step });
  if (lesson.frozen) return; // the followers stay where they are (the server would not relay it either)
  if (!readOnly && socket.ws && socket.ws.readyState === WebSocket.OPEN) socket.send({ action: "view", ...v }).catch(() => {});
}

function handleWatch(msg) {
  const bucket = state.objects[msg.kind]; // list-watch: the object before this change
  listWatch.add(msg, bucket && msg.object ? bucket.get(objectKey(msg.object)) : null, performance.now());
  applyWatch(state, msg);
  if (msg.kind === "Pod" || msg.kind === "Node") refreshRequested();
  if (ui.selectedPod && msg.kind === "Pod" && objectKey(msg.object) === ui.selectedPod) askWhy();
  if (msg.kind === "Pod") prediction.podChanged(objectKey(msg.object), msg.object); // prediction
}

function handleCycle(msg) {
  player.add({ ...msg, receivedAt: Date.now(), resourceVersion: msg.resourceVersion || state.rv });
  ui.hideVerdicts = false;
  if (!msg.events && player.follow) loadLatestCycle();
}

function handle(msg) {
  if (msg.type === "snapshot") {
    state = applySnapshot(state, msg);
    socket.explainOverHttp ||= state.objects.Node.size > MAP_ABOVE; // node map: large what-ifs over HTTP
    refreshRequested();
    loadRecentCycles();
    if (!readOnly) lesson.frozen = !!(state.cluster.presenterView && state.cluster.presenterView.frozen);
    lesson.expect(state.cluster.lessonStep || 0);
    askWhy();
  } else if (msg.type === "watch") {
    handleWatch(msg);
  } else if (msg.type === "watch.batch") {
    for (const change of msg.changes) handleWatch(change); // a bulk write: one message, many changes
  } else if (msg.type === "scheduler.cycle") {
    handleCycle(msg);
  } else if (msg.type === "scheduler.cycles") {
    for (const cycle of msg.cycles) handleCycle(cycle); // a batch of cycles: one message
  } else if (msg.type === "eviction.scheduled") {
    applyEviction(state, msg);
  } else if (msg.type === "cluster.updated") {
    state.cluster = { ...state.cluster, ...msg.cluster };
    lesson.expect(state.cluster.lessonStep || 0);
  } else if (msg.type === "lesson.view") {
    if (lesson.receive(msg)) showLessonTitle();
  } else if (msg.type === "recording.changed") {
    if (recorder) recorder.refresh(); // record a lesson: a step was recorded
    return;
  } else if (msg.type === "profile.updated" || msg.type === "version.updated") {
    if (profilesPanel) profilesPanel.refreshStored(); // profiles (their plugins are the version's)
    if (msg.type === "version.updated" && versionSelect) versionSelect.value = msg.version;
  } else if (msg.type === "presenter.view" && readOnly) {
    followPresenter(msg);
  } else if (String(msg.type).startsWith("prediction.")) {
    prediction.receive(msg); // prediction
    if (msg.question && ["revealed", "cancelled"].includes(msg.question.state)) lesson.expect(state.cluster.lessonStep || 0);
  } else if (msg.type === "error" && !msg.id) {
    toast(msg.message, "error");
  } else {
    return;
  }
  rerender();
}

// A follower shows the presenter's frame: selection, tab, the cycle or what-if, step, speed, play.
let lastPresenterView = null;
const followedWhatIfs = new Map(); // what-if key → its cycle (or null while it is being asked)

function followPresenter(v) {
  if (lastPresenterView && (v.seq || 0) < (lastPresenterView.seq || 0)) return; // an older view, late
  lastPresenterView = v;
  lesson.follow(v.lessonFocus ?? null, v.frozen); // lesson: the step the presenter shows
  ui.selectedPod = v.pod || null;
  ui.selectedNode = v.node || null;
  if (v.tab) ui.tab = v.tab;
  if (v.speed) {
    player.speed = v.speed;
    $("#pipeline select.speed").value = String(v.speed);
  }
  capacityPanel.follow(v.capacity || null); // the presenter's capacity what-if, run here too
  if (v.whatIf) followWhatIf(v);
  else if (v.cycle !== null && v.cycle !== undefined) {
    player.follow = !!v.follow;
    loadCycle(v.cycle, v.step, v.playing);
  } else if (v.follow) player.follow = true;
  if (ui.tab === "why") askWhy();
}

function followWhatIf(v) {
  const key = JSON.stringify(v.whatIf);
  const known = followedWhatIfs.get(key);
  if (known) {
    player.follow = false;
    player.index = player.cycles.indexOf(known);
    player.cursor = Math.min(v.step ?? known.events.length, known.events.length);
    player.playing = !!v.playing;
    return;
  }
  if (followedWhatIfs.has(key)) return; // being asked
  followedWhatIfs.set(key, null);
  const { yaml, fixFor, reexplained } = v.whatIf;
  socket
    .send(fixFor ? { action: "fixes", yaml } : { action: "explain", yaml })
    .then((msg) => {
      let cycle;
      if (fixFor) {
        const entry = msg.fixes.nodes.find((n) => n.node === fixFor);
        if (!entry || !entry.events) return;
        whatIfCount += 1;
        cycle = { cycle: `what-if-${whatIfCount}`, pod: msg.fixes.pod, events: entry.events, whatIf: true, yaml: entry.fixedPod, fixFor, commands: entry.commands, receivedAt: Date.now(), resourceVersion: state.rv };
      } else cycle = whatIfCycle(msg.explanation, yaml, reexplained);
      player.cycles.push(cycle);
      followedWhatIfs.set(key, cycle);
      if (lastPresenterView && JSON.stringify(lastPresenterView.whatIf) === key) followWhatIf(lastPresenterView);
      rerender();
    })
    .catch((err) => {
      followedWhatIfs.delete(key);
      toast(err.message, "error");
    });
}

function showLessonTitle() {
  const label = $("#lesson-name");
  if (label && lesson.view) {
    const title = localized(lesson.view, "title");
    label.textContent = interpolate(gettext("lesson: %(title)s"), { title });
    label.title = title;
  }
}

// The cycles that ran before this page opened: summaries first, events when one is shown.
function loadRecentCycles() {
  fetch(`/api/clusters/${slug}/cycles`)
    .then((r) => (r.ok ? r.json() : { cycles: [] }))
    .then(({ cycles }) => {
      mergeSummaries(player, cycles);
      const presenter = state.cluster.presenterView;
      if (readOnly && presenter && Object.keys(presenter).length) followPresenter(presenter);
      else if (pendingCycleSeek) loadCycle(pendingCycleSeek.cycle, pendingCycleSeek.step);
      else if (!player.current && player.cycles.length) loadCycle(player.cycles[player.cycles.length - 1].cycle, null);
      rerender();
    });
}

function fetchCycle(number) {
  return fetch(`/api/clusters/${slug}/cycles/${number}`).then((r) => (r.ok ? r.json() : null));
}

// The board's bars: requested vs allocatable as the scheduler counts them (one fetch per burst).
let requestedTimer = null;
function refreshRequested() {
  if (requestedTimer) return;
  requestedTimer = setTimeout(() => {
    requestedTimer = null;
    fetch(`/api/clusters/${slug}/requested`)
      .then((r) => (r.ok ? r.json() : null))
      .then((msg) => {
        if (!msg) return;
        applyRequested(state, msg);
        rerender();
      })
      .catch(() => {});
  }, 100);
}

// A kept cycle's events, without moving the player (for Why Pending).
function loadCycleEvents(number) {
  const known = player.cycles.find((c) => c.cycle === number);
  if (!known || known.events || known.loading) return;
  known.loading = true;
  fetchCycle(number)
    .then((cycle) => {
      if (cycle) player.attachEvents(number, cycle.events);
      rerender();
    })
    .finally(() => {
      known.loading = false;
    });
}

// Show cycle `number` at `step` (its end when null), fetching its events first if needed; only the
// latest request moves the player (a follower's presenter may have moved on meanwhile).
let cycleRequest = 0;
function loadCycle(number, step, playing = false) {
  const request = ++cycleRequest;
  const show = () => {
    if (request !== cycleRequest) return;
    const follow = player.follow;
    player.seek(number, step);
    if (readOnly && lastPresenterView) player.follow = follow;
    player.playing = playing && !player.atEnd();
    rerender();
  };
  const known = player.cycles.find((c) => c.cycle === number);
  if (known && known.events) {
    show();
    return;
  }
  fetchCycle(number).then((cycle) => {
    if (!cycle) {
      toast(interpolate(gettext("cycle %(cycle)s is no longer kept"), { cycle: number }), "error");
      return;
    }
    if (!player.cycles.some((c) => c.cycle === number)) mergeSummaries(player, [cycle]);
    player.attachEvents(number, cycle.events);
    show();
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

// The board's verdicts: only those of the cycle being viewed, labelled, nodes changed since marked.
function boardVerdicts() {
  const cycle = player.current;
  const frame = ui.hideVerdicts ? null : player.frame();
  ui.stale = frame ? nodesChangedSince(state, cycle.resourceVersion) : new Set();
  ui.verdictSource = frame ? { label: cycleName(cycle), pod: cycle.pod, age: cycle.receivedAt ? interpolate(gettext("%(age)s ago"), { age: ageOf(cycle.receivedAt) }) : gettext("before this page opened") } : null;
  return frame;
}

function cycleName(cycle) {
  if (cycle.reexplained) return interpolate(gettext("re-explained %(pod)s"), { pod: cycle.pod });
  if (cycle.fixFor) return interpolate(gettext("what-if: fixed for %(node)s"), { node: cycle.fixFor });
  return cycle.whatIf ? gettext("what-if") : interpolate(gettext("cycle %(cycle)s"), { cycle: cycle.cycle });
}

function whatIfCycle(ex, yaml, reexplained = false) {
  whatIfCount += 1;
  return { cycle: `what-if-${whatIfCount}`, pod: ex.pod, events: ex.events, whatIf: true, explanation: ex, yaml, followYaml: yaml, reexplained, receivedAt: Date.now(), resourceVersion: state.rv };
}

// One click on an out-of-date verdict: the scheduler's answer for the viewed cycle's pod, now.
function reexplain() {
  const cycle = player.current;
  if (!cycle) return;
  const yaml = podTextOf(cycle);
  if (!yaml) {
    toast(interpolate(gettext("%(pod)s no longer exists: paste it in the editor and press Explain"), { pod: cycle.pod }), "error");
    return;
  }
  socket
    .send({ action: "explain", yaml })
    .then((msg) => {
      player.follow = false;
      player.cycles.push(whatIfCycle(msg.explanation, yaml, true));
      player.index = player.cycles.length - 1;
      player.toEnd();
      broadcastView();
      rerender();
    })
    .catch((err) => toast(err.message, "error"));
}

const render = () => {
  const frame = player.frame();
  // A drag in progress keeps its card: redrawing it would drop the drag on the floor.
  ui.touched = lesson.touched(); // lesson: the nodes and pods the shown step acts on
  if (!ui.dragging) renderBoard($("#board"), state, boardVerdicts(), ui);
  renderPipeline($("#pipeline"), player);
  renderTabs($("#detail"), ui.tab);
  for (const panel of document.querySelectorAll("#detail [data-panel]")) panel.hidden = panel.dataset.panel !== ui.tab;
  const pod = selectedPodObject();
  if (ui.tab === "why") {
    const cycle = whyCycle();
    if (!cycle || !cycle.events) askWhy();
    const why = whyOf(cycle);
    askFixes(cycle, why);
    const fixes = ui.fixes && ui.fixes.for === cycle ? ui.fixes : null;
    drawIf("why", [pod, cycle, cycle && cycle.events, ui.whyLoading, fixes, fixes && fixes.loading], () =>
      renderWhy($("[data-panel=why]"), { pod, cycle, why, loading: ui.whyLoading, fixes }),
    );
  }
  // node map: a large cycle's scoreboard is redrawn per stage, not per event.
  const big = wantsScoreboard(frame);
  const scoreDeps = big ? [player.current, frame.stage, frame.finished, frame.winner] : [player.current, player.cursor];
  if (ui.tab === "scores") drawIf("scores", scoreDeps, () => (big ? renderScoreboard : renderScores)($("[data-panel=scores]"), frame));
  renderPinnedNode($("#pinned-node"), state, frame, ui); // node map
  if (ui.tab === "events") {
    const whatIf = !pod && player.current && player.current.whatIf ? player.current : null;
    drawIf("events", [state.rv, pod, whatIf, Math.floor(Date.now() / 5000)], () =>
      renderEvents($("[data-panel=events]"), state, pod, whatIf && whatIf.events ? frameAt(whatIf, whatIf.events.length) : null),
    );
  }
  if (ui.tab === "listwatch") drawIf("listwatch", [listWatch.version], () => renderListWatch($("[data-panel=listwatch]"), listWatch, { onSelect: selectHop }));
  if (ui.tab === "lesson") {
    const shown = lesson.shownIndex();
    drawIf("lesson", [lesson.view, shown], () => renderLesson($("[data-panel=lesson]"), lesson.view, { next: () => lesson.runNext(), readOnly, shown }));
  }
  lesson.render(); // lesson: the rail (presenter mode)
  prediction.render({ pendingPods: pendingPodKeys, viewing: player.current ? { cycle: player.current.cycle, atEnd: player.atEnd() } : null }); // prediction
  $("#rv").textContent = state.rv;
  const pace = $("#pace");
  if (pace && state.cluster.pace && document.activeElement !== pace) pace.value = state.cluster.pace;
};
const rerender = frameBatcher(render);

// list-watch: a click on a hop shows the object at that hop.
function selectHop(tripId, hopIndex) {
  listWatch.select(tripId, hopIndex);
  rerender();
}

function pendingPodKeys() {
  return [...state.objects.Pod.values()].filter((p) => !p.spec.nodeName).map(objectKey);
}

// --- controls -----------------------------------------------------------------------------------

$("#board").addEventListener("click", (event) => {
  const act = event.target.closest("[data-act]");
  if (act && !readOnly) {
    const d = act.dataset;
    if (d.act === "delete-node" && confirm(interpolate(gettext("Delete node %(name)s? Its pods are deleted too."), { name: d.name }))) apply({ action: "delete", kind: "Node", name: d.name }).catch(() => {});
    else if (d.act === "delete-pod") apply({ action: "delete", kind: "Pod", name: d.name, namespace: d.namespace }).catch(() => {});
    else if (d.act === "scale") apply({ action: "scale", kind: "Deployment", name: d.name, namespace: d.namespace, replicas: Math.max(0, parseInt(d.replicas, 10)) }).catch(() => {});
    return;
  }
  const verdicts = event.target.closest("[data-verdicts]");
  if (verdicts) {
    ui.hideVerdicts = verdicts.dataset.verdicts === "hide";
    rerender();
    return;
  }
  if (event.target.closest("[data-reexplain]")) {
    reexplain();
    return;
  }
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
    if (readOnly && prediction.chooseNode(card.dataset.node)) return rerender(); // prediction: a follower's pick
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

wireJoinCard($("#join-card"), $("#join-dialog"));

document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") palette.cancel();
  else lesson.keydown(event); // lesson: → ← P R F in presenter mode
});

// node map: a click or Enter on a cell pins that node (or applies the armed chip); ✕ unpins (node null).
$("#board").addEventListener("nodemap:pin", (event) => {
  const name = event.detail.node;
  if (name && readOnly && prediction.chooseNode(name)) return rerender(); // prediction: a follower's pick
  if (name && palette.chooseNode(name)) return;
  ui.selectedNode = name;
  broadcastView();
  rerender();
});

$("#detail").addEventListener("click", (event) => {
  const fix = event.target.closest("[data-fix-whatif]");
  if (fix) {
    showFix(fix.dataset.fixWhatif);
    return;
  }
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
  else if (what === "event") {
    player.pause();
    player.step();
  }
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
  broadcastView();
});

// The kube-scheduler version (owner only): the server re-tries every pending pod under it.
const versionSelect = $("#k8s-version");
if (versionSelect && !versionSelect.disabled) {
  versionSelect.addEventListener("change", async () => {
    const wanted = versionSelect.value;
    try {
      const shown = await callJson(`/api/clusters/${slug}/version`, "PUT", { version: wanted });
      toast(interpolate(gettext("the scheduler now answers as Kubernetes v%(version)s"), { version: shown.version }));
    } catch (err) {
      toast(err.message, "error");
      versionSelect.value = versionSelect.dataset.current || versionSelect.value;
    }
    versionSelect.dataset.current = versionSelect.value;
  });
}
const paceSelect = $("#pace");
if (paceSelect) {
  paceSelect.addEventListener("change", () => apply({ action: "pace", pace: paceSelect.value }).catch(() => {}));
  $("#step-button").addEventListener("click", () => apply({ action: "step" }).catch(() => {}));
}

// The player's clock and the List-Watch animation (paced by the cluster's pace).
let last = performance.now();
function tick(now) {
  let dirty = listWatch.advance(now, state.cluster.pace || "instant");
  const interval = (player.playing ? eventDuration(player.nextEvent()) : 220) / player.speed;
  if (now - last >= interval) {
    last = now;
    if (player.playing) dirty = player.step() || true;
  }
  if (dirty) rerender();
  requestAnimationFrame(tick);
}
requestAnimationFrame(tick);
setInterval(rerender, 1000); // the ages of cycles and the eviction countdowns
document.addEventListener("dragstart", () => {
  ui.dragging = true;
});
for (const type of ["dragend", "drop"]) {
  document.addEventListener(type, () => {
    ui.dragging = false;
    rerender();
  });
}
for (const which of ["undo", "redo"]) {
  const button = $(`#${which}`);
  if (button) button.addEventListener("click", () => undoOrRedo(which));
}
document.addEventListener("keydown", (event) => {
  if (readOnly || !(event.ctrlKey || event.metaKey) || event.target.closest("textarea, input")) return;
  if (event.key === "z" || event.key === "Z") {
    event.preventDefault();
    undoOrRedo(event.shiftKey ? "redo" : "undo");
  } else if (event.key === "y") {
    event.preventDefault();
    undoOrRedo("redo");
  }
});
renderHistory();
if (ui.tab === "why") askWhy();
rerender();
