import { fileURLToPath } from "node:url";
import type { Bench, BenchCheck, RunResults, Simulator } from "@kb/runtime";
import { loadSimulator } from "@kb/runtime/node";
import { describe, expect, test } from "vitest";
import attention from "../attention.js";
import branchy, { branchyFlags } from "../branchy.js";
import exp from "../exp.js";
import gemm from "../gemm.js";
import gemmDot from "../gemm-dot.js";
import rowSum from "../row-sum.js";
import softmax from "../softmax.js";
import vectorAdd from "../vector-add.js";
import { SMALL } from "./small-benches.js";

const topology = (name: string) => fileURLToPath(new URL(`../../topologies/${name}.yaml`, import.meta.url));
const DEFAULT = topology("default");

interface Run {
  readonly sim: Simulator;
  readonly results: RunResults;
  readonly checks: Readonly<Record<string, BenchCheck>>;
}

async function run(bench: Bench, params: Record<string, unknown>, file = DEFAULT): Promise<Run> {
  const sim = await loadSimulator(file);
  const parsed = bench.params.parse(params) as Record<string, unknown>;
  const outcome = await bench.run(sim, parsed as never);
  return { sim, results: sim.results(bench.name, parsed), checks: outcome?.check ?? {} };
}

/** The row of one component in the results (busy time, ops, flops). */
function component(results: RunResults, id: string) {
  const row = results.components.find((c) => c.id === id);
  if (row === undefined) throw new Error(`${id} did not service anything`);
  return row;
}

/** Busy times are sums of simulated-time differences: equal up to float rounding. */
function expectNs(actual: number, expected: number): void {
  expect(actual).toBeCloseTo(expected, 6);
}

function kindOps(results: RunResults, kind: string): number {
  return results.byKind.find((k) => k.kind === kind)?.ops ?? 0;
}

const ONE_PE = { sips: 1, cubes: 1, pes: 1 };
const PE0 = "sip0.cube0.pe0";

describe("every bench on default.yaml (small params)", () => {
  test.each(SMALL.map(([bench, params, rows]) => [bench.name, bench, params, rows] as const))(
    "%s completes on all 16 PEs, no faster than the roofline, with checks covering its output",
    async (_name, bench, params, rows) => {
      const { results, checks } = await run(bench, params);
      expect(results.launches).toHaveLength(1);
      expect(results.launches[0]?.pes).toBe(16);
      expect(results.rooflineNs).toBeGreaterThan(0);
      expect(results.simTimeNs).toBeGreaterThanOrEqual(results.rooflineNs);
      // The kernel alone: its launch is no faster than the roofline of its own work.
      const launch = results.launches[0];
      expect(launch?.rooflineNs).toBeGreaterThan(0);
      expect((launch?.endNs ?? 0) - (launch?.startNs ?? 0)).toBeGreaterThanOrEqual(
        launch?.rooflineNs ?? Infinity,
      );
      // One check per cube, together covering every row of the output exactly once.
      const entries = Object.entries(checks);
      expect(entries.map(([name]) => name.replace(/^\w+\./, "")).sort()).toEqual([
        "sip0.cube0",
        "sip0.cube1",
      ]);
      expect(entries.reduce((sum, [, check]) => sum + (check.actual.shape[0] as number), 0)).toBe(rows);
      for (const [, check] of entries) {
        const reference = await check.reference();
        expect(reference.shape).toEqual(check.actual.shape);
        expect(reference.dtype).toBe(check.actual.dtype);
      }
    },
  );

  test.each(["f32", "bf16"])("every bench runs in %s with references of that dtype", async (dtype) => {
    for (const [bench, params] of SMALL) {
      const { results, checks } = await run(bench, { ...params, dtype });
      expect(results.simTimeNs).toBeGreaterThanOrEqual(results.rooflineNs);
      for (const check of Object.values(checks)) {
        expect(check.actual.dtype).toBe(dtype);
        expect((await check.reference()).dtype).toBe(dtype);
      }
    }
  });

  test("only branchy is runner-only", () => {
    expect(SMALL.filter(([bench]) => bench.runnerOnly === true).map(([bench]) => bench.name)).toEqual([
      "branchy",
    ]);
  });

  test("a grid of 256 PEs over 4 SIPs (ref-4sip.yaml) splits the rows over all 16 cubes", async () => {
    const { results, checks } = await run(gemm, { M: 300, N: 32, K: 32 }, topology("ref-4sip"));
    expect(results.launches[0]?.pes).toBe(256);
    expect(results.work.gemmFlops).toBe(2 * 300 * 32 * 32);
    expect(Object.keys(checks)).toHaveLength(16);
    expect(checks["C.sip3.cube3"]?.actual.placement).toEqual({ sip: 3, cube: 3, space: "hbm" });
    expect(Object.values(checks).reduce((sum, check) => sum + (check.actual.shape[0] as number), 0)).toBe(
      300,
    );
  }, 60_000); // 16 stacks of hbm_ctrl_v2 (ref-4sip, issue 37): seconds on a loaded 2-core machine
});

