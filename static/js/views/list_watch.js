// The List-Watch tab: the seed notes' components drawn once (SVG), the playing change's hops with
// their step numbers, the object at a clicked hop, and the trail of recent changes. Thin: every
// figure comes from the pure model (../model/list_watch.js).

import { h, keyed, replace } from "../lib/dom.js";
import { gettext, interpolate, ngettext } from "../lib/i18n.js";
import { CONTROLLERS, STEP_NUMBERS, controllerOf, reactors, stepText } from "../model/list_watch.js";

const SVG = "http://www.w3.org/2000/svg";

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) if (value !== null && value !== undefined && value !== false) el.setAttribute(name, String(value));
  for (const child of children.flat()) if (child !== null && child !== undefined && child !== false) el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return el;
}

// The boxes of the diagram: x, y, width, height.
const BOXES = {
  kubectl: [10, 40, 120, 44],
  browser: [10, 124, 120, 44],
  "kube-apiserver": [220, 90, 150, 64],
  etcd: [220, 250, 150, 50],
  "controller-manager": [470, 6, 250, 178],
  scheduler: [470, 196, 250, 44],
  kubelet: [470, 254, 250, 50],
};
const TITLES = { "kube-apiserver": "kube-apiserver", "controller-manager": "kube-controller-manager" };
const CONTROLLER_NAMES = Object.keys(CONTROLLERS);
const SHORT = { "pod-garbage-collector": "podgc" }; // upstream's package name (pkg/controller/podgc)
// A hop's kind on its chip in the trail (a watch hop shows its watcher, a store hop etcd).
const HOP_WORDS = { write: () => gettext("write"), ack: () => gettext("ack"), event: () => gettext("event") };
const CIRCLED = ["", "①", "②", "③", "④", "⑤", "⑥", "⑦", "⑧", "⑨", "⑩", "⑪", "⑫", "⑬"];

export function circled(step) {
  return CIRCLED[step] || String(step);
}

function centre(name) {
  const [x, y, w, hh] = BOXES[name];
  return [x + w / 2, y + hh / 2];
}

// The watchers' column is reached at the middle of each box's left side (no line crosses a box).
const WATCHERS = new Set(["controller-manager", "scheduler", "kubelet"]);
function anchor(name) {
  const [x, y, , hh] = BOXES[name];
  return WATCHERS.has(name) ? [x, y + hh / 2] : centre(name);
}

// Where the line from the centre of `name` toward (tx, ty) leaves the box.
function edge(name, tx, ty) {
  const [, , w, hh] = BOXES[name];
  const [cx, cy] = centre(name);
  const dx = tx - cx;
  const dy = ty - cy;
  const t = Math.min(dx ? w / 2 / Math.abs(dx) : Infinity, dy ? hh / 2 / Math.abs(dy) : Infinity);
  return [cx + dx * t, cy + dy * t];
}

// The two ends of a hop, shifted to the right of its direction so that a request and its answer
// (write/ack, store/event) run side by side.
function ends(from, to, shift = 7) {
  const [fx, fy] = anchor(from);
  const [tx, ty] = anchor(to);
  const a = WATCHERS.has(from) ? [fx, fy] : edge(from, tx, ty);
  const b = WATCHERS.has(to) ? [tx, ty] : edge(to, fx, fy);
  const len = Math.hypot(b[0] - a[0], b[1] - a[1]) || 1;
  const nx = (-(b[1] - a[1]) / len) * shift;
  const ny = ((b[0] - a[0]) / len) * shift;
  return [a[0] + nx, a[1] + ny, b[0] + nx, b[1] + ny];
}

const WITH_SUB = new Set(["etcd", "kubelet"]); // boxes with a second line (the rv, the kubelet's node)

function box(name) {
  const [x, y, w, hh] = BOXES[name];
  const sub = WITH_SUB.has(name);
  return s(
    "g",
    { class: "lw-box", "data-box": name },
    s("rect", { x, y, width: w, height: hh, rx: name === "etcd" ? 18 : 8 }),
    s("text", { x: x + w / 2, y: name === "controller-manager" ? y + 18 : y + hh / 2 + (sub ? -3 : 5), "text-anchor": "middle", class: "lw-title" }, TITLES[name] || name),
    sub ? s("text", { x: x + w / 2, y: y + hh / 2 + 14, "text-anchor": "middle", class: "lw-sub" }) : null,
  );
}

