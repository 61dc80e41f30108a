// The cluster stream. The state comes over HTTP (gzip, revalidated by ETag), then the WebSocket
// resumes from its resourceVersion: no gap, no duplicate. After a drop the socket resumes from the
// last resourceVersion it saw; when the server could not deliver a message (close 4410) or the
// stream keeps failing, the state is fetched again and the stream resumes from it ("resyncing").
// Problems are reported through `onProblem`, never swallowed. Actions too large for a WebSocket
// frame go over HTTP POST; a YAML over the documented limit is refused before it is sent.

import { decodeEvents } from "../model/cycle_wire.js";
import { gettext, interpolate } from "./i18n.js";

const CLOSE_REFETCH = 4410; // the server could not deliver a message: fetch the state again
const CLOSE_RESYNC = 4429; // this client fell behind: resume from the last resourceVersion
const FINAL_CLOSES = new Set([4403, 4404]);
const SOCKET_SEND_BYTES = 512 * 1024; // larger actions go over HTTP (daphne refuses frames over 1 MiB)
export const MAX_YAML_BYTES = 2 * 1024 * 1024; // README's limit for one create/explain (MAX_YAML_CHARS)
const FAILURES_BEFORE_REFETCH = 3;

export function formatSize(bytes) {
  return bytes >= 2 ** 20 && bytes % 2 ** 20 === 0 ? `${bytes / 2 ** 20} MiB` : `${(bytes / 1e6).toFixed(1)} MB`;
}

function utf8Length(text) {
  return text.length * 3 <= SOCKET_SEND_BYTES ? text.length : new TextEncoder().encode(text).length;
}

export class ClusterSocket {
  // onMessage(msg): every stream message, and {type: "snapshot"} for each (re)loaded state.
  // onState(s): "loading" | "connecting" | "open" | "resyncing" | "closed" | "failed".
  // onProblem(text | null): a problem to show (null: the stream is healthy again).
  // follower: ask for the class's view (`?role=follower`) even where this browser could write.
  constructor(slug, { onMessage, onState, onProblem, follower = false }) {
    this.slug = slug;
    this.follower = follower;
    this.onMessage = onMessage;
    this.onState = onState || (() => {});
    this.onProblem = onProblem || (() => {});
    this.lastRv = null;
    this.nextId = 1;
    this.pending = new Map();
    this.delay = 500;
    this.failures = 0;
    this.parts = null;
    this.problem = null;
    this.stopped = false;
    this.etag = null;
    this.loadState();
  }

  report(text) {
    this.problem = text;
    this.onProblem(text);
  }

  // GET the state, hand it over as a snapshot, then open the stream from its resourceVersion.
  async loadState() {
    this.onState(this.lastRv === null ? "loading" : "resyncing");
    try {
      const response = await fetch(`/api/clusters/${this.slug}/state`, { headers: { Accept: "application/json" } });
      if (!response.ok) {
        const body = await response.json().catch(() => ({}));
        if (response.status === 404) {
          this.stopped = true;
          this.onState("failed");
          this.report(body.message || gettext("this cluster no longer exists"));
          return;
        }
        throw new Error(body.message || `HTTP ${response.status}`);
      }
      const snapshot = await response.json();
      this.lastRv = snapshot.resourceVersion;
      this.onMessage({ type: "snapshot", ...snapshot });
      this.connect();
    } catch (err) {
      this.report(
        interpolate(gettext("cannot load the cluster's state (%(error)s); retrying in %(seconds)s s"), {
          error: err.message,
          seconds: Math.round(this.delay / 1000),
        }),
      );
      this.retry(() => this.loadState());
    }
  }

  retry(action) {
    setTimeout(action, this.delay);
    this.delay = Math.min(this.delay * 2, 8000);
  }

