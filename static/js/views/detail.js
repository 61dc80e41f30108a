// The detail area: one thing at a time — Why Pending, Scores, Events, List-Watch, Lesson.

import { h, replace } from "../lib/dom.js";
import { gettext, interpolate, localized } from "../lib/i18n.js";
import { describeEvents, eventsFor, objectKey, schedulingMessage } from "../model/cluster_state.js";

export const TABS = ["why", "scores", "events", "listwatch", "lesson"];
// Functions: the tab titles are translated when drawn, not at import (the catalog may come later).
const TITLES = { why: () => gettext("Why Pending"), scores: () => gettext("Scores"), events: () => gettext("Events"), listwatch: () => "List-Watch", lesson: () => gettext("Lesson") };

// The tab buttons are made once and then only restyled, so a click or focus on them is never lost.
export function renderTabs(root, active) {
  const bar = root.querySelector(".tabs");
  if (bar.children.length !== TABS.length) {
    replace(bar, TABS.map((tab) => h("button", { type: "button", role: "tab", class: "tab", dataset: { tab } }, TITLES[tab]())));
  }
  for (const button of bar.children) {
    const on = button.dataset.tab === active;
    button.className = on ? "tab active" : "tab";
    button.setAttribute("aria-selected", on ? "true" : "false");
  }
}

function cycleLabel(cycle) {
  if (cycle.whatIf) return gettext("what-if (nothing was created)");
  if (cycle.explained) return gettext("the scheduler's answer now (no kept cycle of this pod)");
  return interpolate(gettext("from cycle %(cycle)s"), { cycle: cycle.cycle });
}

export function renderWhy(root, { pod, cycle, why, loading, fixes }) {
  if (!pod && !(cycle && cycle.whatIf)) {
    replace(root, h("p", { class: "empty" }, gettext("Select a pending pod (or press “why?” in the pending lane), or press Explain on a pod in the editor.")));
    return;
  }
  const parts = [];
  if (pod) {
    const key = objectKey(pod);
    const message = schedulingMessage(pod);
    parts.push(
      h("h3", {}, key, pod.spec.nodeName ? ` → ${pod.spec.nodeName}` : " (Pending)"),
      message
        ? h("pre", { class: "kubectl-message" }, `Warning  FailedScheduling  default-scheduler  ${message}`)
        : h("p", {}, pod.spec.nodeName ? interpolate(gettext("Bound to %(node)s."), { node: pod.spec.nodeName }) : gettext("Not tried yet.")),
    );
  } else {
    parts.push(h("h3", {}, interpolate(gettext("%(pod)s (what-if)"), { pod: cycle.pod })));
    if (why) {
      parts.push(
        why.scheduled
          ? h("pre", { class: "kubectl-message ok" }, `Normal  Scheduled  default-scheduler  ${why.message}`)
          : h("pre", { class: "kubectl-message" }, `Warning  FailedScheduling  default-scheduler  ${why.message}`),
      );
    }
  }
  if (cycle) parts.push(h("p", { class: "why-source" }, cycleLabel(cycle)));
  if (loading) parts.push(h("p", { class: "loading" }, gettext("asking the scheduler…")));
  if (why && !(pod && pod.spec.nodeName)) {
    for (const group of why.groups) {
      parts.push(
        h(
          "section",
          { class: "why-group" },
          h("h4", {}, h("span", { class: "count" }, String(group.nodes.length || "")), " ", group.reason, h("span", { class: "plugin" }, ` — ${group.plugin || "PreFilter"}`)),
          h(
            "ul",
            {},
            group.items.map((item) =>
              h(
                "li",
                {},
                item.text,
                item.fix ? h("div", { class: "fix" }, gettext("fix:") + " ", item.fix) : null,
                item.snippet ? h("pre", { class: "snippet" }, item.snippet) : null,
                item.command ? h("div", { class: "fix" }, (item.fix || item.snippet ? gettext("or:") : gettext("fix:")) + " ", h("code", {}, item.command)) : null,
              ),
            ),
          ),
        ),
      );
    }
    if (why.preemption) {
      parts.push(
        h(
          "p",
          { class: "preemption" },
          why.preemption.text,
          why.preemption.status ? h("span", { class: "status" }, ` (${why.preemption.status})`) : null,
        ),
      );
    }
    if (fixes) parts.push(renderFixes(fixes));
  }
  if (cycle && cycle.fixFor) {
    const note = cycle.commands.length
      ? interpolate(gettext("This what-if applies the fixes for %(node)s with %(commands)s on the cluster. The pod YAML is in the editor."), { node: cycle.fixFor, commands: cycle.commands.join("; ") })
      : interpolate(gettext("This what-if applies the fixes for %(node)s. The pod YAML is in the editor."), { node: cycle.fixFor });
    parts.push(h("p", { class: "fix-note" }, note));
  }
  replace(root, parts);
}