function controllerPill(name, i) {
  const [x, y] = BOXES["controller-manager"];
  const px = x + 8 + (i % 2) * 120;
  const py = y + 27 + Math.floor(i / 2) * 25;
  return s(
    "g",
    { class: "lw-controller", "data-controller": name },
    s("rect", { x: px, y: py, width: 114, height: 21, rx: 10 }),
    s("title", {}, interpolate(gettext("%(name)s controller"), { name })),
    s("text", { x: px + 57, y: py + 15, "text-anchor": "middle" }, SHORT[name] || name),
  );
}

function hopElement(hop, trip, state, onSelect) {
  const [x1, y1, x2, y2] = ends(hop.from, hop.to, hop.kind === "watch" ? 0 : 7);
  const mx = (x1 + x2) / 2;
  const my = (y1 + y2) / 2;
  const attrs = {
    class: `lw-hop ${state}`,
    "data-kind": hop.kind,
    "data-step": hop.step,
    "data-to": hop.to,
    "data-index": hop.index,
    tabindex: 0,
    role: "button",
    "aria-label": interpolate(gettext("step %(number)s: %(label)s"), { number: hop.step, label: hop.label }),
  };
  const g = s(
    "g",
    attrs,
    s("title", {}, `${circled(hop.step)} ${hop.label}\n${stepText(hop.step)}`),
    s("line", { x1, y1, x2, y2, "marker-end": "url(#lw-arrow)" }),
    s("circle", { cx: mx, cy: my, r: 11 }),
    s("text", { x: mx, y: my + 5, "text-anchor": "middle" }, String(hop.step)),
  );
  return clickable(g, () => onSelect(trip.id, hop.index));
}

// A click, Enter or Space on an SVG element (no <button> inside an SVG).
function clickable(el, handler) {
  el.addEventListener("click", handler);
  el.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      handler();
    }
  });
  return el;
}

// The components, drawn once; `updateDiagram` then sets their state and the playing change's hops.
function skeleton() {
  const watches = ["controller-manager", "scheduler", "kubelet"].map((name) => {
    const [x1, y1, x2, y2] = ends("kube-apiserver", name, -20);
    return s("g", { class: "lw-standing" }, s("line", { x1, y1, x2, y2 }), s("text", { x: x1 + (x2 - x1) * 0.45, y: y1 + (y2 - y1) * 0.45 - 4, "text-anchor": "middle" }, "① watch"));
  });
  const boxes = new Map(Object.keys(BOXES).map((name) => [name, box(name)]));
  const pills = new Map(CONTROLLER_NAMES.map((name, i) => [name, controllerPill(name, i)]));
  const hops = s("g", { class: "lw-hops" });
  const svg = s(
    "svg",
    { viewBox: "0 0 730 310", class: "lw-diagram", role: "group", "aria-label": gettext("List-Watch: kubectl, kube-apiserver, etcd, controller manager, scheduler, kubelet") },
    s("defs", {}, s("marker", { id: "lw-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 11, markerHeight: 11, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" }, s("path", { d: "M0,0 L10,5 L0,10 z" }))),
    watches,
    [...boxes.values()],
    [...pills.values()],
    hops,
  );
  return { svg, boxes, pills, hops };
}

function updateDiagram(parts, flow, onSelect) {
  const playing = flow.playing;
  const trip = playing && playing.trip;
  const hops = flow.visibleHops();
  const active = playing ? playing.stage : -1;
  const watchHops = hops.filter((hop) => hop.kind === "watch");
  const watching = new Set(watchHops.flatMap((hop) => hop.watcher.controllers || []));
  const { boxes: reactedBoxes, controllers: reacted } = watchHops.length ? reactors(trip) : { boxes: new Set(), controllers: new Set() };
  const writerController = trip && trip.writerBox === "controller-manager" ? controllerOf(trip.writer) : null;
  parts.svg.dataset.rv = trip ? trip.rv : "";
  for (const [name, g] of parts.boxes) {
    const classes = ["lw-box"];
    if (trip && trip.writerBox === name) classes.push("writer");
    if (watchHops.some((hop) => hop.to === name)) classes.push("watching");
    if (reactedBoxes.has(name)) classes.push("reacted");
    if (hops.some((hop) => hop.stage === active && (hop.to === name || hop.from === name))) classes.push("active");
    g.setAttribute("class", classes.join(" "));
  }
  const kubeletHop = watchHops.find((hop) => hop.to === "kubelet");
  parts.boxes.get("kubelet").querySelector(".lw-sub").textContent = kubeletHop
    ? interpolate(gettext("on %(node)s"), { node: kubeletHop.watcher.node })
    : trip && trip.writerBox === "kubelet"
      ? interpolate(gettext("on %(node)s"), { node: trip.object.spec?.nodeName || gettext("its node") })
      : gettext("one per node");
  parts.boxes.get("etcd").querySelector(".lw-sub").textContent = trip ? `rv ${trip.rv}` : "";
  for (const [name, g] of parts.pills) {
    const state = writerController === name ? "writer" : reacted.has(name) ? "reacted" : watching.has(name) ? "watching" : "";
    g.setAttribute("class", `lw-controller ${state}`.trim());
  }
  // One element per hop, kept while its state holds (a focused hop stays focused).
  keyed(
    parts.hops,
    hops.map((hop) => {
      const state = hop.stage === active ? "active" : "done";
      return { key: `${trip.id}:${hop.index}`, sig: state, build: () => hopElement(hop, trip, state, onSelect) };
    }),
  );
}

