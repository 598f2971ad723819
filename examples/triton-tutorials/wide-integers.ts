import { type DeviceTensor, defineBench } from "@kb/runtime";
import { tensorFromBigInts } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { firstCube, gridOf, gridParams } from "../../benches/lib/params.js";

// 64-bit integers past 2^53, exact, as a Triton user writes them (not one of Triton's numbered
// tutorials): a Python int such as 2**60 + 3 is a BigInt (`2n ** 60n + 3n`), an i64 tile holds
// 2^60 + 1 exactly (a double would read it as 2^60), and u64 arithmetic wraps modulo 2^64:
//
//   offs = pid * BLOCK + tl.arange(0, BLOCK)
//   x = tl.load(x_ptr + offs)                       # int64, 2**60 + 1 + offs
//   tl.store(out_ptr + offs, x + (2**60 + 3))       # 2**61 + 4 + offs
//   c = tl.full([BLOCK], 2**60 + 3, tl.int64)
//   tl.store(out2_ptr + offs, x - c)                # offs - 2
//   u = tl.load(u_ptr + offs)                       # uint64, 2**64 - 1 - offs
//   tl.store(wrap_ptr + offs, u + 3)                # wraps: 2 - offs (mod 2**64)
//   tl.atomic_add(total_ptr, 2**60 + 1)              # each program: total = programs * (2**60 + 1)

/** The four stores of program `pid` over its BLOCK elements. */
export async function wideIntegersKernel(
  tl: TL,
  x_ptr: DeviceTensor,
  u_ptr: DeviceTensor,
  out_ptr: DeviceTensor,
  out2_ptr: DeviceTensor,
  wrap_ptr: DeviceTensor,
  total_ptr: DeviceTensor,
  BLOCK: number,
): Promise<void> {
  const base = tl.programId(0) * BLOCK;
  const x = await tl.load(x_ptr.at(base), [BLOCK], "i64");
  await tl.store(out_ptr.at(base), await tl.add(x, 2n ** 60n + 3n));
  const c = tl.full([BLOCK], 2n ** 60n + 3n, "i64");
  await tl.store(out2_ptr.at(base), await tl.sub(x, c));
  const u = await tl.load(u_ptr.at(base), [BLOCK], "u64");
  await tl.store(wrap_ptr.at(base), await tl.add(u, 3));
  await tl.atomicAdd(total_ptr, 2n ** 60n + 1n);
}

/** i64 and u64 past 2^53 through a kernel: loads, adds of a BigInt and a tl.full, wrapping u64. */
export default defineBench({
  name: "triton-wide-integers",
  description:
    "Exact 64-bit integers past 2^53 in a kernel: i64 values 2^60 + 1 + i loaded, 2^60 + 3 added as a BigInt scalar and subtracted as a tl.full tile, u64 values near 2^64 wrapping, an i64 atomicAdd of 2^60 + 1 per program; every output compared exactly.",
  params: z.object({
    n: z.number().int().positive().default(256).describe("Elements."),
    BLOCK: z.number().int().positive().default(64).describe("Elements per program (divides n)."),
    ...gridParams,
  }),
  async run(sim, p) {
    const grid = gridOf(sim, p);
    const where = firstCube(grid);
    const P60 = 2n ** 60n;
    const index = Array.from({ length: p.n }, (_, i) => BigInt(i));
    const device = (values: bigint[], dtype: "i64" | "u64", name: string) =>
      sim.toDevice(tensorFromBigInts(values, [p.n], dtype), { ...where, name });
    const zeros = index.map(() => 0n);
    const X = await device(
      index.map((i) => P60 + 1n + i),
      "i64",
      "x",
    );
    const U = await device(
      index.map((i) => 2n ** 64n - 1n - i),
      "u64",
      "u",
    );
    const out = await device(zeros, "i64", "out");
    const out2 = await device(zeros, "i64", "out2");
    const wrap = await device(zeros, "u64", "wrap");
    const total = await sim.toDevice(tensorFromBigInts([0n], [1], "i64"), { ...where, name: "total" });
    const programs = Math.ceil(p.n / p.BLOCK);
    await sim.launch(wideIntegersKernel, {
      grid,
      programs: [programs],
      args: [X, U, out, out2, wrap, total, p.BLOCK],
      name: "wide-integers",
    });
    const expect = (values: bigint[], dtype: "i64" | "u64") => () => tensorFromBigInts(values, [p.n], dtype);
    return {
      check: {
        out: {
          actual: out,
          reference: expect(
            index.map((i) => 2n * P60 + 4n + i),
            "i64",
          ),
        },
        out2: {
          actual: out2,
          reference: expect(
            index.map((i) => i - 2n),
            "i64",
          ),
        },
        wrap: {
          actual: wrap,
          reference: expect(
            index.map((i) => BigInt.asUintN(64, 2n - i)),
            "u64",
          ),
        },
        total: {
          actual: total,
          reference: () => tensorFromBigInts([BigInt(programs) * (P60 + 1n)], [1], "i64"),
        },
      },
    };
  },
});
