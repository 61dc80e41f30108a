// Unit tests of the List-Watch flow's pure model (node --test tests/js/). The deltas have the shape
// of the stream's `watch` messages, with the writers the app's store records (`component`).

import assert from "node:assert/strict";
import { test } from "node:test";

import { ListWatchFlow, STAGE_MS, changedPaths, hopsOf, reactors, watchersOf, writerBox } from "../../static/js/model/list_watch.js";

const node = (labels = {}, rv = "10") => ({
  kind: "Node",
  metadata: { name: "node01", uid: "n-1", resourceVersion: rv, labels: { "kubernetes.io/hostname": "node01", ...labels } },
  spec: {},
});
const delta = (event, object, component, rv) => ({ type: "watch", event, kind: object.kind, object, component, resourceVersion: rv });
const owned = (kind, name, uid, owner, extra = {}) => ({
  kind,
  metadata: { name, namespace: "default", uid, ownerReferences: owner ? [{ uid: owner, controller: true }] : [] },
  spec: {},
  ...extra,
});
const steps = (trip) => trip.hops.map((h) => [h.kind, h.to, h.step]);

test("a kubectl label travels kubectl → kube-apiserver → etcd → the watchers with steps 2-5, 9, 12", () => {
  const flow = new ListWatchFlow();
  const before = node();
  const after = node({ lw: "on" }, "11");
  const trip = flow.add(delta("MODIFIED", after, "kubectl", "11"), before, 0);
  assert.deepEqual(steps(trip), [
    ["write", "kube-apiserver", 2],
    ["store", "etcd", 3],
    ["ack", "kubectl", 3],
    ["event", "kube-apiserver", 4],
    ["watch", "controller-manager", 5],
    ["watch", "scheduler", 9],
    ["watch", "kubelet", 12],
  ]);
  assert.deepEqual(trip.changed, ["metadata.labels.lw"]);
  assert.deepEqual(trip.hops[4].watcher.controllers, ["daemonset", "endpointslice", "taint-eviction", "garbage-collector", "pod-garbage-collector"]);
  assert.equal(trip.hops[6].watcher.node, "node01");
  assert.equal(trip.hops[0].label, "update Node node01");
  // The fan-out is one stage: every watcher hears the event at once.
  assert.deepEqual(trip.hops.map((h) => h.stage), [0, 1, 2, 3, 4, 4, 4]);
  // Clicking the etcd hop shows the node as stored at that resourceVersion.
  const at = flow.select(trip.id, 1);
  assert.equal(at.hop.to, "etcd");
  assert.equal(at.trip.object.metadata.labels.lw, "on");
  assert.equal(at.trip.rv, "11");
});

test("writers map to the boxes of the diagram; the browser writes as a user does", () => {
  assert.equal(writerBox("browser"), "browser");
  assert.equal(writerBox("default-scheduler"), "scheduler");
  assert.equal(writerBox("replicaset-controller"), "controller-manager");
  assert.equal(writerBox("garbage-collector"), "controller-manager");
  assert.equal(writerBox("kubelet"), "kubelet");
  assert.equal(writerBox(""), "kubectl");
  const browser = hopsOf({ writerBox: "browser", event: "ADDED", kind: "Node", key: "n", rv: "3", watchers: [] });
  assert.deepEqual(browser.map((h) => h.step), [2, 3, 3, 4]);
});