function describeTrip(trip) {
  const count = trip.count > 1 ? ` ×${trip.count}` : "";
  const events = trip.events ? interpolate(ngettext(" (+%(count)s Event)", " (+%(count)s Events)", trip.events), { count: trip.events }) : "";
  return interpolate(gettext("rv %(rv)s · %(event)s %(kind)s %(key)s%(count)s · by %(writer)s%(events)s"), {
    rv: trip.rv,
    event: trip.event,
    kind: trip.kind,
    key: trip.key,
    count,
    writer: trip.writer,
    events,
  });
}

function caption(flow) {
  const playing = flow.playing;
  if (!playing) return h("p", { class: "empty" }, gettext("Every change will travel here as it happens: writer → kube-apiserver → etcd → kube-apiserver → the components that watch it."));
  const trip = playing.trip;
  const hop = trip.hops.find((x) => x.stage === playing.stage);
  return h(
    "div",
    { class: "lw-caption", "aria-live": "polite" },
    h("div", { class: "lw-what" }, describeTrip(trip), trip.changed.length ? interpolate(gettext(" · changed %(paths)s"), { paths: trip.changed.join(", ") }) : ""),
    hop ? h("div", { class: "lw-step" }, h("strong", {}, `${circled(hop.step)} `), stepText(hop.step)) : null,
    trip.events
      ? h(
          "div",
          { class: "lw-events" },
          interpolate(ngettext("with it, %(writer)s recorded an Event: %(reasons)s", "with it, %(writer)s recorded %(count)s Events: %(reasons)s", trip.events), {
            writer: trip.writer,
            count: trip.events,
            reasons: `${trip.eventReasons.join(", ")}${trip.events > trip.eventReasons.length ? " …" : ""}`,
          }),
        )
      : null,
    trip.cause
      ? h(
          "div",
          { class: "lw-cause" },
          interpolate(gettext("reacts to rv %(rv)s: %(kind)s %(key)s by %(writer)s"), { rv: trip.cause.rv, kind: trip.cause.kind, key: trip.cause.key, writer: trip.cause.writer }),
        )
      : null,
    trip.reactionCount
      ? h(
          "div",
          { class: "lw-reactions" },
          interpolate(gettext("reactions: %(reactions)s"), {
            reactions: `${trip.reactions.slice(0, 4).map((r) => `${r.writer} ${r.event} ${r.kind} ${r.key}`).join("; ")}${trip.reactionCount > 4 ? ` … (${trip.reactionCount})` : ""}`,
          }),
        )
      : null,
    flow.waiting || flow.dropped
      ? h(
          "div",
          { class: "lw-queue" },
          flow.waiting ? interpolate(gettext("%(count)s waiting"), { count: flow.waiting }) : "",
          flow.waiting && flow.dropped ? " · " : "",
          flow.dropped ? interpolate(gettext("+%(count)s more not animated"), { count: flow.dropped }) : "",
        )
      : null,
  );
}

