// The pod editor: YAML with line numbers, seed templates, Explain (a what-if) and Create; errors are
// shown inline at their line.

import { h, replace } from "../lib/dom.js";

export const TEMPLATES = {
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
    replace(select, h("option", { value: "" }, "templates…"), Object.keys(TEMPLATES).map((name) => h("option", { value: name }, name)));
    select.addEventListener("change", () => {
      if (select.value) this.setText(TEMPLATES[select.value]);
      select.value = "";
    });
    this.textarea.addEventListener("input", () => this.renderGutter());
    this.textarea.addEventListener("scroll", () => (this.gutter.scrollTop = this.textarea.scrollTop));
    root.querySelector("[data-editor=explain]").addEventListener("click", () => explain(this.textarea.value));
    const createButton = root.querySelector("[data-editor=create]");
    if (readOnly) createButton.hidden = true;
    else createButton.addEventListener("click", () => create(this.textarea.value));
    if (!this.textarea.value.trim()) this.setText(TEMPLATES["nodeSelector (kgc=a)"]);
    this.renderGutter();
  }

  setText(text) {
    this.textarea.value = text;
    this.showError(null);
    this.renderGutter();
  }

  renderGutter(errorLine = this.errorLine) {
    const count = this.textarea.value.split("\n").length;
    const lines = [];
    for (let i = 1; i <= count; i++) lines.push(h("div", { class: i === errorLine ? "line error-line" : "line" }, String(i)));
    replace(this.gutter, lines);
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
    replace(this.errorBox, where.line ? h("strong", {}, `line ${where.line}: `) : null, where.message);
    this.renderGutter();
  }
}
