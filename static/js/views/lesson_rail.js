// Presenter mode's lesson rail, beside the board: the step shown (its instruction and command, then
// what happened), the class question and its tally (the prediction panel, moved into the rail), and
// the presenter's controls with their keys. It draws only what the server sent (model/lesson.js).

import { h, replace } from "../lib/dom.js";
import { forwardLabel, stepStatus } from "../model/lesson.js";
import { gettext, localized } from "../lib/i18n.js";

const KEY_TEXT = { ArrowRight: "→", ArrowLeft: "←" };
const WHERE_TEXT = { next: () => gettext("next · not run yet"), answering: () => gettext("ran · the class is answering"), ran: () => gettext("ran") };

// ctx: { lesson: {view}, item, forward, presenter, frozen }
export function renderRail(root, ctx) {
  const { view } = ctx.lesson;
  const head = root.querySelector(".rail-head");
  const step = root.querySelector(".rail-step");
  const after = root.querySelector(".rail-after");
  const controls = root.querySelector(".rail-controls");
  if (!view) {
    replace(head, h("p", { class: "empty" }, gettext("This cluster was not started from a lesson.")));
    replace(step);
    replace(after);
    replace(controls);
    return;
  }
  const item = ctx.item;
  const status = stepStatus(item, view);
  replace(
    head,
    h("span", { class: "rail-title", title: localized(view, "title") }, localized(view, "title")),
    ctx.frozen ? h("span", { class: "rail-frozen", role: "status" }, ctx.presenter ? gettext("❄ followers frozen") : gettext("❄ held by the presenter")) : null,
  );
  step.dataset.step = String(item.number);
  step.dataset.where = status.where;
  replace(
    step,
    h("div", { class: "rail-number" }, h("strong", {}, status.label), h("span", { class: "rail-where" }, ` · ${WHERE_TEXT[status.where]()}`)),
    h("p", { class: "rail-say" }, localized(item, "say")),
    item.command ? h("code", { class: "rail-command" }, item.command) : null,
  );
  if (item.after !== undefined) replace(after, h("h3", {}, gettext("What happened")), h("p", { class: "rail-after-text" }, localized(item, "after")));
  else if (item.awaiting) replace(after, h("p", { class: "hint" }, gettext("What happened: after the reveal.")));
  else replace(after);
  after.hidden = !item.ran;
  if (!ctx.presenter) {
    replace(controls);
    return;
  }
  const forward = ctx.forward;
  const button = (rail, key, label, disabled = false, primary = false) =>
    h("button", { type: "button", class: primary ? "primary" : "", dataset: { rail }, disabled, "aria-keyshortcuts": key }, h("kbd", {}, KEY_TEXT[key] || key), label);
  replace(
    controls,
    button("forward", "ArrowRight", forwardLabel(forward, view), forward.intent === "none", true),
    button("back", "ArrowLeft", gettext("back"), item.number === 1),
    button("ask", "P", gettext("ask"), forward.intent !== "ask"),
    button("reveal", "R", gettext("reveal"), !ctx.questionOpen),
    button("freeze", "F", ctx.frozen ? gettext("unfreeze") : gettext("freeze"), false),
  );
}

// The rail's frame: head, step, a slot for the question (the prediction panel), after, controls.
export function railSkeleton() {
  return [
    h("div", { class: "rail-head" }),
    h("section", { class: "rail-step", "aria-live": "polite" }),
    h("div", { class: "rail-question" }),
    h("div", { class: "rail-after", hidden: true }),
    h("div", { class: "rail-controls" }),
  ];
}
