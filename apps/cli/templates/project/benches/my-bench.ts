import { type DeviceTensor, defineBench } from "@kb/runtime";
import { type Dtype, Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";

/**
 * The kernel: `out = alpha * x + y`. Program `pid` of the logical grid takes the block of `block`
 * elements at `pid * block`: it loads x and y into its TCM, computes, and stores out; the last
 * block is masked to the vectors' end (its elements past `n` are neither read nor written).
 */
export async function axpy(
  tl: TL,
  x: DeviceTensor,
  y: DeviceTensor,
  out: DeviceTensor,
  n: number,
  alpha: number,
  block: number,
): Promise<void> {
  const start = tl.programId(0) * block;
  const mask = await tl.lt(await tl.add(tl.arange(0, block), start), n);
  const xs = await tl.load(x.at(start), [block], x.dtype, { mask });
  const ys = await tl.load(y.at(start), [block], y.dtype, { mask });
  await tl.store(out.at(start), await tl.add(await tl.mul(xs, alpha), ys), { mask });
}

/**
 * The host reference `--verify` checks the kernel against: the same sum in double precision,
 * rounded once to `dtype`. Plain code of its own, never the simulator's.
 */
export function axpyReference(x: Tensor, y: Tensor, alpha: number, dtype: Dtype): Tensor {
  const xs = x.toFloat64Array();
  const ys = y.toFloat64Array();
  const out = new Float64Array(xs.length);
  for (let i = 0; i < out.length; i++) out[i] = alpha * (xs[i] as number) + (ys[i] as number);
  return Tensor.fromArray(out, x.shape, dtype);
}

/** The bench: `kb run my-bench` runs it; params with `--param n=1000000 --param dtype=bf16`. */
export default defineBench({
  name: "my-bench",
  description: "out = alpha * x + y over n elements, one program per block on every PE of the topology.",
  params: z.object({
    n: z
      .number()
      .int()
      .positive()
      .default(1 << 20)
      .describe("Elements of x, y and out."),
    alpha: z.number().default(2).describe("The scale of x."),
    block: z.number().int().positive().default(4096).describe("Elements per program."),
    dtype: z.enum(["f16", "bf16", "f32"]).default("f16").describe("Element type."),
    seed: z.number().int().min(0).default(1).describe("Seed of the random inputs."),
  }),
  async run(sim, p) {
    const x = sim.random([p.n], p.dtype, { seed: p.seed });
    const y = sim.random([p.n], p.dtype, { seed: p.seed + 1 });
    const X = await sim.toDevice(x, { name: "x" });
    const Y = await sim.toDevice(y, { name: "y" });
    const out = sim.empty([p.n], p.dtype, { name: "out" });
    await sim.launch(axpy, {
      grid: sim.grid(),
      programs: [Math.ceil(p.n / p.block)],
      args: [X, Y, out, p.n, p.alpha, p.block],
      name: "axpy",
    });
    return { check: { out: { actual: out, reference: () => axpyReference(x, y, p.alpha, p.dtype) } } };
  },
});
