import { formatNs, formatNumber, formatPercent, formatSi } from "@kb/errors";
import type { RunResults } from "@kb/runtime";

type Launch = {
  [K in keyof RunResults["launches"][number]]-?: NonNullable<RunResults["launches"][number][K]>;
};

/** The launch with its per-launch figures, or null for results written before they were reported. */
function detail(launch: RunResults["launches"][number]): Launch | null {
  return launch.durationNs === undefined ? null : (launch as Launch);
}

/**
 * The launches' part of `kb run`'s summary: per launch its kernel window, its bottleneck verdict
 * (docs/reports.md), the rates over that
 * window against the peaks of the hardware it used (GEMM against the peak of each dtype it ran),
 * the bytes per level, its roofline from the actual and from the minimal HBM traffic; then the
 * host copies on their own line. `bytes` formats a byte count.
 */
export function formatLaunches(results: RunResults, bytes: (count: number) => string): string[][] {
  const rows: string[][] = [];
  for (const launch of results.launches) {
    rows.push([
      launch.name,
      `${launch.pes} PE(s), ${formatNs(launch.startNs)} -> ${formatNs(launch.endNs)} (${formatNs(launch.endNs - launch.startNs)})`,
    ]);
    // Results written before verdicts were reported have none.
    if (launch.verdict !== undefined) rows.push(["  verdict", launch.verdict.text]);
    const detailed = detail(launch);
    if (detailed !== null) rows.push(...launchRows(detailed, bytes));
  }
  if (results.launches.length === 0) rows.push(["launches", "(none)"]);
  const copies = results.hostCopies;
  if (copies === undefined) return rows; // results written before host copies were counted
  rows.push([
    "host copies",
    copies.count === 0
      ? "none"
      : `${copies.count} ${copies.count === 1 ? "copy" : "copies"}, ${bytes(copies.bytes)} in ${formatNs(copies.ns)} (outside the kernel windows)`,
  ]);
  return rows;
}

function launchRows(launch: Launch, bytes: (count: number) => string): string[][] {
  const { achieved, peak, traffic, minimal } = launch;
  const rows: string[][] = [];
  const dtypes = Object.entries(launch.gemmFlopsByDtype);
  if (dtypes.length > 0) {
    const parts = dtypes.map(([dtype, flops]) => {
      const peakPerS = peak.gemmFlopsPerSByDtype[dtype] ?? 0;
      return `${dtype} ${formatSi(flops, "FLOP")}${peakPerS > 0 ? ` (${dtype} peak ${formatSi(peakPerS, "FLOP/s")})` : ""}`;
    });
    rows.push([
      "  GEMM",
      `${formatSi(achieved.gemmFlopsPerS, "FLOP/s")}, ${formatPercent(achieved.gemmFraction)} of the peak of its dtypes: ${parts.join(", ")}`,
    ]);
  }
  if (launch.mathFlops > 0)
    rows.push([
      "  MATH",
      ofPeak(achieved.mathFlopsPerS, peak.mathFlopsPerS, achieved.mathFraction, "FLOP/s"),
    ]);
  if (launch.hbmBytes > 0) {
    rows.push([
      "  HBM",
      `${bytes(launch.hbmBytes)}, ${ofPeak(achieved.hbmBytesPerS, peak.hbmBytesPerS, achieved.hbmFraction, "B/s")}`,
    ]);
    rows.push([
      "  HBM minimal",
      `${bytes(minimal.hbmBytes)} distinct (${bytes(minimal.hbmReadBytes)} read, ${bytes(minimal.hbmWriteBytes)} written): ${formatNumber(launch.hbmBytes / Math.max(1, minimal.hbmBytes), 3)} x moved`,
    ]);
  }
  rows.push([
    "  bytes",
    `DMA ${bytes(traffic.dmaBytes)}, fabric links ${bytes(traffic.fabricLinkBytes)} (${formatSi(achieved.fabricLinkBytesPerS, "B/s")}), TCM ${bytes(traffic.tcmBytes)}, fetch/store ${bytes(traffic.fetchStoreBytes)}`,
  ]);
  rows.push([
    "  roofline",
    launch.rooflineNs > 0
      ? `${formatNs(launch.rooflineNs)}, ${launch.boundBy}-bound (the launch took ${formatNumber(launch.durationNs / launch.rooflineNs, 3)} x that); with minimal traffic ${formatNs(minimal.rooflineNs)} (${formatNumber(launch.durationNs / Math.max(minimal.rooflineNs, Number.MIN_VALUE), 3)} x)`
      : "0 ns (no GEMM, MATH or HBM work)",
  ]);
  if (launch.bounds.gemmNs > launch.rooflineNs) {
    // Results written before dtypeRooflineNs have bounds.gemmNs only.
    const atDtypes = (launch.dtypeRooflineNs as number | undefined) ?? launch.bounds.gemmNs;
    rows.push([
      "",
      `at the peak of its dtypes ${formatNs(atDtypes)} (the launch took ${formatNumber(launch.durationNs / atDtypes, 3)} x that; the roofline above counts the best dtype's GEMM rate)`,
    ]);
  }
  return rows;
}

function ofPeak(perS: number, peakPerS: number, fraction: number, unit: string): string {
  if (peakPerS <= 0) return formatSi(perS, unit);
  return `${formatSi(perS, unit)} of ${formatSi(peakPerS, unit)} peak (${formatPercent(fraction)})`;
}

/** `GEMM peak 262.1 TFLOP/s i8, 131.1 f16/bf16, 32.77 f32`: dtypes of the same rate joined. */
export function formatGemmPeaks(byDtype: Readonly<Record<string, number>> = {}): string {
  const groups = new Map<number, string[]>();
  for (const [dtype, perS] of Object.entries(byDtype)) {
    if (!(perS > 0)) continue;
    groups.set(perS, [...(groups.get(perS) ?? []), dtype]);
  }
  const ordered = [...groups.entries()].sort((a, b) => b[0] - a[0]);
  const firstUnit = formatSi(ordered[0]?.[0] ?? 0, "FLOP/s").split(" ")[1];
  return ordered
    .map(([perS, dtypes], index) => {
      const [value, unit] = formatSi(perS, "FLOP/s").split(" ");
      return `${index > 0 && unit === firstUnit ? value : `${value} ${unit}`} ${dtypes.join("/")}`;
    })
    .join(", ");
}
