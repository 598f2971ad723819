import { fileURLToPath } from "node:url";
import { HBM_CTRL_V1_ENERGY, PE_GEMM_ENERGY } from "@kb/builtins";
import type { Bench, RunResults } from "@kb/runtime";
import { loadSimulator } from "@kb/runtime/node";
import { describe, expect, test } from "vitest";
import llamaLayer from "../llama-layer.js";
import { SMALL } from "./small-benches.js";

// The energy floor (docs/energy.md, Checks): no run reports less energy than its MACs per dtype,
// its PE_MATH operations and its HBM bytes at the tables' costs, static power left out.

const DEFAULT = fileURLToPath(new URL("../../topologies/default.yaml", import.meta.url));
/** The logic tables' factor at default.yaml's 7 nm and 0.75 V. */
const SCALE = (7 / 45) * (0.75 / 0.9) ** 2;
const PJ = 1e-12;

function macPj(dtype: string): number {
  const costs = PE_GEMM_ENERGY.costs;
  const cost =
    costs.find((each) => each.per === `macs.${dtype}`) ?? costs.find((each) => each.per === "macs.other");
  return (cost?.value ?? 0) * SCALE;
}

/** J of the run's MACs, PE_MATH operations (2.3 pJ at 45 nm) and HBM bytes (hbm_ctrl_v1's per bit). */
function floorJ(results: RunResults): number {
  let macs = 0;
  for (const launch of results.launches) {
    for (const [dtype, flops] of Object.entries(launch.gemmFlopsByDtype ?? {}))
      macs += (flops / 2) * macPj(dtype);
  }
  const hbm = HBM_CTRL_V1_ENERGY.values?.({ channels: 8, pseudo_channels: 2 }) ?? {};
  const hbmPjPerBit = (hbm.access_pj_per_bit ?? 0) + (hbm.row_pj_per_bit ?? 0);
  return (macs + results.work.mathFlops * 2.3 * SCALE + results.work.hbmBytes * 8 * hbmPjPerBit) * PJ;
}

async function run(bench: Bench, params: Record<string, unknown>) {
  const sim = await loadSimulator(DEFAULT);
  const parsed = bench.params.parse(params) as Record<string, unknown>;
  const outcome = await bench.run(sim, parsed as never);
  return sim.results(bench.name, parsed, outcome?.tokens ?? null);
}

describe("the energy floor on default.yaml", () => {
  test.each(SMALL.map(([bench, params]) => [bench.name, bench, params] as const))(
    "%s (small params) spends at least its MACs, MATH ops and HBM bytes at the tables' costs",
    async (_name, bench, params) => {
      const results = await run(bench, params);
      const floor = floorJ(results);
      expect(floor).toBeGreaterThan(0);
      expect(results.energy?.dynamicJ).toBeGreaterThanOrEqual(floor * (1 - 1e-12));
      expect(results.energy?.staticJ).toBeGreaterThan(0);
    },
  );

  test("llama-layer tiny (prefill): above the floor, with J per token over its batch x prompt tokens", async () => {
    const results = await run(llamaLayer, { preset: "tiny" });
    const energy = results.energy;
    expect(energy?.dynamicJ).toBeGreaterThanOrEqual(floorJ(results) * (1 - 1e-12));
    // A prefill of batch 1 over tiny's 32-token prompt.
    expect(energy?.tokens).toBe(1 * 32);
    expect(energy?.jPerToken).toBeCloseTo((energy?.totalJ ?? 0) / (energy?.tokens ?? 1), 18);
    // Every launch's energy lies within the run's.
    const launches = results.launches.reduce((sum, launch) => sum + (launch.energy?.totalJ ?? 0), 0);
    expect(launches).toBeLessThanOrEqual(energy?.totalJ ?? 0);
  }, 120_000);
});
