// The palette of labels and taints, and every way of applying them: drag a chip onto a node, drag a
// node's chip back onto the palette to remove it, or use the keyboard (select a chip, then a node).

import { h, replace } from "../lib/dom.js";
import { gettext, interpolate } from "../lib/i18n.js";

const STORAGE_KEY = "clusterviz.palette";
const DRAG_TYPE = "application/x-clusterviz";
const EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
const DEFAULTS = {
  labels: ["kgc=a", "qqq=1", "disktype=ssd", "zone=a"],
  taints: ["qqq=value1:NoSchedule", "spot=true:PreferNoSchedule", "drain=true:NoExecute", "gpu=true:NoSchedule"],
};

export function parseChip(text) {
  const s = text.trim();
  const taint = /^([^=:\s]+)(?:=([^:\s]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(s);
  if (taint) return { type: "taint", key: taint[1], value: taint[2] || "", effect: taint[3] };
  const label = /^([^=\s]+)=([^=\s]*)$/.exec(s);
  if (label) return { type: "label", key: label[1], value: label[2] };
  return null;
}

export function chipText(chip) {
  if (chip.type === "taint") return `${chip.key}${chip.value ? "=" + chip.value : ""}:${chip.effect}`;
  return `${chip.key}=${chip.value}`;
}

// The action that applies (or removes) a chip on a node.
export function chipAction(chip, node, remove = false) {
  if (chip.type === "label") return { action: "label", node, key: chip.key, value: remove ? null : chip.value };
  return { action: "taint", node, key: chip.key, value: chip.value || "", effect: chip.effect, remove };
}

export class Palette {
  constructor(root, { apply, notify, readOnly }) {
    this.root = root;
    this.apply = apply; // (action) => Promise
    this.notify = notify;
    this.readOnly = readOnly;
    this.armed = null;
    this.items = this.load();
    this.render();
    this.wireDropRemoval();
  }

  load() {
    try {
      const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) || "null");
      if (saved && Array.isArray(saved.labels) && Array.isArray(saved.taints)) return saved;
    } catch {
      /* fall back to the defaults */
    }
    return { labels: [...DEFAULTS.labels], taints: [...DEFAULTS.taints] };
  }

  save() {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(this.items));
  }

  render() {
    const section = (title, list) =>
      h(
        "div",
        { class: "palette-section" },
        h("h3", {}, title),
        h(
          "div",
          { class: "chips" },
          list.map((text) => {
            const chip = parseChip(text);
            const effect = chip && chip.effect ? ` chip-${chip.effect}` : "";
            return h(
              "span",
              {
                class: `chip chip-${chip ? chip.type : "label"}${effect}${this.armed === text ? " armed" : ""}`,
                draggable: this.readOnly ? "false" : "true",
                tabindex: "0",
                role: "button",
                "aria-pressed": this.armed === text ? "true" : "false",
                dataset: { palette: text },
                title: this.readOnly ? text : interpolate(gettext("%(chip)s — drag onto a node, or press Enter then choose a node"), { chip: text }),
              },
              text,
            );
          }),
        ),
      );
    replace(
      this.root,
      section(gettext("labels"), this.items.labels),
      section(gettext("taints"), this.items.taints),
      this.readOnly
        ? null
        : h(
            "form",
            { class: "add-chip" },
            h("input", { name: "chip", placeholder: gettext("key=value or key=value:NoSchedule"), "aria-label": gettext("new label or taint"), autocomplete: "off" }),
            h("button", { type: "submit" }, "+"),
          ),
      h(
        "p",
        { class: "hint" },
        this.armed
          ? interpolate(gettext("“%(chip)s” selected: now choose a node (Esc cancels)"), { chip: this.armed })
          : gettext("drag a chip onto a node; drag a node's chip here to remove it"),
      ),
    );
    for (const el of this.root.querySelectorAll("[data-palette]")) {
      el.addEventListener("dragstart", (event) => {
        event.dataTransfer.setData(DRAG_TYPE, JSON.stringify({ op: "apply", chip: parseChip(el.dataset.palette) }));
        event.dataTransfer.effectAllowed = "copy";
      });
      const arm = () => {
        if (this.readOnly) return;
        this.armed = this.armed === el.dataset.palette ? null : el.dataset.palette;
        this.render();
        const again = this.root.querySelector(`[data-palette="${CSS.escape(el.dataset.palette)}"]`);
        if (again) again.focus();
      };
      el.addEventListener("click", arm);
      el.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          arm();
        }
      });
    }
    const form = this.root.querySelector("form.add-chip");
    if (form) {
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        const text = form.chip.value.trim();
        const chip = parseChip(text);
        if (!chip) {
          this.notify(interpolate(gettext("“%(text)s” is neither key=value nor key=value:%(effects)s"), { text, effects: EFFECTS.join("|") }), "error");
          return;
        }
        const list = chip.type === "label" ? this.items.labels : this.items.taints;
        if (!list.includes(chipText(chip))) list.push(chipText(chip));
        this.save();
        this.render();
      });
    }
  }

  // A node's chip dropped on the palette is removed from the node.
  wireDropRemoval() {
    this.root.addEventListener("dragover", (event) => {
      if (event.dataTransfer.types.includes(DRAG_TYPE)) {
        event.preventDefault();
        this.root.classList.add("drop-remove");
      }
    });
    this.root.addEventListener("dragleave", () => this.root.classList.remove("drop-remove"));
    this.root.addEventListener("drop", (event) => {
      this.root.classList.remove("drop-remove");
      const data = readDrag(event);
      if (data && data.op === "remove") {
        event.preventDefault();
        this.apply(chipAction(data.chip, data.chip.node, true));
      }
    });
  }

  // The keyboard path: with a chip armed, choosing a node applies it.
  chooseNode(node) {
    if (!this.armed) return false;
    const chip = parseChip(this.armed);
    this.armed = null;
    this.render();
    if (chip) this.apply(chipAction(chip, node));
    return true;
  }

  cancel() {
    if (this.armed) {
      this.armed = null;
      this.render();
    }
  }
}

