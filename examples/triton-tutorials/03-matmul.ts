import { type DeviceTensor, defineBench, type Simulator } from "@kb/runtime";
import type { Dtype } from "@kb/tensor";
import type { LoadFuture, TensorHandle, TL } from "@kb/tl";
import * as z from "zod";
import {
  commonParams,
  firstCube,
  type GridParams,
  gemmInputRange,
  gridOf,
} from "../../benches/lib/params.js";
import { matmul } from "../../benches/lib/reference.js";

// Triton's tutorial 03 (matrix multiplication), written with @kb/tl: one program per output
// block of C, a loop over K in BLOCK_K steps that accumulates tl.dot of a block of A and a block
// of B in f32, and with STAGES > 1 a software pipeline of async loads (tl.loadAsync): the blocks
// of step k + STAGES - 1 are on their way while the dot of step k runs.

/** The block sizes and pipeline depth of {@link matmulKernel} (Triton's meta-parameters). */
export interface MatmulConfig {
  readonly BLOCK_M: number;
  readonly BLOCK_N: number;
  readonly BLOCK_K: number;
  /** Steps of K whose blocks are loaded or on their way at once: 1 loads each step when it is needed. */
  readonly STAGES: number;
}

/** The A and B blocks of one K step: loaded (STAGES 1) or on their way (STAGES > 1). */
interface Step {
  readonly a: LoadFuture;
  readonly b: LoadFuture;
}

/**
 * `C = A @ B` for A `[M, K]`, B `[K, N]`, C `[M, N]` row-major in device memory: program `pid`
 * computes the `[BLOCK_M, BLOCK_N]` block of C at row block `pid / cdiv(N, BLOCK_N)`, column
 * block `pid % cdiv(N, BLOCK_N)` (edge blocks are smaller), accumulating in f32 and storing in
 * C's dtype.
 */
export async function matmulKernel(
  tl: TL,
  A: DeviceTensor,
  B: DeviceTensor,
  C: DeviceTensor,
  config: MatmulConfig,
): Promise<void> {
  const { BLOCK_M, BLOCK_N, BLOCK_K, STAGES } = config;
  const [M, K] = A.shape as [number, number];
  const N = B.shape[1] as number;
  const pid = tl.programId(0);
  const blocksN = tl.cdiv(N, BLOCK_N);
  const m0 = Math.floor(pid / blocksN) * BLOCK_M;
  const n0 = (pid % blocksN) * BLOCK_N;
  const m = Math.min(BLOCK_M, M - m0);
  const n = Math.min(BLOCK_N, N - n0);
  const steps = tl.cdiv(K, BLOCK_K);
  const rowsOfK = (step: number) => Math.min(BLOCK_K, K - step * BLOCK_K);
  let acc = tl.zeros([m, n], "f32");

  if (STAGES === 1) {
    for (let step = 0; step < steps; step++) {
      const mark = tl.scratchMark();
      const k0 = step * BLOCK_K;
      const k = rowsOfK(step);
      const a = await tl.load(A.at(m0, k0), [m, k], A.dtype, { stride: K });
      const b = await tl.load(B.at(k0, n0), [k, n], B.dtype, { stride: N });
      acc = await tl.dot(a, b, acc);
      tl.scratchRelease(mark);
    }
  } else {
    // STAGES buffers per operand, used round robin: step s lands in buffer s % STAGES. The load
    // of step s + STAGES - 1 goes into the buffer step s - 1 used, whose dot has completed.
    const aBuffers = Array.from({ length: STAGES }, () => tl.empty([m, BLOCK_K], A.dtype));
    const bBuffers = Array.from({ length: STAGES }, () => tl.empty([BLOCK_K, n], B.dtype));
    const issue = async (step: number): Promise<Step> => {
      const k0 = step * BLOCK_K;
      const k = rowsOfK(step);
      const slot = step % STAGES;
      const aOut = tl.view(aBuffers[slot] as TensorHandle, 0, [m, k]);
      const bOut = tl.view(bBuffers[slot] as TensorHandle, 0, [k, n]);
      const a = await tl.loadAsync(A.at(m0, k0), [m, k], A.dtype, { stride: K, out: aOut });
      const b = await tl.loadAsync(B.at(k0, n0), [k, n], B.dtype, { stride: N, out: bOut });
      return { a, b };
    };
    const inFlight: Step[] = [];
    for (let step = 0; step < Math.min(STAGES - 1, steps); step++) inFlight.push(await issue(step));
    for (let step = 0; step < steps; step++) {
      const ahead = step + STAGES - 1;
      if (ahead < steps) inFlight.push(await issue(ahead));
      const { a, b } = inFlight.shift() as Step;
      acc = await tl.dot(await tl.wait(a), await tl.wait(b), acc);
    }
  }
  const out = C.dtype === "f32" ? acc : await tl.cast(acc, C.dtype);
  await tl.store(C.at(m0, n0), out, { stride: N });
}

