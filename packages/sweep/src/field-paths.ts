// How the dotted paths of a sweep spec split into fields: one definition for the spec's checks,
// the point writer and the metric reader.

/** The fields of an axis or `set:` path: `topology.cube.hbm.preset` is `topology`, `cube`, `hbm`, `preset`. */
export function targetPathFields(path: string): string[] {
  return path.split(".");
}

/** The fields of a metric's path: `launches[0].endNs` is `launches`, `[0]`, `endNs`. */
export function metricPathFields(path: string): string[] {
  return path.split(/\.|(?=\[)/).filter((part) => part !== "");
}