describe("gemm (composite)", () => {
  test.each([
    [100, 64, 96],
    [5, 48, 40],
    [1024, 1024, 1024],
  ])("PE_GEMM does exactly 2 M N K flops for M=%i N=%i K=%i over 16 PEs", async (M, N, K) => {
    const { results } = await run(gemm, { M, N, K });
    expect(results.work.gemmFlops).toBe(2 * M * N * K);
  });

  test("with fewer rows than PEs some PEs get none: M=5 over 2 cubes of 8 PEs uses 5 PE_GEMMs", async () => {
    const { results, checks } = await run(gemm, { M: 5, N: 48, K: 40 });
    expect(results.components.filter((c) => c.kind === "pe_gemm")).toHaveLength(5);
    expect(checks["C.sip0.cube0"]?.actual.shape).toEqual([3, 48]);
    expect(checks["C.sip0.cube1"]?.actual.shape).toEqual([2, 48]);
  });

  test("one PE, one 128^3 f16 tile: PE_GEMM busy 4 x 4 x 128 + 8 = 2056 ns", async () => {
    const { results } = await run(gemm, { M: 128, N: 128, K: 128, ...ONE_PE });
    const pe = component(results, `${PE0}.pe_gemm`);
    expectNs(pe.busyNs, 2056);
    expect(pe.ops).toBe(1);
    expect(pe.flops).toBe(2 * 128 ** 3);
  });

  test("one PE, one 128^3 f16 tile end to end: the launch takes 3471.24 ns", async () => {
    // docs/latency-model.md section 7, "one composite GEMM tile end to end", ends at 3400.11 ns
    // after the PE starts (the fill of A and B writes its 65536 B to PE_TCM, 1 + 128 ns, before
    // FETCH: +129; the drain reads C from PE_TCM for 65 ns: +65); here B has its own 2 MiB page
    // (every allocation is page-aligned), so its translation is a TLB miss (50 ns) rather than a
    // hit (1 ns): +49 -> 3449.11 ns.
    // Launch (section 6, one PE of cube 0): host -> IO_CPU 64 B / 64 GB/s = 1; IO_CPU dispatch 10
    // + 0.05 + 64 / 128 = 10.55; M_CPU dispatch 5 + m_cpu -> r0c0 -> pe_cpu 1.015 + 64 / 64 = 1.
    // Completion: pe_done back 1.015 + 1, cube_done 0.05 + 0.5, the notice to the host 1.
    const { results } = await run(gemm, { M: 128, N: 128, K: 128, ...ONE_PE });
    const launch = results.launches[0];
    const start = 1 + 10.55 + 5 + 1.015 + 1;
    const done = 2.015 + 0.55 + 1;
    expect((launch?.endNs ?? 0) - (launch?.startNs ?? 0)).toBeCloseTo(start + 3449.11 + done, 6);
    // Stage by stage: 3 TLB misses; DMA = (50 + 50 + 554.06 read + 129 until B's fill is in
    // PE_TCM) + (50 + 65 reading C from PE_TCM + 299.05 write), the fabric parts of the worked
    // example; FETCH 129 + STORE 65 on PE_FETCH_STORE; PE_TCM also takes the fill (129) and the
    // drain (65).
    expectNs(component(results, `${PE0}.pe_mmu`).busyNs, 150);
    expectNs(component(results, `${PE0}.pe_dma`).busyNs, 50 + 50 + 554.06 + 129 + 50 + 65 + 299.05);
    expectNs(component(results, `${PE0}.pe_fetch_store`).busyNs, 129 + 65);
    expectNs(component(results, `${PE0}.pe_tcm`).busyNs, 129 + 129 + 65 + 65);
  });

  test("one PE, 256^3 in default 128^3 tiles: 8 tiles of 2056 ns", async () => {
    const { results } = await run(gemm, { M: 256, N: 256, K: 256, ...ONE_PE });
    const pe = component(results, `${PE0}.pe_gemm`);
    expect(pe.ops).toBe(8);
    expectNs(pe.busyNs, 8 * 2056);
  });

  test("the tile param sets the composite tile: 128^3 in 64^3 tiles is 8 x (2 x 2 x 64 + 8) ns", async () => {
    const { results } = await run(gemm, { M: 128, N: 128, K: 128, tile: [64, 64, 64], ...ONE_PE });
    const pe = component(results, `${PE0}.pe_gemm`);
    expect(pe.ops).toBe(8);
    expectNs(pe.busyNs, 8 * 264);
  });

  test("f32 tiles take dtype_cycles 4: 4 x 4 x 128 x 4 + 8 = 8200 ns", async () => {
    const { results } = await run(gemm, { M: 128, N: 128, K: 128, dtype: "f32", ...ONE_PE });
    expectNs(component(results, `${PE0}.pe_gemm`).busyNs, 8200);
  });

  test("on ref-cube.yaml (pe_gemm_v2, os, 32 x 32) one 128^3 f16 tile takes 4 x 4 x (128 + 32 + 32 - 2) = 3040 ns", async () => {
    const { results } = await run(gemm, { M: 128, N: 128, K: 128, ...ONE_PE }, topology("ref-cube"));
    const pe = component(results, `${PE0}.pe_gemm`);
    expect(pe.impl).toBe("pe_gemm_v2");
    expectNs(pe.busyNs, 3040);
    // The array is busy with useful MACs 128^3 / (3040 x 32 x 32) of the time it computes
    // (pe_gemm_v1 on default.yaml: 128^3 / (2056 x 32 x 32) = 99.6%).
    expect(results.achieved.gemmArrayUtilisation).toBeCloseTo(128 ** 3 / (3040 * 32 * 32), 12);
    const v1 = await run(gemm, { M: 128, N: 128, K: 128, ...ONE_PE });
    expect(v1.results.achieved.gemmArrayUtilisation).toBeCloseTo(128 ** 3 / (2056 * 32 * 32), 12);
  });
});

