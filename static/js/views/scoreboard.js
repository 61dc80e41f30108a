// The Scores tab for a cycle over many nodes: the top nodes (each plugin's normalized × weight) and
// the tally of rejection reasons first; every node on demand, a page at a time.

import { h, replace } from "../lib/dom.js";
import { gettext, interpolate } from "../lib/i18n.js";
import { page, reasonTally, scoreboardRows, topScores } from "../model/node_layout.js";

export const SCOREBOARD_ABOVE = 40; // more nodes than this: the scoreboard instead of the full tables
const TOP = 10;
const PAGE = 50;
const EXAMPLES = 3; // node names shown per rejection reason

function pluginsOf(frame, names) {
  return [...new Set(names.flatMap((n) => Object.keys(frame.nodes[n].scores)))];
}

function scoreCell(s, plugin) {
  if (!s) return h("td", {}, "");
  const normalized = s.normalized === undefined ? "…" : s.normalized;
  return h("td", { title: interpolate(gettext("%(plugin)s: raw %(raw)s, normalized %(normalized)s, weight %(weight)s"), { plugin, raw: s.raw, normalized, weight: s.weight }), dataset: { plugin } }, `${normalized} × ${s.weight ?? "?"}`);
}

function topTable(frame) {
  const { top, scored } = topScores(frame, TOP);
  if (!top.length) return h("p", { class: "empty" }, frame.winner ? gettext("the only feasible node: selected without scoring") : gettext("no node was scored"));
  const plugins = pluginsOf(frame, top.map((t) => t.name));
  return h(
    "table",
    { class: "scores top-scores" },
    h("caption", {}, interpolate(gettext("Top %(count)s of %(scored)s scored nodes"), { count: top.length, scored })),
    h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, gettext("node")), h("th", {}, gettext("total")), plugins.map((p) => h("th", { title: p }, p)))),
    h(
      "tbody",
      {},
      top.map((t, i) =>
        h(
          "tr",
          { class: t.name === frame.winner ? "winner" : "", dataset: { node: t.name, total: String(t.total) } },
          h("td", {}, String(i + 1)),
          h("th", {}, t.name === frame.winner ? `★ ${t.name}` : t.name),
          h("td", { class: "total" }, String(t.total)),
          plugins.map((p) => scoreCell(frame.nodes[t.name].scores[p], p)),
        ),
      ),
    ),
  );
}

function tallyTable(frame) {
  const tally = reasonTally(frame, EXAMPLES);
  if (!tally.length) return h("p", { class: "ok" }, "✓ " + gettext("no node was rejected"));
  const rejected = tally.reduce((s, t) => s + t.count, 0);
  return h(
    "table",
    { class: "scores reason-tally" },
    h("caption", {}, interpolate(gettext("%(count)s rejected nodes, by the reason upstream records"), { count: rejected })),
    h("thead", {}, h("tr", {}, h("th", {}, gettext("nodes")), h("th", {}, gettext("plugin")), h("th", {}, gettext("reason")), h("th", {}, gettext("e.g.")))),
    h(
      "tbody",
      {},
      tally.map((t) =>
        h(
          "tr",
          { dataset: { count: String(t.count), plugin: t.plugin } },
          h("td", { class: "total" }, String(t.count)),
          h("td", {}, t.plugin),
          h("td", { class: "rejected-cell" }, `✗ ${t.reason}`),
          h("td", {}, t.nodes.join(", "), t.count > EXAMPLES ? " …" : ""),
        ),
      ),
    ),
  );
}

function allNodes(frame, at, go) {
  const rows = scoreboardRows(frame);
  const p = page(rows, at, PAGE);
  const plugins = pluginsOf(frame, p.rows.map((r) => r.name));
  return [
    h(
      "div",
      { class: "pager" },
      h("button", { type: "button", class: "page-prev", disabled: p.index === 0, onclick: () => go(p.index - 1) }, gettext("◀ previous")),
      h("span", { class: "page-info" }, interpolate(gettext("page %(page)s of %(pages)s · nodes %(first)s–%(last)s of %(count)s"), { page: p.index + 1, pages: p.pages, first: p.index * PAGE + 1, last: p.index * PAGE + p.rows.length, count: rows.length })),
      h("button", { type: "button", class: "page-next", disabled: p.index >= p.pages - 1, onclick: () => go(p.index + 1) }, gettext("next ▶")),
    ),
    h(
      "table",
      { class: "scores all-nodes" },
      h("thead", {}, h("tr", {}, h("th", {}, gettext("node")), h("th", {}, gettext("total")), plugins.map((pl) => h("th", { title: pl }, pl)))),
      h(
        "tbody",
        {},
        p.rows.map((r) => {
          const n = frame.nodes[r.name];
          return h(
            "tr",
            { class: r.name === frame.winner ? "winner" : n.rejected ? "rejected" : "", dataset: { node: r.name } },
            h("th", {}, r.name === frame.winner ? `★ ${r.name}` : r.name),
            n.rejected
              ? h("td", { class: "rejected-cell", colspan: String(plugins.length + 1) }, `✗ ${n.rejected.plugin || "PreFilter"}: ${n.rejected.reasons.join(", ")}`)
              : [h("td", { class: "total" }, r.total === null ? "✓" : String(r.total)), plugins.map((pl) => scoreCell(n.scores[pl], pl))],
          );
        }),
      ),
    ),
  ];
}

export function renderScoreboard(root, frame) {
  if (!frame) {
    replace(root, h("p", { class: "empty" }, gettext("No cycle yet: create a pod or press Explain.")));
    return;
  }
  const names = Object.keys(frame.nodes);
  const feasible = names.filter((n) => !frame.nodes[n].rejected).length;
  const body = h("div", { class: "all-nodes-body" });
  const details = h("details", { class: "scoreboard-all" }, h("summary", {}, interpolate(gettext("every node (%(count)s), %(page)s a page"), { count: names.length, page: PAGE })), body);
  const go = (at) => replace(body, allNodes(frame, at, go));
  details.addEventListener("toggle", () => details.open && !body.firstChild && go(0));
  replace(
    root,
    h(
      "p",
      { class: "scoreboard-head" },
      typeof frame.cycle === "number" ? interpolate(gettext("cycle %(cycle)s"), { cycle: frame.cycle }) : gettext("what-if"),
      ` · ${frame.pod} · ` + interpolate(gettext("%(count)s nodes: %(feasible)s feasible, %(rejected)s rejected"), { count: names.length, feasible, rejected: names.length - feasible }),
      frame.skippedScore.length ? " · " + interpolate(gettext("skipped at PreScore: %(plugins)s"), { plugins: frame.skippedScore.join(", ") }) : "",
    ),
    frame.message ? h("p", { class: frame.scheduled ? "ok" : "pending" }, frame.message) : null,
    topTable(frame),
    tallyTable(frame),
    details,
  );
}

// Whether a frame is large enough for the scoreboard.
export function wantsScoreboard(frame) {
  if (!frame) return false;
  let n = 0;
  for (const _ in frame.nodes) if (++n > SCOREBOARD_ABOVE) return true;
  return false;
}
