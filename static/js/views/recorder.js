// "Record a lesson": start recording, act on the cluster (the board, pasted YAML, kubectl), and
// each change arrives here as a step; the teacher rewrites its texts, adds a question, and
// downloads the lesson file — checked by the server as the built-in lessons are after every edit,
// an error marked on the step and field it is about. Thin: the model is model/recording.js.

import { downloadFile, h, keyed, replace } from "../lib/dom.js";
import { exchangeJson as call } from "../lib/http.js";
import { gettext, interpolate, ngettext } from "../lib/i18n.js";
import {
  checkFromError,
  checkFromFile,
  emptyRecorder,
  firstPod,
  receiveCheck,
  receiveRecording,
  setLessonField,
  setQuestion,
  setStepText,
  setStepWait,
  stepView,
} from "../model/recording.js";

const CHECK_AFTER_MS = 500; // an edit is checked once typing pauses

export class RecorderPanel {
  constructor(root, { slug, toast }) {
    Object.assign(this, { root, slug, toast });
    this.body = root.querySelector(".recorder-body");
    this.state = emptyRecorder();
    this.checking = null;
    this.busy = false;
    this.body.addEventListener("input", (event) => this.edited(event.target));
    this.body.addEventListener("change", (event) => this.edited(event.target, true));
    this.load();
  }

  get base() {
    return `/api/clusters/${this.slug}/recording`;
  }

  async load() {
    const { ok, data } = await call(this.base, "GET");
    if (!ok) return this.toast(data.message, "error");
    this.receive(data);
    if (this.state.recording && this.state.recording.active) this.root.open = true;
  }

  // The stream said the recording changed (a step was recorded, recording stopped elsewhere).
  refresh() {
    this.load();
  }

  receive(data) {
    this.state = receiveRecording(this.state, data);
    this.render();
    if (this.state.recording && this.state.recording.steps.length) this.scheduleCheck();
  }

  async operate(op) {
    if (op === "discard" && !confirm(gettext("Discard the recording and its texts?"))) return;
    this.busy = true;
    this.render();
    const { ok, data } = await call(this.base, "POST", { op });
    this.busy = false;
    if (!ok) {
      this.toast(data.message, "error");
      this.render();
      return;
    }
    if (op !== "stop") {
      this.state = { ...emptyRecorder(), topics: this.state.topics }; // a new recording: no texts yet
      this.lessonFields = null;
    }
    this.receive(data);
  }

  edited(target, committed = false) {
    const { field, step } = target.dataset;
    if (!field) return;
    const id = step === undefined ? null : Number(step);
    const value = target.type === "checkbox" ? target.checked : target.value;
    if (id === null) this.state = setLessonField(this.state, field, value);
    else if (field === "wait") this.state = setStepWait(this.state, id, value);
    else if (field === "ask-class") this.state = setQuestion(this.state, id, value ? { pod: firstPod(this.stepOf(id)) } : null);
    else if (field.startsWith("predict.")) this.state = setQuestion(this.state, id, { [field.slice(8)]: value });
    else this.state = setStepText(this.state, id, field, value);
    if (field === "ask-class") this.render(); // the question's fields appear or go
    this.scheduleCheck(committed ? 0 : CHECK_AFTER_MS);
  }

  stepOf(id) {
    return this.state.recording.steps.find((step) => step.id === id);
  }

  scheduleCheck(delay = 0) {
    clearTimeout(this.checking);
    this.checking = setTimeout(() => this.check(), delay);
  }

  // The server keeps the draft and answers the lesson file, or where it fails.
  async check() {
    const { ok, data } = await call(`${this.base}/lesson`, "POST", { draft: this.state.draft });
    this.state = receiveCheck(this.state, ok ? checkFromFile(data) : checkFromError(data));
    this.renderCheck();
    return this.state.check;
  }

  async download() {
    const result = await this.check();
    if (!result.ok) return this.toast(gettext("The lesson file is not valid yet: see the marked step."), "error");
    downloadFile(result.fileName, result.yaml, "application/yaml");
  }

  render() {
    const recording = this.state.recording;
    if (!recording) {
      replace(
        this.body,
        h("p", { class: "hint" }, gettext("Record your own lesson: start recording, then change the cluster as you would in class — drag labels and taints, paste YAML, type kubectl commands. Each change becomes a step, with its command and where the pods went; write what the class is told before and after, add questions, and download the lesson file. The home page loads it under Your own lesson.")),
        h("button", { type: "button", class: "primary", "data-recorder": "start", disabled: this.busy, onclick: () => this.operate("start") }, "● " + gettext("start recording")),
      );
      return;
    }
    const count = recording.steps.length;
    const status = recording.active
      ? interpolate(ngettext("● recording — %(count)s step", "● recording — %(count)s steps", count), { count })
      : interpolate(ngettext("recorded — %(count)s step", "recorded — %(count)s steps", count), { count });
    const controls = recording.active
      ? [h("button", { type: "button", "data-recorder": "stop", disabled: this.busy, onclick: () => this.operate("stop") }, "■ " + gettext("stop recording"))]
      : [h("button", { type: "button", "data-recorder": "start", disabled: this.busy, onclick: () => this.operate("start") }, "● " + gettext("record again from here"))];
    controls.push(h("button", { type: "button", "data-recorder": "discard", disabled: this.busy, onclick: () => this.operate("discard") }, gettext("discard")));
    if (!this.steps) this.steps = h("ol", { class: "recorded-steps" });
    if (!this.lessonFields) this.lessonFields = this.renderLessonFields();
    this.checkLine = this.checkLine || h("p", { class: "recorder-check", "aria-live": "polite" });
    replace(
      this.body,
      h("div", { class: "recorder-status" }, h("strong", { class: recording.active ? "recording-live" : "" }, status), " ", ...controls),
      this.lessonFields,
      count ? this.steps : h("p", { class: "hint" }, gettext("No step yet: change the cluster (the board, the YAML editor, kubectl) and it appears here.")),
      h(
        "div",
        { class: "recorder-actions" },
        h("button", { type: "button", class: "primary", "data-recorder": "download", disabled: !count, onclick: () => this.download() }, gettext("download lesson file")),
        this.checkLine,
      ),
    );
    keyed(
      this.steps,
      recording.steps.map((step) => {
        const shown = stepView(step, this.state.draft);
        const sig = JSON.stringify([step, !!shown.predict]);
        return { key: step.id, sig, build: () => this.renderStep(step, shown) };
      }),
    );
    this.renderCheck();
  }

