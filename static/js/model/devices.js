// A node's devices as Dynamic Resource Allocation hands them out: a pure reading of the
// ResourceSlices published for the node and of the ResourceClaims whose allocation holds them
// (no DOM here). Slices of a pool count only at the pool's newest generation, as the scheduler's
// GatherPools reads them (structured/internal/stable/pools_stable.go).

import { gettext } from "../lib/i18n.js";
import { objectKey } from "./cluster_state.js";

export function deviceId(driver, pool, device) {
  return `${driver}/${pool}/${device}`;
}

// The claims holding each device: id → [{claim, admin, reservedFor: [pod names]}].
export function deviceHolders(state) {
  const holders = new Map();
  const claims = (state.objects.ResourceClaim && state.objects.ResourceClaim.values()) || [];
  for (const claim of claims) {
    const allocation = (claim.status || {}).allocation;
    if (!allocation) continue;
    const reservedFor = ((claim.status || {}).reservedFor || []).map((r) => r.name);
    for (const result of (allocation.devices || {}).results || []) {
      const id = deviceId(result.driver, result.pool, result.device);
      if (!holders.has(id)) holders.set(id, []);
      holders.get(id).push({ claim: objectKey(claim), admin: Boolean(result.adminAccess), reservedFor });
    }
  }
  return holders;
}

function attributeText(value) {
  if (!value || typeof value !== "object") return "";
  for (const kind of ["string", "version", "int", "bool"]) if (kind in value) return String(value[kind]);
  return "";
}

// The slices published for `nodeName` (spec.nodeName), newest generation of each pool only.
function nodeSlices(state, nodeName) {
  const slices = (state.objects.ResourceSlice && [...state.objects.ResourceSlice.values()]) || [];
  const mine = slices.filter((s) => (s.spec || {}).nodeName === nodeName);
  const newest = new Map();
  for (const s of mine) {
    const key = `${s.spec.driver}/${s.spec.pool.name}`;
    newest.set(key, Math.max(newest.get(key) ?? -1, s.spec.pool.generation || 0));
  }
  return mine
    .filter((s) => (s.spec.pool.generation || 0) === newest.get(`${s.spec.driver}/${s.spec.pool.name}`))
    .sort((a, b) => a.spec.driver.localeCompare(b.spec.driver) || a.spec.pool.name.localeCompare(b.spec.pool.name) || a.metadata.name.localeCompare(b.metadata.name));
}

// Each device of the node: {id, name, driver, pool, summary, holders}, in the allocator's order.
export function devicesOnNode(state, nodeName, holders = deviceHolders(state)) {
  const out = [];
  for (const slice of nodeSlices(state, nodeName)) {
    for (const device of slice.spec.devices || []) {
      const id = deviceId(slice.spec.driver, slice.spec.pool.name, device.name);
      const attributes = device.attributes || {};
      const summary = ["model", "productName", "type"].map((k) => attributeText(attributes[k])).find(Boolean) || "";
      out.push({ id, name: device.name, driver: slice.spec.driver, pool: slice.spec.pool.name, summary, holders: holders.get(id) || [] });
    }
  }
  return out;
}

// "free", or who holds it: "default/my-gpu (trainer)".
export function deviceState(device) {
  if (!device.holders.length) return gettext("free");
  return device.holders
    .map((h) => `${h.claim}${h.reservedFor.length ? ` (${h.reservedFor.join(", ")})` : ""}${h.admin ? ` ${gettext("(admin access)")}` : ""}`)
    .join("; ");
}

// Counts for a node card's one-line summary.
export function deviceCounts(devices) {
  const used = devices.filter((d) => d.holders.some((h) => !h.admin)).length;
  return { total: devices.length, used, free: devices.length - used };
}
