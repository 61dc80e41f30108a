// "Scheduler profile & Compare": the cluster's KubeSchedulerConfiguration as a form and as YAML
// (the server validates and resolves: clusterviz/profiles.py), and one pod explained by the server
// under two profiles side by side. Thin: the models are model/profile_form.js and model/compare.js.

import { append, h, replace } from "../lib/dom.js";
import { callJson as call } from "../lib/http.js";
import { gettext, interpolate } from "../lib/i18n.js";
import { compareExplanations } from "../model/compare.js";
import { EXTENSION_POINTS, SCORING_STRATEGIES, configFromForm, errorLine } from "../model/profile_form.js";

const EDITOR_POD = "editor";

function clone(value) {
  return JSON.parse(JSON.stringify(value));
}

function numberOrNull(value) {
  return value === "" || value === null ? null : Number(value);
}

export class ProfilesPanel {
  constructor(root, { slug, readOnly, pods, editorText, toast }) {
    Object.assign(this, { root, slug, readOnly, pods, editorText, toast });
    this.body = root.querySelector(".profiles-body");
    this.stored = null; // {config, yaml, forms, defaultForm}
    this.draft = null; // the same shape, being edited
    this.index = 0;
    this.mode = "form";
    this.error = "";
    this.variants = [];
    this.pluginsOpen = false;
    this.comparison = { pod: EDITOR_POD, a: "stored:0", b: "draft", result: null, error: "", loading: false };
    root.addEventListener("toggle", () => root.open && !this.stored && this.load());
  }

  get base() {
    return `/api/clusters/${this.slug}`;
  }

  async load() {
    try {
      this.stored = await call(`${this.base}/profile`, "GET");
      this.draft = clone(this.stored);
      this.error = "";
    } catch (err) {
      this.error = err.message;
    }
    this.render();
  }

  // The stored config changed (someone saved): the draft being edited stays as it is.
  async refreshStored() {
    if (!this.stored) return;
    this.stored = await call(`${this.base}/profile`, "GET").catch(() => this.stored);
    this.render();
  }

  // The draft as the server takes it: the YAML as typed in YAML mode, else the form's config.
  draftPayload() {
    return this.mode === "yaml" ? { yaml: this.yamlText() } : { config: this.draft.config };
  }

  yamlText() {
    const area = this.body.querySelector("textarea.profile-yaml");
    return area ? area.value : this.draft.yaml;
  }

  async check(payload) {
    try {
      this.draft = await call(`${this.base}/profile/check`, "POST", payload);
      this.index = Math.min(this.index, this.draft.forms.length - 1);
      this.error = "";
      return true;
    } catch (err) {
      this.error = err.message;
      if (payload.yaml !== undefined) this.draft = { ...this.draft, yaml: payload.yaml };
      return false;
    }
  }

  async switchTo(mode) {
    if (mode === this.mode) return;
    if (await this.check(this.draftPayload())) this.mode = mode;
    this.render();
  }

  async save() {
    const payload = this.draftPayload();
    try {
      this.stored = await call(`${this.base}/profile`, "PUT", payload);
      this.draft = clone(this.stored);
      this.error = "";
      this.toast(gettext("scheduler profile saved: the scheduler uses it from its next cycle"));
    } catch (err) {
      this.error = err.message;
      if (payload.yaml !== undefined) this.draft = { ...this.draft, yaml: payload.yaml }; // keep what was typed
    }
    this.render();
  }

  // A form field changed: the draft's config is rewritten from the form.
  edit(change) {
    const form = this.draft.forms[this.index];
    change(form);
    this.draft.config = configFromForm(this.draft.config, this.index, form, this.draft.defaultForm);
    this.render();
  }

  render() {
    if (!this.draft) {
      replace(this.body, this.error ? h("p", { class: "error", role: "alert" }, this.error) : h("p", { class: "empty" }, gettext("loading…")));
      return;
    }
    replace(this.body, this.toolbar(), this.errorBox(), this.mode === "form" ? this.formView() : this.yamlView(), this.compareView());
  }

