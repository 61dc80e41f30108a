// The lesson as this board was sent it (`lesson.view` messages: the server decides what each viewer
// may see — no step's outcome before it is shown), the step the rail shows, and what a presenter's
// key does there. Pure: no DOM.
//
// The rail shows one step at a time. Before it runs: its instruction (`say`, `command`); once it ran:
// also what happened (`after`), or that the class is answering. ArrowRight walks the lesson one beat
// at a time: run a step (asking its question first, if it has one), reveal an open question, move on
// to the next step's instruction; ArrowLeft steps back through the steps that ran.

import { gettext, interpolate } from "../lib/i18n.js";

export function emptyLesson() {
  return { view: null, focus: null }; // focus: the item index the presenter moved to (null: the latest)
}

function afterCount(view) {
  return view.items.filter((item) => item.after !== undefined).length;
}

// Whether `incoming` shows at least as much as `current`: views of one lesson only grow (steps run,
// outcomes shown), and two publishers (a step, a reveal) may deliver theirs out of order.
export function isNewer(current, incoming) {
  if (!current || current.name !== incoming.name) return true;
  if (incoming.ran !== current.ran) return incoming.ran > current.ran;
  return afterCount(incoming) >= afterCount(current);
}

// Fold a `lesson.view` message: a presenter takes the presenters' copy, anyone else the class's.
export function reduceLesson(state, msg, { presenter }) {
  if (msg.type !== "lesson.view" || !msg.lesson) return state;
  if (msg.audience !== (presenter ? "presenter" : "class")) return state;
  if (!isNewer(state.view, msg.lesson)) return state;
  return { ...state, view: msg.lesson };
}

// The item the rail shows: the focus (a presenter's, or the one a follower was sent), else the step
// that ran last (the first one before any ran); never past the next step to run.
export function shownIndex(state) {
  const view = state.view;
  if (!view || !view.items.length) return null;
  const latest = Math.max(0, view.ran - 1);
  const wanted = state.focus === null || state.focus === undefined ? latest : state.focus;
  return Math.max(0, Math.min(wanted, view.ran, view.items.length - 1));
}

export function shownItem(state) {
  const index = shownIndex(state);
  return index === null ? null : state.view.items[index];
}

export function focusOn(state, index) {
  return { ...state, focus: index };
}

// What ArrowRight does from the step shown: "focus" (to the next step: `to`), "reveal" (the open
// question of the step that ran last), "ask" (pose the next step's question, then run it), "run", or
// "none" (the lesson is over).
export function forwardIntent(state, question) {
  const index = shownIndex(state);
  if (index === null) return { intent: "none" };
  const view = state.view;
  if (index < view.ran - 1) return { intent: "focus", to: index + 1 };
  if (index === view.ran - 1) {
    if (question && question.state === "open") return { intent: "reveal" };
    return view.ran < view.steps ? { intent: "focus", to: view.ran } : { intent: "none" };
  }
  return { intent: view.items[index].predict ? "ask" : "run", step: view.items[index] };
}

export function backIntent(state) {
  const index = shownIndex(state);
  return index ? { intent: "focus", to: index - 1 } : { intent: "none" };
}

// The label of the forward button (its key is ArrowRight).
export function forwardLabel(forward, view) {
  if (forward.intent === "reveal") return gettext("reveal");
  if (forward.intent === "ask") return interpolate(gettext("ask & run step %(number)s"), { number: forward.step.number });
  if (forward.intent === "run") return interpolate(gettext("run step %(number)s"), { number: forward.step.number });
  if (forward.intent === "focus") return interpolate(gettext("step %(number)s"), { number: forward.to + 1 });
  return view && view.done ? gettext("lesson complete") : "—";
}

// A presenter's key on the rail → "back", "forward", "ask", "reveal", "freeze", or null.
export function keyIntent(key) {
  return { ArrowRight: "forward", ArrowLeft: "back", p: "ask", P: "ask", r: "reveal", R: "reveal", f: "freeze", F: "freeze" }[key] || null;
}

// "Step 3 of 7" and where the step is: "next" (not run yet), "answering" (its question waits for the
// reveal), "ran".
export function stepStatus(item, view) {
  const where = !item.ran ? "next" : item.awaiting ? "answering" : "ran";
  return { where, label: interpolate(gettext("Step %(number)s of %(steps)s"), { number: item.number, steps: view.steps }) };
}

// The nodes and pods a step acts on, for the board to light (pods: "ns/name" or "ns/name-*").
export function touchedBy(item) {
  const touches = (item && item.touches) || { nodes: [], pods: [] };
  return { nodes: new Set(touches.nodes || []), pods: touches.pods || [] };
}

export function touchesPod(touched, key) {
  if (!touched) return false;
  return touched.pods.some((pattern) => (pattern.endsWith("*") ? key.startsWith(pattern.slice(0, -1)) : key === pattern));
}
