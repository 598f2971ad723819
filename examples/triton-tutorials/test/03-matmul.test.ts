import { fileURLToPath } from "node:url";
import { TraceRecorder } from "@kb/components";
import { MemorySink, OpLogger } from "@kb/oplog";
import { PhaseComparer, replay, verifyOutcome } from "@kb/runtime";
import { loadSimulator } from "@kb/runtime/node";
import { describe, expect, test } from "vitest";
import matmul from "../03-matmul.js";

const DEFAULT = fileURLToPath(new URL("../../../topologies/default.yaml", import.meta.url));

/**
 * The tutorial through the runtime API: phase 1 with an op log and the loads kept, then phase 2
 * once, checking C against the host reference and every observed load against phase 2's copy.
 */
async function run(params: Record<string, unknown>, tracer: TraceRecorder | null = null) {
  const sink = new MemorySink();
  const sim = await loadSimulator(DEFAULT, {
    opLogger: new OpLogger(sink),
    checkPhases: true,
    tracer,
  });
  const parsed = matmul.params.parse(params);
  const outcome = await matmul.run(sim, parsed as never);
  const comparer = new PhaseComparer(sim.loadObservations, sink.records);
  const phase2 = replay(sim.hostWrites, sink.records, { onExecuted: comparer.onExecuted });
  const report = await verifyOutcome(outcome ?? undefined, phase2.store);
  const results = sim.results(matmul.name, parsed);
  const launch = results.launches[0];
  return {
    report,
    phases: comparer.result(),
    launchNs: launch === undefined ? Number.NaN : launch.endNs - launch.startNs,
  };
}

// Each case runs both phases; on a loaded 2-core machine that can take a few seconds.
describe("tutorial 03: matmul with a K loop of tl.dot and STAGES of async loads", { timeout: 30_000 }, () => {
  // 200 x 136 x 328 in 64-blocks: 4 x 3 = 12 programs on the 16 PEs, every edge partial (the
  // last row block 8 rows, the last column block 8 columns, the last K step 8 deep).
  test.each([
    ["f32", 1],
    ["f16", 2],
    ["bf16", 3],
  ])(
    "%s, STAGES %i: C PASSes phase 2, and phase 1 observed every load as phase 2 copied it",
    async (dtype, STAGES) => {
      const { report, phases } = await run({
        M: 200,
        N: 136,
        K: 328,
        BLOCK_M: 64,
        BLOCK_N: 64,
        BLOCK_K: 64,
        STAGES,
        dtype,
      });
      expect(report.outputs.map((output) => [output.name, output.pass, output.mismatches])).toEqual([
        ["C", true, 0],
      ]);
      // 12 programs x 6 K steps x (a block of A + a block of B).
      expect(phases).toMatchObject({ observed: 144, compared: 144, differing: 0, unmatched: 0 });
    },
  );

  test("two stages beat one when the loads are not hidden: each K step's loads run under the previous dot", async () => {
    // One program on one PE (default.yaml: pe_gemm_v1 32 x 32 at 1 GHz, dispatch_ns 2): C is
    // 128 x 128, K = 512 in 4 steps of 128. A step's dot is D = 2 (dispatch) + 4 x 4 x 128 + 8 =
    // 2058 ns; its two loads (A's strided block, B's contiguous one, 32 KiB each) take L = 2 + 2
    // (dispatch) + their two PE_DMA stages, read off the trace of the one-stage run (step 1's;
    // step 0's are longer by their TLB misses, steps 1-3 are alike).
    const one = (STAGES: number, tracer: TraceRecorder | null = null) =>
      run({ M: 128, N: 128, K: 512, STAGES, cubes: 1, pes: 1 }, tracer);
    const tracer = new TraceRecorder();
    const t1 = await one(1, tracer);
    const stages: number[] = []; // [A0, B0, A1, B1, ...] on the PE_DMA's read lane
    for (const event of tracer.events) {
      if (event.component !== "sip0.cube0.pe0.pe_dma#0") continue;
      if (event.type === "engine_start") stages.push(-event.tNs);
      else if (event.type === "engine_complete") (stages[stages.length - 1] as number) += event.tNs;
    }
    expect(stages).toHaveLength(8);
    const L = 4 + (stages[2] as number) + (stages[3] as number);
    expect(4 + (stages[4] as number) + (stages[5] as number)).toBeCloseTo(L, 9);
    expect(L).toBeGreaterThan(500); // about 670 ns: the loads are a quarter of a step, not hidden
    // 1 stage: each step runs load A, load B, dot one after the other: T1 = T0 + 4 (L + D).
    // 2 stages: step s + 1's loads are issued (2 ns each on the PE_CPU) before step s's dot and
    // run under it (L < D): only step 0's loads show, 2 ns shorter than in T1 because B0's
    // dispatch overlaps A0's copy. Steps 1 and 2 add the 4 ns of dispatching the next step's
    // loads (step 0 dispatches A1, B1 while A0 is still copying, so its 4 ns do not show):
    // T2 = T0 + (L - 2) + 4 D + 2 x 4, so T1 - T2 = 3 L + 2 - 8 = 3 L - 6.
    const [t2, t3] = [await one(2), await one(3)];
    expect([t1.report.pass, t2.report.pass, t3.report.pass]).toEqual([true, true, true]);
    expect(t1.launchNs - t2.launchNs).toBeCloseTo(3 * L - 6, 6);
    // A third stage has nothing left to hide here (the loads already finish under each dot); it
    // moves step 2's dispatches under A0's copy too (the prologue issues steps 0 and 1, step 0
    // issues step 2): only step 1's 4 ns of dispatching step 3 show, T3 = T2 - 4.
    expect(t2.launchNs - t3.launchNs).toBeCloseTo(4, 6);
  });
});
