// Prediction mode's panel: the presenter asks the class about a pending pod and sees the tally live
// as bars over the nodes; a follower picks a node (here or on the board) or "stays Pending" and locks
// it in once; after the reveal every board marks its pick and shows the class's score.

import { h, replace } from "../lib/dom.js";
import { gettext, interpolate } from "../lib/i18n.js";
import {
  PENDING,
  canChoose,
  emptyPrediction,
  markOf,
  marksShown,
  outcomeLine,
  pickLabel,
  reducePrediction,
  scoreLine,
  tallyBars,
} from "../model/prediction.js";

const NAME_KEY = "clusterviz.name";
const HEAL_AFTER_MS = 5000; // the reveal follows the pod's binding at once; a lost one is asked for
const MARK_TEXT = { right: () => gettext("✓ right"), wrong: () => gettext("✗ wrong"), none: () => gettext("— no answer") };
const STATE_TEXT = {
  open: () => gettext("answers open · the pod is held Pending"),
  revealing: () => gettext("revealing · the scheduler runs the cycle…"),
  revealed: () => gettext("revealed"),
  cancelled: () => gettext("cancelled"),
};

export class PredictionPanel {
  // send(action) → Promise of the result; toast(text, kind); onRevealing(): the board follows the cycle;
  // nickname: the one given at /join, if any.
  constructor(root, { readOnly, slug, send, toast, onRevealing, nickname = "" }) {
    this.root = root;
    this.readOnly = readOnly;
    this.slug = slug;
    this.send = send;
    this.toast = toast;
    this.onRevealing = onRevealing;
    this.state = emptyPrediction();
    this.sig = null;
    // The nickname lives here, not in the input: a redraw may replace the input while it is typed in.
    this.nickname = localStorage.getItem(NAME_KEY) || "";
    this.questionText = (text) => text; // the lesson player gives a lesson question's translation
    if (nickname) this.setNickname(nickname); // the nickname given at /join wins
    this.form = readOnly ? null : this.buildForm(slug);
    this.body = h("div", { class: "predict-question", "aria-live": "polite" });
    replace(root, this.form, this.body);
    root.hidden = readOnly;
    root.addEventListener("click", (event) => this.click(event));
  }

  receive(msg) {
    const before = this.state.question && this.state.question.state;
    this.state = reducePrediction(this.state, msg);
    const q = this.state.question;
    if (q && q.state === "revealing" && before !== "revealing") this.onRevealing();
    if (q && q.state === "revealed" && this.healing) {
      clearTimeout(this.healing);
      this.healing = null;
    }
  }

  // A change of the question's pod (bound, or its cycle failed) while this board still waits for the
  // reveal: the `prediction.question` message may have been lost (an overloaded channel layer drops
  // messages; only changes are replayed from the watch log), so ask for the question over HTTP.
  podChanged(key, pod) {
    const q = this.state.question;
    if (!q || q.pod !== key || q.state === "revealed" || q.state === "cancelled" || this.healing) return;
    const conditions = (pod.status && pod.status.conditions) || [];
    const scheduledOrFailed = pod.spec.nodeName || conditions.some((c) => c.type === "PodScheduled" && c.status === "False");
    if (!scheduledOrFailed) return;
    this.healing = setTimeout(() => {
      fetch(`/api/clusters/${this.slug}/prediction`)
        .then((r) => (r.ok ? r.json() : { messages: [] }))
        .then(({ messages }) => {
          for (const msg of messages) this.receive(msg);
          this.render(this.lastContext);
        })
        .catch(() => {})
        .finally(() => {
          this.healing = null;
        });
    }, HEAL_AFTER_MS);
  }

  // A node clicked on the board while the question is open: it becomes this board's choice.
  chooseNode(name) {
    if (!canChoose(this.state, !this.readOnly)) return false;
    this.state = reducePrediction(this.state, { type: "prediction.chosen", pick: name, local: !this.readOnly });
    this.sig = null;
    return true;
  }

  // The presenter's question (a lesson step's too); resolves when the server has it.
  // Moving on (the lesson's next step) reveals a question still open: its pod must not stay held.
  revealOpen() {
    const q = this.state.question;
    if (!q || q.state !== "open") return Promise.resolve();
    return this.send({ action: "predict.reveal" });
  }