/** `M`, `N`, `K` of a matmul bench (03, 09): A `[M, K]`, B `[K, N]`, C `[M, N]`. */
export const matmulShapeParams = {
  M: z.number().int().positive().default(1024).describe("Rows of A and C."),
  N: z.number().int().positive().default(1024).describe("Columns of B and C."),
  K: z.number().int().positive().default(1024).describe("Columns of A, rows of B."),
};

/**
 * A matmul bench's grid and tensors (03, 09): A and B random in +-gemmInputRange(K) (from `seed`,
 * `seed + 1`), copied to the HBM of the grid's first cube, and C empty there.
 */
export async function matmulInputs(
  sim: Simulator,
  p: { M: number; N: number; K: number; dtype: Dtype; seed: number } & GridParams,
) {
  const grid = gridOf(sim, p);
  const where = firstCube(grid);
  const range = gemmInputRange(p.K);
  const a = sim.random([p.M, p.K], p.dtype, { seed: p.seed, low: -range, high: range });
  const b = sim.random([p.K, p.N], p.dtype, { seed: p.seed + 1, low: -range, high: range });
  const A = await sim.toDevice(a, { ...where, name: "A" });
  const B = await sim.toDevice(b, { ...where, name: "B" });
  const C = sim.empty([p.M, p.N], p.dtype, { ...where, name: "C" });
  return { grid, a, b, A, B, C };
}

/**
 * Tutorial 03: `C = A @ B` on a logical grid of `cdiv(M, BLOCK_M) x cdiv(N, BLOCK_N)` programs,
 * with A, B and C in the HBM of the grid's first cube.
 */
export default defineBench({
  name: "triton-03-matmul",
  description:
    "Triton tutorial 03: C = A @ B [M, N], one program per [BLOCK_M, BLOCK_N] block of C on a logical grid, a K loop of BLOCK_K steps accumulating tl.dot in f32, and STAGES > 1 pipelining the block loads with tl.loadAsync (A, B, C in the HBM of the grid's first cube).",
  params: z.object({
    ...matmulShapeParams,
    BLOCK_M: z.number().int().positive().default(128).describe("Rows of a block of C (one program)."),
    BLOCK_N: z.number().int().positive().default(128).describe("Columns of a block of C."),
    BLOCK_K: z.number().int().positive().default(128).describe("Columns of A and rows of B per K step."),
    STAGES: z
      .number()
      .int()
      .min(1)
      .max(8)
      .default(2)
      .describe(
        "K steps loaded or in flight at once: 1 loads each step when needed, 2 double-buffers, 3 triple-buffers.",
      ),
    ...commonParams,
  }),
  async run(sim, p) {
    const { grid, a, b, A, B, C } = await matmulInputs(sim, p);
    const config: MatmulConfig = {
      BLOCK_M: p.BLOCK_M,
      BLOCK_N: p.BLOCK_N,
      BLOCK_K: p.BLOCK_K,
      STAGES: p.STAGES,
    };
    await sim.launch(matmulKernel, {
      grid,
      programs: [Math.ceil(p.M / p.BLOCK_M) * Math.ceil(p.N / p.BLOCK_N)],
      args: [A, B, C, config],
      name: "matmul",
    });
    return { check: { C: { actual: C, reference: (context) => matmul(a, b, p.dtype, context?.progress) } } };
  },
});
