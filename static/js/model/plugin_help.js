// One line per plugin and per extension point on what it checks — the words shown beside the
// running plugin while a cycle plays. Descriptions only: every verdict comes from the core.

export const PLUGIN_HELP = {
  PrioritySort: "orders the queue: higher priority first",
  SchedulingGates: "waits while the pod has schedulingGates",
  NodeUnschedulable: "is the node cordoned (spec.unschedulable)?",
  NodeName: "if the pod sets spec.nodeName, is it this node?",
  TaintToleration: "does the pod tolerate the node's NoSchedule and NoExecute taints? (scores: fewer untolerated PreferNoSchedule taints)",
  NodeAffinity: "do the node's labels match the pod's nodeSelector and required node affinity? (scores: preferred terms)",
  NodePorts: "are the pod's hostPorts still free on the node?",
  NodeResourcesFit: "is there room for the pod's requests: allocatable − already requested ≥ request? (scores: the freer the better)",
  VolumeRestrictions: "can the pod's volumes be mounted there (no conflicting disk)?",
  PodTopologySpread: "would the pod keep its spread constraints within maxSkew?",
  InterPodAffinity: "do the pods already there satisfy the pod's (anti-)affinity, and theirs?",
  DynamicResources: "can the pod's resource claims be allocated on the node?",
  NodeResourcesBalancedAllocation: "would cpu and memory stay balanced on the node?",
  ImageLocality: "does the node already have the pod's images?",
  DefaultPreemption: "could evicting lower-priority pods make room somewhere?",
  DefaultBinder: "writes the binding: spec.nodeName = the chosen node",
};

export const STAGE_HELP = {
  PreFilter: "each plugin reads the pod once and prepares what Filter needs (it may reject the pod outright)",
  Filter: "every node goes through every filter plugin: one failure rejects the node",
  PostFilter: "no node fits: DefaultPreemption looks for lower-priority pods to evict",
  PreScore: "plugins prepare scoring (or skip it when the pod gives them nothing to score)",
  Score: "each feasible node gets a raw score per plugin",
  NormalizeScore: "raw scores are scaled to 0–100, then multiplied by the plugin's weight",
  Select: "the highest total wins (ties broken at random)",
  Bind: "the pod is bound to the winner",
};