// The object at the selected hop: as stored at that resourceVersion (managedFields summarised).
function objectPanel(flow) {
  const sel = flow.selected;
  if (!sel) return h("p", { class: "lw-hint" }, gettext("Click a hop (a numbered arrow, or a step below) to see the object at that hop."));
  const { trip, hop } = sel;
  const copy = JSON.parse(JSON.stringify(trip.object));
  const managed = copy.metadata && copy.metadata.managedFields;
  if (managed) delete copy.metadata.managedFields;
  const where =
    hop.kind === "watch"
      ? interpolate(gettext("as %(watcher)s receives it"), { watcher: hop.to })
      : hop.to === "etcd"
        ? gettext("as stored in etcd")
        : hop.kind === "write"
          ? interpolate(gettext("as %(writer)s wrote it"), { writer: trip.writer })
          : gettext("as the API server holds it");
  return h(
    "div",
    { class: "lw-object", "data-rv": trip.rv },
    h(
      "h4",
      {},
      interpolate(gettext("%(step)s %(from)s → %(to)s: %(kind)s %(key)s %(where)s, resourceVersion %(rv)s"), {
        step: circled(hop.step),
        from: hop.from,
        to: hop.to,
        kind: trip.kind,
        key: trip.key,
        where,
        rv: trip.rv,
      }),
    ),
    trip.changed.length ? h("p", { class: "lw-changed" }, interpolate(gettext("changed: %(paths)s"), { paths: trip.changed.join(", ") })) : null,
    managed ? h("p", { class: "lw-managed" }, `managedFields: ${managed.map((m) => `${m.manager} (${m.operation})`).join(", ")}`) : null,
    trip.count > 1
      ? h(
          "p",
          {},
          interpolate(gettext("one of %(count)s changes travelling together: %(keys)s"), {
            count: trip.count,
            keys: `${trip.more.map((m) => m.key).join(", ")}${trip.count - 1 > trip.more.length ? " …" : ""}`,
          }),
        )
      : null,
    h("pre", { class: "lw-json" }, JSON.stringify(copy, null, 2)),
  );
}

function trailRow(flow, trip, onSelect) {
  return h(
    "li",
    { dataset: { rv: trip.rv } },
    h("span", { class: "lw-trip" }, describeTrip(trip)),
    h(
      "span",
      { class: "lw-chips" },
      trip.hops.map((hop, index) =>
        h(
          "button",
          {
            type: "button",
            class: `lw-chip${flow.selected && flow.selected.trip === trip && flow.selected.index === index ? " selected" : ""}`,
            dataset: { step: String(hop.step), kind: hop.kind, to: hop.to },
            title: `${hop.label}\n${stepText(hop.step)}`,
            onclick: () => onSelect(trip.id, index),
          },
          `${circled(hop.step)} ${hop.kind === "watch" ? hop.to : hop.kind === "store" ? "etcd" : HOP_WORDS[hop.kind] ? HOP_WORDS[hop.kind]() : hop.kind}`,
        ),
      ),
    ),
  );
}

function updateTrail(list, flow, onSelect) {
  keyed(
    list,
    flow.trail.slice(0, 12).map((trip) => {
      const selected = flow.selected && flow.selected.trip === trip ? flow.selected.index : -1;
      return { key: trip.id, sig: `${trip.count}|${trip.events}|${selected}`, build: () => trailRow(flow, trip, onSelect) };
    }),
  );
}

// The panel is built once; each render updates its parts (the object shown is redrawn only when
// another hop is chosen, so reading it is not disturbed by the animation).
export function renderListWatch(root, flow, { onSelect }) {
  let parts = root._listWatch;
  if (!parts) {
    parts = {
      ...skeleton(),
      caption: h("div", { class: "lw-caption-box" }),
      object: h("div", { class: "lw-object-box" }),
      trail: h("ol", { class: "lw-trail", "aria-label": gettext("recent changes, newest first") }),
      selected: undefined,
    };
    root._listWatch = parts;
    replace(
      root,
      parts.svg,
      parts.caption,
      parts.object,
      parts.trail,
      h(
        "details",
        { class: "lw-legend" },
        h("summary", {}, gettext("the seed notes' 13 steps")),
        h("ol", {}, STEP_NUMBERS.map((step) => h("li", {}, stepText(step)))),
        h("p", {}, gettext("A hop the notes do not number reuses the number of its kind: a user's write ②, a controller's ⑥, the scheduler's ⑩, the kubelet's ⑫; the event reaching the controller manager ⑤, the scheduler ⑨, a kubelet ⑫ (⑬ for its own write).")),
      ),
    );
  }
  updateDiagram(parts, flow, onSelect);
  replace(parts.caption, caption(flow));
  if (parts.selected !== flow.selected) {
    parts.selected = flow.selected;
    replace(parts.object, objectPanel(flow));
  }
  updateTrail(parts.trail, flow, onSelect);
}
