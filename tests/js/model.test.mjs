// Unit tests of the browser's pure model (node --test): fed with cycles the real core emitted
// (tests/js/fixtures/cycles.json, kept current by tests/test_js_fixtures.py).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { applyRequested, emptyState, nodeUsage } from "../../static/js/model/cluster_state.js";
import { frameAt } from "../../static/js/model/cycle_player.js";
import { whyPending } from "../../static/js/model/why_pending.js";

const CYCLES = JSON.parse(readFileSync(new URL("./fixtures/cycles.json", import.meta.url)));
const end = (cycle) => frameAt(cycle, cycle.events.length);

test("the recorded plugin per node comes from filter.finished, not from the plugin order", () => {
  const cycle = CYCLES["taint-and-selector"];
  const frame = end(cycle);
  assert.equal(frame.nodes.node01.rejected.plugin, "TaintToleration");
  assert.equal(frame.nodes.node02.rejected.plugin, "TaintToleration");
  assert.equal(frame.nodes.node03.rejected.plugin, "NodeAffinity");
  // Before filter.finished no node is marked rejected yet, only its failures so far.
  const before = frameAt(cycle, cycle.events.findIndex((e) => e.type === "filter.finished"));
  assert.equal(before.nodes.node01.rejected, null);
  assert.deepEqual(before.nodes.node01.failures.map((f) => f.plugin), ["TaintToleration", "NodeAffinity"]);
  assert.equal(before.filterFinished, false);
});

test("Why Pending: taints and missing labels from the core's detail", () => {
  const why = whyPending(end(CYCLES["taint-and-selector"]));
  assert.match(why.message, /^0\/3 nodes are available/);
  const byReason = Object.fromEntries(why.groups.map((g) => [g.reason, g]));
  const gpu = byReason["node(s) had untolerated taint {gpu: true}"];
  assert.deepEqual(gpu.nodes, ["node02"]);
  assert.equal(gpu.items[0].text, "node02 has taint gpu=true:NoSchedule — add this toleration to the pod");
  assert.equal(gpu.items[0].snippet, 'tolerations:\n- key: "gpu"\n  operator: "Equal"\n  value: "true"\n  effect: "NoSchedule"');
  assert.equal(gpu.items[0].command, "kubectl taint node node02 gpu:NoSchedule-");
  const selector = byReason["node(s) didn't match Pod's node affinity/selector"];
  assert.deepEqual(selector.items, [{ text: "node03 lacks label kgc=a that the pod's nodeSelector asks for", command: "kubectl label nodes node03 kgc=a" }]);
  assert.match(why.preemption.text, /^Why preemption did not help: on node01, node02, node03 the reasons are ones evicting pods cannot fix/);
});

test("Why Pending under v1.35: one taint reason, a fix per taint (#134740)", () => {
  const why = whyPending(end(CYCLES["taint-and-selector-v1.35"]));
  const group = why.groups.find((g) => g.reason === "node(s) had untolerated taint(s)");
  assert.deepEqual(group.nodes, ["node01", "node02"]);
  assert.deepEqual(
    group.items.map((item) => item.text),
    ["node01 has taint qqq=value1:NoSchedule — add this toleration to the pod", "node02 has taint gpu=true:NoSchedule — add this toleration to the pod"],
  );
  assert.equal(group.items[1].command, "kubectl taint node node02 gpu:NoSchedule-");
});

test("Why Pending: resources as the core counts them (the sidecar's 250m included)", () => {
  const frame = end(CYCLES["insufficient-cpu"]);
  const detail = frame.detail.NodeResourcesFit.cpu;
  assert.equal(detail.used.node03, 750);
  const why = whyPending(frame);
  assert.equal(why.groups.length, 1);
  const [group] = why.groups;
  assert.equal(group.reason, "Insufficient cpu");
  assert.deepEqual(group.nodes, ["node01", "node02", "node03"]);
  assert.equal(group.items[0].text, "needs 2.1 CPU, the freest of these nodes (node01) has 2 CPU free of 2 CPU");
});

test("a scheduled cycle: no groups, the winner named", () => {
  const why = whyPending(end(CYCLES.scheduled));
  assert.equal(why.scheduled, true);
  assert.equal(why.winner, "node01");
  assert.deepEqual(why.groups, []);
  assert.equal(why.preemption, null);
});

test("the bars draw the server's requested figures, never older ones", () => {
  const state = emptyState();
  const node = { metadata: { name: "node03" } };
  assert.equal(nodeUsage(state, node), null);
  applyRequested(state, { resourceVersion: "12", nodes: { node03: { cpu: { requested: 750, allocatable: 1000 }, memory: { requested: 0, allocatable: 2 }, pods: { requested: 1, allocatable: 110 } } } });
  applyRequested(state, { resourceVersion: "11", nodes: {} });
  assert.deepEqual(nodeUsage(state, node).cpu, { used: 750, total: 1000 });
});