test("a Deployment's chain: each follow-up is linked to the change it reacts to, with the notes' steps", () => {
  const flow = new ListWatchFlow({ queueLimit: 50 });
  const deploy = flow.add(delta("ADDED", owned("Deployment", "myapp", "d-1"), "kubectl", "20"), null, 0);
  const rs = flow.add(delta("ADDED", owned("ReplicaSet", "myapp-7d", "rs-1", "d-1"), "deployment-controller", "21"), null, 0);
  const event = flow.add(
    delta("ADDED", { kind: "Event", metadata: { name: "e1", namespace: "default", uid: "e-1" }, involvedObject: { uid: "d-1" } }, "deployment-controller", "22"),
    null,
    0,
  );
  const pending = owned("Pod", "myapp-7d-abcde", "p-1", "rs-1");
  const pod = flow.add(delta("ADDED", pending, "replicaset-controller", "23"), null, 0);
  const bound = { ...pending, spec: { nodeName: "node02" } };
  const bind = flow.add(delta("MODIFIED", bound, "default-scheduler", "24"), pending, 0);
  const running = { ...bound, status: { phase: "Running" } };
  const status = flow.add(delta("MODIFIED", running, "kubelet", "25"), bound, 0);

  assert.equal(rs.cause.id, deploy.id);
  // The Event the deployment controller records right after resizing rides along with that change.
  assert.equal(event, rs);
  assert.deepEqual([rs.events, rs.eventReasons], [1, ["Event (rv 22)"]]);
  assert.equal(pod.cause.id, rs.id);
  assert.equal(bind.cause.id, pod.id);
  assert.equal(status.cause.id, bind.id);
  assert.deepEqual([...reactors(pod).boxes], ["scheduler"]);
  assert.deepEqual([...reactors(bind).boxes], ["kubelet"]);
  assert.deepEqual(deploy.reactions.map((r) => [r.writer, r.kind]), [["deployment-controller", "ReplicaSet"]]);

  // The controller manager's writes are steps 6-8; its pod reaches the scheduler at step 9 (no kubelet yet).
  assert.deepEqual(steps(pod).slice(0, 4).map((s) => s[2]), [6, 7, 7, 8]);
  assert.deepEqual(pod.hops.filter((h) => h.kind === "watch").map((h) => [h.to, h.step]), [["controller-manager", 5], ["scheduler", 9]]);
  // The scheduler's binding: 10, 11, and the kubelet of node02 hears it at step 12.
  assert.deepEqual(steps(bind).slice(0, 4).map((s) => s[2]), [10, 10, 10, 11]);
  assert.deepEqual(bind.hops.find((h) => h.to === "kubelet").step, 12);
  assert.deepEqual(bind.changed, ["spec.nodeName"]);
  // The kubelet's status: 12, 13, and the confirmation back to it is 13.
  assert.deepEqual(steps(status).map((s) => s[2]), [12, 13, 13, 13, 5, 9, 13]);
  assert.deepEqual(status.changed, ["status"]);
});

test("users' changes have no cause; a DaemonSet pod and an eviction react to their node's change", () => {
  const flow = new ListWatchFlow({ queueLimit: 50 });
  const label = flow.add(delta("MODIFIED", node({ disk: "ssd" }, "31"), "kubectl", "31"), node(), 0);
  assert.equal(label.cause, null);
  const pinned = owned("Pod", "agent-x", "p-9", "ds-1", {
    spec: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: ["node01"] }] }] } } } },
  });
  const daemonPod = flow.add(delta("ADDED", pinned, "daemonset-controller", "32"), null, 0);
  assert.equal(daemonPod.cause.id, label.id);
  const evicted = flow.add(delta("DELETED", owned("Pod", "web", "p-5", null, { spec: { nodeName: "node01" } }), "taint-eviction-controller", "33"), null, 0);
  assert.equal(evicted.cause.id, label.id);
  assert.deepEqual(label.reactions.map((r) => r.writer), ["daemonset-controller", "taint-eviction-controller"]);
  const { boxes, controllers } = reactors(label);
  assert.deepEqual([[...boxes], [...controllers]], [["controller-manager"], ["daemonset", "taint-eviction"]]);
  assert.equal(reactors(daemonPod).boxes.size, 0);
});

test("watchers: a pending pod has no kubelet yet; every kind reaches the garbage collector", () => {
  assert.deepEqual(watchersOf("Pod", { metadata: {}, spec: {} }).map((w) => w.box), ["controller-manager", "scheduler"]);
  assert.deepEqual(watchersOf("Event", { metadata: {} }), [{ box: "controller-manager", controllers: ["garbage-collector"] }]);
  assert.deepEqual(watchersOf("Deployment", { metadata: {} })[0].controllers, ["deployment", "garbage-collector"]);
});

test("changed paths leave the bookkeeping out and stop at three levels", () => {
  const a = { metadata: { resourceVersion: "1", labels: { a: "1" } }, spec: { taints: [] } };
  const b = { metadata: { resourceVersion: "2", labels: { a: "2", b: "x" } }, spec: { taints: [{ key: "k" }] } };
  assert.deepEqual(changedPaths(a, b), ["metadata.labels.a", "metadata.labels.b", "spec.taints"]);
  assert.deepEqual(changedPaths(null, b), []);
});