  url() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const params = new URLSearchParams();
    if (this.lastRv) params.set("resourceVersion", this.lastRv);
    if (this.follower) params.set("role", "follower");
    const query = params.toString() ? `?${params}` : "";
    return `${scheme}://${location.host}/ws/clusters/${this.slug}/${query}`;
  }

  connect() {
    if (this.stopped) return;
    this.onState(this.failures || this.problem ? "resyncing" : "connecting");
    const ws = new WebSocket(this.url());
    this.ws = ws;
    let heard = false;
    let refusal = null;
    ws.addEventListener("open", () => this.onState(this.problem ? "resyncing" : "open"));
    ws.addEventListener("close", (event) => {
      if (this.ws !== ws) return;
      this.onState("closed");
      for (const { reject } of this.pending.values()) reject(new Error(gettext("connection closed")));
      this.pending.clear();
      this.parts = null;
      if (FINAL_CLOSES.has(event.code)) {
        this.stopped = true;
        this.onState("failed");
        this.report(event.code === 4404 ? gettext("this cluster no longer exists") : gettext("the server refused the stream"));
        return;
      }
      if (event.code === CLOSE_REFETCH) {
        this.report(
          interpolate(gettext("%(reason)s — reloading the state"), {
            reason: refusal || gettext("the server could not deliver a message"),
          }),
        );
        this.retry(() => this.loadState());
        return;
      }
      if (event.code === CLOSE_RESYNC) {
        this.report(gettext("this page fell behind the stream — resuming where it was"));
        this.delay = 500;
        this.connect();
        return;
      }
      this.failures = heard ? 1 : this.failures + 1;
      const why = event.reason
        ? interpolate(gettext("connection lost (code %(code)s: %(reason)s)"), { code: event.code, reason: event.reason })
        : interpolate(gettext("connection lost (code %(code)s)"), { code: event.code });
      if (this.failures >= FAILURES_BEFORE_REFETCH) {
        this.report(
          interpolate(gettext("%(why)s %(count)s times in a row — reloading the state in %(seconds)s s"), {
            why,
            count: this.failures,
            seconds: Math.round(this.delay / 1000),
          }),
        );
        this.failures = 0;
        this.retry(() => this.loadState());
      } else {
        this.report(interpolate(gettext("%(why)s; reconnecting in %(seconds)s s"), { why, seconds: Math.round(this.delay / 1000) }));
        this.retry(() => this.connect());
      }
    });
    ws.addEventListener("message", (event) => {
      const msg = JSON.parse(event.data);
      if (!heard) {
        heard = true;
        this.delay = 500;
        this.failures = 0;
        if (this.problem) {
          this.problem = null;
          this.onProblem(null);
        }
        this.onState("open");
      }
      if (msg.type === "error" && msg.reason === "TooLarge" && !msg.id) refusal = msg.message;
      if (msg.type === "snapshot" || msg.type === "snapshot.part") {
        this.collect(msg);
        return;
      }
      if (msg.resourceVersion && (msg.type === "watch" || msg.type === "watch.batch")) this.lastRv = msg.resourceVersion;
      if ((msg.type === "result" || msg.type === "error") && this.pending.has(msg.id)) {
        const { resolve, reject } = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.type === "result") resolve(msg);
        else reject(Object.assign(new Error(msg.message), { reason: msg.reason }));
      }
      this.onMessage(msg);
    });
  }

  // A snapshot sent in parts (the server's fallback when it cannot resume): one snapshot at the end.
  collect(msg) {
    if (msg.type === "snapshot") this.parts = { ...msg, objects: {} };
    if (!this.parts) return;
    for (const [kind, items] of Object.entries(msg.objects || {})) {
      (this.parts.objects[kind] ||= []).push(...items);
    }
    if ((msg.part || 1) >= (msg.parts || 1)) {
      const snapshot = this.parts;
      this.parts = null;
      this.lastRv = snapshot.resourceVersion;
      this.onMessage(snapshot);
    }
  }

  // Send an action; resolves with the server's result or rejects with its error.
  // A what-if comes as the board plays it (`form: "cycle"`: its events compact, no per-node table),
  // decoded here into the full-form events the player reads.
  send(action) {
    if (action.action !== "explain" || action.form) return this.sendAction(action);
    return this.sendAction({ ...action, form: "cycle" }).then((msg) => {
      if (msg.explanation) msg.explanation.events = decodeEvents(msg.explanation.events);
      return msg;
    });
  }

  sendAction(action) {
    if (typeof action.yaml === "string" && action.yaml.length * 3 > MAX_YAML_BYTES) {
      const size = new TextEncoder().encode(action.yaml).length;
      if (size > MAX_YAML_BYTES) {
        return Promise.reject(
          Object.assign(
            new Error(interpolate(gettext("too large (%(size)s > %(limit)s)"), { size: formatSize(size), limit: formatSize(MAX_YAML_BYTES) })),
            { reason: "TooLarge" },
          ),
        );
      }
    }
    // A what-if over a large cluster answers more than a frame carries: ask over HTTP at once.
    if (action.action === "explain" && this.explainOverHttp) return this.post(action);
    const id = `a${this.nextId++}`;
    const text = JSON.stringify({ ...action, id });
    if (utf8Length(text) > SOCKET_SEND_BYTES) return this.post(action);
    return new Promise((resolve, reject) => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
        reject(new Error(gettext("not connected")));
        return;
      }
      this.pending.set(id, { resolve, reject });
      this.ws.send(text);
    }).catch((err) => {
      // An answer too large for the stream (a what-if on thousands of nodes) comes over HTTP instead.
      if (err.reason === "TooLarge" && action.action === "explain") {
        this.explainOverHttp = true;
        return this.post(action);
      }
      throw err;
    });
  }

  // The same action over HTTP (POST …/actions): for payloads no WebSocket frame may carry.
  async post(action) {
    const response = await fetch(`/api/clusters/${this.slug}/actions`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(action),
    });
    const body = await response.json().catch(() => ({ message: `HTTP ${response.status}` }));
    if (!response.ok) throw Object.assign(new Error(body.message), { reason: body.reason });
    return { type: "result", ...body };
  }
}
