// The List-Watch flow of the seed notes as a pure model (no DOM): every watch delta of the stream
// becomes a trip of hops — writer → kube-apiserver → etcd → kube-apiserver → the components that
// watch its kind — labelled with the notes' step numbers, linked to the change that caused it, and
// played one stage at a time at the cluster's pace through a bounded queue.

import { gettext, interpolate } from "../lib/i18n.js";

// The seed notes' 13 steps (the lesson note "pod调度 · 工作流程", in English), translated when shown.
const STEPS = {
  1: () => gettext("Controller Manager, Scheduler and kubelet each List-Watch the API server from the moment they start."),
  2: () => gettext("The user submits the request to the API server, with kubectl or another API client."),
  3: () => gettext("The API server stores the object in etcd and, once it is written, acknowledges the client."),
  4: () => gettext("etcd sends the change (a Create event) to the API server."),
  5: () => gettext("The API server passes the event on to the Controller Manager, which watches it."),
  6: () => gettext("The Controller Manager's controllers react: the replica controller creates the Pods the count asks for."),
  7: () => gettext("The API server records the new Pods in etcd."),
  8: () => gettext("etcd sends the Pods' creation to the API server as an event."),
  9: () => gettext("The Scheduler, watching the API server, receives the new Pod and picks a Node for it."),
  10: () => gettext("The Scheduler writes the binding (the Pod's node) to the API server, which stores it in etcd."),
  11: () => gettext("etcd sends the update to the API server, which now reflects the scheduling result."),
  12: () => gettext("The kubelet on the Node watches Pod updates, starts the containers and reports the Pod's status to the API server."),
  13: () => gettext("The API server stores the status in etcd and, once it is written, confirms to the kubelet."),
};
export const STEP_NUMBERS = Object.keys(STEPS).map(Number);

// Step `step`'s text in the page's language (undefined for a step the notes do not have).
export function stepText(step) {
  return STEPS[step] ? STEPS[step]() : undefined;
}

// Who wrote a change, as the store records it (`component`), → the box of the diagram.
const USERS = new Set(["kubectl", "browser"]);
export function writerBox(component) {
  if (!component || USERS.has(component)) return component || "kubectl";
  if (component === "default-scheduler" || component === "scheduler") return "scheduler";
  if (component === "kubelet") return "kubelet";
  if (component === "kube-apiserver") return "kube-apiserver";
  if (component === "controller-manager" || component.endsWith("-controller") || component.endsWith("garbage-collector")) {
    return "controller-manager";
  }
  return "kubectl"; // any other API client writes as a user does
}

// The controller inside the controller manager that wrote, by its component name.
export function controllerOf(component) {
  if (component === "controller-manager") return "replicaset"; // older rows of the replicaset controller
  return component.replace(/-controller$/, "");
}

// The boxes and the controllers that reacted to a trip (the writers of the changes linked to it).
export function reactors(trip) {
  const boxes = new Set();
  const controllers = new Set();
  for (const r of (trip && trip.reactions) || []) {
    const box = writerBox(r.writer);
    boxes.add(box);
    if (box === "controller-manager") controllers.add(controllerOf(r.writer));
  }
  return { boxes, controllers };
}

// Step numbers by the writer's role: the request, the store, the acknowledgement, etcd's event.
const WRITE_STEPS = {
  user: { write: 2, store: 3, ack: 3, event: 4 },
  "controller-manager": { write: 6, store: 7, ack: 7, event: 8 },
  scheduler: { write: 10, store: 10, ack: 10, event: 11 },
  kubelet: { write: 12, store: 13, ack: 13, event: 13 },
  "kube-apiserver": { store: 3, event: 4 },
};
// Step numbers of the watch event reaching each watcher (5: the Controller Manager, 9: the
// Scheduler, 12: the kubelet; 13 when the kubelet hears back about its own write).
const WATCH_STEPS = { "controller-manager": 5, scheduler: 9, kubelet: 12 };

function role(box) {
  return box === "kubectl" || box === "browser" ? "user" : box;
}