  toolbar() {
    const tab = (mode, label) =>
      h("button", { type: "button", "aria-pressed": String(this.mode === mode), class: this.mode === mode ? "primary" : "", onclick: () => this.switchTo(mode) }, label);
    return h(
      "div",
      { class: "profile-toolbar" },
      tab("form", gettext("Form")),
      tab("yaml", "YAML"),
      h("button", { type: "button", onclick: async () => (await this.check(this.draftPayload())) && this.toast(gettext("valid: kube-scheduler accepts it")), "data-profile": "check" }, gettext("Check")),
      this.readOnly ? null : h("button", { type: "button", class: "primary", "data-profile": "save", onclick: () => this.save() }, gettext("Save")),
      h("button", { type: "button", onclick: () => ((this.draft = clone(this.stored)), (this.error = ""), this.render()) }, gettext("Reset")),
      h(
        "button",
        {
          type: "button",
          "data-profile": "keep",
          title: gettext("keep this draft to compare with"),
          onclick: () => {
            this.variants.push({ name: interpolate(gettext("variant %(number)s"), { number: this.variants.length + 1 }), payload: clone(this.draftPayload()) });
            this.render();
          },
        },
        gettext("Keep as variant"),
      ),
      h("a", { href: `${this.base}/profile.yaml`, download: "", title: gettext("the stored configuration, for kube-scheduler --config") }, gettext("Download YAML")),
    );
  }

  errorBox() {
    if (!this.error) return null;
    const line = errorLine(this.error);
    return h("div", { class: "profile-error error", role: "alert" }, this.error, line ? interpolate(gettext(" (line %(line)s of the YAML view)"), { line }) : "");
  }

  formView() {
    const forms = this.draft.forms;
    const form = forms[this.index];
    const picker =
      forms.length > 1
        ? h(
            "label",
            {},
            gettext("profile "),
            h(
              "select",
              { onchange: (e) => ((this.index = Number(e.target.value)), this.render()) },
              forms.map((f, i) => h("option", { value: i, selected: i === this.index }, f.schedulerName)),
            ),
          )
        : null;
    return h(
      "div",
      { class: "profile-form" },
      h(
        "div",
        { class: "profile-row" },
        picker,
        h("label", {}, "schedulerName ", h("input", { value: form.schedulerName, "aria-label": "schedulerName", onchange: (e) => this.edit((f) => (f.schedulerName = e.target.value)) })),
        h(
          "label",
          {},
          "percentageOfNodesToScore ",
          h("input", {
            type: "number",
            min: 0,
            max: 100,
            placeholder: gettext("adaptive"),
            "aria-label": "percentageOfNodesToScore",
            value: form.percentageOfNodesToScore ?? "",
            onchange: (e) => this.edit((f) => (f.percentageOfNodesToScore = numberOrNull(e.target.value))),
          }),
        ),
      ),
      this.pluginTable(form),
      this.strategyView(form),
      this.spreadView(form),
    );
  }

  pluginTable(form) {
    const head = h("tr", {}, h("th", {}, gettext("plugin")), EXTENSION_POINTS.map((p) => h("th", {}, p)), h("th", {}, gettext("weight")));
    const rows = form.plugins.map((plugin, k) =>
      h(
        "tr",
        { "data-plugin": plugin.name },
        h("th", { scope: "row" }, plugin.name),
        EXTENSION_POINTS.map((point) =>
          h(
            "td",
            {},
            point in plugin.points
              ? h("input", {
                  type: "checkbox",
                  checked: plugin.points[point],
                  "aria-label": interpolate(gettext("%(plugin)s at %(point)s"), { plugin: plugin.name, point }),
                  onchange: (e) => this.edit((f) => (f.plugins[k].points[point] = e.target.checked)),
                })
              : "",
          ),
        ),
        h(
          "td",
          {},
          plugin.weight === null
            ? ""
            : h("input", {
                type: "number",
                min: 0,
                class: "weight",
                value: plugin.weight,
                "aria-label": interpolate(gettext("%(plugin)s weight"), { plugin: plugin.name }),
                onchange: (e) => this.edit((f) => (f.plugins[k].weight = Number(e.target.value))),
              }),
        ),
      ),
    );
    const details = h("details", { class: "profile-plugins", open: this.pluginsOpen, ontoggle: (e) => (this.pluginsOpen = e.target.open) });
    return append(details, [h("summary", {}, gettext("plugins per extension point, weights")), h("table", { class: "profile-table" }, h("thead", {}, head), h("tbody", {}, rows))]);
  }

  // Rows of small objects (resources, shape points, constraints) with add / remove.
  listEditor(label, items, fields, make, set) {
    const rows = items.map((item, k) =>
      h(
        "div",
        { class: "profile-item" },
        fields.map(([key, kind, options]) =>
          kind === "select"
            ? h("select", { "aria-label": `${label} ${k} ${key}`, onchange: (e) => set((list) => (list[k][key] = e.target.value)) }, options.map((o) => h("option", { selected: item[key] === o }, o)))
            : h("input", {
                type: kind,
                value: item[key] ?? "",
                placeholder: key,
                "aria-label": `${label} ${k} ${key}`,
                onchange: (e) => set((list) => (list[k][key] = kind === "number" ? numberOrNull(e.target.value) : e.target.value)),
              }),
        ),
        h("button", { type: "button", "aria-label": interpolate(gettext("remove %(item)s %(index)s"), { item: label, index: k }), onclick: () => set((list) => list.splice(k, 1)) }, "×"),
      ),
    );
    const head = items.length ? h("div", { class: "profile-item profile-head muted", "aria-hidden": "true" }, fields.map(([key]) => h("span", {}, key))) : null;
    return h("div", { class: "profile-list" }, h("span", { class: "muted" }, label), head, rows, h("button", { type: "button", onclick: () => set((list) => list.push(make())) }, `+ ${label}`));
  }

