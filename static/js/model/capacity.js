// Capacity what-ifs (fit, drain, add): the request a form describes, and what a report means for
// the board — which nodes were drained, which took pods, and the rows to show and export. Pure: no DOM.

export const QUERIES = ["fit", "drain", "add"];

const text = (value) => (typeof value === "string" ? value.trim() : "");
const whole = (value) => (value === "" || value === null || value === undefined ? undefined : Number(value));

// The POST body of /api/clusters/<slug>/capacity for the form's fields (the server validates it).
export function queryBody(query, fields) {
  if (query === "fit") {
    const body = { query, max: whole(fields.max) };
    if (fields.source === "pod") body.pod = fields.pod || "";
    else Object.assign(body, { workload: text(fields.workload), namespace: text(fields.namespace) || "default" });
    return body;
  }
  if (query === "drain") {
    return {
      query,
      nodes: text(fields.nodes).split(/[\s,]+/).filter(Boolean),
      selector: text(fields.selector),
      zone: text(fields.zone),
      instanceType: text(fields.instanceType),
      ignoreDaemonsets: !!fields.ignoreDaemonsets,
      force: !!fields.force,
      deleteEmptydirData: !!fields.deleteEmptydirData,
    };
  }
  if (query === "add") return { query, like: text(fields.like), count: whole(fields.count) ?? 1, namePrefix: text(fields.namePrefix) };
  throw new Error(`unknown query ${query}`);
}

// One key per distinct request: a follower runs a query the presenter shows once.
export function queryKey(body) {
  return body ? JSON.stringify(Object.keys(body).sort().map((k) => [k, body[k]])) : "";
}

// Per node on the board: {kind: "drained" | "gained" | "lost", before, after, delta} in pods.
export function nodeMarks(report) {
  const marks = new Map();
  if (!report) return marks;
  if (report.query === "fit") {
    for (const [node, count] of Object.entries(report.perNode || {})) marks.set(node, { kind: "gained", delta: count });
    return marks;
  }
  if (report.query === "add") {
    const counts = new Map();
    for (const p of report.placements || []) if (p.node) counts.set(p.node, (counts.get(p.node) || 0) + 1);
    for (const [node, count] of counts) marks.set(node, { kind: "gained", delta: count });
    return marks;
  }
  const drained = new Set(report.nodes || []);
  for (const [node, figures] of Object.entries(report.changedNodes || {})) {
    const [before, after] = figures.pods;
    const kind = drained.has(node) ? "drained" : after > before ? "gained" : "lost";
    marks.set(node, { kind, before, after, delta: after - before });
  }
  for (const node of drained) if (!marks.has(node)) marks.set(node, { kind: "drained", delta: 0 });
  return marks;
}

// The pods a report placed or left Pending: {pod, from, to, scheduled, message}.
export function placementRows(report) {
  if (!report) return [];
  const rows = (report.placements || []).map((p) => ({ pod: p.pod, from: p.from || "", to: p.node || "", scheduled: !!p.scheduled, message: p.message }));
  if (report.query === "fit" && report.next) rows.push({ pod: report.next.pod, from: "", to: "", scheduled: false, message: report.next.message });
  return rows;
}

// The pods left Pending, grouped by their FailedScheduling message (most first).
export function pendingGroups(report) {
  const groups = new Map();
  for (const row of placementRows(report)) {
    if (row.scheduled) continue;
    if (!groups.has(row.message)) groups.set(row.message, []);
    groups.get(row.message).push(row.pod);
  }
  return [...groups.entries()].map(([message, pods]) => ({ message, pods })).sort((a, b) => b.pods.length - a.pods.length);
}

// The headline figures of a report.
export function headline(report) {
  if (!report) return null;
  if (report.query === "fit") return { query: "fit", fits: report.fits, nodes: Object.keys(report.perNode || {}).length, limitReached: report.limitReached, template: report.template };
  if (report.query === "drain") {
    return { query: "drain", nodes: report.nodes.length, evicted: report.evicted, rescheduled: report.rescheduled, pending: report.pending, deleted: report.deleted.length, refused: report.refused.length, notDrained: Object.keys(report.notDrained || {}).length };
  }
  return { query: "add", added: report.added.length, pending: report.pending, scheduled: report.scheduled, onNewNodes: report.onNewNodes };
}

const csvCell = (value) => {
  const s = String(value ?? "");
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};

// Every placement as CSV (pod, from, to, scheduled, message), with the refused evictions after them.
export function toCsv(report) {
  const lines = [["pod", "from", "to", "scheduled", "message"].join(",")];
  for (const row of placementRows(report)) lines.push([row.pod, row.from, row.to, row.scheduled, row.message].map(csvCell).join(","));
  for (const r of report.refused || []) lines.push([r.pod, r.node, "", "false", r.message].map(csvCell).join(","));
  return lines.join("\n") + "\n";
}
