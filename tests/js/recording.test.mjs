// Recording a lesson, the editor's model (static/js/model/recording.js): the teacher's draft over
// the recorded steps, what each step will say, and the server's verdict on the file.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  checkFromError,
  checkFromFile,
  emptyRecorder,
  receiveRecording,
  setLessonField,
  setQuestion,
  setStepText,
  setStepWait,
  stepView,
} from "../../static/js/model/recording.js";

const RECORDING = {
  active: true,
  steps: [
    { id: 1, command: "kubectl apply -f picky.yaml", say: "Create Pod picky.", after: "default/picky stays Pending.", pods: ["default/picky"] },
    { id: 2, command: "kubectl label node node03 disk=ssd --overwrite", say: "Label node node03 with disk=ssd.", after: "default/picky was scheduled on node03.", pods: ["default/picky"] },
  ],
  draft: { title: "Kept", steps: { 2: { say: "Label it." } } },
};

test("recording: the server's draft is taken once (a reload), then the editor's edits win", () => {
  let state = receiveRecording(emptyRecorder(), { recording: RECORDING, topics: [{ key: "kubectl", title: "kubectl" }] });
  assert.equal(state.draft.title, "Kept");
  assert.equal(stepView(RECORDING.steps[1], state.draft).say, "Label it.");
  state = setLessonField(state, "title", "Mine");
  state = receiveRecording(state, { recording: { ...RECORDING, draft: { title: "Kept" } } });
  assert.equal(state.draft.title, "Mine");
  assert.deepEqual(state.topics, [{ key: "kubectl", title: "kubectl" }]);
  assert.deepEqual(receiveRecording(state, { recording: null }).draft, { steps: {} });
  assert.throws(() => setLessonField(state, "objects", "x"), /not a lesson field/);
});

test("recording: a step's texts are the recorded ones until edited, and again once set back", () => {
  let state = receiveRecording(emptyRecorder(), { recording: { ...RECORDING, draft: {} } });
  const step = RECORDING.steps[0];
  assert.deepEqual(stepView(step, state.draft), {
    id: 1,
    say: "Create Pod picky.",
    after: "default/picky stays Pending.",
    command: "kubectl apply -f picky.yaml",
    wait: 0,
    predict: null,
    pods: ["default/picky"],
    edited: false,
  });
  state = setStepText(state, 1, "after", "picky waits.");
  assert.equal(stepView(step, state.draft).after, "picky waits.");
  assert.equal(stepView(step, state.draft).edited, true);
  state = setStepText(state, 1, "after", "default/picky stays Pending.");
  assert.deepEqual(state.draft.steps, {}); // nothing left to keep
  state = setStepWait(state, 1, "65");
  assert.equal(state.draft.steps["1"].wait, 65);
  state = setStepWait(state, 1, "");
  assert.deepEqual(state.draft.steps, {});
  assert.throws(() => setStepText(state, 1, "do", "x"), /not a step text/);
});

test("recording: a question is about the step's pod, asks which node by default, and goes when unticked", () => {
  let state = receiveRecording(emptyRecorder(), { recording: { ...RECORDING, draft: {} } });
  state = setQuestion(state, 2, { pod: "default/picky" });
  assert.deepEqual(state.draft.steps["2"].predict, { question: "", ask: "node", pod: "default/picky" });
  state = setQuestion(state, 2, { question: "Where?" });
  state = setQuestion(state, 2, { ask: "schedules" });
  assert.deepEqual(state.draft.steps["2"].predict, { question: "Where?", ask: "schedules", pod: "default/picky" });
  state = setQuestion(state, 2, null);
  assert.deepEqual(state.draft.steps, {});
});

test("recording: the server's verdict, the file or the step and field it is about", () => {
  assert.deepEqual(checkFromFile({ fileName: "a.yaml", yaml: "name: a\n" }), { ok: true, fileName: "a.yaml", yaml: "name: a\n" });
  assert.deepEqual(checkFromError({ message: "a.yaml:9: steps[1].say: gives the answer away", details: { step: 2, field: "say" } }), {
    ok: false,
    message: "a.yaml:9: steps[1].say: gives the answer away",
    step: 2,
    field: "say",
  });
  assert.deepEqual(checkFromError({ message: "recording: nothing was recorded" }), { ok: false, message: "recording: nothing was recorded", step: null, field: null });
});
