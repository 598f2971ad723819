import type { Machine } from "@kb/components";
import { runEnergy } from "../energy/summary.js";
import type { LaunchRecord, RunResults } from "../results.js";
import { gemmArrayUtilisation, hbmPortBalance } from "./achieved.js";
import { busiestRows, componentRows } from "./components.js";
import { hbmPortRows } from "./hbm-ports.js";
import { runGemmPeaksByDtype } from "./launch-work.js";
import { workSince } from "./work.js";

/** @internal Builds the results object from a machine after a run. */
export function collectResults(
  machine: Machine,
  topology: string,
  launches: readonly LaunchRecord[],
  hostCopies: NonNullable<RunResults["hostCopies"]>,
  bench: string | null,
  params: Record<string, unknown>,
  tokens: number | null = null,
): RunResults {
  const stats = machine.stats();
  const simTimeNs = stats.simTimeNs;
  const used = stats.components.filter((report) => report.ops > 0);
  const work = workSince(machine, new Map());
  const { gemmFlops, mathFlops, hbmBytes } = work;
  const perS = (value: number) => (simTimeNs > 0 ? (value / simTimeNs) * 1e9 : 0);
  const fraction = (value: number, perNs: number) =>
    simTimeNs > 0 && perNs > 0 ? value / simTimeNs / perNs : 0;
  const energy = runEnergy(machine, tokens);
  const rows = componentRows(used, energy.byComponent);
  const busiest = busiestRows(rows);
  return {
    schema: "kb.results/1",
    bench,
    params,
    topology,
    simTimeNs,
    events: stats.events,
    launches: launches.map(({ peaks: _, ...launch }) => launch),
    hostCopies: { ...hostCopies },
    work: { gemmFlops, mathFlops, hbmBytes },
    peak: {
      gemmFlopsPerS: work.peaks.gemm * 1e9,
      gemmFlopsPerSByDtype: runGemmPeaksByDtype(machine),
      mathFlopsPerS: work.peaks.math * 1e9,
      hbmBytesPerS: work.peaks.hbm * 1e9,
    },
    achieved: {
      flopsPerS: perS(gemmFlops + mathFlops),
      hbmBytesPerS: perS(hbmBytes),
      gemmFraction: fraction(gemmFlops, work.peaks.gemm),
      gemmArrayUtilisation: gemmArrayUtilisation(machine),
      hbmFraction: fraction(hbmBytes, work.peaks.hbm),
      hbmPortBalance: hbmPortBalance(machine),
    },
    rooflineNs: work.rooflineNs,
    byKind: stats.byKind.map((kind) => ({
      ...kind,
      instances: { ...kind.instances },
      lanes: { ...kind.lanes },
    })),
    hbmPorts: hbmPortRows(machine),
    links: stats.links.map((link) => ({ ...link })),
    energy: energy.run,
    busiest,
    components: rows,
  };
}
