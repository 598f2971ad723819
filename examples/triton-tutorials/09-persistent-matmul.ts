import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { LoadFuture, TensorHandle, TL } from "@kb/tl";
import * as z from "zod";
import { commonParams } from "../../benches/lib/params.js";
import { matmul } from "../../benches/lib/reference.js";
import { matmulInputs, matmulShapeParams } from "./03-matmul.js";

// Triton's tutorial 09 (persistent matmul), its `matmul_kernel_persistent` written with @kb/tl: a
// fixed grid of NUM_SMS programs (one per PE) each walking the tiles of C
// `for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True)`, the tile's block
// coordinates from tile_id by the GROUP_SIZE_M swizzle (`_compute_pid`), and a K loop of tl.dot
// accumulating in f32. `flatten=True` makes the tile loop and the K loop one sequence of steps
// that Triton's compiler pipelines across tiles; here the pipeline is written out with
// tl.loadAsync (STAGES buffers per operand): the first K steps of a program's next tile load
// while the current tile's last dots and its store run.

/** The block sizes, swizzle, grid and pipeline depth of {@link matmulKernelPersistent}. */
export interface PersistentMatmulConfig {
  readonly BLOCK_SIZE_M: number;
  readonly BLOCK_SIZE_N: number;
  readonly BLOCK_SIZE_K: number;
  /** Row blocks of C per group: tiles walk a group's column of blocks before the next column. */
  readonly GROUP_SIZE_M: number;
  /** Programs of the launch (Triton's number of SMs): program `p` takes tiles `p, p + NUM_SMS, ...`. */
  readonly NUM_SMS: number;
  /** K steps whose blocks are loaded or on their way at once (Triton's `num_stages`). */
  readonly STAGES: number;
}

/**
 * Triton's `_compute_pid`: the row and column block `[pid_m, pid_n]` of tile `tile_id`, grouped
 * by `GROUP_SIZE_M` row blocks so that consecutive tiles share their blocks of B (the column) and
 * a group's rows of A (an L2-friendly order on a GPU).
 */
export function computePid(
  tile_id: number,
  num_pid_in_group: number,
  num_pid_m: number,
  GROUP_SIZE_M: number,
): [number, number] {
  const group_id = Math.floor(tile_id / num_pid_in_group);
  const first_pid_m = group_id * GROUP_SIZE_M;
  const group_size_m = Math.min(num_pid_m - first_pid_m, GROUP_SIZE_M);
  const pid_m = first_pid_m + (tile_id % group_size_m);
  const pid_n = Math.floor((tile_id % num_pid_in_group) / group_size_m);
  return [pid_m, pid_n];
}

/** One step of a program's flattened loop: K step `ki` of tile `tile_id`. */
interface Step {
  readonly tile_id: number;
  readonly ki: number;
}

/**
 * `C = A @ B` for A `[M, K]`, B `[K, N]`, C `[M, N]` row-major in device memory: program
 * `start_pid` computes tiles `start_pid, start_pid + NUM_SMS, ...` of the `cdiv(M, BLOCK_SIZE_M)
 * x cdiv(N, BLOCK_SIZE_N)` blocks of C, in GROUP_SIZE_M order, each a K loop of BLOCK_SIZE_K
 * steps. Ragged edges are masked as in Triton: the rows past M, the columns past N and the K past
 * K of the last blocks are loaded as 0 and never move, the store skips the rows and columns past
 * the edge.
 */
