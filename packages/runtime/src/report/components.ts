import type { ComponentReport } from "@kb/components";
import type { ComponentEnergy } from "../energy/summary.js";
import { modelStatsField } from "../model-stats.js";
import type { RunResults } from "../results.js";

/** @internal `components[]` of the results: a row per component that serviced a message. */
export function componentRows(
  used: readonly ComponentReport[],
  energy: ReadonlyMap<string, ComponentEnergy> = new Map(),
): RunResults["components"] {
  return used.map((report) => ({
    id: report.id,
    kind: report.kind,
    impl: report.impl,
    busyNs: report.busyNs,
    ops: report.ops,
    bytes: report.bytes,
    flops: report.flops,
    queueFullStalls: report.queueFullStalls,
    utilisation: report.utilisation,
    ...(report.lanes === undefined ? {} : { lanes: report.lanes.map((lane) => ({ ...lane })) }),
    ...modelStatsField(report.stats),
    ...energyField(energy.get(report.id)),
  }));
}

function energyField(energy: ComponentEnergy | undefined): { energy?: ComponentEnergy } {
  return energy === undefined ? {} : { energy: { ...energy, byCost: { ...energy.byCost } } };
}

/** @internal `busiest[]` of the results: the ten rows of highest utilisation, ties by id. */
export function busiestRows(rows: RunResults["components"]): RunResults["busiest"] {
  return [...rows]
    .sort((a, b) => b.utilisation - a.utilisation || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, 10);
}
