// How the sweep page names a metric: the spec's name (`time_ns`, `busbw_gbs`, `hbmBytes`) read as
// words and a unit, so axes, columns and tooltips say "time (ns)" and "busbw (GB/s)". The spec's
// name stays the metric's identity (selects' values, column ids, `?metric=` in tests) and shows on
// hover.

/** A metric's name for people: words and, when its last word is one, a unit. */
export interface MetricName {
  /** The words: `time`, `busbw`, `hbm bytes`, `gemm fraction`. */
  readonly label: string;
  /** The unit its last word names (`ns`, `GB/s`, `B`), or null. */
  readonly unit: string | null;
  /** `label (unit)`, or the label alone. */
  readonly text: string;
}

/**
 * Last words that are a unit. `drop`: the word is only the unit (`time_ns` is "time (ns)"); kept,
 * it is also what is counted (`hbm_bytes` is "hbm bytes (B)").
 */
const UNIT_WORDS: Readonly<Record<string, { readonly unit: string; readonly drop: boolean }>> = {
  ps: { unit: "ps", drop: true },
  ns: { unit: "ns", drop: true },
  us: { unit: "µs", drop: true },
  ms: { unit: "ms", drop: true },
  sec: { unit: "s", drop: true },
  cycles: { unit: "cycles", drop: false },
  bytes: { unit: "B", drop: false },
  kib: { unit: "KiB", drop: true },
  mib: { unit: "MiB", drop: true },
  gib: { unit: "GiB", drop: true },
  mbs: { unit: "MB/s", drop: true },
  gbs: { unit: "GB/s", drop: true },
  gbps: { unit: "GB/s", drop: true },
  tbs: { unit: "TB/s", drop: true },
  gflops: { unit: "GFLOP/s", drop: true },
  tflops: { unit: "TFLOP/s", drop: true },
  pct: { unit: "%", drop: true },
  percent: { unit: "%", drop: true },
  pj: { unit: "pJ", drop: true },
  nj: { unit: "nJ", drop: true },
  uj: { unit: "µJ", drop: true },
  mj: { unit: "mJ", drop: true },
  j: { unit: "J", drop: true },
  mw: { unit: "mW", drop: true },
  w: { unit: "W", drop: true },
};

/** Words of a metric's name: split at `_`, `-`, `.` and spaces and at camelCase humps, lower-cased. */
export function metricWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[\s_.-]+/)
    .filter((word) => word !== "");
}

/**
 * The name a person reads for metric `name`: `time_ns` -> "time (ns)", `busbw_gbs` -> "busbw
 * (GB/s)", `hbm_bytes` -> "hbm bytes (B)", `simTimeNs` -> "sim time (ns)", `gemm_fraction` ->
 * "gemm fraction", `row_hits` -> "row hits". A name that is only a unit (`ns`) keeps it as its label.
 */
export function metricName(name: string): MetricName {
  const words = metricWords(name);
  const last = words.at(-1);
  const unit = last === undefined ? undefined : UNIT_WORDS[last];
  if (unit === undefined || words.length === 0) {
    const label = words.length === 0 ? name : words.join(" ");
    return { label, unit: null, text: label };
  }
  if (unit.drop && words.length === 1)
    return { label: last as string, unit: unit.unit, text: last as string };
  const label = (unit.drop ? words.slice(0, -1) : words).join(" ");
  return { label, unit: unit.unit, text: `${label} (${unit.unit})` };
}
