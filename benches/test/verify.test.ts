import { fileURLToPath } from "node:url";
import { MemorySink, OpLogger } from "@kb/oplog";
import { type Bench, replay, verifyOutcome } from "@kb/runtime";
import { loadSimulator } from "@kb/runtime/node";
import { describe, expect, test } from "vitest";
import attention from "../attention.js";
import branchy from "../branchy.js";
import exp from "../exp.js";
import gemm from "../gemm.js";
import gemmDot from "../gemm-dot.js";
import rowSum from "../row-sum.js";
import softmax from "../softmax.js";
import vectorAdd from "../vector-add.js";

const topology = (name: string) => fileURLToPath(new URL(`../../topologies/${name}.yaml`, import.meta.url));

/** Phase 1 with an op logger, phase 2 replay, verification against the bench's references. */
async function verifyBench(bench: Bench, params: Record<string, unknown>, file: string) {
  const sink = new MemorySink();
  const sim = await loadSimulator(file, { opLogger: new OpLogger(sink) });
  const outcome = await bench.run(sim, bench.params.parse(params) as never);
  const phase2 = replay(sim.hostWrites, sink.records);
  return verifyOutcome(outcome ?? undefined, phase2.store);
}

/** Params big enough for several tiles per PE, edge tiles included, small enough for CI. */
const CASES: readonly (readonly [Bench, Record<string, unknown>])[] = [
  [gemm, { M: 200, N: 160, K: 192 }],
  [gemmDot, { M: 200, N: 96, K: 160, tm: 64, tn: 64, tk: 64 }],
  [vectorAdd, { n: 50_000, chunk: 1024 }],
  [exp, { n: 50_000, chunk: 1024 }],
  [rowSum, { rows: 300, cols: 200, blockRows: 8 }],
  [softmax, { rows: 300, cols: 200, blockRows: 8 }],
  [attention, { S: 128, D: 32, block: 16 }],
  [branchy, { rows: 256, cols: 64, tileRows: 8 }],
];

describe("every bench PASSes phase-2 verification on default.yaml", () => {
  for (const dtype of ["f32", "f16", "bf16"] as const) {
    test.each(CASES.map(([bench, params]) => [bench.name, bench, params] as const))(
      `%s in ${dtype}`,
      async (_name, bench, params) => {
        const report = await verifyBench(bench, { ...params, dtype }, topology("default"));
        for (const output of report.outputs) {
          expect({ name: output.name, pass: output.pass, first: output.firstMismatch }).toEqual({
            name: output.name,
            pass: true,
            first: null,
          });
        }
        expect(report.outputs.length).toBeGreaterThan(0);
        expect(report.pass).toBe(true);
      },
    );
  }
});

// ref-cube runs hbm_ctrl_v2 (issue 37): three dtypes of a bench take seconds each on a loaded 2-core machine.
describe("gemm, softmax and attention PASS on ref-cube.yaml", { timeout: 120_000 }, () => {
  test.each(
    (
      [
        [gemm, { M: 256, N: 256, K: 256 }],
        [softmax, { rows: 512, cols: 256, blockRows: 8 }],
        [attention, { S: 256, D: 64, block: 8 }],
      ] as const
    ).map(([bench, params]) => [bench.name, bench, params] as const),
  )("%s in f32, f16 and bf16", async (_name, bench, params) => {
    for (const dtype of ["f32", "f16", "bf16"]) {
      const report = await verifyBench(bench as Bench, { ...params, dtype }, topology("ref-cube"));
      expect(report.pass).toBe(true);
    }
  });
});
