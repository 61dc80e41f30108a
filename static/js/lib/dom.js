// Tiny DOM helpers. Text always goes through text nodes: user data never reaches innerHTML.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") el.className = value;
    else if (name === "dataset") Object.assign(el.dataset, value);
    else if (name === "style" && typeof value === "object") Object.assign(el.style, value);
    else if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value);
    else if (value === true) el.setAttribute(name, "");
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

export function $(selector, root = document) {
  return root.querySelector(selector);
}

// Schedule one render per animation frame, however many changes arrive.
export function frameBatcher(render) {
  let pending = false;
  return () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      render();
    });
  };
}

// Keep one element per key, rebuilding only those whose signature changed (no layout jumps, and
// focus and drag state survive the updates of unrelated items).
export function keyed(container, items) {
  const cache = container._keyed || new Map();
  const next = new Map();
  const elements = [];
  for (const item of items) {
    let entry = cache.get(item.key);
    if (!entry || entry.sig !== item.sig) entry = { sig: item.sig, el: item.build() };
    next.set(item.key, entry);
    elements.push(entry.el);
  }
  container._keyed = next;
  const children = container.children;
  if (elements.length !== children.length || elements.some((el, i) => children[i] !== el)) {
    container.replaceChildren(...elements);
  }
}

// Offer text as a file to save (a download of data the page holds).
export function downloadFile(name, data, type) {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const link = h("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
