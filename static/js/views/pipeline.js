// The pipeline strip: PreFilter → … → Bind lights up as the cycle's events play, with the player's
// controls (play, pause, step, back, end, speed) and the cycle picker.

import { h, replace } from "../lib/dom.js";
import { STAGES } from "../model/cycle_player.js";
import { gettext, interpolate } from "../lib/i18n.js";
import { pluginHelp, stageHelp } from "../model/plugin_help.js";

// A stage's state (a key: idle, done, active, skipped) as its title reads it.
const STATE_TEXT = {
  idle: () => gettext("idle"),
  done: () => gettext("done"),
  active: () => gettext("active"),
  skipped: () => gettext("skipped"),
};

export function renderPipeline(root, player) {
  const frame = player.frame();
  const strip = root.querySelector(".stages");
  replace(
    strip,
    STAGES.map((stage, i) => {
      let state = "idle";
      if (frame && frame.done.has(stage)) state = "done";
      if (frame && frame.stage === stage && !frame.finished) state = "active";
      if (frame && frame.finished && stage === "Bind" && !frame.scheduled) state = "skipped";
      if (frame && frame.finished && stage === "PostFilter" && !frame.done.has("PostFilter")) state = "skipped";
      return [
        i ? h("span", { class: "arrow", "aria-hidden": "true" }, "▸") : null,
        h(
          "span",
          {
            class: `stage stage-${state}`,
            dataset: { stage },
            title: interpolate(gettext("%(stage)s: %(state)s"), { stage, state: STATE_TEXT[state]() }),
          },
          stage === "NormalizeScore" ? "Normalize" : stage,
        ),
      ];
    }),
  );
  renderRunning(root.querySelector(".running"), frame);
  const info = root.querySelector(".cycle-info");
  if (!frame) {
    replace(
      info,
      player.current
        ? interpolate(gettext("cycle %(cycle)s · loading…"), { cycle: player.current.cycle })
        : gettext("no scheduling cycle yet"),
    );
  } else {
    const total = player.current.events ? player.current.events.length : 0;
    replace(
      info,
      h("strong", {}, player.current.whatIf ? gettext("what-if") : interpolate(gettext("cycle %(cycle)s"), { cycle: frame.cycle })),
      interpolate(gettext(" · %(pod)s · event %(cursor)s/%(total)s"), { pod: frame.pod, cursor: player.cursor, total }),
      frame.finished ? h("span", { class: frame.scheduled ? "ok" : "pending" }, frame.scheduled ? ` → ${frame.winner}` : " → Pending") : null,
    );
  }
  // The options are rebuilt only when the cycles change: an open picker must not close under the user.
  const picker = root.querySelector("select.cycle-picker");
  const sig = player.cycles.map((c) => `${c.cycle}:${c.pod}`).join("|");
  if (picker._sig !== sig) {
    picker._sig = sig;
    const options = player.cycles.map((c) =>
      h(
        "option",
        { value: String(c.cycle) },
        c.whatIf
          ? interpolate(gettext("what-if: %(pod)s"), { pod: c.pod })
          : interpolate(gettext("cycle %(cycle)s: %(pod)s"), { cycle: c.cycle, pod: c.pod }),
      ),
    );
    replace(picker, options.length ? options : h("option", { value: "" }, "—"));
  }
  if (player.current && picker.value !== String(player.current.cycle)) picker.value = String(player.current.cycle);
  root.querySelector("[data-player=play]").textContent = player.playing ? "❚❚" : "▶";
  root.querySelector("[data-player=play]").setAttribute("aria-label", player.playing ? gettext("pause") : gettext("play"));
}

// The stage and plugin the last shown event belongs to, with a line on what it checks.
function renderRunning(el, frame) {
  const sig = frame ? `${frame.cycle}|${frame.stage}|${frame.plugin}|${frame.finished}` : "";
  if (el._sig === sig) return;
  el._sig = sig;
  if (!frame || !frame.stage || frame.finished) {
    replace(el);
    return;
  }
  const help = frame.plugin ? pluginHelp(frame.plugin) : undefined;
  const line = (text) => interpolate(gettext(": %(help)s"), { help: text });
  replace(
    el,
    h("strong", { class: "running-stage" }, frame.stage),
    help !== undefined
      ? [" · ", h("strong", { class: "running-plugin" }, frame.plugin), line(help)]
      : line(stageHelp(frame.stage) || ""),
  );
}
