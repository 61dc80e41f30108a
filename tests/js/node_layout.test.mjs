// Unit tests of the node map's pure model (node --test tests/js/).

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  BY_REASON,
  cellAt,
  defaultGroupKey,
  firstInOrder,
  groupKeyChoices,
  groupNodes,
  layoutGrid,
  matcher,
  moveFocus,
  naturalCompare,
  naturalRanks,
  page,
  rankedScores,
  reasonTally,
  scoreboardRows,
  searchText,
  topScores,
  verdictOf,
} from "../../static/js/model/node_layout.js";

const node = (name, labels = {}, taints = []) => ({ metadata: { name, labels }, spec: { taints } });
const ZONE = "topology.kubernetes.io/zone";

// A cycle's final frame as cycle_player.frameAt shapes it.
function frame(nodes, winner = null) {
  const out = { winner, nodes: {}, done: new Set(["Filter"]), stage: "Select" };
  for (const [name, v] of Object.entries(nodes)) {
    out.nodes[name] =
      typeof v === "number"
        ? { rejected: null, failures: [], scores: {}, total: v }
        : { rejected: { plugin: v[0], code: "Unschedulable", reasons: v[1] }, failures: [], scores: {}, total: null };
  }
  return out;
}

test("natural order: numbers inside names compare as numbers", () => {
  const names = ["ip-10-0-0-10", "ip-10-0-0-2", "ip-10-0-1-1", "ip-10-0-0-100", "ip-10-0-0-1", "node"];
  assert.deepEqual([...names].sort(naturalCompare), ["ip-10-0-0-1", "ip-10-0-0-2", "ip-10-0-0-10", "ip-10-0-0-100", "ip-10-0-1-1", "node"]);
  assert.deepEqual(["b", "a10", "a9", "a"].sort(naturalCompare), ["a", "a9", "a10", "b"]);
  assert.ok(naturalCompare("n1", "n01") < 0 && naturalCompare("n01", "n1") > 0 && naturalCompare("x", "x") === 0);
});

test("grouping by zone by default, values and names in natural order, unlabelled last", () => {
  const nodes = [
    node("n10", { [ZONE]: "zone-10" }),
    node("n2", { [ZONE]: "zone-2" }),
    node("n1", { [ZONE]: "zone-2" }),
    node("n3"),
  ];
  assert.equal(defaultGroupKey(nodes), ZONE);
  assert.equal(defaultGroupKey([node("a", { other: "1" })]), "");
  const groups = groupNodes(nodes, null, { groupKey: ZONE });
  assert.deepEqual(groups.map((g) => [g.title, g.names]), [
    [`${ZONE}=zone-2 · 2`, ["n1", "n2"]],
    [`${ZONE}=zone-10 · 1`, ["n10"]],
    [`(no ${ZONE}) · 1`, ["n3"]],
  ]);
  assert.deepEqual(groupNodes(nodes, null).map((g) => g.names), [["n1", "n2", "n3", "n10"]]);
});

test("group key choices: known keys first, then labels with 2..64 values", () => {
  const nodes = Array.from({ length: 100 }, (_, i) => node(`n${i}`, { [ZONE]: `z${i % 3}`, pool: `p${i % 2}`, "kubernetes.io/hostname": `n${i}`, same: "x" }));
  assert.deepEqual(groupKeyChoices(nodes), [ZONE, "pool"]);
});

test("sort by score orders each group by total, unscored last", () => {
  const nodes = ["a1", "a2", "a3", "a4"].map((n) => node(n, { [ZONE]: "z" }));
  const f = frame({ a1: 10, a2: 30, a3: ["NodeAffinity", ["x"]], a4: 30 }, "a4");
  assert.deepEqual(groupNodes(nodes, f, { groupKey: ZONE, sortByScore: true })[0].names, ["a2", "a4", "a1", "a3"]);
  assert.deepEqual(rankedScores(f).map((r) => r.name), ["a4", "a2", "a1"]); // the winner first among equals
});

test("only rejected, grouped by reason, most frequent first; the scoreboard's tally and pages", () => {
  const f = frame({
    n1: ["TaintToleration", ["node(s) had untolerated taint {gpu: true}"]],
    n10: ["NodeResourcesFit", ["Insufficient cpu", "Insufficient memory"]],
    n2: ["NodeResourcesFit", ["Insufficient cpu", "Insufficient memory"]],
    n3: 50,
  }, "n3");
  const tally = reasonTally(f);
  assert.deepEqual(tally.map((t) => [t.plugin, t.reason, t.nodes]), [
    ["NodeResourcesFit", "Insufficient cpu, Insufficient memory", ["n2", "n10"]],
    ["TaintToleration", "node(s) had untolerated taint {gpu: true}", ["n1"]],
  ]);
  const groups = groupNodes([], f, { groupKey: BY_REASON });
  assert.deepEqual(groups.map((g) => g.title), ["✗ NodeResourcesFit: Insufficient cpu, Insufficient memory · 2", "✗ TaintToleration: node(s) had untolerated taint {gpu: true} · 1"]);
  const rows = scoreboardRows(f);
  assert.deepEqual(rows.map((r) => r.name), ["n3", "n1", "n2", "n10"]);
  assert.deepEqual(page(rows, 1, 3), { rows: [rows[3]], index: 1, pages: 2 });
  assert.equal(page(rows, 9, 3).index, 1);
});