// What each controller of kube-controller-manager v1.34 watches (its informers, as passed to its
// constructor in cmd/kube-controller-manager/app/*.go); "*" is every kind (the garbage collector's
// metadata informers).
export const CONTROLLERS = {
  deployment: ["Deployment", "ReplicaSet", "Pod"],
  replicaset: ["ReplicaSet", "Pod"],
  daemonset: ["DaemonSet", "ControllerRevision", "Pod", "Node"],
  statefulset: ["StatefulSet", "Pod", "PersistentVolumeClaim", "ControllerRevision"],
  job: ["Job", "Pod"],
  endpoint: ["Service", "Pod", "Endpoints"],
  endpointslice: ["Service", "Pod", "Node", "EndpointSlice"],
  namespace: ["Namespace"],
  "taint-eviction": ["Pod", "Node"],
  "garbage-collector": ["*"],
  "pod-garbage-collector": ["Pod", "Node"],
};
// The scheduler's informers (pkg/scheduler/eventhandlers.go and the default plugins' listers:
// volumes, PodDisruptionBudgets for preemption, and the Services, ReplicationControllers, ReplicaSets
// and StatefulSets of PodTopologySpread's default selector: podtopologyspread/plugin.go setListers).
const SCHEDULER_KINDS = new Set([
  "Pod", "Node", "Namespace", "PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver",
  "PodDisruptionBudget", "Service", "ReplicaSet", "StatefulSet", "ReplicationController",
]);

// The watchers of a change: the controllers that watch its kind, the scheduler, and the kubelet of
// the pod's node (a kubelet watches only the pods bound to it, and its own Node).
export function watchersOf(kind, object) {
  const controllers = Object.keys(CONTROLLERS).filter((c) => CONTROLLERS[c].includes(kind) || CONTROLLERS[c][0] === "*");
  const out = [];
  if (controllers.length) out.push({ box: "controller-manager", controllers });
  if (SCHEDULER_KINDS.has(kind)) out.push({ box: "scheduler" });
  const node = kind === "Pod" ? object && object.spec && object.spec.nodeName : kind === "Node" ? object && object.metadata.name : null;
  if (node) out.push({ box: "kubelet", node });
  return out;
}

// A write's label by its event type ("create Pod default/web"); another type is shown as it is.
const VERBS = {
  ADDED: () => gettext("create %(object)s"),
  MODIFIED: () => gettext("update %(object)s"),
  DELETED: () => gettext("delete %(object)s"),
};

function writeLabel(event, what) {
  return VERBS[event] ? interpolate(VERBS[event](), { object: what }) : `${event} ${what}`;
}

// The hops of one change, in order; `stage` groups the hops shown together (the watch fan-out).
export function hopsOf(trip) {
  const box = trip.writerBox;
  const steps = WRITE_STEPS[role(box)];
  const what = `${trip.kind} ${trip.key}`;
  const hops = [];
  const add = (kind, from, to, step, label, extra = {}) => hops.push({ kind, from, to, step, label, stage: hops.length, ...extra });
  if (box !== "kube-apiserver") add("write", box, "kube-apiserver", steps.write, writeLabel(trip.event, what));
  add("store", "kube-apiserver", "etcd", steps.store, interpolate(gettext("store %(object)s at resourceVersion %(rv)s"), { object: what, rv: trip.rv }));
  if (box !== "kube-apiserver") add("ack", "kube-apiserver", box, steps.ack, interpolate(gettext("ok: resourceVersion %(rv)s"), { rv: trip.rv }));
  add("event", "etcd", "kube-apiserver", steps.event, interpolate(gettext("%(event)s event, resourceVersion %(rv)s"), { event: trip.event, rv: trip.rv }));
  const stage = hops.length;
  for (const w of trip.watchers) {
    const step = w.box === "kubelet" && box === "kubelet" ? 13 : WATCH_STEPS[w.box];
    const to =
      w.box === "kubelet"
        ? interpolate(gettext("kubelet on %(node)s"), { node: w.node })
        : w.box === "controller-manager"
          ? interpolate(gettext("%(count)s controllers"), { count: w.controllers.length })
          : w.box;
    const label = interpolate(gettext("watch: %(event)s %(object)s → %(to)s"), { event: trip.event, object: what, to });
    hops.push({ kind: "watch", from: "kube-apiserver", to: w.box, step, label, stage, watcher: w });
  }
  return hops;
}