test("paced by the cluster's pace: one stage per stage duration, slower when slow, the last trip stays", () => {
  const flow = new ListWatchFlow();
  const trip = flow.add(delta("MODIFIED", node({ a: "1" }, "2"), "kubectl", "2"), node(), 1000);
  assert.deepEqual(flow.visibleHops().map((h) => h.kind), ["write"]);
  assert.equal(flow.advance(1000 + STAGE_MS.instant - 1, "instant"), false);
  assert.equal(flow.advance(1000 + STAGE_MS.instant, "instant"), true);
  assert.deepEqual(flow.visibleHops().map((h) => h.step), [2, 3]);
  // At the slow pace the same stage stays on screen for over a second.
  assert.ok(STAGE_MS.slow >= 1000);
  let now = 1000 + STAGE_MS.instant;
  assert.equal(flow.advance(now + STAGE_MS.instant, "slow"), false);
  for (let i = 0; i < 10; i += 1) {
    now += STAGE_MS.slow;
    flow.advance(now, "slow");
  }
  assert.deepEqual(flow.visibleHops().map((h) => h.step), [2, 3, 3, 4, 5, 9, 12]);
  assert.equal(flow.playing.trip, trip);
  assert.equal(flow.playing.finished, true);
  // A new change starts at once after a finished trip.
  const next = flow.add(delta("MODIFIED", node({ a: "2" }, "3"), "browser", "3"), node({ a: "1" }, "2"), now + 5);
  assert.equal(flow.playing.trip, next);
  assert.deepEqual(flow.trail.map((t) => t.rv), ["3", "2"]);
});

test("a 1,000-pod burst is coalesced and bounded: the queue never grows past its limit, users' changes are kept", () => {
  const flow = new ListWatchFlow({ queueLimit: 3 });
  flow.add(delta("MODIFIED", owned("Deployment", "web", "d-2"), "kubectl", "1"), null, 0);
  for (let i = 0; i < 1000; i += 1) {
    const pod = owned("Pod", `web-${i}`, `p-${i}`, "rs-2");
    flow.add(delta("ADDED", pod, "replicaset-controller", String(2 + 3 * i)), null, 0);
    flow.add(delta("MODIFIED", { ...pod, spec: { nodeName: "node01" } }, "default-scheduler", String(3 + 3 * i)), pod, 0);
    flow.add(delta("ADDED", { kind: "Event", metadata: { name: `e${i}`, namespace: "default", uid: `e-${i}` }, involvedObject: { uid: `p-${i}` } }, "default-scheduler", String(4 + 3 * i)), null, 0);
    assert.ok(flow.queue.length <= 3);
  }
  // The pods' creation, their bindings (the scheduler's Scheduled events riding along).
  assert.deepEqual(flow.queue.map((t) => [t.writer, t.kind, t.count, t.events]), [
    ["replicaset-controller", "Pod", 1000, 0],
    ["default-scheduler", "Pod", 1000, 1000],
  ]);
  assert.equal(flow.queue[0].more.length, 20); // the members kept for the view; the count goes on
  // Distinct changes beyond the bound drop the oldest controller trip, never the user's.
  const user = flow.add(delta("MODIFIED", node({ x: "1" }, "9000"), "kubectl", "9000"), node(), 0);
  flow.add(delta("ADDED", owned("Endpoints", "s", "ep-1"), "endpoint-controller", "9001"), null, 0);
  assert.equal(flow.queue.length, 3);
  assert.ok(flow.queue.includes(user));
  assert.equal(flow.dropped, 1000); // the pods' creation, the oldest controller trip
  assert.equal(flow.waiting, 1000 + 1 + 1);
  // A backlog shortens the stages: by a third at most at the classroom pace, 4× at the instant one.
  assert.equal(flow.stageMs("slow"), STAGE_MS.slow / 1.5);
  assert.equal(flow.stageMs("instant"), STAGE_MS.instant / 2);
});

test("a kind the page keeps no copy of is compared with its previous change", () => {
  const flow = new ListWatchFlow();
  const svc = (port) => ({ kind: "Service", metadata: { name: "web", namespace: "default", uid: "s-1" }, spec: { ports: [{ port }] } });
  flow.add(delta("ADDED", svc(80), "kubectl", "5"), null, 0);
  const changed = flow.add(delta("MODIFIED", svc(8080), "kubectl", "6"), null, 0);
  assert.deepEqual(changed.changed, ["spec.ports"]);
});
