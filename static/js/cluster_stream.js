// Minimal live view: keeps the node and pod lists in step with the cluster stream.
const root = document.getElementById("cluster");
const slug = root.dataset.slug;
const state = { Node: new Map(), Pod: new Map() };

const key = (obj) => (obj.metadata.namespace ? obj.metadata.namespace + "/" : "") + obj.metadata.name;

function item(text) {
  const li = document.createElement("li");
  li.textContent = text;
  return li;
}

function render() {
  document.getElementById("nodes").replaceChildren(...[...state.Node.values()].map((n) => item(n.metadata.name)));
  document.getElementById("pods").replaceChildren(
    ...[...state.Pod.values()].map((p) =>
      item(`${key(p)} → ${p.spec.nodeName || "(pending)"} · ${(p.status || {}).phase || ""}`),
    ),
  );
}

const scheme = location.protocol === "https:" ? "wss" : "ws";
const socket = new WebSocket(`${scheme}://${location.host}/ws/clusters/${slug}/`);
const wsState = document.getElementById("ws-state");
socket.addEventListener("open", () => (wsState.textContent = "open"));
socket.addEventListener("close", () => (wsState.textContent = "closed"));
socket.addEventListener("message", (event) => {
  const msg = JSON.parse(event.data);
  if (msg.type === "snapshot") {
    for (const kind of Object.keys(state)) {
      state[kind] = new Map((msg.objects[kind] || []).map((o) => [key(o), o]));
    }
  } else if (msg.type === "watch" && state[msg.kind]) {
    if (msg.event === "DELETED") state[msg.kind].delete(key(msg.object));
    else state[msg.kind].set(key(msg.object), msg.object);
  } else {
    return;
  }
  if (msg.resourceVersion) document.getElementById("rv").textContent = msg.resourceVersion;
  render();
});
