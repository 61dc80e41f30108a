// Formatting of the server's figures (cpu in cores or millicores, memory in bytes). Display only:
// the server computes every figure, verdict and score; nothing here parses a quantity.

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

export function formatMilliCpu(millicores) {
  return formatCpu(millicores / 1000);
}

// A figure of a resource as people read it: cpu in cores, memory in binary units, others plain.
export function formatResource(resource, value) {
  if (resource === "cpu") return `${formatMilliCpu(value)} CPU`;
  if (resource === "memory" || resource === "ephemeral-storage" || resource.startsWith("hugepages-")) return formatBytes(value);
  return String(value);
}
