// Unit tests of prediction mode's pure model (node --test tests/js/).

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  PENDING,
  SCHEDULED,
  canChoose,
  emptyPrediction,
  lessonQuestion,
  markOf,
  marksShown,
  outcomeLine,
  pickLabel,
  reducePrediction,
  scoreLine,
  tallyBars,
} from "../../static/js/model/prediction.js";

// The messages as clusterviz/prediction.py sends them.
const open = { number: 1, text: "Which node?", pod: "default/nginx", ask: "node", options: ["n1", "n2", PENDING], state: "open" };
const revealed = { ...open, state: "revealed", outcome: "n2", cycle: 7, nominated: null, message: "Successfully assigned default/nginx to n2", counts: { n2: 3, n1: 1 }, score: { right: 3, answered: 4 } };

test("a posed question, the live tally, and the reveal fold into the board's state", () => {
  let s = reducePrediction(emptyPrediction(), { type: "prediction.question", question: open, mine: null });
  assert.equal(s.question.state, "open");
  assert.equal(s.mine, null);
  s = reducePrediction(s, { type: "prediction.tally", number: 1, counts: { n1: 1 }, answered: 1 });
  assert.deepEqual(s.counts, { n1: 1 });
  s = reducePrediction(s, { type: "prediction.tally", number: 9, counts: { n1: 5 }, answered: 5 });
  assert.deepEqual(s.counts, { n1: 1 }, "a tally of another question is ignored");
  s = reducePrediction(s, { type: "prediction.answered", question: 1, pick: "n2" });
  assert.equal(s.mine, "n2");
  s = reducePrediction(s, { type: "prediction.question", question: revealed });
  assert.equal(s.mine, "n2", "the reveal keeps this board's own answer");
  assert.deepEqual(s.counts, { n2: 3, n1: 1 });
  assert.equal(s.answered, 4);
  const next = reducePrediction(s, { type: "prediction.question", question: { ...open, number: 2 } });
  assert.equal(next.mine, null, "a new question starts with no answer");
  assert.deepEqual(next.counts, {});
});

test("a follower chooses only among the choices, until they answered; a presenter's own guess stays local", () => {
  let s = reducePrediction(emptyPrediction(), { type: "prediction.question", question: open, mine: null });
  assert.ok(canChoose(s));
  s = reducePrediction(s, { type: "prediction.chosen", pick: "n9" });
  assert.equal(s.chosen, null);
  s = reducePrediction(s, { type: "prediction.chosen", pick: PENDING });
  assert.equal(s.chosen, PENDING);
  s = reducePrediction(s, { type: "prediction.answered", question: 1, pick: PENDING });
  assert.equal(canChoose(s), false);
  assert.equal(reducePrediction(s, { type: "prediction.chosen", pick: "n1" }).chosen, PENDING);
  assert.equal(reducePrediction(s, { type: "prediction.chosen", pick: "n1", local: true }).chosen, "n1");
  const closed = reducePrediction(s, { type: "prediction.question", question: revealed });
  assert.equal(canChoose(closed, true), false, "nothing is chosen after the reveal");
});

test("the tally's bars: one per choice in order, shares of the answers, the right one marked after the reveal", () => {
  const live = { question: open, counts: { n2: 2, [PENDING]: 1 } };
  const bars = tallyBars(live);
  assert.deepEqual(bars.map((b) => [b.label, b.count, b.right]), [["n1", 0, null], ["n2", 2, null], ["stays Pending", 1, null]]);
  assert.equal(bars[1].share, 2 / 3);
  assert.equal(bars[1].width, 1);
  assert.equal(bars[2].width, 0.5);
  const after = tallyBars({ question: revealed, counts: revealed.counts });
  assert.deepEqual(after.map((b) => b.right), [false, true, false]);
  assert.deepEqual(tallyBars({ question: open, counts: {} }).map((b) => b.share), [0, 0, 0]);
});

test("marks and the class score come from the server's outcome", () => {
  assert.equal(markOf(open, "n2"), null);
  assert.equal(markOf(revealed, "n2"), "right");
  assert.equal(markOf(revealed, "n1"), "wrong");
  assert.equal(markOf(revealed, null), "none");
  assert.equal(scoreLine(revealed.score), "3 of 4 right (75%)");
  assert.equal(scoreLine({ right: 0, answered: 0 }), "no follower answered");
  assert.equal(outcomeLine(revealed), "default/nginx lands on n2 (cycle 7)");
  const pending = { ...revealed, ask: "schedules", outcome: PENDING, nominated: "n1", message: "0/2 nodes are available" };
  assert.equal(outcomeLine(pending), "default/nginx stays Pending, nominated for n1 by preemption (cycle 7): 0/2 nodes are available");
  assert.equal(pickLabel(SCHEDULED), "schedules");
});

test("marks wait until the question's cycle has played on this board", () => {
  assert.equal(marksShown(revealed, { cycle: 7, atEnd: false }), false);
  assert.equal(marksShown(revealed, { cycle: 7, atEnd: true }), true);
  assert.equal(marksShown(revealed, { cycle: 6, atEnd: false }), true);
  assert.equal(marksShown({ ...revealed, cycle: null }, { cycle: 7, atEnd: false }), true, "bound by nodeName: no cycle to wait for");
  assert.equal(marksShown(open, null), false);
});

test("a lesson step's predict block becomes the pose; a step without one (or a malformed one) poses nothing", () => {
  assert.deepEqual(lessonQuestion({ say: "x", predict: { question: "Which node?", pod: "default/nginx", ask: "node" } }), { question: "Which node?", pod: "default/nginx", ask: "node" });
  assert.deepEqual(lessonQuestion({ predict: { pod: "p", ask: "schedules" } }), { question: "", pod: "p", ask: "schedules" });
  assert.equal(lessonQuestion({ say: "x" }), null);
  assert.equal(lessonQuestion({ predict: { question: "no pod" } }), null);
  assert.equal(lessonQuestion(undefined), null);
});
