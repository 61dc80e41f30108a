// The cluster as the browser knows it: a pure fold of the stream (no DOM here).

export const KINDS = ["Node", "Pod", "Event", "Deployment", "ReplicaSet", "PriorityClass", "Namespace", "ResourceSlice", "ResourceClaim"];

export function emptyState() {
  const objects = {};
  for (const kind of KINDS) objects[kind] = new Map();
  return { rv: "0", cluster: {}, objects, evictions: new Map(), lastChange: null, requested: null };
}

export function objectKey(obj) {
  const meta = obj.metadata || {};
  return meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name;
}

export function applySnapshot(state, msg) {
  const next = emptyState();
  next.requested = state.requested;
  next.rv = msg.resourceVersion;
  next.cluster = msg.cluster || {};
  for (const kind of KINDS) {
    for (const obj of (msg.objects && msg.objects[kind]) || []) next.objects[kind].set(objectKey(obj), obj);
  }
  return next;
}

export function applyWatch(state, msg) {
  const bucket = state.objects[msg.kind];
  if (bucket) {
    if (msg.event === "DELETED") bucket.delete(objectKey(msg.object));
    else bucket.set(objectKey(msg.object), msg.object);
  }
  state.rv = msg.resourceVersion;
  state.lastChange = msg;
  if (msg.kind === "Pod" && msg.event === "DELETED") state.evictions.delete(objectKey(msg.object));
  return state;
}

// The taint manager announced an eviction: `seconds` from now (the browser's clock, so server and
// browser clocks need not agree).
export function applyEviction(state, msg, now = Date.now()) {
  state.evictions.set(msg.pod, { at: now + msg.seconds * 1000, node: msg.node });
  return state;
}

// Whole seconds until the pod's eviction, or null when none is scheduled.
export function evictionIn(state, key, now = Date.now()) {
  const eviction = state.evictions.get(key);
  return eviction ? Math.max(0, Math.ceil((eviction.at - now) / 1000)) : null;
}

export function nodes(state) {
  return [...state.objects.Node.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}

export function podsOnNode(state, nodeName) {
  return [...state.objects.Pod.values()].filter((p) => p.spec.nodeName === nodeName);
}

export function pendingPods(state) {
  return [...state.objects.Pod.values()]
    .filter((p) => !p.spec.nodeName && !["Succeeded", "Failed"].includes((p.status || {}).phase))
    .sort((a, b) => objectKey(a).localeCompare(objectKey(b)));
}

// kubectl's STATUS column, roughly: Terminating, ContainerCreating, Running, Pending, SchedulingGated…
export function podStatus(pod) {
  const status = pod.status || {};
  if (pod.metadata.deletionTimestamp) return "Terminating";
  const scheduled = (status.conditions || []).find((c) => c.type === "PodScheduled");
  if (scheduled && scheduled.reason === "SchedulingGated") return "SchedulingGated";
  const waiting = (status.containerStatuses || []).map((c) => c.state && c.state.waiting).find(Boolean);
  if (waiting && waiting.reason) return waiting.reason;
  return status.phase || "Pending";
}

// The server's figures (scheduler_core's accounting) of requested vs allocatable per node: cpu in
// millicores, memory in bytes, pods. Kept only if at least as new as what is shown.
export function applyRequested(state, msg) {
  if (state.requested && BigInt(msg.resourceVersion) < BigInt(state.requested.resourceVersion)) return state;
  state.requested = msg;
  return state;
}

// Requested vs allocatable for the bars of a node card, or null until the server has said.
export function nodeUsage(state, node) {
  const figures = state.requested && state.requested.nodes[node.metadata.name];
  if (!figures) return null;
  const pick = (r) => ({ used: figures[r].requested, total: figures[r].allocatable });
  return { cpu: pick("cpu"), memory: pick("memory"), pods: pick("pods"), resourceVersion: state.requested.resourceVersion };
}

// The nodes whose object changed after resourceVersion `rv` (or that did not exist then): a cycle
// seen at `rv` says nothing reliable about them any more.
export function nodesChangedSince(state, rv) {
  const changed = new Set();
  if (rv === undefined || rv === null || rv === "") return changed;
  const since = BigInt(rv);
  for (const [name, node] of state.objects.Node) {
    if (BigInt(node.metadata.resourceVersion || "0") > since) changed.add(name);
  }
  return changed;
}

// "12s", "3m", "2h": how long ago a moment (ms since the epoch) was.
export function ageOf(then, now = Date.now()) {
  return age((now - then) / 1000);
}

export function eventsFor(state, obj) {
  const uid = obj.metadata.uid;
  return [...state.objects.Event.values()]
    .filter((e) => e.involvedObject && e.involvedObject.uid === uid)
    .sort((a, b) => (a.firstTimestamp || "").localeCompare(b.firstTimestamp || ""));
}

function age(seconds) {
  if (seconds < 120) return `${Math.max(0, Math.round(seconds))}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  return `${Math.round(seconds / 3600)}h`;
}

// One row per event, as `kubectl describe` prints them: Type, Reason, Age, From, Message.
export function describeEvents(events, now = Date.now()) {
  return events.map((e) => {
    const last = (now - Date.parse(e.lastTimestamp)) / 1000;
    const first = (now - Date.parse(e.firstTimestamp)) / 1000;
    const when = e.count > 1 ? `${age(last)} (x${e.count} over ${age(first)})` : age(last);
    const related = e.related && e.related.name ? `${e.related.namespace ? e.related.namespace + "/" : ""}${e.related.name}` : "";
    return { type: e.type, reason: e.reason, age: when, from: (e.source || {}).component || "", message: e.message, related, relatedKind: (e.related || {}).kind || "" };
  });
}

export function schedulingMessage(pod) {
  const condition = ((pod.status || {}).conditions || []).find((c) => c.type === "PodScheduled");
  return condition && condition.status === "False" ? condition.message || condition.reason : "";
}