  pose(fields) {
    return this.send({ action: "predict.pose", ...fields }).then((result) => {
      this.state = reducePrediction(this.state, { type: "prediction.question", question: result.question, mine: null });
      this.sig = null;
      return result;
    });
  }

  buildForm(slug) {
    const pod = h("input", { name: "pod", list: "predict-pods", placeholder: "default/nginx", "aria-label": gettext("pod to ask about"), required: true });
    const ask = h("select", { name: "ask", "aria-label": gettext("question kind") }, h("option", { value: "node" }, gettext("which node wins?")), h("option", { value: "schedules" }, gettext("will it schedule?")));
    const text = h("input", { name: "question", placeholder: gettext("question (optional)"), "aria-label": gettext("question text"), maxlength: "300" });
    this.podList = h("datalist", { id: "predict-pods" });
    const form = h(
      "details",
      { class: "predict-ask" },
      h("summary", {}, gettext("? ask the class")),
      h(
        "form",
        {
          onsubmit: (event) => {
            event.preventDefault();
            this.pose({ pod: pod.value.trim(), ask: ask.value, question: text.value.trim() })
              .then(() => {
                text.value = "";
                form.open = false;
              })
              .catch((err) => this.toast(err.message, "error"));
          },
        },
        h("p", { class: "hint" }, gettext("The pod is held Pending (it may not exist yet: create it next) until you reveal.")),
        pod,
        this.podList,
        ask,
        text,
        h("button", { type: "submit", class: "primary", dataset: { predict: "pose" } }, gettext("Ask")),
        h("a", { href: `/api/clusters/${slug}/predictions.csv`, download: "", class: "predict-csv" }, gettext("answers as CSV")),
      ),
    );
    form.addEventListener("toggle", () => this.render(this.lastContext)); // fill the pods' list now
    return form;
  }

  click(event) {
    const pick = event.target.closest("[data-pick]");
    if (pick) {
      this.chooseNode(pick.dataset.pick);
      this.render(this.lastContext);
      return;
    }
    const act = event.target.closest("[data-predict]");
    if (!act || act.dataset.predict === "pose") return;
    const what = act.dataset.predict;
    if (what === "answer") this.answer();
    else if (what === "reveal" || what === "cancel") this.send({ action: `predict.${what}` }).catch((err) => this.toast(err.message, "error"));
  }

  setNickname(text) {
    this.nickname = text;
    localStorage.setItem(NAME_KEY, text.trim());
  }

  answer() {
    const q = this.state.question;
    const pick = this.state.chosen;
    if (!q || !pick) return;
    const name = this.nickname.trim();
    this.send({ action: "predict.answer", question: q.number, pick, name })
      .then(() => {
        this.state = reducePrediction(this.state, { type: "prediction.answered", question: q.number, pick });
        this.sig = null;
        this.render(this.lastContext);
      })
      .catch((err) => this.toast(err.message, "error"));
  }

  // ctx: { pendingPods: () => [key], viewing: { cycle, atEnd } } — redrawn only when what it shows changed.
  render(ctx = {}) {
    this.lastContext = ctx;
    const q = this.state.question;
    const shown = marksShown(q, ctx.viewing);
    if (this.podList && this.form.open && ctx.pendingPods) {
      const keys = ctx.pendingPods();
      const pods = keys.join("|");
      if (this.podList._sig !== pods) {
        this.podList._sig = pods;
        replace(this.podList, keys.map((key) => h("option", { value: key })));
      }
    }
    if (this.form) {
      this.form.hidden = !!(q && (q.state === "open" || q.state === "revealing"));
    }
    const sig = JSON.stringify([q, this.state.counts, this.state.mine, this.state.chosen, shown]);
    if (sig === this.sig) return;
    this.sig = sig;
    this.root.hidden = this.readOnly && (!q || q.state === "cancelled");
    if (!q || q.state === "cancelled") {
      replace(this.body);
      return;
    }
    const typing = document.activeElement && document.activeElement.name === "name" && this.body.contains(document.activeElement);
    replace(this.body, this.header(q), this.choices(q, shown), this.tally(q, shown), this.result(q, shown), this.controls(q));
    const input = typing && this.body.querySelector("input[name=name]");
    if (input) {  // a redraw while the follower types their name keeps them typing, at the end
      input.focus();
      input.setSelectionRange(input.value.length, input.value.length);
    }
  }

