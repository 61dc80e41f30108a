// The board's reading of a node's DRA devices (static/js/model/devices.js): slices of the node at
// their pool's newest generation, in the allocator's order, and the claims holding each device.

import assert from "node:assert/strict";
import { test } from "node:test";

import { applySnapshot, emptyState } from "../../static/js/model/cluster_state.js";
import { deviceCounts, deviceState, devicesOnNode } from "../../static/js/model/devices.js";

const slice = (name, node, pool, generation, devices, driver = "gpu.example.com") => ({
  metadata: { name },
  spec: { driver, nodeName: node, pool: { name: pool, generation, resourceSliceCount: 1 }, devices },
});
const claim = (name, results, reservedFor = []) => ({
  metadata: { name, namespace: "default" },
  spec: {},
  status: { allocation: { devices: { results } }, reservedFor },
});

const state = applySnapshot(emptyState(), {
  resourceVersion: "7",
  objects: {
    ResourceSlice: [
      slice("b-old", "gpu-b", "gpu-b", 1, [{ name: "stale-0" }]),
      slice("b-new", "gpu-b", "gpu-b", 2, [{ name: "gpu-1", attributes: { model: { string: "a100" } } }, { name: "gpu-0" }]),
      slice("b-nic", "gpu-b", "gpu-b", 1, [{ name: "nic-0" }], "nic.example.com"),
      slice("c", "gpu-c", "gpu-c", 1, [{ name: "gpu-0" }]),
    ],
    ResourceClaim: [
      claim("my-gpu", [{ request: "gpu", driver: "gpu.example.com", pool: "gpu-b", device: "gpu-0" }], [{ resource: "pods", name: "trainer", uid: "u" }]),
      claim("watcher", [{ request: "gpu", driver: "gpu.example.com", pool: "gpu-b", device: "gpu-0", adminAccess: true }]),
      { metadata: { name: "pending", namespace: "default" }, spec: {}, status: {} },
    ],
  },
});

test("a node's devices: newest generation only, pools in driver/pool order, devices in slice order", () => {
  const devices = devicesOnNode(state, "gpu-b");
  assert.deepEqual(devices.map((d) => d.id), ["gpu.example.com/gpu-b/gpu-1", "gpu.example.com/gpu-b/gpu-0", "nic.example.com/gpu-b/nic-0"]);
  assert.equal(devices[0].summary, "a100");
  assert.deepEqual(devicesOnNode(state, "cpu-a"), []);
});

test("who holds a device: the claim, the pods it is reserved for, admin access", () => {
  const [gpu1, gpu0] = devicesOnNode(state, "gpu-b");
  assert.equal(deviceState(gpu1), "free");
  assert.equal(deviceState(gpu0), "default/my-gpu (trainer); default/watcher (admin access)");
  // an admin-access allocation does not use the device up (ListAllAllocatedDevices skips it)
  assert.deepEqual(deviceCounts(devicesOnNode(state, "gpu-b")), { total: 3, used: 1, free: 2 });
});
