// Pure helpers of the import panel: what to send, and how a job's progress reads.

import { gettext, interpolate } from "../lib/i18n.js";

// The dump goes as the request body; its type is told by the file name or, for a paste, its first character.
export function contentTypeFor(name, text) {
  if (/\.json$/i.test(name || "")) return "application/json";
  if (/\.ya?ml$/i.test(name || "")) return "application/yaml";
  const first = (text || "").trimStart().charAt(0);
  return first === "{" || first === "[" ? "application/json" : "application/yaml";
}

const number = (n) => Number(n || 0).toLocaleString("en-US");

// {fraction (0..1, or null while unknown), text, finished, failed} of an ImportJob's JSON.
export function describeJob(job) {
  if (job.state === "done") {
    return { fraction: 1, text: interpolate(gettext("imported %(count)s objects%(leftOut)s"), { count: number(job.stored), leftOut: leftOut(job) }), finished: true, failed: false };
  }
  if (job.state === "cancelled") {
    return { fraction: 0, text: gettext("cancelled: nothing was stored"), finished: true, failed: false };
  }
  if (job.state === "failed") {
    return { fraction: 0, text: job.error || gettext("the import failed; nothing was stored"), finished: true, failed: true };
  }
  if (!job.total) return { fraction: null, text: gettext("reading the file…"), finished: false, failed: false };
  if (job.phase === "swapping") {
    return { fraction: 1, text: interpolate(gettext("stored %(count)s objects; making them visible…"), { count: number(job.stored) }), finished: false, failed: false };
  }
  return {
    fraction: job.total ? job.stored / job.total : null,
    text: interpolate(gettext("read %(read)s / %(total)s objects · stored %(stored)s"), {
      read: number(job.read),
      total: number(job.total),
      stored: number(job.stored),
    }),
    finished: false,
    failed: false,
  };
}

function leftOut(job) {
  const kinds = Object.entries(job.skipped || {});
  if (!kinds.length) return "";
  return interpolate(gettext(" (left out: %(kinds)s)"), { kinds: kinds.map(([kind, n]) => `${number(n)} ${kind}`).join(", ") });
}