  strategyView(form) {
    const s = form.scoringStrategy;
    return h(
      "fieldset",
      { class: "profile-fieldset" },
      h("legend", {}, "NodeResourcesFit scoringStrategy"),
      h(
        "select",
        { "aria-label": "scoringStrategy type", onchange: (e) => this.edit((f) => (f.scoringStrategy.type = e.target.value)) },
        SCORING_STRATEGIES.map((t) => h("option", { selected: s.type === t }, t)),
      ),
      this.listEditor(gettext("resource"), s.resources, [["name", "text"], ["weight", "number"]], () => ({ name: "", weight: 1 }), (change) =>
        this.edit((f) => change(f.scoringStrategy.resources)),
      ),
      s.type === "RequestedToCapacityRatio"
        ? this.listEditor(gettext("shape point"), s.shape, [["utilization", "number"], ["score", "number"]], () => ({ utilization: 100, score: 10 }), (change) =>
            this.edit((f) => change(f.scoringStrategy.shape)),
          )
        : null,
    );
  }

  spreadView(form) {
    const s = form.podTopologySpread;
    return h(
      "fieldset",
      { class: "profile-fieldset" },
      h("legend", {}, gettext("PodTopologySpread defaults")),
      h(
        "select",
        { "aria-label": "defaultingType", onchange: (e) => this.edit((f) => (f.podTopologySpread.defaultingType = e.target.value)) },
        ["System", "List"].map((t) => h("option", { selected: s.defaultingType === t }, t)),
      ),
      this.listEditor(
        gettext("constraint"),
        s.defaultConstraints,
        [["maxSkew", "number"], ["topologyKey", "text"], ["whenUnsatisfiable", "select", ["ScheduleAnyway", "DoNotSchedule"]]],
        () => ({ maxSkew: 1, topologyKey: "topology.kubernetes.io/zone", whenUnsatisfiable: "ScheduleAnyway" }),
        (change) => this.edit((f) => change(f.podTopologySpread.defaultConstraints)),
      ),
    );
  }

  yamlView() {
    const area = h("textarea", { class: "profile-yaml", spellcheck: "false", rows: 18, "aria-label": "KubeSchedulerConfiguration YAML" });
    area.value = this.draft.yaml;
    const line = errorLine(this.error);
    if (line) {
      // put the caret on the line the error names
      const offset = area.value.split("\n").slice(0, line - 1).join("\n").length + (line > 1 ? 1 : 0);
      requestAnimationFrame(() => area.setSelectionRange(offset, offset));
    }
    return area;
  }

  // --- Compare ------------------------------------------------------------------------------------

  profileChoices() {
    const choices = this.stored.forms.map((f, i) => [`stored:${i}`, interpolate(gettext("stored: %(name)s"), { name: f.schedulerName })]);
    choices.push(["draft", gettext("the draft being edited")]);
    this.variants.forEach((v, i) => choices.push([`variant:${i}`, v.name]));
    return choices;
  }

  sidePayload(choice) {
    if (choice === "draft") return this.draftPayload();
    const [kind, index] = choice.split(":");
    if (kind === "variant") return this.variants[Number(index)].payload;
    return { schedulerName: this.stored.forms[Number(index)].schedulerName };
  }

  podChoices() {
    const pods = this.pods().map((pod) => [`${pod.metadata.namespace || "default"}/${pod.metadata.name}`, pod]);
    const where = (pod) => (pod.spec.nodeName ? interpolate(gettext(" (on %(node)s)"), { node: pod.spec.nodeName }) : gettext(" (pending)"));
    return [[EDITOR_POD, gettext("the pod in the editor")], ...pods.map(([key, pod]) => [key, `${key}${where(pod)}`])];
  }

  podText(choice) {
    if (choice === EDITOR_POD) return this.editorText();
    const pod = this.pods().find((p) => `${p.metadata.namespace || "default"}/${p.metadata.name}` === choice);
    return pod ? JSON.stringify(pod) : this.editorText();
  }