describe("gemm-dot (explicit tiles)", () => {
  test("a single 40 x 50 x 24 f16 tile: PE_GEMM busy ceil(40/32) x ceil(50/32) x 24 + 8 = 104 ns", async () => {
    const { results } = await run(gemmDot, { M: 40, N: 50, K: 24, tm: 64, tn: 64, tk: 64, ...ONE_PE });
    const pe = component(results, `${PE0}.pe_gemm`);
    expectNs(pe.busyNs, 104);
    expect(pe.ops).toBe(1);
    // The f32 accumulator is cast to f16 once: 4 + ceil(2000 / 64) = 36 ns of PE_MATH.
    const math = component(results, `${PE0}.pe_math`);
    expect(math.ops).toBe(1);
    expectNs(math.busyNs, 36);
  });

  test("in f32 the tile takes 4 cycles per step (2 x 2 x 24 x 4 + 8 = 392 ns) and needs no cast", async () => {
    const { results } = await run(gemmDot, {
      M: 40,
      N: 50,
      K: 24,
      tm: 64,
      tn: 64,
      tk: 64,
      dtype: "f32",
      ...ONE_PE,
    });
    expectNs(component(results, `${PE0}.pe_gemm`).busyNs, 392);
    expect(kindOps(results, "pe_math")).toBe(0);
  });

  test("K steps accumulate: K=96 in steps of 32 is 3 dots of 2 x 2 x 32 + 8 = 136 ns", async () => {
    const { results } = await run(gemmDot, { M: 64, N: 64, K: 96, tm: 64, tn: 64, tk: 32, ...ONE_PE });
    const pe = component(results, `${PE0}.pe_gemm`);
    expect(pe.ops).toBe(3);
    expectNs(pe.busyNs, 3 * 136);
  });

  test.each([
    [100, 80, 96, 32, 32, 32],
    [70, 33, 50, 16, 32, 24],
  ])(
    "PE_GEMM does exactly 2 M N K flops with edge tiles (M=%i N=%i K=%i, tiles %i/%i/%i)",
    async (M, N, K, tm, tn, tk) => {
      const { results } = await run(gemmDot, { M, N, K, tm, tn, tk });
      expect(results.work.gemmFlops).toBe(2 * M * N * K);
      // One tl.dot per (output tile, K step).
      const cubeRows = [Math.ceil(Math.ceil(M / tm) / 2) * tm, M - Math.ceil(Math.ceil(M / tm) / 2) * tm];
      const tiles = cubeRows.reduce((sum, rows) => sum + Math.ceil(rows / tm), 0) * Math.ceil(N / tn);
      expect(kindOps(results, "pe_gemm")).toBe(tiles * Math.ceil(K / tk));
    },
  );
});

