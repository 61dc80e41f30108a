// "Capacity what-if": how many more fit, what if these nodes drain, what if nodes are added — asked
// of the server (nothing changes), the answer shown here and drawn on the board (drained nodes, the
// nodes that took pods), exportable as JSON or CSV. A follower is shown the presenter's query, run
// again on its side. Thin: the model is model/capacity.js.

import { downloadFile, h, replace } from "../lib/dom.js";
import { callJson } from "../lib/http.js";
import { gettext, interpolate, ngettext } from "../lib/i18n.js";
import { headline, nodeMarks, pendingGroups, placementRows, queryBody, queryKey, toCsv } from "../model/capacity.js";

const SHOWN_ROWS = 200; // placements listed here (the exports hold every one)

export class CapacityPanel {
  constructor(root, { slug, readOnly, toast, editorText, onChange }) {
    Object.assign(this, { root, slug, readOnly, toast, editorText, onChange });
    this.body = root.querySelector(".capacity-body");
    this.query = "drain";
    this.shown = null; // {body, report, marks}
    this.values = {}; // the form's fields, kept across redraws
    this.busy = false;
    this.render();
  }

  get marks() {
    return this.shown ? this.shown.marks : null;
  }

  // The request on show (the presenter's view carries it to the followers).
  get request() {
    return this.shown ? this.shown.body : null;
  }

  fields() {
    const values = {};
    for (const el of this.body.querySelectorAll("[data-field]")) values[el.dataset.field] = el.type === "checkbox" ? el.checked : el.value;
    if (values.source === "pod") values.pod = this.editorText();
    return values;
  }

  async run(body) {
    if (this.busy) return;
    if (!body) {
      this.values = this.fields();
      body = queryBody(this.query, this.values);
    }
    this.busy = true;
    this.render();
    try {
      const report = await callJson(`/api/clusters/${this.slug}/capacity`, "POST", body);
      this.shown = { body, report, marks: nodeMarks(report) };
      this.root.open = true;
    } catch (err) {
      this.toast(err.message, "error");
    } finally {
      this.busy = false;
      this.render();
      this.onChange();
    }
  }

  // A follower: show the presenter's query (run here once), or nothing when it was cleared.
  follow(body) {
    if (!body) return this.shown && this.clear();
    if (this.shown && queryKey(this.shown.body) === queryKey(body)) return;
    this.query = body.query;
    this.run(body);
  }

  clear() {
    this.shown = null;
    this.render();
    this.onChange();
  }

  download(kind) {
    const report = this.shown.report;
    const [data, type] = kind === "csv" ? [toCsv(report), "text/csv"] : [JSON.stringify(report, null, 1), "application/json"];
    downloadFile(`${this.slug}-${report.query}.${kind}`, data, type);
  }

  render() {
    replace(this.body, this.readOnly ? null : this.form(), this.shown ? this.result(this.shown.report) : null);
  }

  form() {
    const kept = this.values;
    const field = (name, label, attrs = {}) => h("label", {}, label, h("input", { "data-field": name, ...attrs, value: kept[name] ?? attrs.value }));
    const check = (name, label) => h("label", { class: "check" }, h("input", { type: "checkbox", "data-field": name, checked: !!kept[name] }), label);
    const choose = h(
      "select",
      { class: "capacity-query", "aria-label": gettext("question"), onchange: (e) => ((this.values = this.fields()), (this.query = e.target.value), this.render()) },
      h("option", { value: "drain", selected: this.query === "drain" }, gettext("drain: where does everything go?")),
      h("option", { value: "fit", selected: this.query === "fit" }, gettext("fit: how many more fit?")),
      h("option", { value: "add", selected: this.query === "add" }, gettext("add nodes: what schedules then?")),
    );
    const parts = {
      drain: [
        field("nodes", gettext("nodes"), { placeholder: gettext("names, space-separated") }),
        field("selector", gettext("label selector"), { placeholder: "eks.amazonaws.com/nodegroup=spot" }),
        field("zone", gettext("zone")),
        field("instanceType", gettext("instance type")),
        check("ignoreDaemonsets", "--ignore-daemonsets"),
        check("force", "--force"),
        check("deleteEmptydirData", "--delete-emptydir-data"),
      ],
      fit: [
        h(
          "select",
          { "data-field": "source", "aria-label": gettext("what to copy") },
          h("option", { value: "workload", selected: kept.source !== "pod" }, gettext("a workload's next pod")),
          h("option", { value: "pod", selected: kept.source === "pod" }, gettext("the pod in the editor")),
        ),
        field("workload", gettext("workload"), { placeholder: "deployment/web" }),
        field("namespace", gettext("namespace"), { placeholder: "default" }),
        field("max", gettext("at most"), { type: "number", min: "1", placeholder: "5000" }),
      ],
      add: [field("like", gettext("like node")), field("count", gettext("how many"), { type: "number", min: "1", value: "1" }), field("namePrefix", gettext("name prefix"))],
    };
    return h(
      "form",
      { class: "capacity-form", onsubmit: (e) => (e.preventDefault(), this.run()) },
      choose,
      h("div", { class: "capacity-fields" }, parts[this.query]),
      h("button", { type: "submit", class: "primary", disabled: this.busy }, this.busy ? gettext("asking the scheduler…") : gettext("Run what-if")),
      h("span", { class: "hint" }, gettext("a copy of the cluster: nothing changes")),
    );
  }