  renderLessonFields() {
    const draft = this.state.draft;
    const input = (field, label, attrs = {}) =>
      h("label", {}, label, " ", h("input", { "data-field": field, value: draft[field] || "", ...attrs }));
    const topic = h(
      "select",
      { "data-field": "topic" },
      h("option", { value: "" }, gettext("Other lessons")),
      ...this.state.topics.map((entry) => h("option", { value: entry.key, selected: draft.topic === entry.key }, entry.title)),
    );
    return h(
      "div",
      { class: "recorder-lesson" },
      input("title", gettext("Title"), { maxlength: 200, placeholder: gettext("the lesson's title") }),
      input("name", gettext("File name"), { maxlength: 63, placeholder: "my-lesson", pattern: "[a-z0-9]([-a-z0-9]*[a-z0-9])?" }),
      input("summary", gettext("Summary"), { maxlength: 200, placeholder: gettext("what it teaches, in one line") }),
      h("label", {}, gettext("Topic"), " ", topic),
    );
  }

  renderStep(step, shown) {
    const id = step.id;
    const area = (field, label, hint) =>
      h("label", { class: `recorded-${field}` }, label, h("span", { class: "hint" }, ` ${hint}`), h("textarea", { "data-field": field, "data-step": id, rows: 2 }, shown[field]));
    const question = shown.predict
      ? h(
          "div",
          { class: "recorded-question" },
          h("label", {}, gettext("Question"), " ", h("input", { "data-field": "predict.question", "data-step": id, value: shown.predict.question || "", placeholder: gettext("Which node does it go to?") })),
          h("label", {}, gettext("about"), " ", h("select", { "data-field": "predict.pod", "data-step": id }, ...shown.pods.map((pod) => h("option", { value: pod, selected: shown.predict.pod === pod }, pod)))),
          h(
            "label",
            {},
            gettext("asking"),
            " ",
            h(
              "select",
              { "data-field": "predict.ask", "data-step": id },
              h("option", { value: "node", selected: shown.predict.ask === "node" }, gettext("which node")),
              h("option", { value: "schedules", selected: shown.predict.ask === "schedules" }, gettext("whether it is scheduled")),
            ),
          ),
        )
      : null;
    return h(
      "li",
      { class: "recorded-step", "data-step": id },
      h("label", { class: "recorded-command" }, gettext("Command"), " ", h("input", { "data-field": "command", "data-step": id, value: shown.command, spellcheck: "false" })),
      area("say", gettext("Before"), gettext("(what the class is told to do: never what will happen)")),
      area("after", gettext("After"), gettext("(what happened: shown once the step ran, or at the reveal)")),
      h(
        "div",
        { class: "recorded-options" },
        h("label", {}, h("input", { type: "checkbox", "data-field": "ask-class", "data-step": id, checked: !!shown.predict, disabled: !shown.pods.length }), " ", gettext("ask the class first")),
        h("label", {}, gettext("then wait"), " ", h("input", { type: "number", min: 0, max: 3600, step: 1, "data-field": "wait", "data-step": id, value: shown.wait || 0 }), " s"),
      ),
      question,
    );
  }

  renderCheck() {
    const check = this.state.check;
    for (const marked of this.body.querySelectorAll("[aria-invalid]")) marked.removeAttribute("aria-invalid");
    for (const marked of this.body.querySelectorAll(".recorded-step.invalid")) marked.classList.remove("invalid");
    if (!this.checkLine) return;
    if (!check) {
      replace(this.checkLine);
      return;
    }
    this.checkLine.className = `recorder-check ${check.ok ? "ok" : "error"}`;
    this.checkLine.setAttribute("role", check.ok ? "status" : "alert");
    if (check.ok) {
      replace(this.checkLine, "✓ " + interpolate(gettext("%(file)s is a valid lesson"), { file: check.fileName }));
      return;
    }
    replace(this.checkLine, check.message);
    if (check.step === null) return;
    const item = this.body.querySelector(`.recorded-step[data-step="${check.step}"]`);
    if (!item) return;
    item.classList.add("invalid");
    const field = check.field === "predict" ? "predict.question" : check.field;
    const input = item.querySelector(`[data-field="${field}"]`);
    if (input) input.setAttribute("aria-invalid", "true");
  }
}

export function mountRecorder(root, options) {
  return root ? new RecorderPanel(root, options) : null;
}