describe("PE_MATH time of the elementwise and row benches on one PE", () => {
  test("vector-add: one add of 1000 elements is 4 + ceil(1000 / 64) = 20 ns", async () => {
    const { results } = await run(vectorAdd, { n: 1000, chunk: 1000, ...ONE_PE });
    const math = component(results, `${PE0}.pe_math`);
    expect(math.ops).toBe(1);
    expectNs(math.busyNs, 20);
    expect(results.work.mathFlops).toBe(1000);
  });

  test("vector-add in chunks of 300: 3 x (4 + 5) + (4 + 2) = 33 ns", async () => {
    const { results } = await run(vectorAdd, { n: 1000, chunk: 300, ...ONE_PE });
    const math = component(results, `${PE0}.pe_math`);
    expect(math.ops).toBe(4);
    expectNs(math.busyNs, 33);
  });

  test("exp of 1000 elements is 4 + 16 x 4 = 68 ns", async () => {
    const { results } = await run(exp, { n: 1000, chunk: 1000, ...ONE_PE });
    expectNs(component(results, `${PE0}.pe_math`).busyNs, 68);
  });

  test("row-sum of [8, 100]: 4 + ceil(800 / 64) + 8 rows x ceil(log2 64) = 65 ns", async () => {
    const { results } = await run(rowSum, { rows: 8, cols: 100, blockRows: 8, ...ONE_PE });
    expectNs(component(results, `${PE0}.pe_math`).busyNs, 65);
  });

  test("softmax of [4, 256]: 4 + 16 x 11 + 4 rows x 6 x 2 = 228 ns", async () => {
    const { results } = await run(softmax, { rows: 4, cols: 256, blockRows: 4, ...ONE_PE });
    expectNs(component(results, `${PE0}.pe_math`).busyNs, 228);
  });

  test("attention, one block of 64 x 64, D 32: GEMM 2 x 136 ns, MATH mul + softmax + 2 casts = 1648 ns", async () => {
    const { results } = await run(attention, { S: 64, D: 32, block: 64, ...ONE_PE });
    // Q K^T: ceil(64/32) x ceil(64/32) x 32 + 8; P V: ceil(64/32) x ceil(32/32) x 64 + 8.
    const gemmRow = component(results, `${PE0}.pe_gemm`);
    expect(gemmRow.ops).toBe(2);
    expectNs(gemmRow.busyNs, 136 + 136);
    // mul 4 + 64; softmax 4 + 64 x 11 + 64 x 6 x 2; cast P 4 + 64; cast O 4 + 32.
    const math = component(results, `${PE0}.pe_math`);
    expect(math.ops).toBe(4);
    expectNs(math.busyNs, 68 + 1476 + 68 + 36);
  });
});

describe("branchy", () => {
  const params = { rows: 256, cols: 32, tileRows: 8 };
  const tiles = 32;

  test("each positive flag costs one PE_MATH exp; the others only copy", async () => {
    for (const seed of [1, 2, 3]) {
      const flags = branchyFlags(tiles, seed + 1, 0.5).toFloat64Array();
      const positive = flags.filter((flag) => flag > 0).length;
      const { results } = await run(branchy, { ...params, seed });
      expect(kindOps(results, "pe_math")).toBe(positive);
      expect(results.work.mathFlops).toBe(positive * 8 * 32);
    }
  });

  test("all flags 0: no PE_MATH at all, and the output is the input copied", async () => {
    const { sim, results, checks } = await run(branchy, { ...params, probability: 0 });
    expect(kindOps(results, "pe_math")).toBe(0);
    for (const check of Object.values(checks)) {
      // Copies move real bytes in phase 1, so the output already holds the reference's values.
      const actual = await sim.fromDevice(check.actual);
      expect(actual.equals(await check.reference())).toBe(true);
    }
  });

  test("all flags 1: one exp per tile", async () => {
    const { results } = await run(branchy, { ...params, probability: 1 });
    expect(kindOps(results, "pe_math")).toBe(tiles);
  });

  test("different seeds draw different flags (and so take different paths)", () => {
    const a = branchyFlags(tiles, 2, 0.5);
    const b = branchyFlags(tiles, 3, 0.5);
    expect(a.equals(b)).toBe(false);
    expect(branchyFlags(tiles, 2, 0.5).equals(a)).toBe(true);
  });

  test.each([
    ["branchy", branchy, params],
    ["gemm", gemm, { M: 100, N: 64, K: 96 }],
  ] as const)(
    "%s: the same seed gives identical results JSON in two fresh simulators",
    async (_name, bench, p) => {
      const first = await run(bench, p);
      const second = await run(bench, p);
      expect(JSON.stringify(second.results)).toBe(JSON.stringify(first.results));
    },
  );
});