  header(q) {
    return h(
      "div",
      { class: "predict-head" },
      h("strong", {}, interpolate(gettext("Question %(number)s: "), { number: q.number })),
      this.questionText(q.text),
      h("span", { class: `predict-state predict-${q.state}` }, STATE_TEXT[q.state] ? STATE_TEXT[q.state]() : q.state),
    );
  }

  choices(q, shown) {
    const presenter = !this.readOnly;
    const answered = this.state.mine;
    const chosen = this.state.chosen;
    const open = q.state === "open";
    const mark = shown ? markOf(q, presenter ? chosen : answered) : null;
    const buttons = q.options.map((pick) => {
      const classes = ["predict-pick"];
      if (pick === chosen) classes.push("chosen");
      if (shown && pick === q.outcome) classes.push("outcome");
      else if (shown && pick === chosen) classes.push("missed");
      return h(
        "button",
        { type: "button", class: classes.join(" "), dataset: { pick }, disabled: !open || (!presenter && !!answered), "aria-pressed": pick === chosen ? "true" : "false" },
        pick === PENDING ? `◌ ${pickLabel(pick)}` : pickLabel(pick),
      );
    });
    const lead = presenter
      ? gettext("your own guess (not counted):")
      : answered
        ? interpolate(gettext("your answer: %(pick)s (locked in)"), { pick: pickLabel(answered) })
        : gettext("pick a node (here or on the board), then lock it in:");
    const rows = [h("p", { class: "hint" }, lead), h("div", { class: "predict-picks" }, buttons)];
    if (!presenter && open && !answered) {
      rows.push(
        h(
          "div",
          { class: "predict-answer" },
          h("input", { name: "name", placeholder: gettext("your name"), "aria-label": gettext("your name"), maxlength: "64", value: this.nickname, oninput: (event) => this.setNickname(event.target.value) }),
          h("button", { type: "button", class: "primary", dataset: { predict: "answer" }, disabled: !chosen }, chosen ? interpolate(gettext("lock in: %(pick)s"), { pick: pickLabel(chosen) }) : gettext("lock in")),
        ),
      );
    }
    if (mark) rows.push(h("p", { class: `predict-mark mark-${mark}` }, presenter && mark === "none" ? "" : MARK_TEXT[mark]()));
    return rows;
  }

  // Bars over the choices: live for the presenter, for everyone once the cycle has played.
  tally(q, shown) {
    if (this.readOnly && !shown) return null;
    const bars = tallyBars(this.state);
    return h(
      "div",
      { class: "predict-tally", role: "img", "aria-label": bars.map((b) => `${b.label}: ${b.count}`).join(", ") },
      bars.map((b) =>
        h(
          "div",
          { class: `predict-bar${shown && b.right ? " right" : ""}`, dataset: { bar: b.pick } },
          h("span", { class: "predict-bar-label" }, b.label),
          h("span", { class: "predict-bar-track" }, h("span", { class: "predict-bar-fill", style: { width: `${Math.round(b.width * 100)}%` } })),
          h("span", { class: "predict-bar-count" }, `${b.count}${b.count ? ` · ${Math.round(b.share * 100)}%` : ""}`),
        ),
      ),
      h("p", { class: "hint" }, interpolate(gettext("%(count)s answered"), { count: this.state.answered || 0 })),
    );
  }

  result(q, shown) {
    if (!shown) return q.state === "revealed" ? h("p", { class: "hint" }, gettext("the cycle is playing…")) : null;
    const score = interpolate(gettext("class: %(score)s"), { score: scoreLine(q.score) });
    return h("div", { class: "predict-result" }, h("p", {}, outcomeLine(q)), h("p", { class: "predict-score" }, score));
  }

  controls(q) {
    if (this.readOnly) return null;
    const live = q.state === "open" || q.state === "revealing";
    return h(
      "div",
      { class: "predict-controls" },
      q.state === "open" ? h("button", { type: "button", class: "primary", dataset: { predict: "reveal" } }, gettext("reveal")) : null,
      live ? h("button", { type: "button", dataset: { predict: "cancel" } }, gettext("cancel question")) : null,
    );
  }
}
