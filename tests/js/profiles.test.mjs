// The Compare model and the profile form's writer (static/js/model/compare.js, profile_form.js).
// compare.json holds two explanations the core really emits (python -m tests.js.make_compare_fixture).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { compareExplanations, verdictOf } from "../../static/js/model/compare.js";
import { configFromForm, errorLine } from "../../static/js/model/profile_form.js";

const fixture = JSON.parse(readFileSync(new URL("./fixtures/compare.json", import.meta.url)));

test("compare: the two winners, per-plugin differences, top nodes first", () => {
  const c = compareExplanations(fixture.a, fixture.b);
  assert.equal(c.a.winner, "node02");
  assert.equal(c.b.winner, "node01");
  assert.equal(c.differentWinner, true);
  assert.equal(c.a.schedulerName, "default-scheduler");
  assert.deepEqual(
    c.rows.map((r) => [r.node, r.a.total, r.b.total, r.delta]),
    [
      ["node01", 425, 475, 50],
      ["node02", 475, 425, -50],
    ],
  );
  const fit = c.rows[0].plugins.find((p) => p.name === "NodeResourcesFit");
  assert.deepEqual([fit.a.weighted, fit.b.weighted, fit.delta], [25, 75, 50]);
  const taint = c.rows[0].plugins.find((p) => p.name === "TaintToleration");
  assert.equal(taint.delta, 0);
  assert.deepEqual(c.verdictChanges.map((r) => [r.node, r.a.verdict.kind, r.b.verdict.kind]), [
    ["node01", "feasible", "winner"],
    ["node02", "winner", "feasible"],
  ]);
});

test("compare: a node rejected on one side only is a changed verdict, and winners stay in the top", () => {
  const b = structuredClone(fixture.b);
  b.nodes.node02 = { ...b.nodes.node02, feasible: false, total: null, scores: {}, filter: { plugin: "TaintToleration", code: "UnschedulableAndUnresolvable", reasons: ["node(s) had untolerated taint {qqq: 1}"] } };
  assert.equal(verdictOf(b, "node02").text, "rejected by TaintToleration: node(s) had untolerated taint {qqq: 1}");
  const c = compareExplanations(fixture.a, b, { top: 1 });
  assert.deepEqual(c.rows.map((r) => r.node), ["node01", "node02"]); // node02 won under A: kept though past the top 1
  assert.equal(c.rows[1].delta, null);
  assert.deepEqual(c.verdictChanges.map((r) => [r.node, r.b.verdict.kind]), [["node01", "winner"], ["node02", "rejected"]]);
});

const defaultForm = {
  schedulerName: "default-scheduler",
  plugins: [
    { name: "TaintToleration", points: { filter: true, preScore: true, score: true }, weight: 3 },
    { name: "NodeResourcesFit", points: { preFilter: true, filter: true, preScore: true, score: true }, weight: 1 },
    { name: "ImageLocality", points: { score: true }, weight: 1 },
  ],
  percentageOfNodesToScore: null,
  scoringStrategy: { type: "LeastAllocated", resources: [{ name: "cpu", weight: 1 }, { name: "memory", weight: 1 }], shape: [] },
  podTopologySpread: { defaultingType: "System", defaultConstraints: [] },
};
const base = { apiVersion: "kubescheduler.config.k8s.io/v1", kind: "KubeSchedulerConfiguration", profiles: [{ schedulerName: "default-scheduler" }] };

test("profile form: the default form writes the bare default profile", () => {
  assert.deepEqual(configFromForm(base, 0, defaultForm, defaultForm), base);
});

test("profile form: disabled points, weights, strategy with shape, percentage, spread defaults", () => {
  const form = structuredClone(defaultForm);
  form.plugins[0].points.filter = false;
  form.plugins[1].weight = 5;
  form.plugins[2].points.score = false;
  form.scoringStrategy = { type: "RequestedToCapacityRatio", resources: [{ name: "cpu", weight: 2 }], shape: [{ utilization: 0, score: 0 }, { utilization: 100, score: 10 }] };
  form.percentageOfNodesToScore = 50;
  form.podTopologySpread = { defaultingType: "List", defaultConstraints: [{ maxSkew: 1, topologyKey: "topology.kubernetes.io/zone", whenUnsatisfiable: "ScheduleAnyway" }] };
  const config = structuredClone(base);
  config.profiles[0].pluginConfig = [{ name: "InterPodAffinity", args: { hardPodAffinityWeight: 2 } }, { name: "NodeResourcesFit", args: { ignoredResources: ["example.com/foo"] } }];
  config.profiles.push({ schedulerName: "other" });
  const out = configFromForm(config, 0, form, defaultForm);
  assert.deepEqual(out.profiles[1], { schedulerName: "other" });
  assert.deepEqual(out.profiles[0], {
    schedulerName: "default-scheduler",
    plugins: {
      filter: { disabled: [{ name: "TaintToleration" }] },
      score: { enabled: [{ name: "NodeResourcesFit", weight: 5 }], disabled: [{ name: "ImageLocality" }] },
    },
    pluginConfig: [
      { name: "InterPodAffinity", args: { hardPodAffinityWeight: 2 } },
      {
        name: "NodeResourcesFit",
        args: {
          ignoredResources: ["example.com/foo"],
          scoringStrategy: { type: "RequestedToCapacityRatio", resources: [{ name: "cpu", weight: 2 }], requestedToCapacityRatio: { shape: [{ utilization: 0, score: 0 }, { utilization: 100, score: 10 }] } },
        },
      },
      { name: "PodTopologySpread", args: { defaultingType: "List", defaultConstraints: [{ maxSkew: 1, topologyKey: "topology.kubernetes.io/zone", whenUnsatisfiable: "ScheduleAnyway" }] } },
    ],
    percentageOfNodesToScore: 50,
  });
  // Back to the defaults: the generated parts go away, the user's other args stay.
  const back = configFromForm(out, 0, defaultForm, defaultForm);
  assert.deepEqual(back.profiles[0], { schedulerName: "default-scheduler", pluginConfig: [{ name: "InterPodAffinity", args: { hardPodAffinityWeight: 2 } }, { name: "NodeResourcesFit", args: { ignoredResources: ["example.com/foo"] } }] });
});

test("profile form: the line a located error names", () => {
  assert.equal(errorLine("profile.yaml:9: profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value"), 9);
  assert.equal(errorLine("b: profile.yaml:12:3: mapping values are not allowed here"), 12);
  assert.equal(errorLine("config: must be an object"), null);
});