// Per rejected node: every failing plugin with its fix, the YAML diff and the kubectl commands;
// "make it fit" only where the scheduler, run again on the fixed pod and node, places it there.
function renderFixes(fixes) {
  if (fixes.loading) return h("p", { class: "loading" }, gettext("finding fixes (the scheduler runs once per node)…"));
  if (fixes.error) return h("p", { class: "error" }, interpolate(gettext("fixes: %(error)s"), { error: fixes.error }));
  const nodes = (fixes.data && fixes.data.nodes) || [];
  return h(
    "section",
    { class: "fixes" },
    h("h4", {}, gettext("Fixes, node by node (each checked by running the scheduler again)")),
    nodes.map((n) =>
      h(
        "div",
        { class: `fix-node ${n.verified ? "verified" : "unverified"}`, dataset: { fixNode: n.node } },
        h("h5", {}, n.node, " ", n.verified ? h("span", { class: "ok" }, "✓ " + interpolate(gettext("make it fit on %(node)s: verified, the scheduler then places it there"), { node: n.node })) : h("span", { class: "pending" }, n.landsOn ? "✗ " + interpolate(gettext("with these fixes it would land on %(landsOn)s, not %(node)s"), { landsOn: n.landsOn, node: n.node }) : "✗ " + interpolate(gettext("not verified: %(message)s"), { message: n.message }))),
        h(
          "ul",
          {},
          n.failures.map((f) =>
            h(
              "li",
              { dataset: { plugin: f.plugin } },
              `✗ ${f.plugin}: ${f.reasons.join(", ")}`,
              f.fixes.length
                ? f.fixes.map((x) => h("div", { class: "fix" }, gettext("fix:") + " ", x.text, x.command ? [" — ", h("code", {}, x.command)] : null, x.alternative ? [" (" + gettext("or") + " ", h("code", {}, x.alternative), ")"] : null))
                : h("div", { class: "fix none" }, gettext("no automatic fix")),
            ),
          ),
        ),
        n.podDiff ? h("pre", { class: "diff" }, n.podDiff) : null,
        n.verified ? h("button", { type: "button", dataset: { fixWhatif: n.node } }, gettext("show on the board as a what-if")) : null,
      ),
    ),
  );
}

// A plugin name that may wrap between its words (NodeResources|Balanced|Allocation).
function breakable(name) {
  return name.split(/(?=[A-Z][a-z])/).flatMap((part, i) => (i ? [h("wbr"), part] : [part]));
}

// Node × score plugin, each cell showing raw → normalized × weight = weighted.
export function renderScores(root, frame) {
  if (!frame) {
    replace(root, h("p", { class: "empty" }, gettext("No cycle yet: create a pod or press Explain.")));
    return;
  }
  const names = Object.keys(frame.nodes).sort();
  const plugins = [...new Set(names.flatMap((n) => Object.keys(frame.nodes[n].scores)))];
  const rows = names.map((name) => {
    const n = frame.nodes[name];
    const cls = frame.winner === name ? "winner" : n.rejected ? "rejected" : "";
    return h(
      "tr",
      {
        class: cls,
        dataset: {
          node: name,
          total: n.total === null || n.rejected ? "" : String(n.total),
          rejectedBy: n.rejected ? n.rejected.plugin || "PreFilter" : "",
        },
      },
      h("th", {}, frame.winner === name ? `★ ${name}` : name),
      n.rejected
        ? h("td", { colspan: String(Math.max(1, plugins.length)), class: "rejected-cell" }, `✗ ${n.rejected.plugin || "PreFilter"}: ${n.rejected.reasons.join(", ")}`)
        : !plugins.length
          ? h("td", { class: "empty" }, frame.winner === name ? gettext("the only feasible node: selected without scoring") : "✓ " + gettext("passed filters"))
          : plugins.map((p) => {
            const s = n.scores[p];
            if (!s) return h("td", {}, "");
            const normalized = s.normalized === undefined ? "…" : s.normalized;
            const weighted = s.weighted === undefined ? "" : ` = ${s.weighted}`;
            return h(
              "td",
              {
                title: interpolate(gettext("%(plugin)s: raw %(raw)s, normalized %(normalized)s, weight %(weight)s"), { plugin: p, raw: s.raw, normalized, weight: s.weight }),
                dataset: { plugin: p, raw: String(s.raw), normalized: String(normalized), weight: String(s.weight ?? "") },
              },
              `${s.raw} → ${normalized} × ${s.weight ?? "?"}${weighted}`,
            );
          }),
      h("td", { class: "total" }, n.total === null || n.rejected ? "" : String(n.total)),
    );
  });
  replace(
    root,
    h("p", {}, typeof frame.cycle === "number" ? interpolate(gettext("cycle %(cycle)s"), { cycle: frame.cycle }) : gettext("what-if"), ` · ${frame.pod}`, frame.skippedScore.length ? " · " + interpolate(gettext("skipped at PreScore: %(plugins)s"), { plugins: frame.skippedScore.join(", ") }) : ""),
    filterTable(frame, names),
    h(
      "table",
      { class: "scores" },
      h("thead", {}, h("tr", {}, h("th", {}, gettext("node")), plugins.length ? plugins.map((p) => h("th", { title: p }, breakable(p))) : h("th", {}, gettext("filters")), h("th", {}, gettext("total")))),
      h("tbody", {}, rows),
    ),
    frame.message ? h("p", { class: frame.scheduled ? "ok" : "pending" }, frame.message) : null,
  );
}