// Dotted paths that differ between two versions of an object (up to `depth` levels deep), status
// and the bookkeeping fields left out of metadata.
const IGNORED = new Set(["metadata.resourceVersion", "metadata.managedFields", "metadata.generation"]);
export function changedPaths(before, after, depth = 3, prefix = "") {
  if (!before || !after) return [];
  const out = [];
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const key of [...keys].sort()) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (IGNORED.has(path)) continue;
    const a = before[key];
    const b = after[key];
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    const nested = a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b);
    if (nested && depth > 1) out.push(...changedPaths(a, b, depth - 1, path));
    else out.push(path);
  }
  return out;
}

function keyOf(obj) {
  const meta = (obj && obj.metadata) || {};
  return meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name;
}

// Stage durations (ms) by pace: slow and paused keep every hop on screen for over a second.
const KEEP_MORE = 20; // members of a batch and reactions kept per trip (the counts go on)

export const STAGE_MS = { instant: 350, slow: 1300, paused: 1300 };

export class ListWatchFlow {
  constructor({ queueLimit = 12, keep = 40, remember = 2000 } = {}) {
    this.queueLimit = queueLimit; // trips waiting to play; beyond it the oldest controller trip is dropped
    this.keep = keep; // trips kept in the trail
    this.remember = remember; // objects remembered for linking causes
    this.nextId = 1;
    this.playing = null; // { trip, stage, startedAt }
    this.queue = [];
    this.trail = []; // played (and playing) trips, newest first
    this.dropped = 0; // changes not animated (a burst over the queue's bound)
    this.latest = new Map(); // "uid" or "Kind/key" → the latest trip of that object
    this.lastByWriter = new Map(); // component → its latest trip
    this.selected = null; // { trip, hop }
    this.version = 0; // bumps on every visible change (the view redraws when it moves)
  }

  // One watch delta of the stream; `previous` is the object as the page knew it before.
  add(delta, previous = null, now = 0) {
    const object = delta.object || {};
    const meta = object.metadata || {};
    const known = meta.uid && this.latest.get(meta.uid); // the object before, for kinds the page keeps no copy of
    const trip = {
      id: this.nextId++,
      rv: String(delta.resourceVersion),
      event: delta.event,
      kind: delta.kind,
      key: keyOf(object),
      writer: delta.component || "kubectl",
      writerBox: writerBox(delta.component),
      object,
      changed: [],
      watchers: watchersOf(delta.kind, object),
      cause: null,
      reactions: [],
      reactionCount: 0,
      events: 0, // Events the writer recorded about this change (they travel with it)
      eventReasons: [],
      count: 1,
      more: [],
    };
    this.version += 1;
    // An Event a component records right after its own change rides along with that change.
    const own = this.lastByWriter.get(trip.writer);
    if (trip.kind === "Event" && own && own.kind !== "Event" && this._onScreenOrQueued(own)) {
      own.events += 1;
      if (own.eventReasons.length < KEEP_MORE) own.eventReasons.push(`${object.reason || "Event"} (rv ${trip.rv})`);
      this._remember(own, meta);
      return own;
    }
    this._link(trip, object, meta);
    const batch = this.queue.find((t) => sameBatch(t, trip));
    this._remember(batch || trip, meta);
    if (batch) {
      batch.count += 1;
      if (batch.more.length < KEEP_MORE) batch.more.push({ rv: trip.rv, key: trip.key, object });
      return batch;
    }
    // Only a trip of its own is worked out in full (a burst's members are counted, not drawn).
    if (!previous && known && known.count === 1 && known.kind === trip.kind) previous = known.object;
    if (trip.event === "MODIFIED") trip.changed = changedPaths(previous, object);
    trip.hops = hopsOf(trip);
    this.queue.push(trip);
    this.lastByWriter.set(trip.writer, trip);
    while (this.queue.length > this.queueLimit) {
      const index = this.queue.findIndex((t) => role(t.writerBox) !== "user");
      const [gone] = this.queue.splice(index === -1 ? 0 : index, 1);
      this.dropped += gone.count;
    }
    if (!this.playing || this.playing.finished) this._next(now);
    return trip;
  }

