// A node's DRA devices on its card: a count line, then one chip per device (free or held, and by
// which claim and pods). Thin: the reading is model/devices.js.

import { h } from "../lib/dom.js";
import { gettext, interpolate } from "../lib/i18n.js";
import { deviceCounts, deviceState, devicesOnNode } from "../model/devices.js";

export function deviceSection(state, nodeName, { limit = 16 } = {}) {
  const devices = devicesOnNode(state, nodeName);
  if (!devices.length) return null;
  const { total, used } = deviceCounts(devices);
  return h(
    "div",
    { class: "devices", dataset: { devices: nodeName } },
    h("div", { class: "devices-title" }, interpolate(gettext("devices: %(used)s of %(total)s allocated"), { used, total })),
    devices.slice(0, limit).map((d) => {
      const held = d.holders.length > 0;
      const text = deviceState(d);
      return h(
        "span",
        { class: `device ${held ? "device-held" : "device-free"}`, dataset: { device: d.id }, title: `${d.id} · ${text}` },
        held ? "■ " : "□ ",
        d.name,
        d.summary ? h("span", { class: "device-model" }, ` ${d.summary}`) : null,
        held ? h("span", { class: "device-holder" }, ` → ${text}`) : null,
      );
    }),
    devices.length > limit ? h("span", { class: "device-more" }, interpolate(gettext("… %(count)s more"), { count: devices.length - limit })) : null,
  );
}
