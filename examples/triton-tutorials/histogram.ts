import { type DeviceTensor, defineBench } from "@kb/runtime";
import { type Dtype, Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { commonParams, firstCube, gridOf } from "../../benches/lib/params.js";

// A histogram with atomics as a Triton user writes it (not one of Triton's numbered tutorials):
// program `pid` loads BLOCK values, clamps them to bins, and adds 1 to `counts` and its weights
// to `sums` at those bins with tl.atomicAdd. Several programs (on several PEs) add into the same
// bins at once: each atomic is a read-modify-write at the memory, serialised per address, so no
// update is lost, and phase 2 replays them in the order the simulation applied them
// (`--check-phases` compares the old values each atomic returned).
//
//   offs = pid * BLOCK + tl.arange(0, BLOCK); mask = offs < n
//   x = tl.load(x_ptr + offs, mask=mask, other=0)
//   bins = tl.minimum(tl.maximum(x, 0), NUM_BINS - 1)
//   tl.atomic_add(counts_ptr + bins, 1, mask=mask)
//   w = tl.load(w_ptr + offs, mask=mask, other=0)
//   tl.atomic_add(sums_ptr + bins, w, mask=mask)

/** `counts[bin(x[i])] += 1` and `sums[bin(x[i])] += w[i]` for the BLOCK elements of program `pid`. */
export async function histogramKernel(
  tl: TL,
  x_ptr: DeviceTensor,
  w_ptr: DeviceTensor,
  counts: DeviceTensor,
  sums: DeviceTensor,
  n: number,
  NUM_BINS: number,
  BLOCK: number,
): Promise<void> {
  const pid = tl.programId(0);
  const offs = await tl.add(tl.arange(0, BLOCK), pid * BLOCK);
  const mask = await tl.lt(offs, n);
  const x = await tl.load(x_ptr, [BLOCK], "i32", { offsets: offs, mask, other: 0 });
  const bins = await tl.clamp(x, 0, NUM_BINS - 1);
  await tl.atomicAdd(counts, 1, { offsets: bins, mask });
  const w = await tl.load(w_ptr, [BLOCK], w_ptr.dtype, { offsets: offs, mask, other: 0 });
  await tl.atomicAdd(sums, w, { offsets: bins, mask });
}

/** `n` values in `[-2, NUM_BINS + 2)` (a few out of range, clamped into the end bins), from `seed`. */
export function histogramValues(n: number, NUM_BINS: number, seed: number): number[] {
  let state = (seed * 2654435761 + 7) >>> 0;
  return Array.from({ length: n }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state % (NUM_BINS + 4)) - 2;
  });
}

/** Weights 0.25, 0.5, 0.75, 1, ...: their sums are exact in f16 and f32, in any order. */
export const histogramWeight = (i: number) => ((i % 4) + 1) / 4;

/** The host reference: the counts and weight sums per clamped bin. */
export function histogramReference(values: readonly number[], NUM_BINS: number) {
  const counts = new Array<number>(NUM_BINS).fill(0);
  const sums = new Array<number>(NUM_BINS).fill(0);
  values.forEach((value, i) => {
    const bin = Math.min(Math.max(value, 0), NUM_BINS - 1);
    counts[bin] = (counts[bin] as number) + 1;
    sums[bin] = (sums[bin] as number) + histogramWeight(i);
  });
  return { counts, sums };
}

/** A histogram by tl.atomicAdd: many programs, on every PE of the grid, adding into shared bins. */
export default defineBench({
  name: "triton-histogram",
  description:
    "A histogram as a Triton user writes it: one program per BLOCK values, the values loaded and clamped to NUM_BINS bins, tl.atomicAdd of 1 into counts and of the weights into sums through the bins as offsets (x, w, counts, sums in the HBM of the grid's first cube).",
  params: z.object({
    n: z.number().int().positive().default(4096).describe("Values counted."),
    NUM_BINS: z.number().int().positive().default(16).describe("Bins of the histogram."),
    BLOCK: z.number().int().positive().default(256).describe("Values per program."),
    ...commonParams,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const grid = gridOf(sim, p);
    const where = firstCube(grid);
    const values = histogramValues(p.n, p.NUM_BINS, p.seed);
    const weights = values.map((_, i) => histogramWeight(i));
    const X = await sim.toDevice(Tensor.fromArray(values, [p.n], "i32"), { ...where, name: "x" });
    const W = await sim.toDevice(Tensor.fromArray(weights, [p.n], dtype), { ...where, name: "w" });
    const counts = await sim.toDevice(Tensor.full([p.NUM_BINS], 0, "i32"), { ...where, name: "counts" });
    const sums = await sim.toDevice(Tensor.full([p.NUM_BINS], 0, dtype), { ...where, name: "sums" });
    await sim.launch(histogramKernel, {
      grid,
      programs: [Math.ceil(p.n / p.BLOCK)],
      args: [X, W, counts, sums, p.n, p.NUM_BINS, p.BLOCK],
      name: "histogram",
    });
    const reference = () => histogramReference(values, p.NUM_BINS);
    return {
      check: {
        counts: {
          actual: counts,
          reference: () => Tensor.fromArray(reference().counts, [p.NUM_BINS], "i32"),
        },
        sums: { actual: sums, reference: () => Tensor.fromArray(reference().sums, [p.NUM_BINS], dtype) },
      },
    };
  },
});