test("verdicts of a node in the viewed cycle", () => {
  const f = frame({ a: 5, b: ["NodeName", ["x"]] }, "a");
  assert.equal(verdictOf(f, "a"), "winner");
  assert.equal(verdictOf(f, "b"), "rejected");
  assert.equal(verdictOf(f, "c"), "none");
  assert.equal(verdictOf(null, "a"), "none");
  const running = { ...frame({ c: 0 }), filterFinished: false };
  running.nodes.c.total = null;
  assert.equal(verdictOf(running, "c"), "none"); // not "passed" while its filters may still reject it
  assert.equal(verdictOf({ ...running, filterFinished: true }, "c"), "pass");
});

test("search by name, label or taint; every term must match", () => {
  const n = node("ip-10-0-0-7", { [ZONE]: "us-east-1a", pool: "gpu" }, [{ key: "dedicated", value: "gpu", effect: "NoSchedule" }]);
  const text = searchText(n);
  assert.ok(matcher("IP-10-0-0-7")(text));
  assert.ok(matcher("zone=us-east-1a")(text));
  assert.ok(matcher("dedicated=gpu:NoSchedule")(text));
  assert.ok(matcher("noschedule us-east-1a")(text));
  assert.ok(!matcher("us-east-1b")(text));
  assert.equal(matcher("  "), null);
});

test("layout: rows per group, hit testing, arrow-key moves across rows and groups", () => {
  const groups = [
    { title: "a", names: ["a1", "a2", "a3", "a4", "a5"] },
    { title: "b", names: ["b1", "b2"] },
  ];
  // width 4 + 2*10 + 3*2 = 3 columns of 10 px with a 2 px gap
  const layout = layoutGrid(groups, { width: 3 * 12 - 2 + 8, cell: 10, gap: 2, header: 20, pad: 4 });
  assert.equal(layout.columns, 3);
  assert.deepEqual(layout.names, ["a1", "a2", "a3", "a4", "a5", "b1", "b2"]);
  assert.deepEqual([layout.xs[3], layout.ys[3]], [4, 4 + 20 + 12]);
  assert.equal(cellAt(layout, layout.xs[4] + 5, layout.ys[4] + 5), 4);
  assert.equal(cellAt(layout, layout.xs[4] + 11, layout.ys[4] + 5), -1); // in the gap
  assert.equal(cellAt(layout, 1, 1), -1);
  assert.equal(cellAt(layout, layout.xs[6] + 1, layout.ys[6] + 9), 6);
  assert.equal(moveFocus(layout, 1, "ArrowDown"), 4); // a2 → a5
  assert.equal(moveFocus(layout, 4, "ArrowDown"), 6); // a5 → b2 (nearest column in the next group)
  assert.equal(moveFocus(layout, 5, "ArrowUp"), 3); // b1 → a4
  assert.equal(moveFocus(layout, 0, "ArrowUp"), 0);
  assert.equal(moveFocus(layout, 6, "ArrowRight"), 6);
  assert.equal(moveFocus(layout, -1, "ArrowRight"), 0);
  assert.equal(layout.index.get("b2"), 6);
});

test("grouping with precomputed natural ranks gives the same order", () => {
  const nodes = ["n10", "n2", "n1", "n33", "n3"].map((n, i) => node(n, { [ZONE]: `z${i % 2}` }));
  const rank = naturalRanks(nodes.map((n) => n.metadata.name));
  assert.deepEqual(groupNodes(nodes, null, { groupKey: ZONE, rank }), groupNodes(nodes, null, { groupKey: ZONE }));
  assert.deepEqual(groupNodes(nodes, null, { rank })[0].names, ["n1", "n2", "n3", "n10", "n33"]);
});

test("the scoreboard's top nodes and reason examples are the first of the full orders, found without sorting all", () => {
  const nodes = {};
  for (let i = 0; i < 300; i++) nodes[`ip-10-0-${i % 7}-${i}`] = i % 5 === 0 ? ["NodeResourcesFit", [i % 10 ? "Insufficient cpu" : "Insufficient memory"]] : (i * 37) % 11;
  const f = frame(nodes, "ip-10-0-4-151");
  const ranked = rankedScores(f);
  for (const count of [0, 1, 10, 239, 240, 500]) {
    const { top, scored } = topScores(f, count);
    assert.equal(scored, ranked.length);
    assert.deepEqual(top, ranked.slice(0, count));
  }
  assert.equal(topScores(f, 10).top[0].name, "ip-10-0-4-151"); // the winner first among the equal highest
  const full = reasonTally(f);
  const short = reasonTally(f, 3);
  assert.deepEqual(short.map((t) => [t.reason, t.count, t.nodes]), full.map((t) => [t.reason, t.count, t.nodes.slice(0, 3)]));
  assert.deepEqual(full.map((t) => [t.reason, t.count, t.nodes.length]), [["Insufficient cpu", 30, 30], ["Insufficient memory", 30, 30]]);
  const numbers = [5, 3, 9, 1, 7, 3];
  assert.deepEqual(firstInOrder(numbers, 3, (a, b) => a - b), [1, 3, 3]);
  assert.deepEqual(firstInOrder(numbers, Infinity, (a, b) => a - b), [1, 3, 3, 5, 7, 9]);
  assert.deepEqual(numbers, [5, 3, 9, 1, 7, 3]); // left as it was
});