// Every filter plugin's verdict on every node; the one upstream reports is marked.
function filterTable(frame, names) {
  const plugins = [...new Set(names.flatMap((n) => frame.nodes[n].failures.map((f) => f.plugin)))];
  if (!plugins.length) return null;
  return h(
    "table",
    { class: "filters" },
    h("caption", {}, gettext("Filter verdicts (★ = the reason upstream reports)")),
    h("thead", {}, h("tr", {}, h("th", {}, gettext("node")), plugins.map((p) => h("th", { title: p }, breakable(p))))),
    h(
      "tbody",
      {},
      names.map((name) => {
        const n = frame.nodes[name];
        return h(
          "tr",
          { dataset: { node: name } },
          h("th", {}, name),
          plugins.map((p) => {
            const failure = n.failures.find((f) => f.plugin === p);
            if (!failure) return h("td", { class: "pass", dataset: { plugin: p, code: "Success" } }, "✓");
            const reported = n.rejected && n.rejected.plugin === p;
            return h(
              "td",
              { class: reported ? "fail reported" : "fail", dataset: { plugin: p, code: failure.code, reported: reported ? "true" : "false" } },
              `${reported ? "★ " : ""}✗ ${failure.reasons.join(", ")}`,
            );
          }),
        );
      }),
    ),
  );
}

// The Events of a pod (or the cluster's latest); for a what-if, the event its cycle would record.
export function renderEvents(root, state, pod, whatIf = null) {
  const events = pod ? eventsFor(state, pod) : [...state.objects.Event.values()].sort((a, b) => (b.lastTimestamp || "").localeCompare(a.lastTimestamp || "")).slice(0, 40);
  let rows = describeEvents(events);
  if (whatIf && whatIf.finished) {
    const reason = whatIf.scheduled ? "Scheduled" : "FailedScheduling";
    rows = [{ type: whatIf.scheduled ? "Normal" : "Warning", reason, age: gettext("what-if"), from: "default-scheduler", message: whatIf.message }];
  }
  replace(
    root,
    h("h3", {}, pod ? interpolate(gettext("Events of %(pod)s"), { pod: objectKey(pod) }) : whatIf ? interpolate(gettext("Events %(pod)s would get (what-if, nothing was created)"), { pod: whatIf.pod }) : gettext("Recent events")),
    rows.length
      ? h(
          "table",
          { class: "events" },
          h("thead", {}, h("tr", {}, ["Type", "Reason", "Age", "From", "Message"].map((t) => h("th", {}, t)))),
          h("tbody", {}, rows.map((r) => h("tr", { class: r.type === "Warning" ? "warning" : "" }, h("td", {}, r.type), h("td", {}, r.reason), h("td", {}, r.age), h("td", {}, r.from), h("td", {}, r.message, r.related ? h("span", { class: "related" }, ` — ${r.relatedKind === "Pod" ? "pod " : ""}${r.related}`) : null)))),
        )
      : h("p", { class: "empty" }, "<none>"),
  );
}

// The lesson as this board was sent it (model/lesson.js): every step that ran with what happened
// (once shown), the next one's instruction, and for a presenter the steps further on.
export function renderLesson(root, view, { next, readOnly, shown }) {
  if (!view) {
    replace(root, h("p", { class: "empty" }, gettext("This cluster was not started from a lesson.")));
    return;
  }
  const current = Math.min(view.ran, view.steps - 1);
  replace(
    root,
    h("h3", {}, localized(view, "title")),
    view.summary ? h("p", {}, localized(view, "summary")) : null,
    h(
      "ol",
      { class: "steps" },
      view.items.map((s, i) =>
        h(
          "li",
          { class: s.ran ? "done" : i === current ? "current" : "", dataset: { step: String(s.number) }, "aria-current": i === shown ? "step" : null },
          localized(s, "say"),
          s.command ? h("div", {}, h("code", {}, s.command)) : null,
          s.after !== undefined ? h("p", { class: "after" }, localized(s, "after")) : s.awaiting ? h("p", { class: "hint" }, gettext("what happened: after the reveal")) : null,
        ),
      ),
    ),
    view.done
      ? h("p", { class: "ok" }, gettext("Lesson complete."))
      : readOnly
        ? h("p", {}, interpolate(gettext("step %(number)s of %(steps)s"), { number: view.ran + 1, steps: view.steps }))
        : h("button", { type: "button", class: "next-step", onclick: next }, interpolate(gettext("run step %(number)s of %(steps)s"), { number: view.ran + 1, steps: view.steps })),
  );
}
