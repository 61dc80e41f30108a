// Recording a lesson, as the editor holds it (pure): the server's recording (each step's command
// and the texts it starts with: clusterviz/lesson_recording.py) and the teacher's draft over it —
// the lesson's name, title, summary and topic, and per step its texts, its wait and its question.
// The draft travels to the server as it is (`/recording/lesson`), which validates the lesson file.

export const LESSON_FIELDS = ["name", "title", "summary", "topic"];
export const STEP_FIELDS = ["say", "after", "command"];

export function emptyRecorder() {
  return { recording: null, draft: { steps: {} }, topics: [], check: null };
}

// The server's answer to GET/POST /recording: the draft the server kept wins only when this
// editor has none yet (a reload); afterwards the editor's own edits are newer.
export function receiveRecording(state, { recording, topics }) {
  const fresh = !state.recording;
  const draft = fresh && recording && recording.draft ? normalDraft(recording.draft) : state.draft;
  return { ...state, recording, topics: topics || state.topics, draft: recording ? draft : { steps: {} } };
}

function normalDraft(draft) {
  return { ...draft, steps: { ...(draft.steps || {}) } };
}

// One step as it will be written: the teacher's text where there is one, else the recorded default.
export function stepView(step, draft) {
  const edit = (draft.steps && draft.steps[String(step.id)]) || {};
  const text = (field) => (edit[field] !== undefined && edit[field] !== null ? edit[field] : step[field]);
  return {
    id: step.id,
    say: text("say"),
    after: text("after"),
    command: text("command"),
    wait: edit.wait || 0,
    predict: edit.predict || null,
    pods: step.pods || [],
    edited: STEP_FIELDS.some((field) => edit[field] !== undefined && edit[field] !== step[field]),
  };
}

export function setLessonField(state, field, value) {
  if (!LESSON_FIELDS.includes(field)) throw new Error(`not a lesson field: ${field}`);
  return { ...state, draft: { ...state.draft, [field]: value } };
}

function withStep(state, id, change) {
  const steps = { ...state.draft.steps };
  const key = String(id);
  const edit = change({ ...(steps[key] || {}) });
  if (Object.keys(edit).length) steps[key] = edit;
  else delete steps[key];
  return { ...state, draft: { ...state.draft, steps } };
}

// A step's text (say, after, command); the recorded default again when it is set back to it.
export function setStepText(state, id, field, value) {
  if (!STEP_FIELDS.includes(field)) throw new Error(`not a step text: ${field}`);
  const recorded = ((state.recording && state.recording.steps) || []).find((step) => step.id === id);
  return withStep(state, id, (edit) => {
    if (recorded && recorded[field] === value) delete edit[field];
    else edit[field] = value;
    return edit;
  });
}

export function setStepWait(state, id, seconds) {
  const wait = Number(seconds);
  return withStep(state, id, (edit) => {
    if (Number.isFinite(wait) && wait > 0) edit.wait = wait;
    else delete edit.wait;
    return edit;
  });
}

// Ask the class at this step (`predict`), or not (null); a new question is about the step's first pod.
export function setQuestion(state, id, predict) {
  return withStep(state, id, (edit) => {
    if (predict) edit.predict = { question: "", ask: "node", ...(edit.predict || {}), ...predict };
    else delete edit.predict;
    return edit;
  });
}

export function firstPod(step) {
  return (step.pods && step.pods[0]) || "";
}

// The server's verdict on the draft: the file (valid) or the error, with the step and field it is about.
export function receiveCheck(state, result) {
  return { ...state, check: result };
}

export function checkFromError(body) {
  const details = (body && body.details) || {};
  return { ok: false, message: (body && body.message) || "", step: details.step ?? null, field: details.field ?? null };
}

export function checkFromFile(body) {
  return { ok: true, fileName: body.fileName, yaml: body.yaml };
}
