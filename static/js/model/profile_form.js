// The profile editor's form ↔ a KubeSchedulerConfiguration object. Pure.
// The server resolves a config into forms (clusterviz/profiles.py `form_of`: every plugin's points
// on/off and weight, as upstream's MultiPoint expansion places them); here a form is written back as
// the smallest config that resolves to it: what differs from upstream's default profile.

export const EXTENSION_POINTS = ["preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "bind"];
export const SCORING_STRATEGIES = ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"];
const DEFAULT_RESOURCES = [
  { name: "cpu", weight: 1 },
  { name: "memory", weight: 1 },
];

function clone(value) {
  return JSON.parse(JSON.stringify(value));
}

function sameResources(resources) {
  return JSON.stringify(resources || DEFAULT_RESOURCES) === JSON.stringify(DEFAULT_RESOURCES);
}

// plugins.<point>.enabled / disabled: what differs from the default form.
function pluginsOf(form, defaultForm) {
  const defaults = new Map(defaultForm.plugins.map((p) => [p.name, p]));
  const plugins = {};
  const add = (point, list, entry) => {
    plugins[point] ||= {};
    (plugins[point][list] ||= []).push(entry);
  };
  for (const point of EXTENSION_POINTS) {
    for (const plugin of form.plugins) {
      const base = defaults.get(plugin.name);
      if (!(point in plugin.points)) continue;
      const was = !!(base && base.points[point]);
      const now = !!plugin.points[point];
      if (was && !now) add(point, "disabled", { name: plugin.name });
      else if (!was && now) add(point, "enabled", point === "score" ? { name: plugin.name, weight: plugin.weight } : { name: plugin.name });
      else if (now && point === "score" && base && plugin.weight !== base.weight) add(point, "enabled", { name: plugin.name, weight: plugin.weight });
    }
  }
  return plugins;
}

function fitArgs(existing, strategy) {
  const args = { ...(existing || {}) };
  delete args.scoringStrategy;
  const custom = strategy.type !== "LeastAllocated" || !sameResources(strategy.resources);
  if (custom) {
    args.scoringStrategy = { type: strategy.type, resources: clone(strategy.resources) };
    if (strategy.type === "RequestedToCapacityRatio") args.scoringStrategy.requestedToCapacityRatio = { shape: clone(strategy.shape) };
  }
  return args;
}

function spreadArgs(existing, spread) {
  const args = { ...(existing || {}) };
  delete args.defaultingType;
  delete args.defaultConstraints;
  if (spread.defaultingType !== "System") args.defaultingType = spread.defaultingType;
  if (spread.defaultConstraints.length) args.defaultConstraints = clone(spread.defaultConstraints);
  return args;
}

// pluginConfig: the form's two plugins regenerated, every other entry kept as it was.
function pluginConfigOf(entries, form) {
  const out = [];
  const generated = { NodeResourcesFit: (old) => fitArgs(old, form.scoringStrategy), PodTopologySpread: (old) => spreadArgs(old, form.podTopologySpread) };
  const seen = new Set();
  for (const entry of entries || []) {
    if (!(entry.name in generated)) {
      out.push(clone(entry));
      continue;
    }
    seen.add(entry.name);
    const args = generated[entry.name](entry.args);
    if (Object.keys(args).length) out.push({ name: entry.name, args });
  }
  for (const [name, make] of Object.entries(generated)) {
    if (seen.has(name)) continue;
    const args = make({});
    if (Object.keys(args).length) out.push({ name, args });
  }
  return out;
}

/** The config with profile `index` rewritten from `form`; the other profiles and fields are kept. */
export function configFromForm(config, index, form, defaultForm) {
  const next = clone(config);
  next.profiles = next.profiles && next.profiles.length ? next.profiles : [{}];
  const old = next.profiles[index] || {};
  const profile = { schedulerName: form.schedulerName || "default-scheduler" };
  const plugins = pluginsOf(form, defaultForm);
  if (Object.keys(plugins).length) profile.plugins = plugins;
  const pluginConfig = pluginConfigOf(old.pluginConfig, form);
  if (pluginConfig.length) profile.pluginConfig = pluginConfig;
  const pct = form.percentageOfNodesToScore;
  if (pct !== null && pct !== undefined && pct !== "" && pct !== next.percentageOfNodesToScore) profile.percentageOfNodesToScore = Number(pct);
  next.profiles[index] = profile;
  return next;
}

/** The line a located error names (`profile.yaml:12: …`), or null. */
export function errorLine(message) {
  const match = /(?:^|: )profile\.yaml:(\d+)(?::\d+)?:/.exec(message || "");
  return match ? Number(match[1]) : null;
}