export async function matmulKernelPersistent(
  tl: TL,
  a: DeviceTensor,
  b: DeviceTensor,
  c: DeviceTensor,
  M: number,
  N: number,
  K: number,
  config: PersistentMatmulConfig,
): Promise<void> {
  const { BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, GROUP_SIZE_M, NUM_SMS, STAGES } = config;
  const start_pid = tl.programId(0);
  const num_pid_m = tl.cdiv(M, BLOCK_SIZE_M);
  const num_pid_n = tl.cdiv(N, BLOCK_SIZE_N);
  const k_tiles = tl.cdiv(K, BLOCK_SIZE_K);
  const num_tiles = num_pid_m * num_pid_n;
  const num_pid_in_group = GROUP_SIZE_M * num_pid_n;

  // tl.range(start_pid, num_tiles, NUM_SMS, flatten=True) with the K loop inside it: one sequence.
  const steps: Step[] = [];
  for (let tile_id = start_pid; tile_id < num_tiles; tile_id += NUM_SMS) {
    for (let ki = 0; ki < k_tiles; ki++) steps.push({ tile_id, ki });
  }
  if (steps.length === 0) return;

  // Edge masks, made once before the loop (Triton computes them in registers every step): a block
  // whose rows or columns run past the matrix gets `(rows[:, None] < R) & (cols[None, :] < C)`;
  // a block inside it needs none (a mask on everywhere is no mask). Keyed by the valid extent.
  const masks = new Map<string, TensorHandle>();
  const edgeMask = async (rows: number, cols: number, validRows: number, validCols: number) => {
    if (validRows >= rows && validCols >= cols) return undefined;
    const key = `${rows}x${cols}:${validRows}x${validCols}`;
    const known = masks.get(key);
    if (known !== undefined) return known;
    const rowMask = await tl.lt(tl.expandDims(tl.arange(0, rows), 1), validRows);
    const colMask = await tl.lt(tl.expandDims(tl.arange(0, cols), 0), validCols);
    const mask = await tl.and(rowMask, colMask);
    masks.set(key, mask);
    return mask;
  };
  const blockOf = (step: Step) => {
    const [pid_m, pid_n] = computePid(step.tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M);
    return { start_m: pid_m * BLOCK_SIZE_M, start_n: pid_n * BLOCK_SIZE_N, k0: step.ki * BLOCK_SIZE_K };
  };
  const aMask = ({ start_m, k0 }: ReturnType<typeof blockOf>) =>
    edgeMask(BLOCK_SIZE_M, BLOCK_SIZE_K, M - start_m, K - k0);
  const bMask = ({ start_n, k0 }: ReturnType<typeof blockOf>) =>
    edgeMask(BLOCK_SIZE_K, BLOCK_SIZE_N, K - k0, N - start_n);
  const cMask = ({ start_m, start_n }: ReturnType<typeof blockOf>) =>
    edgeMask(BLOCK_SIZE_M, BLOCK_SIZE_N, M - start_m, N - start_n);
  for (const step of steps) {
    const block = blockOf(step);
    await aMask(block);
    await bMask(block);
    if (step.ki === k_tiles - 1) await cMask(block);
  }

  // STAGES buffers per operand, used round robin: step s lands in buffer s % STAGES; the load of
  // step s + STAGES - 1 goes into the buffer step s - 1 used, whose dot has completed.
  const aBuffers = Array.from({ length: STAGES }, () => tl.empty([BLOCK_SIZE_M, BLOCK_SIZE_K], a.dtype));
  const bBuffers = Array.from({ length: STAGES }, () => tl.empty([BLOCK_SIZE_K, BLOCK_SIZE_N], b.dtype));
  const issue = async (s: number): Promise<{ a: LoadFuture; b: LoadFuture }> => {
    const block = blockOf(steps[s] as Step);
    const { start_m, start_n, k0 } = block;
    const slot = s % STAGES;
    const aOut = tl.view(aBuffers[slot] as TensorHandle, 0, [BLOCK_SIZE_M, BLOCK_SIZE_K]);
    const bOut = tl.view(bBuffers[slot] as TensorHandle, 0, [BLOCK_SIZE_K, BLOCK_SIZE_N]);
    const am = await aMask(block);
    const bm = await bMask(block);
    return {
      a: await tl.loadAsync(a.at(start_m, k0), [BLOCK_SIZE_M, BLOCK_SIZE_K], a.dtype, {
        stride: K,
        out: aOut,
        ...(am === undefined ? {} : { mask: am, other: 0 }),
      }),
      b: await tl.loadAsync(b.at(k0, start_n), [BLOCK_SIZE_K, BLOCK_SIZE_N], b.dtype, {
        stride: N,
        out: bOut,
        ...(bm === undefined ? {} : { mask: bm, other: 0 }),
      }),
    };
  };

  const inFlight: { a: LoadFuture; b: LoadFuture }[] = [];
  for (let s = 0; s < Math.min(STAGES - 1, steps.length); s++) inFlight.push(await issue(s));
  let mark = 0;
  let accumulator: TensorHandle | null = null;
  for (let s = 0; s < steps.length; s++) {
    const step = steps[s] as Step;
    if (step.ki === 0) {
      mark = tl.scratchMark(); // the tile's accumulator and its cast: freed after its store
      accumulator = tl.zeros([BLOCK_SIZE_M, BLOCK_SIZE_N], "f32");
    }
    const ahead = s + STAGES - 1;
    if (ahead < steps.length) inFlight.push(await issue(ahead));
    const loads = inFlight.shift() as { a: LoadFuture; b: LoadFuture };
    accumulator = await tl.dot(await tl.wait(loads.a), await tl.wait(loads.b), accumulator as TensorHandle);
    if (step.ki === k_tiles - 1) {
      // The tile's epilogue: c = accumulator.to(c's dtype), stored with c_mask at its edges.
      const block = blockOf(step);
      const out = c.dtype === "f32" ? accumulator : await tl.cast(accumulator, c.dtype);
      const mask = await cMask(block);
      await tl.store(c.at(block.start_m, block.start_n), out, {
        stride: N,
        ...(mask === undefined ? {} : { mask }),
      });
      tl.scratchRelease(mark);
    }
  }
}

