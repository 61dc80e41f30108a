// The lesson on the cluster page: folds the server's `lesson.view` messages (model/lesson.js), runs
// steps (asking a step's question first), reveals, freezes the followers, takes the presenter's keys
// (→ next step / run, ← back, P ask, R reveal, F freeze) and draws the rail (views/lesson_rail.js).

import { lessonQuestion } from "../model/prediction.js";
import { backIntent, emptyLesson, focusOn, forwardIntent, keyIntent, reduceLesson, shownIndex, shownItem, touchedBy } from "../model/lesson.js";
import { railSkeleton, renderRail } from "./lesson_rail.js";
import { gettext, interpolate, localized } from "../lib/i18n.js";

const HEAL_AFTER_MS = 1500; // a lost `lesson.view` (the channel layer may drop one) is fetched over HTTP

export class LessonPlayer {
  // opts: { slug, readOnly, rail (element or null), prediction (PredictionPanel), apply(action) → Promise,
  //         toast(text, kind), changed() (redraw), moved() (the presenter's focus changed: broadcast) }
  constructor(opts) {
    Object.assign(this, opts);
    this.state = emptyLesson();
    this.frozen = false;
    this.busy = false;
    this.healing = null;
    this.drawn = null;
    this.prediction.questionText = (text) => this.questionText(text); // a lesson's question, translated
    if (this.rail) {
      this.rail.replaceChildren(...railSkeleton());
      this.rail.querySelector(".rail-question").append(this.prediction.root); // the question and its tally
      this.rail.hidden = false;
      this.rail.addEventListener("click", (event) => {
        const button = event.target.closest("[data-rail]");
        if (button && !button.disabled) this.act(button.dataset.rail);
      });
    }
  }

  get view() {
    return this.state.view;
  }

  // The page-language text of a class question the lesson asked (matched by its English text).
  questionText(text) {
    const items = (this.state.view && this.state.view.items) || [];
    const item = items.find((entry) => entry.predict && entry.predict.question.trim() === (text || "").trim());
    return item ? localized({ question: text, i18n: item.i18n }, "question") : text;
  }

  receive(msg) {
    const before = this.state.view;
    this.state = reduceLesson(this.state, msg, { presenter: !this.readOnly });
    if (this.state.view !== before) {
      clearTimeout(this.healing);
      this.healing = null;
    }
    return this.state.view !== before;
  }

  // The cluster's lesson step changed, or a question was settled: the view follows; fetch it if not.
  expect(lessonStep) {
    const view = this.state.view;
    const behind = view && (lessonStep > view.ran || view.items.some((item) => item.awaiting));
    if (!behind || this.healing) return;
    this.healing = setTimeout(() => {
      this.healing = null;
      fetch(`/api/clusters/${this.slug}/lesson${this.readOnly ? "?role=follower" : ""}`)
        .then((r) => (r.ok ? r.json() : { messages: [] }))
        .then(({ messages }) => {
          if (messages.some((m) => this.receive(m))) this.changed();
        })
        .catch(() => {});
    }, HEAL_AFTER_MS);
  }

  shownIndex() {
    return shownIndex(this.state);
  }

  // Presenter mode lights what the rail's step acts on (elsewhere the board stays as it is).
  touched() {
    return this.rail ? touchedBy(shownItem(this.state)) : null;
  }

  // A follower shows the step the presenter shows (and its freeze).
  follow(focus, frozen) {
    if (focus !== undefined) this.state = focusOn(this.state, focus);
    this.frozen = !!frozen;
  }

  question() {
    return this.prediction.state.question;
  }

  act(what) {
    if (this.readOnly || !this.view) return;
    if (what === "back") return this.go(backIntent(this.state));
    if (what === "forward") return this.go(forwardIntent(this.state, this.question()));
    if (what === "ask") {
      const forward = forwardIntent(this.state, this.question());
      if (forward.intent === "ask") return this.go(forward);
      const item = shownItem(this.state);
      return this.toast(
        item && item.predict
          ? interpolate(gettext("step %(number)s has been asked"), { number: item.number })
          : interpolate(gettext("step %(number)s asks the class nothing"), { number: item ? item.number : "—" }),
      );
    }
    if (what === "reveal") {
      const q = this.question();
      if (q && q.state === "open") return this.prediction.revealOpen().catch((err) => this.toast(err.message, "error"));
      return this.toast(gettext("no question is open"));
    }
    if (what === "freeze") return this.freeze(!this.frozen);
  }

  go(step) {
    if (step.intent === "focus") {
      this.state = focusOn(this.state, step.to);
      this.moved();
      this.changed();
    } else if (step.intent === "reveal") this.act("reveal");
    else if (step.intent === "ask" || step.intent === "run") this.runNext();
  }

  // Run the next step; a step with `predict` asks the class first (its pod is held Pending until the
  // reveal). A question still open is revealed first (its pod would stay held).
  runNext() {
    if (this.busy || !this.view || this.view.done) return Promise.resolve();
    const index = this.view.ran;
    const ask = lessonQuestion(this.view.items[index]);
    this.busy = true;
    return this.prediction
      .revealOpen()
      .then(() => (ask ? this.prediction.pose(ask) : null))
      .then(() => this.apply({ action: "lesson.next" }))
      .then(() => {
        this.state = focusOn(this.state, index); // the rail stays on the step that just ran
        this.moved();
      })
      .catch((err) => this.toast(err.message, "error"))
      .finally(() => {
        this.busy = false;
        this.changed();
      });
  }

  freeze(frozen) {
    return this.apply({ action: "freeze", frozen })
      .then(() => {
        this.frozen = frozen;
        if (!frozen) this.moved(); // the followers catch up with where the presenter is now
        this.changed();
      })
      .catch(() => {});
  }

  // The presenter's keys, anywhere on the page but in a field or the node map's own arrows.
  keydown(event) {
    if (this.readOnly || !this.rail || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.closest && event.target.closest("input, textarea, select, [contenteditable], .map-scroll")) return;
    const what = keyIntent(event.key);
    if (!what) return;
    event.preventDefault();
    this.act(what);
  }

  render() {
    if (!this.rail) return;
    const item = shownItem(this.state);
    const q = this.question();
    const forward = forwardIntent(this.state, q);
    const sig = JSON.stringify([this.view && this.view.ran, item, forward.intent, forward.to, this.frozen, q && q.state]);
    if (sig === this.drawn) return;
    this.drawn = sig;
    renderRail(this.rail, { lesson: this.state, item, forward, presenter: !this.readOnly, frozen: this.frozen, questionOpen: !!(q && q.state === "open") });
  }
}
