// Undo / redo of the presenter's last actions. Each action is kept with its inverse, computed from
// the cluster as it was just before (pure, no DOM). Actions without a safe inverse end the history.

import { gettext, interpolate } from "../lib/i18n.js";

const SERVER_FIELDS = ["uid", "resourceVersion", "creationTimestamp", "generation", "deletionTimestamp", "managedFields"];
const NAMESPACED = new Set(["Pod", "Deployment", "ReplicaSet"]);

// The object again, as something `create` accepts (no server fields, no status).
function recreatable(obj) {
  const copy = JSON.parse(JSON.stringify(obj));
  for (const field of SERVER_FIELDS) delete copy.metadata[field];
  delete copy.status;
  return JSON.stringify(copy);
}

// The action that undoes `action` on the cluster `state` it is about to change, or null.
export function inverseOf(action, state) {
  const node = action.node ? state.objects.Node.get(action.node) : null;
  switch (action.action) {
    case "label": {
      if (!node) return null;
      const before = (node.metadata.labels || {})[action.key];
      return { action: "label", node: action.node, key: action.key, value: before === undefined ? null : before };
    }
    case "taint": {
      if (!node) return null;
      const had = (node.spec.taints || []).find((t) => t.key === action.key && t.effect === action.effect);
      if (action.remove) return had ? { action: "taint", node: action.node, key: had.key, value: had.value || "", effect: had.effect } : null;
      if (had) return { action: "taint", node: action.node, key: had.key, value: had.value || "", effect: had.effect };
      return { action: "taint", node: action.node, key: action.key, value: action.value || "", effect: action.effect, remove: true };
    }
    case "cordon":
    case "uncordon":
      return node ? { action: node.spec.unschedulable ? "cordon" : "uncordon", node: action.node } : null;
    case "scale": {
      const key = `${action.namespace || "default"}/${action.name}`;
      const obj = state.objects[action.kind || "Deployment"].get(key);
      return obj ? { ...action, replicas: obj.spec.replicas ?? 1 } : null;
    }
    case "delete": {
      const key = NAMESPACED.has(action.kind) ? `${action.namespace || "default"}/${action.name}` : action.name;
      const obj = (state.objects[action.kind] || new Map()).get(key);
      if (!obj || (obj.metadata.ownerReferences || []).length) return null; // its controller recreates it
      return { action: "create", yaml: recreatable(obj) };
    }
    default:
      return null;
  }
}

// The inverse of a `create`, known from the server's answer ("Kind/name", in namespace default).
export function inverseOfCreate(result) {
  const created = (result && result.created) || [];
  if (created.length !== 1) return null;
  const [kind, name] = created[0].split("/");
  return { action: "delete", kind, name, namespace: "default" };
}

export class History {
  constructor(limit = 50) {
    this.done = [];
    this.undone = [];
    this.limit = limit;
  }

  record(action, inverse) {
    if (!inverse) {
      this.done = [];
      this.undone = [];
      return;
    }
    this.done.push({ action, inverse });
    if (this.done.length > this.limit) this.done.shift();
    this.undone = [];
  }

  canUndo() {
    return this.done.length > 0;
  }

  canRedo() {
    return this.undone.length > 0;
  }

  // The step to undo (moved to the redo stack), or null.
  undo() {
    const step = this.done.pop() || null;
    if (step) this.undone.push(step);
    return step;
  }

  redo() {
    const step = this.undone.pop() || null;
    if (step) this.done.push(step);
    return step;
  }
}

export function describe(action) {
  if (action.action === "create") return gettext("create");
  if (action.action === "delete") return interpolate(gettext("delete %(kind)s %(name)s"), { kind: action.kind, name: action.name });
  if (action.action === "scale") return interpolate(gettext("scale %(name)s to %(replicas)s"), { name: action.name, replicas: action.replicas });
  return [action.action, action.node, action.key].filter(Boolean).join(" ");
}