/** Triton's launch: `min(NUM_SMS, num_tiles)` programs, each walking its tiles. */
export function persistentPrograms(
  p: { M: number; N: number; BLOCK_SIZE_M: number; BLOCK_SIZE_N: number },
  NUM_SMS: number,
): number {
  return Math.min(NUM_SMS, Math.ceil(p.M / p.BLOCK_SIZE_M) * Math.ceil(p.N / p.BLOCK_SIZE_N));
}

/**
 * Tutorial 09: `C = A @ B` by a persistent kernel, NUM_SMS programs (default: the grid's PEs)
 * looping over the tiles of C in GROUP_SIZE_M order, with A, B and C in the HBM of the grid's first
 * cube. `NUM_SMS` at least the number of tiles gives one program per tile, Triton's non-persistent
 * `matmul_kernel` with the same swizzle.
 */
export default defineBench({
  name: "triton-09-persistent-matmul",
  description:
    "Triton tutorial 09: C = A @ B by a persistent kernel, min(NUM_SMS, tiles) programs (NUM_SMS = the grid's PEs by default) each looping over tiles start_pid, start_pid + NUM_SMS, ... of C in GROUP_SIZE_M order, a K loop of tl.dot in f32 pipelined across tiles with STAGES of tl.loadAsync, ragged edges masked (A, B, C in the HBM of the grid's first cube).",
  params: z.object({
    ...matmulShapeParams,
    BLOCK_SIZE_M: z.number().int().positive().default(128).describe("Rows of a tile of C."),
    BLOCK_SIZE_N: z.number().int().positive().default(128).describe("Columns of a tile of C."),
    BLOCK_SIZE_K: z.number().int().positive().default(128).describe("Columns of A and rows of B per K step."),
    GROUP_SIZE_M: z.number().int().positive().default(8).describe("Row blocks per group of the tile order."),
    NUM_SMS: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("Programs of the persistent launch (Triton's SM count; default: the grid's PEs)."),
    STAGES: z
      .number()
      .int()
      .min(1)
      .max(8)
      .default(3)
      .describe("K steps loaded or in flight at once, across tiles (Triton's num_stages)."),
    ...commonParams,
  }),
  async run(sim, p) {
    const { grid, a, b, A, B, C } = await matmulInputs(sim, p);
    const NUM_SMS = persistentPrograms(p, p.NUM_SMS ?? grid.size);
    const config: PersistentMatmulConfig = {
      BLOCK_SIZE_M: p.BLOCK_SIZE_M,
      BLOCK_SIZE_N: p.BLOCK_SIZE_N,
      BLOCK_SIZE_K: p.BLOCK_SIZE_K,
      GROUP_SIZE_M: p.GROUP_SIZE_M,
      NUM_SMS,
      STAGES: p.STAGES,
    };
    await sim.launch(matmulKernelPersistent, {
      grid,
      programs: [NUM_SMS],
      args: [A, B, C, p.M, p.N, p.K, config],
      name: "matmul_kernel_persistent",
    });
    return { check: { C: { actual: C, reference: (context) => matmul(a, b, p.dtype, context?.progress) } } };
  },
});
