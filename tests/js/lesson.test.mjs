// Unit tests of the lesson rail's pure model (node --test tests/js/).

import assert from "node:assert/strict";
import { test } from "node:test";

import { backIntent, emptyLesson, focusOn, forwardIntent, forwardLabel, isNewer, keyIntent, reduceLesson, shownIndex, stepStatus, touchedBy, touchesPod } from "../../static/js/model/lesson.js";

// Views as clusterviz/lesson_view.py sends them (a presenter's: every step; the class's: up to the next).
const step = (number, extra = {}) => ({ number, ran: false, say: `say ${number}`, command: `kubectl ${number}`, touches: { nodes: [], pods: [] }, ...extra });
const ask = { question: "Which node?", pod: "default/p", ask: "node" };
function view(ran, items, extra = {}) {
  return { name: "l", title: "L", summary: "", pace: null, steps: 3, questions: 1, ran, done: ran >= 3, items, ...extra };
}
const atStart = view(0, [step(1), step(2, { predict: ask }), step(3)]);
const oneRan = view(1, [step(1, { ran: true, after: "after 1" }), step(2, { predict: ask }), step(3)]);
const answering = view(2, [step(1, { ran: true, after: "after 1" }), step(2, { ran: true, predict: ask, awaiting: "reveal" }), step(3)]);
const revealed = view(2, [step(1, { ran: true, after: "after 1" }), step(2, { ran: true, predict: ask, after: "after 2" }), step(3)]);
const presenterGets = (lesson) => ({ type: "lesson.view", audience: "presenter", lesson });

test("a presenter takes the presenters' view, a follower the class's, and never an older one", () => {
  let s = reduceLesson(emptyLesson(), presenterGets(atStart), { presenter: true });
  assert.equal(s.view, atStart);
  assert.equal(reduceLesson(emptyLesson(), presenterGets(atStart), { presenter: false }).view, null, "the class ignores the presenters' copy");
  assert.equal(reduceLesson(s, { type: "lesson.view", audience: "class", lesson: oneRan }, { presenter: true }), s);
  s = reduceLesson(s, presenterGets(revealed), { presenter: true });
  assert.equal(reduceLesson(s, presenterGets(answering), { presenter: true }).view, revealed, "a late view shows less: kept out");
  assert.ok(isNewer(answering, revealed) && !isNewer(revealed, answering) && isNewer(revealed, view(3, [])));
});

test("the rail shows the step that ran last, or where the presenter moved, never past the next one", () => {
  assert.equal(shownIndex({ view: atStart, focus: null }), 0);
  assert.equal(shownIndex({ view: oneRan, focus: null }), 0, "the step that just ran, with what happened");
  assert.equal(shownIndex({ view: oneRan, focus: 1 }), 1);
  assert.equal(shownIndex({ view: oneRan, focus: 2 }), 1, "not past the next step to run");
  assert.equal(shownIndex({ view: null, focus: 1 }), null);
});

test("ArrowRight: run a step, move on to the next one's instruction, ask before a question, reveal", () => {
  assert.deepEqual(forwardIntent({ view: atStart, focus: null }, null), { intent: "run", step: atStart.items[0] });
  assert.deepEqual(forwardIntent({ view: oneRan, focus: null }, null), { intent: "focus", to: 1 });
  const before = forwardIntent({ view: oneRan, focus: 1 }, null);
  assert.equal(before.intent, "ask");
  assert.equal(forwardLabel(before, oneRan), "ask & run step 2");
  assert.deepEqual(forwardIntent({ view: answering, focus: 1 }, { state: "open" }), { intent: "reveal" });
  assert.deepEqual(forwardIntent({ view: revealed, focus: 1 }, { state: "revealed" }), { intent: "focus", to: 2 });
  assert.deepEqual(forwardIntent({ view: revealed, focus: 0 }, null), { intent: "focus", to: 1 }, "back in the past: one step on");
  const done = view(3, revealed.items.concat());
  done.items[2] = step(3, { ran: true, after: "after 3" });
  assert.deepEqual(forwardIntent({ view: done, focus: 2 }, null), { intent: "none" });
  assert.equal(forwardLabel({ intent: "none" }, done), "lesson complete");
});

test("ArrowLeft goes back one step at a time, down to the first", () => {
  assert.deepEqual(backIntent({ view: revealed, focus: 1 }), { intent: "focus", to: 0 });
  assert.deepEqual(backIntent(focusOn({ view: revealed, focus: 1 }, 0)), { intent: "none" });
});

test("the keys and the step's status", () => {
  assert.deepEqual(["ArrowRight", "ArrowLeft", "p", "R", "f", "x"].map(keyIntent), ["forward", "back", "ask", "reveal", "freeze", null]);
  assert.deepEqual(stepStatus(answering.items[1], answering), { where: "answering", label: "Step 2 of 3" });
  assert.equal(stepStatus(atStart.items[0], atStart).where, "next");
  assert.equal(stepStatus(oneRan.items[0], oneRan).where, "ran");
});

test("a step lights its nodes and pods, a workload's by prefix", () => {
  const touched = touchedBy(step(1, { touches: { nodes: ["node01"], pods: ["default/myapp-*", "default/p"] } }));
  assert.ok(touched.nodes.has("node01"));
  assert.ok(touchesPod(touched, "default/myapp-5d9f-abcde") && touchesPod(touched, "default/p"));
  assert.ok(!touchesPod(touched, "default/pod") && !touchesPod(null, "default/p"));
});
