// The pod editor: YAML with line numbers, seed templates, Explain (a what-if) and Create; errors are
// shown inline at their line.

import { h, replace } from "../lib/dom.js";
import { gettext, interpolate } from "../lib/i18n.js";

// The server's limit on pasted YAML (scheduler_core.api.limits.MAX_YAML_CHARS: 2 MiB of characters).
export const MAX_YAML_CHARS = 2 * 1024 * 1024;

// "too large (3.1 MB > 2 MiB)" when the text exceeds the limit, else null.
export function sizeError(text) {
  if (text.length <= MAX_YAML_CHARS) return null;
  return interpolate(gettext("too large (%(size)s MB > 2 MiB): the server refuses pastes above 2 MiB"), { size: (text.length / 1e6).toFixed(1) });
}

const PER_LINE_UP_TO = 2000; // one element per line number below this, three text runs above

function lineCount(text) {
  let count = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) count += 1;
  return count;
}

export const TEMPLATES = {
  "Node (node04, 2 CPU, 4Gi)": `apiVersion: v1
kind: Node
metadata:
  name: node04
  labels:
    kubernetes.io/hostname: node04
status:
  allocatable: {cpu: "2", memory: 4Gi, pods: "110"}
  capacity: {cpu: "2", memory: 4Gi, pods: "110"}
`,
  "nodeSelector (kgc=a)": `apiVersion: v1
kind: Pod
metadata:
  name: pod-kgc
spec:
  nodeSelector:
    kgc: a
  containers:
  - name: myapp
    image: soscscs/myapp:v1
`,
  "nodeName (bypasses the scheduler)": `apiVersion: v1
kind: Pod
metadata:
  name: pod-nodename
spec:
  nodeName: node01
  containers:
  - name: myapp
    image: soscscs/myapp:v1
`,
  "toleration (qqq=value1:NoSchedule)": `apiVersion: v1
kind: Pod
metadata:
  name: pod-toleration
spec:
  tolerations:
  - key: qqq
    operator: Equal
    value: value1
    effect: NoSchedule
  containers:
  - name: myapp
    image: soscscs/myapp:v1
`,
  "node affinity (required + preferred)": `apiVersion: v1
kind: Pod
metadata:
  name: pod-affinity
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - key: kubernetes.io/hostname
            operator: NotIn
            values: [node03]
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 1
        preference:
          matchExpressions:
          - key: kgc
            operator: In
            values: [a]
  containers:
  - name: myapp
    image: soscscs/myapp:v1
`,
  "big request (Pending)": `apiVersion: v1
kind: Pod
metadata:
  name: pod-big
spec:
  containers:
  - name: myapp
    image: soscscs/myapp:v1
    resources:
      requests:
        cpu: "8"
        memory: 1Gi
`,
  "Deployment myapp (3 replicas)": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: myapp
spec:
  replicas: 3
  selector:
    matchLabels: {app: myapp}
  template:
    metadata:
      labels: {app: myapp}
    spec:
      containers:
      - name: myapp
        image: soscscs/myapp:v1
`,
};

// The templates' names as the menu shows them (the keys above stay the options' values).
const TEMPLATE_LABELS = {
  "Node (node04, 2 CPU, 4Gi)": () => gettext("Node (node04, 2 CPU, 4Gi)"),
  "nodeSelector (kgc=a)": () => gettext("nodeSelector (kgc=a)"),
  "nodeName (bypasses the scheduler)": () => gettext("nodeName (bypasses the scheduler)"),
  "toleration (qqq=value1:NoSchedule)": () => gettext("toleration (qqq=value1:NoSchedule)"),
  "node affinity (required + preferred)": () => gettext("node affinity (required + preferred)"),
  "big request (Pending)": () => gettext("big request (Pending)"),
  "Deployment myapp (3 replicas)": () => gettext("Deployment myapp (3 replicas)"),
};

function templateLabel(name) {
  return TEMPLATE_LABELS[name] ? TEMPLATE_LABELS[name]() : name;
}

// "file:12:3: message" or "file:12: field: message" → {line, message}
export function locateError(message) {
  const m = /^[^:]*:(\d+)(?::(\d+))?: (.*)$/s.exec(message);
  if (!m) return { line: null, message };
  return { line: parseInt(m[1], 10), column: m[2] ? parseInt(m[2], 10) : null, message: m[3] };
}

export class Editor {
  constructor(root, { explain, create, readOnly }) {
    this.root = root;
    this.textarea = root.querySelector("textarea");
    this.gutter = root.querySelector(".gutter");
    this.errorBox = root.querySelector(".editor-error");
    const select = root.querySelector("select.templates");
    replace(select, h("option", { value: "" }, gettext("templates…")), Object.keys(TEMPLATES).map((name) => h("option", { value: name }, templateLabel(name))));
    select.addEventListener("change", () => {
      if (select.value) this.setText(TEMPLATES[select.value]);
      select.value = "";
    });
    // Large pastes stay responsive: one check per animation frame, not per keystroke.
    let queued = false;
    this.textarea.addEventListener("input", () => {
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => {
        queued = false;
        this.checkSize();
        this.renderGutter();
      });
    });
    this.textarea.addEventListener("scroll", () => (this.gutter.scrollTop = this.textarea.scrollTop));
    const guarded = (send) => () => {
      if (this.checkSize()) return;
      send(this.textarea.value);
    };
    // A paste above the limit is refused before it reaches the textarea.
    this.textarea.addEventListener("paste", (event) => {
      const text = event.clipboardData ? event.clipboardData.getData("text") : "";
      const error = sizeError(text);
      if (!error) return;
      event.preventDefault();
      this.refuse(error);
    });
    root.querySelector("[data-editor=explain]").addEventListener("click", guarded(explain));
    const createButton = root.querySelector("[data-editor=create]");
    if (readOnly) createButton.hidden = true;
    else createButton.addEventListener("click", guarded(create));
    if (!this.textarea.value.trim()) this.setText(TEMPLATES["nodeSelector (kgc=a)"]);
    this.renderGutter();
  }

  setText(text) {
    this.textarea.value = text;
    this.lastGood = text;
    this.refusedText = undefined;
    this.showError(null);
    this.renderGutter();
  }

  // Text over the server's limit is not kept (a 3 MB textarea makes every keystroke slow, and the
  // server would refuse it): the editor goes back to its last text and says why, and stays refused
  // (Explain and Create do nothing) until the text is edited. True while refused.
  checkSize() {
    const error = sizeError(this.textarea.value);
    if (error) {
      this.textarea.value = this.lastGood || "";
      this.refuse(error);
      return true;
    }
    this.lastGood = this.textarea.value;
    if (this.refusedText === undefined) return false;
    if (this.textarea.value === this.refusedText) return true;
    this.refusedText = undefined;
    this.showError(null);
    return false;
  }

  refuse(error) {
    this.refusedText = this.textarea.value;
    this.showError(interpolate(gettext("%(error)s; not pasted"), { error }));
  }

  // Line numbers: redrawn only when the count or the error line changes; long texts get three text
  // runs (before, the error line, after) instead of one element per line.
  renderGutter(errorLine = this.errorLine) {
    const count = lineCount(this.textarea.value);
    if (this.gutter._sig === `${count}|${errorLine}`) return;
    this.gutter._sig = `${count}|${errorLine}`;
    if (count <= PER_LINE_UP_TO) {
      const lines = [];
      for (let i = 1; i <= count; i++) lines.push(h("div", { class: i === errorLine ? "line error-line" : "line" }, String(i)));
      replace(this.gutter, lines);
      return;
    }
    const numbers = (from, to) => (from > to ? "" : Array.from({ length: to - from + 1 }, (_, k) => from + k).join("\n") + "\n");
    if (errorLine && errorLine <= count) {
      replace(this.gutter, numbers(1, errorLine - 1), h("span", { class: "error-line" }, `${errorLine}\n`), numbers(errorLine + 1, count));
    } else replace(this.gutter, numbers(1, count));
  }

  showError(message) {
    if (!message) {
      this.errorLine = null;
      this.errorBox.hidden = true;
      replace(this.errorBox);
      this.renderGutter();
      return;
    }
    const where = locateError(message);
    this.errorLine = where.line;
    this.errorBox.hidden = false;
    replace(this.errorBox, where.line ? h("strong", {}, interpolate(gettext("line %(line)s: "), { line: where.line })) : null, where.message);
    this.renderGutter();
  }
}
