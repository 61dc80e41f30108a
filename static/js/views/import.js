// The import panel of an empty cluster: upload or paste a dump, follow its progress, cancel it.

import { gettext, interpolate } from "../lib/i18n.js";
import { contentTypeFor, describeJob } from "../model/import_job.js";

const POLL_MS = 250;

export class ImportPanel {
  constructor(root, { onDone }) {
    this.root = root;
    this.onDone = onDone;
    this.file = root.querySelector("input[type=file]");
    this.paste = root.querySelector("textarea");
    this.startButton = root.querySelector('[data-import="start"]');
    this.cancelButton = root.querySelector('[data-import="cancel"]');
    this.progress = root.querySelector(".import-progress");
    this.bar = root.querySelector("progress");
    this.status = root.querySelector(".import-status");
    this.error = root.querySelector(".import-error");
    this.jobUrl = null;
    this.startButton.addEventListener("click", () => this.start());
    this.cancelButton.addEventListener("click", () => this.cancel());
  }

  async start() {
    const file = this.file.files[0];
    const text = file ? "" : this.paste.value;
    if (!file && !text.trim()) return this.showError(gettext("choose a file or paste a dump"));
    const head = file ? await file.slice(0, 64).text() : text;
    this.showError(null);
    this.setBusy(true);
    this.show({ state: "running", total: 0 });
    let response;
    try {
      response = await fetch(this.root.dataset.url, {
        method: "POST",
        body: file || text,
        credentials: "same-origin",
        headers: { "Content-Type": contentTypeFor(file ? file.name : "", head), "X-Filename": file ? file.name : "pasted" },
      });
    } catch (err) {
      return this.fail(interpolate(gettext("upload failed: %(error)s"), { error: err.message }));
    }
    const data = await response.json().catch(() => ({}));
    if (response.status !== 202) return this.fail(data.message || interpolate(gettext("upload failed (%(status)s)"), { status: response.status }));
    this.jobUrl = data.url;
    this.show(data.import);
    this.poll();
  }

  async poll() {
    while (this.jobUrl) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      const response = await fetch(this.jobUrl, { credentials: "same-origin" }).catch(() => null);
      if (!response || !response.ok) continue;
      const { import: job } = await response.json();
      const view = this.show(job);
      if (view.finished) {
        this.jobUrl = null;
        this.setBusy(false);
        if (view.failed) this.showError(view.text);
        else if (job.state === "done") this.onDone(job);
      }
    }
  }

  async cancel() {
    if (!this.jobUrl) return;
    this.cancelButton.disabled = true;
    await fetch(`${this.jobUrl}/cancel`, {
      method: "POST",
      body: "{}",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
    }).catch(() => null);
  }

  show(job) {
    const view = describeJob(job);
    this.progress.hidden = false;
    if (view.fraction === null) this.bar.removeAttribute("value");
    else this.bar.value = view.fraction;
    this.status.textContent = view.text;
    this.root.dataset.state = job.state;
    return view;
  }

  fail(message) {
    this.setBusy(false);
    this.progress.hidden = true;
    this.showError(message);
  }

  showError(message) {
    this.error.hidden = !message;
    this.error.textContent = message || "";
  }

  setBusy(busy) {
    this.startButton.disabled = busy;
    this.cancelButton.disabled = !busy;
    this.cancelButton.hidden = !busy;
  }
}

const root = document.querySelector("#import");
if (root) new ImportPanel(root, { onDone: () => setTimeout(() => location.reload(), 600) });
