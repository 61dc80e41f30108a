// The whole view in the URL (cluster is the path; pod, node, cycle, step, tab, role in the query),
// so a link shows a colleague exactly the same thing.

export function readView(search) {
  const q = new URLSearchParams(search);
  const cycle = q.get("cycle");
  return {
    pod: q.get("pod"),
    node: q.get("node"),
    tab: q.get("tab"),
    cycle: cycle !== null && /^\d+$/.test(cycle) ? parseInt(cycle, 10) : null,
    step: q.get("step") !== null ? parseInt(q.get("step"), 10) || 0 : null,
    role: q.get("role") === "follower" ? "follower" : "presenter",
    projector: q.get("projector") === "1",
    present: q.get("present") === "1", // presenter mode: the lesson as a rail beside the board
  };
}

export function viewQuery(view) {
  const q = new URLSearchParams();
  if (view.role === "follower") q.set("role", "follower");
  if (view.projector) q.set("projector", "1");
  if (view.present) q.set("present", "1");
  if (view.pod) q.set("pod", view.pod);
  if (view.node) q.set("node", view.node);
  if (view.tab) q.set("tab", view.tab);
  if (view.cycle !== null && view.cycle !== undefined) {
    q.set("cycle", String(view.cycle));
    if (view.step) q.set("step", String(view.step));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

export function writeView(view) {
  const url = `${location.pathname}${viewQuery(view)}`;
  if (url !== `${location.pathname}${location.search}`) history.replaceState(null, "", url);
}