test("a plugin over more nodes stays longer on screen than one over fewer", async () => {
  const { eventDuration } = await import("../../static/js/model/cycle_player.js");
  const filter = CYCLES["taint-and-selector"].events.find((e) => e.type === "plugin.evaluated" && e.point === "Filter" && e.verdicts);
  const small = { ...filter, verdicts: { node01: filter.verdicts.node01 } };
  assert.ok(eventDuration(filter) > eventDuration(small));
  assert.ok(eventDuration({ type: "cycle.started" }) < eventDuration(small));
});

test("nodes changed since a cycle's resourceVersion are the out-of-date ones", async () => {
  const { nodesChangedSince } = await import("../../static/js/model/cluster_state.js");
  const state = emptyState();
  state.objects.Node.set("a", { metadata: { name: "a", resourceVersion: "10" } });
  state.objects.Node.set("b", { metadata: { name: "b", resourceVersion: "12" } });
  assert.deepEqual([...nodesChangedSince(state, "11")], ["b"]);
  assert.deepEqual([...nodesChangedSince(state, null)], []);
});

test("undo knows the inverse of each change from the cluster as it was", async () => {
  const { History, inverseOf, inverseOfCreate } = await import("../../static/js/model/history.js");
  const state = emptyState();
  state.objects.Node.set("n1", { metadata: { name: "n1", labels: { disk: "hdd" } }, spec: { taints: [{ key: "gpu", value: "true", effect: "NoSchedule" }] } });
  state.objects.Deployment.set("default/web", { metadata: { name: "web", namespace: "default" }, spec: { replicas: 3 } });
  state.objects.Pod.set("default/owned", { metadata: { name: "owned", namespace: "default", ownerReferences: [{ kind: "ReplicaSet", name: "web-1" }] }, spec: {} });
  state.objects.Pod.set("default/solo", { metadata: { name: "solo", namespace: "default", uid: "u1", resourceVersion: "9" }, spec: { nodeName: "n1" }, status: { phase: "Running" } });
  assert.deepEqual(inverseOf({ action: "label", node: "n1", key: "disk", value: "ssd" }, state), { action: "label", node: "n1", key: "disk", value: "hdd" });
  assert.deepEqual(inverseOf({ action: "label", node: "n1", key: "zone", value: "a" }, state), { action: "label", node: "n1", key: "zone", value: null });
  assert.deepEqual(inverseOf({ action: "taint", node: "n1", key: "gpu", value: "true", effect: "NoSchedule", remove: true }, state), { action: "taint", node: "n1", key: "gpu", value: "true", effect: "NoSchedule" });
  assert.equal(inverseOf({ action: "scale", kind: "Deployment", name: "web", namespace: "default", replicas: 5 }, state).replicas, 3);
  assert.equal(inverseOf({ action: "delete", kind: "Pod", name: "owned", namespace: "default" }, state), null);
  const recreate = inverseOf({ action: "delete", kind: "Pod", name: "solo", namespace: "default" }, state);
  assert.deepEqual(JSON.parse(recreate.yaml), { metadata: { name: "solo", namespace: "default" }, spec: { nodeName: "n1" } });
  assert.deepEqual(inverseOfCreate({ created: ["Pod/p"] }), { action: "delete", kind: "Pod", name: "p", namespace: "default" });
  const history = new History();
  history.record({ action: "cordon", node: "n1" }, { action: "uncordon", node: "n1" });
  assert.equal(history.undo().inverse.action, "uncordon");
  assert.equal(history.redo().action.action, "cordon");
  history.record({ action: "x" }, null); // no inverse: the history ends there
  assert.equal(history.canUndo(), false);
});

test("a node's total at any step is the sum of its weighted scores so far; at the end, the core's total", () => {
  const cycle = CYCLES.scheduled;
  const selected = cycle.events.find((e) => e.type === "host.selected");
  assert.equal(end(cycle).nodes[selected.node].total, selected.total);
  cycle.events.forEach((e, i) => {
    if (e.type !== "scores.normalized") return;
    const frame = frameAt(cycle, i + 1);
    for (const [name, info] of Object.entries(frame.nodes)) {
      const sum = Object.values(info.scores).reduce((s, x) => s + (x.weighted || 0), 0);
      assert.equal(info.total, sum, `${name} after ${e.plugin}`);
      assert.deepEqual(info.scores[e.plugin], { raw: info.scores[e.plugin].raw, normalized: e.normalized[name], weight: e.weight, weighted: e.weighted[name] });
    }
  });
  const beforeScores = frameAt(cycle, cycle.events.findIndex((e) => e.type === "scores.normalized"));
  assert.equal(beforeScores.nodes[selected.node].total, null);
});
