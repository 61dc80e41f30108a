// Icons drawn from SVG files (static/icons/, painted by CSS masks in the text's colour) rather than
// symbol glyphs a stock font may lack (the hourglasses U+29D7 and U+23F3 are in no font of a stock Debian chromium).

import { h } from "./dom.js";

export const ICONS = ["hourglass", "timer"];

export function icon(name) {
  return h("span", { class: `icon icon-${name}`, "aria-hidden": "true" });
}