  // The change this one reacts to: the most recent related change seen — its owner's, the same
  // object's previous one, an Event's involved object, the node a DaemonSet pod or an eviction is about.
  _link(trip, object, meta) {
    if (role(trip.writerBox) === "user") return;
    const candidates = [];
    const look = (id) => id && this.latest.get(id);
    for (const ref of meta.ownerReferences || []) if (ref.controller) candidates.push(look(ref.uid));
    candidates.push(look(meta.uid));
    if (trip.kind === "Event" && object.involvedObject) candidates.push(look(object.involvedObject.uid));
    if (trip.kind === "Pod") {
      if (trip.writer === "taint-eviction-controller") candidates.push(look(`Node/${object.spec && object.spec.nodeName}`));
      if (trip.writer === "daemonset-controller") candidates.push(look(`Node/${daemonNode(object)}`));
    }
    const cause = candidates.filter(Boolean).sort((a, b) => Number(b.rv) - Number(a.rv))[0];
    if (!cause) return;
    trip.cause = { id: cause.id, rv: cause.rv, kind: cause.kind, key: cause.key, writer: cause.writer };
    cause.reactionCount += 1;
    if (cause.reactions.length < KEEP_MORE) cause.reactions.push({ rv: trip.rv, writer: trip.writer, event: trip.event, kind: trip.kind, key: trip.key });
    if (cause === this.playing?.trip) this.version += 1;
  }

  _onScreenOrQueued(trip) {
    return (this.playing && this.playing.trip === trip && !this.playing.finished) || this.queue.includes(trip);
  }

  _remember(trip, meta) {
    if (meta.uid) this.latest.set(meta.uid, trip);
    this.latest.set(`${trip.kind}/${trip.key}`, trip);
    while (this.latest.size > this.remember) this.latest.delete(this.latest.keys().next().value);
  }

  _next(now) {
    const trip = this.queue.shift();
    this.playing = trip ? { trip, stage: 0, startedAt: now } : null;
    if (trip) {
      this.trail.unshift(trip);
      if (this.trail.length > this.keep) this.trail.length = this.keep;
    }
    this.version += 1;
  }

  // How long the playing stage stays on screen: the pace's duration, shortened while a backlog waits.
  stageMs(pace) {
    const base = STAGE_MS[pace] || STAGE_MS.instant;
    return base / Math.min(pace === "instant" ? 4 : 1.5, 1 + this.queue.length / 3);
  }

  // Move the animation on to `now` (one stage at most per call: a page that was hidden does not
  // race through what it missed); true when something visible changed.
  advance(now, pace) {
    const playing = this.playing;
    if (!playing || now - playing.startedAt < this.stageMs(pace)) return false;
    if (playing.stage < lastStage(playing.trip)) {
      playing.stage += 1;
      playing.startedAt = now;
    } else if (this.queue.length) this._next(now);
    else {
      playing.finished = true; // the last trip stays on screen, whole, until the next change
      return false;
    }
    this.version += 1;
    return true;
  }

  // The hops of the playing trip on screen now (those whose stage has come).
  visibleHops() {
    if (!this.playing) return [];
    return this.playing.trip.hops.map((hop, index) => ({ ...hop, index })).filter((hop) => hop.stage <= this.playing.stage);
  }

  get waiting() {
    return this.queue.reduce((n, t) => n + t.count, 0);
  }

  // Show the object at one hop of a kept trip (null clears).
  select(tripId, hopIndex) {
    const trip = this.trail.find((t) => t.id === tripId) || (this.playing && this.playing.trip.id === tripId ? this.playing.trip : null);
    this.selected = trip && trip.hops[hopIndex] ? { trip, hop: trip.hops[hopIndex], index: hopIndex } : null;
    this.version += 1;
    return this.selected;
  }
}

function lastStage(trip) {
  return trip.hops.reduce((max, hop) => Math.max(max, hop.stage), 0);
}

// Changes of one burst (same writer, kind, event and watchers) travel as one trip "×N".
function sameBatch(a, b) {
  return (
    a.writer === b.writer &&
    a.kind === b.kind &&
    a.event === b.event &&
    role(a.writerBox) !== "user" &&
    JSON.stringify(a.watchers.map((w) => w.box)) === JSON.stringify(b.watchers.map((w) => w.box))
  );
}

// The node a DaemonSet pod is pinned to (its required `matchFields metadata.name` term).
function daemonNode(pod) {
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms || [];
  for (const term of terms) for (const field of term.matchFields || []) if (field.key === "metadata.name") return (field.values || [])[0];
  return null;
}
