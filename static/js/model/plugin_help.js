// One line per plugin and per extension point on what it checks — the words shown beside the
// running plugin while a cycle plays. Descriptions only: every verdict comes from the core.
// Translated when shown (pluginHelp, stageHelp), not when this module loads.

import { gettext } from "../lib/i18n.js";

const PLUGINS = {
  PrioritySort: () => gettext("orders the queue: higher priority first"),
  SchedulingGates: () => gettext("waits while the pod has schedulingGates"),
  NodeUnschedulable: () => gettext("is the node cordoned (spec.unschedulable)?"),
  NodeName: () => gettext("if the pod sets spec.nodeName, is it this node?"),
  TaintToleration: () =>
    gettext("does the pod tolerate the node's NoSchedule and NoExecute taints? (scores: fewer untolerated PreferNoSchedule taints)"),
  NodeAffinity: () => gettext("do the node's labels match the pod's nodeSelector and required node affinity? (scores: preferred terms)"),
  NodePorts: () => gettext("are the pod's hostPorts still free on the node?"),
  NodeResourcesFit: () =>
    gettext("is there room for the pod's requests: allocatable − already requested ≥ request? (scores: the freer the better)"),
  VolumeRestrictions: () => gettext("can the pod's volumes be mounted there (no conflicting disk)?"),
  PodTopologySpread: () => gettext("would the pod keep its spread constraints within maxSkew?"),
  InterPodAffinity: () => gettext("do the pods already there satisfy the pod's (anti-)affinity, and theirs?"),
  DynamicResources: () => gettext("can the pod's resource claims be allocated on the node?"),
  NodeResourcesBalancedAllocation: () => gettext("would cpu and memory stay balanced on the node?"),
  ImageLocality: () => gettext("does the node already have the pod's images?"),
  DefaultPreemption: () => gettext("could evicting lower-priority pods make room somewhere?"),
  DefaultBinder: () => gettext("writes the binding: spec.nodeName = the chosen node"),
};

const STAGES = {
  PreFilter: () => gettext("each plugin reads the pod once and prepares what Filter needs (it may reject the pod outright)"),
  Filter: () => gettext("every node goes through every filter plugin: one failure rejects the node"),
  PostFilter: () => gettext("no node fits: DefaultPreemption looks for lower-priority pods to evict"),
  PreScore: () => gettext("plugins prepare scoring (or skip it when the pod gives them nothing to score)"),
  Score: () => gettext("each feasible node gets a raw score per plugin"),
  NormalizeScore: () => gettext("raw scores are scaled to 0–100, then multiplied by the plugin's weight"),
  Select: () => gettext("the highest total wins (ties broken at random)"),
  Bind: () => gettext("the pod is bound to the winner"),
};

export const HELPED_PLUGINS = Object.keys(PLUGINS);
export const HELPED_STAGES = Object.keys(STAGES);

// What plugin `name` checks, in the page's language (undefined for a plugin without a line).
export function pluginHelp(name) {
  return Object.hasOwn(PLUGINS, name) ? PLUGINS[name]() : undefined;
}

// What extension point `stage` does, in the page's language (undefined for one without a line).
export function stageHelp(stage) {
  return Object.hasOwn(STAGES, stage) ? STAGES[stage]() : undefined;
}