export function readDrag(event) {
  try {
    return JSON.parse(event.dataTransfer.getData(DRAG_TYPE) || "null");
  } catch {
    return null;
  }
}

// Make the board's node cards drop targets and their chips draggable back out.
export function wireBoardDragAndDrop(board, { apply, readOnly }) {
  board.addEventListener("dragstart", (event) => {
    const chipEl = event.target.closest && event.target.closest(".node-card [data-chip]");
    if (!chipEl || readOnly) return;
    const d = chipEl.dataset;
    const chip = { type: d.chip, node: d.node, key: d.key, value: d.value, effect: d.effect };
    event.dataTransfer.setData(DRAG_TYPE, JSON.stringify({ op: "remove", chip }));
    event.dataTransfer.effectAllowed = "move";
  });
  board.addEventListener("dragover", (event) => {
    const card = event.target.closest && event.target.closest("[data-node]");
    if (card && !readOnly && event.dataTransfer.types.includes(DRAG_TYPE)) {
      event.preventDefault();
      card.classList.add("drop-target");
    }
  });
  board.addEventListener("dragleave", (event) => {
    const card = event.target.closest && event.target.closest("[data-node]");
    if (card) card.classList.remove("drop-target");
  });
  board.addEventListener("drop", (event) => {
    const card = event.target.closest && event.target.closest("[data-node]");
    if (!card || readOnly) return;
    card.classList.remove("drop-target");
    const data = readDrag(event);
    if (!data || !data.chip) return;
    event.preventDefault();
    if (data.op === "apply") apply(chipAction(data.chip, card.dataset.node), card);
    else if (data.op === "remove" && data.chip.node !== card.dataset.node) {
      // Moving a chip to another node: add it there, remove it here.
      apply(chipAction(data.chip, card.dataset.node), card).then(() => apply(chipAction(data.chip, data.chip.node, true)));
    }
  });
}
