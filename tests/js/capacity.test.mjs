// Capacity what-ifs, the board's model (static/js/model/capacity.js), on reports the core emits
// (tests/js/fixtures/capacity.json, from tests/js/make_capacity_fixture.py).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { headline, nodeMarks, pendingGroups, placementRows, queryBody, queryKey, toCsv } from "../../static/js/model/capacity.js";

const REPORTS = JSON.parse(readFileSync(new URL("./fixtures/capacity.json", import.meta.url)));

test("a drain marks the drained node and the one that took its pod", () => {
  const marks = nodeMarks(REPORTS.drain);
  assert.deepEqual(marks.get("node01"), { kind: "drained", before: 2, after: 0, delta: -2 });
  assert.deepEqual(marks.get("node02"), { kind: "gained", before: 1, after: 2, delta: 1 });
  assert.equal(marks.has("node03"), false);
  assert.deepEqual(headline(REPORTS.drain), { query: "drain", nodes: 1, evicted: 2, rescheduled: 1, pending: 1, deleted: 0, refused: 0, notDrained: 0 });
});

test("the pods left Pending are grouped by their FailedScheduling message", () => {
  const groups = pendingGroups(REPORTS.drain);
  assert.equal(groups.length, 1);
  assert.deepEqual(groups[0].pods, ["default/web-1"]);
  assert.match(groups[0].message, /^0\/3 nodes are available: 1 node\(s\) were unschedulable, 2 Insufficient cpu\./);
});

test("a fit marks the nodes its copies went to and keeps the copy that did not fit", () => {
  assert.deepEqual([...nodeMarks(REPORTS.fit)], [["node02", { kind: "gained", delta: 2 }]]);
  const rows = placementRows(REPORTS.fit);
  assert.equal(rows.length, 3);
  assert.deepEqual(rows.at(-1).scheduled, false);
  assert.match(rows.at(-1).message, /Insufficient cpu/);
});

test("an add marks where the pending pods go once the new node exists", () => {
  assert.deepEqual([...nodeMarks(REPORTS.add)], [["node03-new-1", { kind: "gained", delta: 1 }]]);
  assert.deepEqual(headline(REPORTS.add), { query: "add", added: 1, pending: 1, scheduled: 1, onNewNodes: 1 });
});

test("the CSV export quotes messages with commas", () => {
  const csv = toCsv(REPORTS.drain).trim().split("\n");
  assert.equal(csv[0], "pod,from,to,scheduled,message");
  assert.equal(csv[1], "default/web-0,node01,node02,true,Successfully assigned default/web-0 to node02");
  assert.match(csv[2], /^default\/web-1,node01,,false,"0\/3 nodes are available: 1 node\(s\) were unschedulable, 2 Insufficient cpu\./);
});

test("the form's fields become the request the server reads", () => {
  assert.deepEqual(queryBody("drain", { nodes: "n1, n2 n3", zone: " a ", ignoreDaemonsets: true }), {
    query: "drain",
    nodes: ["n1", "n2", "n3"],
    selector: "",
    zone: "a",
    instanceType: "",
    ignoreDaemonsets: true,
    force: false,
    deleteEmptydirData: false,
  });
  assert.deepEqual(queryBody("fit", { source: "workload", workload: "deploy/web", namespace: "", max: "10" }), { query: "fit", max: 10, workload: "deploy/web", namespace: "default" });
  assert.deepEqual(queryBody("add", { like: "n1", count: "3" }), { query: "add", like: "n1", count: 3, namePrefix: "" });
  assert.equal(queryKey({ b: 1, a: 2 }), queryKey({ a: 2, b: 1 }));
});
