// The cluster stream with reconnection: after a drop it resumes from the last resourceVersion,
// so no change is lost or seen twice.

export class ClusterSocket {
  constructor(slug, { onMessage, onState }) {
    this.slug = slug;
    this.onMessage = onMessage;
    this.onState = onState || (() => {});
    this.lastRv = null;
    this.nextId = 1;
    this.pending = new Map();
    this.delay = 500;
    this.connect();
  }

  url() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const query = this.lastRv ? `?resourceVersion=${encodeURIComponent(this.lastRv)}` : "";
    return `${scheme}://${location.host}/ws/clusters/${this.slug}/${query}`;
  }

  connect() {
    this.onState("connecting");
    const ws = new WebSocket(this.url());
    this.ws = ws;
    ws.addEventListener("open", () => {
      this.delay = 500;
      this.onState("open");
    });
    ws.addEventListener("close", (event) => {
      this.onState("closed");
      for (const { reject } of this.pending.values()) reject(new Error("connection closed"));
      this.pending.clear();
      if (event.code === 4404 || event.code === 4403) return;
      setTimeout(() => this.connect(), this.delay);
      this.delay = Math.min(this.delay * 2, 8000);
    });
    ws.addEventListener("message", (event) => {
      const msg = JSON.parse(event.data);
      if (msg.resourceVersion && (msg.type === "snapshot" || msg.type === "watch")) this.lastRv = msg.resourceVersion;
      if ((msg.type === "result" || msg.type === "error") && this.pending.has(msg.id)) {
        const { resolve, reject } = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.type === "result") resolve(msg);
        else reject(Object.assign(new Error(msg.message), { reason: msg.reason }));
      }
      this.onMessage(msg);
    });
  }

  // Send an action; resolves with the server's result or rejects with its error.
  send(action) {
    const id = `a${this.nextId++}`;
    return new Promise((resolve, reject) => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
        reject(new Error("not connected"));
        return;
      }
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ ...action, id }));
    });
  }
}
