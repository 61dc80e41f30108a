// The lesson as this board was sent it (`lesson.view` messages: the server decides what each viewer
// may see — no step's outcome before it is shown), the rail's focus, and what a presenter's key does.
// Pure: no DOM.

export function emptyLesson() {
  return { view: null, focus: null }; // focus: an item index the presenter stepped back to (null: live)
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

// The step the class is on: one that ran and waits for its question's reveal, else the next one to
// run, else (the lesson done) the last one.
export function currentIndex(view) {
  if (!view || !view.items.length) return null;
  const ran = view.ran;
  if (ran > 0 && view.items[ran - 1] && view.items[ran - 1].awaiting) return ran - 1;
  if (ran < view.steps && view.items[ran]) return ran;
  return Math.min(ran, view.items.length) - 1;
}

// The item the rail shows: the focus stepped back to, else the current one.
export function shownIndex(state) {
  const current = currentIndex(state.view);
  if (current === null) return null;
  return state.focus === null || state.focus >= current ? current : state.focus;
}

export function focusBack(state) {
  const shown = shownIndex(state);
  if (shown === null || shown === 0) return state;
  return { ...state, focus: shown - 1 };
}

// One step forward through what was stepped back over; null when the rail is live already.
export function focusForward(state) {
  const current = currentIndex(state.view);
  if (state.focus === null || current === null) return null;
  return { ...state, focus: state.focus + 1 >= current ? null : state.focus + 1 };
}

// The next step to run, if any (with its question for a presenter).
export function nextStep(view) {
  if (!view || view.ran >= view.steps) return null;
  return view.items[view.ran] || null;
}

// What ArrowRight does at the live end of the rail: reveal an open question, ask the next step's
// question (and run the step), run it, or nothing (the lesson is over).
export function forwardIntent(view, question) {
  if (question && question.state === "open") return "reveal";
  const next = nextStep(view);
  if (!next) return "none";
  return next.predict ? "ask" : "run";
}

// A presenter's key on the rail → an intent ("back", "forward", "ask", "reveal", "freeze") or null.
export function keyIntent(key) {
  return { ArrowRight: "forward", ArrowLeft: "back", p: "ask", P: "ask", r: "reveal", R: "reveal", f: "freeze", F: "freeze" }[key] || null;
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
