import type { BenchReport } from "@kb/runtime";
import type { LayerLaunch } from "./layer.js";

/** The columns of {@link layerReport}. */
export const LAYER_REPORT_COLUMNS = [
  "layer",
  "kernel",
  "time (us)",
  "share",
  "bound by",
  "efficiency (at its dtype's peak)",
] as const;

const us = (ns: number) => Number((ns / 1000).toFixed(3));
const percent = (fraction: number) => `${(fraction * 100).toFixed(1)}%`;

/**
 * The per-launch table of a layer run: each launch's kernel window, its share of its layer (from
 * the layer's first launch to its last one's end, so the gaps between launches count in the total
 * and not in any kernel), the verdict's rule and resource (docs/reports.md), and its efficiency at
 * its dtype's peak (`dtypeEfficiency`: `dtypeRooflineNs / window`, the roofline with GEMM at the
 * rate of the dtypes the launch ran, so an f16 projection at the f16 peak reads 100%). After each layer's launches: the communication (all-reduces)
 * and the layer total; after several layers, the totals over all of them.
 */
export function layerReport(title: string, launches: readonly LayerLaunch[]): BenchReport {
  const rows: (string | number)[][] = [];
  const layers = [...new Set(launches.map((launch) => launch.layer))];
  let allNs = 0;
  let allCommNs = 0;
  for (const layer of layers) {
    const mine = launches.filter((launch) => launch.layer === layer);
    const start = mine[0]?.record.startNs ?? 0;
    const end = mine.at(-1)?.record.endNs ?? 0;
    const total = end - start;
    let commNs = 0;
    for (const { kernel, communication, record } of mine) {
      const ns = record.endNs - record.startNs;
      if (communication) commNs += ns;
      const verdict = record.verdict;
      const bound = verdict.resource === "" ? verdict.rule : `${verdict.rule}: ${verdict.resource}`;
      rows.push([
        layer,
        kernel,
        us(ns),
        percent(total > 0 ? ns / total : 0),
        bound,
        percent(record.dtypeEfficiency),
      ]);
    }
    rows.push([
      layer,
      "communication (all-reduces)",
      us(commNs),
      percent(total > 0 ? commNs / total : 0),
      "",
      "",
    ]);
    rows.push([layer, "layer total", us(total), "100.0%", "", ""]);
    allNs += total;
    allCommNs += commNs;
  }
  if (layers.length > 1) {
    rows.push([
      "all",
      "communication (all-reduces)",
      us(allCommNs),
      percent(allNs > 0 ? allCommNs / allNs : 0),
      "",
      "",
    ]);
    rows.push(["all", `${layers.length} layers total`, us(allNs), "100.0%", "", ""]);
  }
  return { title, columns: [...LAYER_REPORT_COLUMNS], rows };
}
