import { type DeviceTensor, defineBench } from "@kb/runtime";
import { type Dtype, Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { commonParams, firstCube, gridOf } from "../../benches/lib/params.js";

// Triton's tutorial 04 (low-memory dropout), written with @kb/tl: `_seeded_dropout`. Instead of
// a stored mask, each program draws its elements' keep decisions with `tl.rand(seed, offsets)`
// (Philox 4x32-10, the same numbers as Triton's for the same seed and offsets), keeps x / (1 - p)
// where the number exceeds p and writes 0 elsewhere. The mask is a function of (seed, offset):
// re-running with the same seed reproduces it, so a backward pass needs only the seed.
//
// Differences from Triton: a load takes a block's base pointer and shape (x.at(block_start),
// [BLOCK_SIZE]) rather than x_ptr + offsets, and tl.where takes tensors for both values (a
// tl.zeros tile for Triton's 0.0).

/**
 * `output = dropout(x)`: program `pid` handles the `BLOCK_SIZE` elements at `pid * BLOCK_SIZE`,
 * masked to those below `n_elements`; element `i` is kept (and scaled by `1 / (1 - p)`) when
 * `tl.rand(seed, i) > p`.
 */
export async function seededDropout(
  tl: TL,
  x: DeviceTensor,
  output: DeviceTensor,
  n_elements: number,
  p: number,
  seed: number,
  BLOCK_SIZE: number,
): Promise<void> {
  const pid = tl.programId(0);
  const block_start = pid * BLOCK_SIZE;
  const offsets = await tl.add(tl.arange(0, BLOCK_SIZE), block_start);
  const mask = await tl.lt(offsets, n_elements);
  const xs = await tl.load(x.at(block_start), [BLOCK_SIZE], x.dtype, { mask });
  // Randomly prune it.
  const random = await tl.rand(seed, offsets);
  const x_keep = await tl.gt(random, p);
  // Write back.
  const scaled = await tl.div(xs, 1 - p);
  const output_block = await tl.where(x_keep, scaled, tl.zeros([BLOCK_SIZE], x.dtype));
  await tl.store(output.at(block_start), output_block, { mask });
}

/**
 * Triton's `tl.rand(seed, offset)`, written again on the host from python/triton/language/random.py
 * with BigInt (independent of @kb/oplog's Philox, which the kernel runs): Philox 4x32-10 of the
 * counter (offset, 0, 0, 0) keyed by the seed's two words, and `uint_to_uniform_float` of the
 * first word.
 */
export function philoxRand(seed: number, offset: number): number {
  const M = 0xffffffffn;
  const key = BigInt.asUintN(64, BigInt(seed));
  let [c0, c1, c2, c3] = [BigInt(offset >>> 0), 0n, 0n, 0n];
  let [k0, k1] = [key & M, key >> 32n];
  for (let round = 0; round < 10; round++) {
    const productB = 0xcd9e8d57n * c2;
    const productA = 0xd2511f53n * c0;
    [c0, c1, c2, c3] = [(productB >> 32n) ^ c1 ^ k0, productB & M, (productA >> 32n) ^ c3 ^ k1, productA & M];
    k0 = (k0 + 0x9e3779b9n) & M;
    k1 = (k1 + 0xbb67ae85n) & M;
  }
  const signed = Number(BigInt.asIntN(32, c0));
  const magnitude = signed < 0 ? -signed - 1 : signed;
  return Math.fround(Math.fround(magnitude) * Math.fround(4.6566127342e-10));
}

/** The reference: element `i` is `round(x_i / (1 - p))` where `philoxRand(seed, i) > p`, else 0. */
export function dropoutReference(x: Tensor, p: number, seed: number, dtype: Dtype): Tensor {
  const values = x.toFloat64Array();
  const out = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++)
    out[i] = philoxRand(seed, i) > p ? (values[i] as number) / (1 - p) : 0;
  return Tensor.fromArray(out, x.shape, dtype);
}

/** Tutorial 04: seeded dropout on a logical grid of `cdiv(n_elements, BLOCK_SIZE)` programs. */
export default defineBench({
  name: "triton-04-low-memory-dropout",
  description:
    "Triton tutorial 04: seeded dropout, output = where(tl.rand(seed, offsets) > p, x / (1 - p), 0) over n_elements, one program per BLOCK_SIZE elements on a logical grid with a mask offsets < n_elements; the mask is Philox 4x32-10's, as Triton's for the same seed.",
  params: z.object({
    n_elements: z.number().int().positive().default(98432).describe("Elements of x and output."),
    BLOCK_SIZE: z.number().int().positive().default(1024).describe("Elements per program."),
    p: z.number().min(0).lt(1).default(0.5).describe("The probability of dropping an element."),
    dropout_seed: z.number().int().default(123).describe("The seed of tl.rand (Triton's tutorial: 123)."),
    ...commonParams,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const grid = gridOf(sim, p);
    const where = firstCube(grid);
    const x = sim.random([p.n_elements], dtype, { seed: p.seed });
    const X = await sim.toDevice(x, { ...where, name: "x" });
    const output = sim.empty([p.n_elements], dtype, { ...where, name: "output" });
    await sim.launch(seededDropout, {
      grid,
      programs: [Math.ceil(p.n_elements / p.BLOCK_SIZE)],
      args: [X, output, p.n_elements, p.p, p.dropout_seed, p.BLOCK_SIZE],
      name: "dropout",
    });
    return {
      check: { output: { actual: output, reference: () => dropoutReference(x, p.p, p.dropout_seed, dtype) } },
    };
  },
});
