// Prediction mode, the pure part: what a board knows of the class question (from the server's
// `prediction.question` / `prediction.tally` messages and its own pick), the tally's bars, and each
// pick's mark. The right answer is the server's (the scheduler's cycle), never computed here.

import { gettext, interpolate } from "../lib/i18n.js";

export const PENDING = "@pending";
export const SCHEDULED = "@scheduled";

export function pickLabel(pick) {
  if (pick === PENDING) return gettext("stays Pending");
  if (pick === SCHEDULED) return gettext("schedules");
  return pick;
}

export function emptyPrediction() {
  return { question: null, mine: null, chosen: null, counts: {}, answered: 0 };
}

// Fold one stream message (or the answer's result) into the board's prediction state.
export function reducePrediction(state, msg) {
  if (msg.type === "prediction.question") {
    const q = msg.question;
    const same = state.question && state.question.number === q.number;
    const next = same ? { ...state, question: q } : { ...emptyPrediction(), question: q };
    if ("mine" in msg) next.mine = msg.mine;
    if (q.counts) {
      next.counts = q.counts;
      next.answered = q.score ? q.score.answered : sumOf(q.counts);
    }
    return next;
  }
  if (msg.type === "prediction.tally") {
    if (!state.question || state.question.number !== msg.number) return state;
    return { ...state, counts: msg.counts, answered: msg.answered };
  }
  if (msg.type === "prediction.answered") {
    if (!state.question || state.question.number !== msg.question) return state;
    return { ...state, mine: msg.pick, chosen: msg.pick };
  }
  if (msg.type === "prediction.chosen") {
    if (!canChoose(state, msg.local) || !state.question.options.includes(msg.pick)) return state;
    return { ...state, chosen: msg.pick };
  }
  return state;
}

// Whether a pick may still be chosen: the question is open and this board has not answered
// (`local`: a presenter's own guess, which is kept here and never sent).
export function canChoose(state, local = false) {
  const q = state.question;
  if (!q || q.state !== "open") return false;
  return local ? true : !state.mine;
}

function sumOf(counts) {
  return Object.values(counts || {}).reduce((a, b) => a + b, 0);
}

// One bar per choice, in the question's order: its count, its share of the answers, and, once
// revealed, whether it was the right one.
export function tallyBars(state) {
  const q = state.question;
  if (!q) return [];
  const counts = state.counts || {};
  const answered = sumOf(counts);
  const top = Math.max(1, ...Object.values(counts));
  return q.options.map((pick) => {
    const count = counts[pick] || 0;
    return {
      pick,
      label: pickLabel(pick),
      count,
      share: answered ? count / answered : 0,
      width: count / top,
      right: q.state === "revealed" ? pick === q.outcome : null,
    };
  });
}

// The mark of a pick once revealed: "right", "wrong", "none" (no pick), or null before the reveal.
export function markOf(question, pick) {
  if (!question || question.state !== "revealed") return null;
  if (!pick) return "none";
  return pick === question.outcome ? "right" : "wrong";
}

export function scoreLine(score) {
  if (!score || !score.answered) return gettext("no follower answered");
  const percent = Math.round((100 * score.right) / score.answered);
  return interpolate(gettext("%(right)s of %(answered)s right (%(percent)s)"), { right: score.right, answered: score.answered, percent: `${percent}%` });
}

// What the scheduler did, in words, for the revealed question.
export function outcomeLine(question) {
  if (!question || question.state !== "revealed") return "";
  const pod = question.pod;
  const where = question.cycle === null || question.cycle === undefined ? "" : interpolate(gettext(" (cycle %(cycle)s)"), { cycle: question.cycle });
  const message = question.message; // kube-scheduler's own words, verbatim
  if (question.outcome === PENDING) {
    const nominated = question.nominated ? interpolate(gettext(", nominated for %(node)s by preemption"), { node: question.nominated }) : "";
    return interpolate(gettext("%(pod)s stays Pending%(nominated)s%(where)s: %(message)s"), { pod, nominated, where, message });
  }
  if (question.outcome === SCHEDULED) return interpolate(gettext("%(pod)s schedules%(where)s: %(message)s"), { pod, where, message });
  return interpolate(gettext("%(pod)s lands on %(node)s%(where)s"), { pod, node: question.outcome, where });
}

// Hold the marks until the question's cycle has played on this board (or it is not the one shown).
export function marksShown(question, viewing) {
  if (!question || question.state !== "revealed") return false;
  if (!viewing || question.cycle === null || question.cycle === undefined) return true;
  return viewing.cycle !== question.cycle || viewing.atEnd;
}

// A lesson step's `predict:` block as the pose action's fields, or null (absent or malformed).
export function lessonQuestion(step) {
  const p = step && step.predict;
  if (!p || typeof p !== "object" || typeof p.pod !== "string" || !p.pod) return null;
  const ask = p.ask === "schedules" ? "schedules" : "node";
  return { question: typeof p.question === "string" ? p.question : "", pod: p.pod, ask };
}