  result(report) {
    const top = headline(report);
    const rows = placementRows(report);
    return h(
      "div",
      { class: "capacity-result", "aria-live": "polite" },
      h("p", { class: "capacity-headline" }, this.headlineText(top)),
      this.notDrained(report),
      this.pending(report),
      this.refused(report),
      rows.length
        ? h(
            "table",
            { class: "capacity-moves" },
            h("thead", {}, h("tr", {}, h("th", {}, gettext("pod")), h("th", {}, gettext("from")), h("th", {}, gettext("to")))),
            h(
              "tbody",
              {},
              rows.slice(0, SHOWN_ROWS).map((r) => h("tr", { class: r.scheduled ? "moved" : "left-pending" }, h("td", {}, r.pod), h("td", {}, r.from), h("td", {}, r.scheduled ? r.to : gettext("Pending")))),
            ),
          )
        : null,
      rows.length > SHOWN_ROWS ? h("p", { class: "hint" }, interpolate(gettext("… and %(count)s more in the exports"), { count: rows.length - SHOWN_ROWS })) : null,
      h(
        "div",
        { class: "capacity-actions" },
        h("button", { type: "button", onclick: () => this.download("json") }, gettext("Export JSON")),
        h("button", { type: "button", onclick: () => this.download("csv") }, gettext("Export CSV")),
        this.readOnly ? null : h("button", { type: "button", onclick: () => this.clear() }, gettext("Clear")),
      ),
    );
  }

  headlineText(top) {
    if (top.query === "fit") {
      const base = interpolate(ngettext("%(count)s more pod fits on %(nodes)s nodes", "%(count)s more pods fit on %(nodes)s nodes", top.fits), { count: top.fits, nodes: top.nodes });
      return `${top.template}: ${base}${top.limitReached ? " " + gettext("(the limit was reached)") : ""}`;
    }
    if (top.query === "drain") {
      return interpolate(gettext("%(nodes)s nodes drained: %(evicted)s pods evicted, %(rescheduled)s rescheduled, %(pending)s Pending, %(deleted)s gone for good, %(refused)s evictions refused"), top);
    }
    return interpolate(gettext("%(added)s nodes added: %(scheduled)s of %(pending)s pending pods schedule, %(onNewNodes)s on the new nodes"), top);
  }

  notDrained(report) {
    const entries = Object.entries(report.notDrained || {});
    if (!entries.length) return null;
    return h("div", { class: "capacity-errors" }, entries.map(([node, error]) => h("p", { class: "error" }, interpolate(gettext("%(node)s not drained: %(error)s"), { node, error }))));
  }

  pending(report) {
    const groups = pendingGroups(report);
    if (!groups.length) return null;
    return h(
      "div",
      { class: "capacity-pending" },
      h("h3", {}, gettext("Left Pending, and why")),
      groups.map((g) => h("div", { class: "pending-group" }, h("div", { class: "pods" }, g.pods.slice(0, 8).join(", "), g.pods.length > 8 ? ` … +${g.pods.length - 8}` : ""), h("div", { class: "message" }, g.message))),
    );
  }

  refused(report) {
    if (!(report.refused || []).length) return null;
    return h(
      "div",
      { class: "capacity-refused" },
      h("h3", {}, gettext("Evictions the budgets refuse")),
      report.refused.slice(0, 20).map((r) => h("div", { class: "message" }, `${r.pod} (${r.node}): ${r.message}`)),
    );
  }
}
