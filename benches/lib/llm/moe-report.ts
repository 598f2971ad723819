import type { BenchReport } from "@kb/runtime";
import type { LayerLaunch } from "./layer.js";
import type { CapacityOutcome } from "./moe-routing.js";
import { layerReport } from "./report.js";

const us = (ns: number) => Number((ns / 1000).toFixed(3));
const windowOf = (launches: readonly LayerLaunch[], pick: (kernel: string) => boolean) =>
  launches.filter((l) => pick(l.kernel)).reduce((sum, l) => sum + (l.record.endNs - l.record.startNs), 0);

/**
 * A MoE layer's table: llama-layer's per-launch rows (kernel, time, share, verdict, efficiency)
 * for the attention and MoE launches, then the routing (assignments routed to each expert, those
 * computed after the capacity, the dropped ones) and the all-to-all time (dispatch and combine)
 * against the expert GEMMs' (the two grouped launches), in the same columns.
 */
export function moeReport(
  title: string,
  launches: readonly LayerLaunch[],
  outcome: CapacityOutcome,
): BenchReport {
  const table = layerReport(title, launches);
  const allToAll = windowOf(launches, (k) => k.startsWith("all-to-all"));
  const gemms = windowOf(launches, (k) => k.startsWith("expert "));
  const blank = ["", "", ""];
  const rows = [
    ...table.rows,
    ["moe", "tokens per expert (routed)", outcome.routed.join(" "), ...blank],
    ["moe", "tokens per expert (computed)", outcome.computed.join(" "), ...blank],
    ["moe", "dropped assignments", outcome.dropped, ...blank],
    ["moe", "all-to-all (dispatch + combine)", us(allToAll), ...blank],
    ["moe", "expert GEMMs (gate-up-swiglu + down)", us(gemms), ...blank],
    ["moe", "all-to-all / expert GEMMs", gemms > 0 ? Number((allToAll / gemms).toFixed(3)) : 0, ...blank],
  ];
  return { ...table, rows };
}
