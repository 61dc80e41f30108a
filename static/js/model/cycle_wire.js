// The compact wire form of a cycle's events, decoded into the full form the player and views read.
// Pure, no DOM. The server's encoder is scheduler_core/framework/events.py `encode_cycle`:
// node names once (`cycle.started`'s `nodeNames`), per-node values as `{$idx, $values}` (all nodes
// when $idx is null), node lists as `{$nodes}`, a Filter plugin's verdicts as failures only
// (`{$failed: {code: [node]}, $reasons: [[text, [node]]]}`: every other node passed), and the
// `weighted` scores left out (normalized × weight).

const SUCCESS = Object.freeze({ code: "Success", reasons: Object.freeze([]) });

// Full-form events from compact ones; events already in the full form (what-ifs) come back as they are.
export function decodeEvents(events) {
  if (!Array.isArray(events)) return events;
  const start = events.find((e) => e.type === "cycle.started");
  const names = start && start.nodeNames;
  if (!names) return events;
  return events.map((e) => decodeEvent(e, names));
}

function decodeEvent(event, names) {
  const out = {};
  for (const [key, value] of Object.entries(event)) {
    if (key !== "nodeNames") out[key] = decodeValue(value, names);
  }
  if (event.type === "scores.normalized" && out.normalized && out.weighted === undefined) {
    const weighted = (out.weighted = {});
    for (const name in out.normalized) weighted[name] = out.normalized[name] * event.weight;
  }
  return out;
}

function decodeValue(value, names) {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => decodeValue(v, names));
  if ("$nodes" in value) return value.$nodes.map((i) => names[i]);
  if ("$values" in value) return perNode(value, names);
  if ("$failed" in value) return verdicts(value, names);
  const out = {};
  for (const [key, v] of Object.entries(value)) out[key] = decodeValue(v, names);
  return out;
}

function perNode({ $idx, $values }, names) {
  const out = {};
  if ($idx === null) names.forEach((name, i) => (out[name] = $values[i]));
  else $idx.forEach((i, k) => (out[names[i]] = $values[k]));
  return out;
}

function verdicts({ $failed, $reasons }, names) {
  const out = {};
  for (const name of names) out[name] = SUCCESS;
  for (const [code, nodes] of Object.entries($failed)) {
    for (const i of nodes) out[names[i]] = { code, reasons: [] };
  }
  for (const [text, nodes] of $reasons || []) {
    for (const i of nodes) out[names[i]].reasons.push(text);
  }
  return out;
}
