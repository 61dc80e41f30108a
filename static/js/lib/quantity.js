// Kubernetes quantities for display (cpu in cores, memory in bytes). Display only: the server
// computes every verdict and score exactly.

const BINARY = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL = { n: 1e-9, u: 1e-6, m: 1e-3, "": 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

export function parseQuantity(text) {
  if (text === undefined || text === null) return 0;
  const s = String(text).trim();
  const m = /^([+-]?[0-9.]+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$/.exec(s);
  if (!m) return 0;
  const n = parseFloat(m[1]);
  const suffix = m[2] || "";
  if (suffix in BINARY) return n * BINARY[suffix];
  if (suffix in DECIMAL) return n * DECIMAL[suffix];
  return n * 10 ** parseInt(suffix.slice(1), 10);
}

export function formatCpu(cores) {
  if (cores === 0) return "0";
  if (cores < 1) return `${Math.round(cores * 1000)}m`;
  return `${Math.round(cores * 100) / 100}`;
}

export function formatBytes(bytes) {
  const units = ["", "Ki", "Mi", "Gi", "Ti"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${Math.round(value * 10) / 10}${units[unit]}`;
}