  async runCompare() {
    const c = this.comparison;
    c.loading = true;
    c.error = "";
    this.render();
    try {
      const body = { pod: this.podText(c.pod), a: this.sidePayload(c.a), b: this.sidePayload(c.b) };
      const result = await call(`${this.base}/compare`, "POST", body);
      c.result = compareExplanations(result.a, result.b);
      c.labels = { a: this.labelOf(c.a), b: this.labelOf(c.b) };
    } catch (err) {
      c.result = null;
      c.error = err.message;
    }
    c.loading = false;
    this.render();
  }

  labelOf(choice) {
    return (this.profileChoices().find(([value]) => value === choice) || [choice, choice])[1];
  }

  compareView() {
    const c = this.comparison;
    const select = (key, choices, label) =>
      h(
        "label",
        {},
        `${label} `,
        h("select", { "aria-label": interpolate(gettext("compare %(side)s"), { side: label }), onchange: (e) => (c[key] = e.target.value) }, choices.map(([value, text]) => h("option", { value, selected: c[key] === value }, text))),
      );
    return h(
      "section",
      { class: "compare" },
      h("h3", {}, gettext("Compare: one pod, two profiles")),
      h(
        "div",
        { class: "profile-row" },
        select("pod", this.podChoices(), gettext("pod")),
        select("a", this.profileChoices(), "A"),
        select("b", this.profileChoices(), "B"),
        h("button", { type: "button", class: "primary", "data-profile": "compare", disabled: c.loading, onclick: () => this.runCompare() }, c.loading ? gettext("comparing…") : gettext("Compare")),
      ),
      c.error ? h("div", { class: "error", role: "alert" }, c.error) : null,
      c.result ? renderComparison(c.result, c.labels) : null,
    );
  }
}

function signed(n) {
  return n === null ? "" : n > 0 ? `+${n}` : String(n);
}

function renderComparison(result, labels) {
  const side = (key) => {
    const s = result[key];
    return h(
      "div",
      { class: `compare-side compare-${key}` },
      h("div", { class: "muted" }, `${key.toUpperCase()}: ${labels[key]}`),
      h("div", { class: "compare-winner", "data-winner": s.winner || "" }, s.winner ? `★ ${s.winner}` : gettext("no node: Pending")),
      h("div", { class: "compare-message" }, s.message),
    );
  };
  const plugins = [...new Set(result.rows.flatMap((row) => row.plugins.map((p) => p.name)))];
  const cell = (p) => {
    if (!p) return h("td", {}, "");
    const text = `${p.a ? p.a.weighted : "–"} → ${p.b ? p.b.weighted : "–"}`;
    return h("td", { class: p.delta ? "changed" : "" }, text, p.delta ? h("small", {}, ` (${signed(p.delta)})`) : "");
  };
  const table = h(
    "table",
    { class: "compare-table" },
    h("thead", {}, h("tr", {}, h("th", {}, gettext("node")), h("th", {}, "A"), h("th", {}, "B"), h("th", {}, "Δ"), plugins.map((p) => h("th", {}, p)))),
    h(
      "tbody",
      {},
      result.rows.map((row) =>
        h(
          "tr",
          { "data-node": row.node, class: row.verdictChanged ? "verdict-changed" : "" },
          h("th", { scope: "row" }, row.node),
          h("td", { class: `verdict-${row.a.verdict.kind}` }, row.a.verdict.text),
          h("td", { class: `verdict-${row.b.verdict.kind}` }, row.b.verdict.text),
          h("td", {}, signed(row.delta)),
          plugins.map((name) => cell(row.plugins.find((p) => p.name === name))),
        ),
      ),
    ),
  );
  const changes = result.verdictChanges;
  return h(
    "div",
    { class: "compare-result" },
    h("div", { class: "compare-sides" }, side("a"), side("b")),
    h("p", { class: result.differentWinner ? "compare-different" : "compare-same" }, result.differentWinner ? gettext("Different winners.") : gettext("Same winner.")),
    h("p", { class: "muted" }, gettext("Per plugin: normalized score × weight under A → under B; top nodes first.")),
    table,
    result.hidden ? h("p", { class: "muted" }, interpolate(gettext("%(count)s more node(s) not shown"), { count: result.hidden })) : null,
    h("h4", {}, interpolate(gettext("Verdict changed on %(count)s node(s)"), { count: changes.length })),
    h(
      "ul",
      { class: "compare-changes" },
      changes.map((row) => h("li", {}, `${row.node}: ${row.a.verdict.text} → ${row.b.verdict.text}`)),
    ),
  );
}

export function mountProfiles(root, options) {
  return root ? new ProfilesPanel(root, options) : null;
}
