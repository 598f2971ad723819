import { initProcessGroup } from "@kb/ccl";
import { formatByteCount } from "@kb/errors";
import { type BenchCheck, type DeviceTensor, defineBench } from "@kb/runtime";
import { DTYPE_BYTES, type Dtype, Tensor } from "@kb/tensor";
import * as z from "zod";
import { rankScope, scopeParam } from "./lib/collective.js";
import { dtypeParam, seedParam } from "./lib/params.js";

const OPS = ["sum", "max", "min"] as const;

/**
 * The ranks' inputs reduced on the host and rounded once to `dtype`: the reference.
 * `valuesOf(rank)` makes rank `rank`'s input values again (they are not kept between the sweep and
 * the check: at 256 MiB per rank that is gigabytes), one rank at a time. They are integers in
 * [-8, 8], exact in every dtype, so an i32 accumulator is exact (as f64 would be) at half the memory.
 */
async function reduceReference(
  ranks: number,
  valuesOf: (rank: number) => Int32Array,
  op: (typeof OPS)[number],
  dtype: Dtype,
): Promise<Tensor> {
  const out = valuesOf(0);
  for (let r = 1; r < ranks; r++) {
    const values = valuesOf(r);
    for (let i = 0; i < out.length; i++) {
      const a = out[i] as number;
      const b = values[i] as number;
      out[i] = op === "sum" ? a + b : op === "max" ? Math.max(a, b) : Math.min(a, b);
    }
    // A turn of the event loop lets the collector reclaim this rank's values before the next.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  return integerTensor(out, dtype);
}

/**
 * Integers as a `dtype` tensor, rounded once (`Tensor.fromArray`). For f32 and i32, whose elements
 * are 4 bytes like the integers', the values are converted in place in `values`' own buffer: every
 * value here is a small integer, exact in f32, and at 256 MiB per rank a second array is memory
 * the process would hold until the next garbage collection.
 */
function integerTensor(values: Int32Array, dtype: Dtype): Tensor {
  const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  if (dtype === "i32") return new Tensor([values.length], dtype, bytes);
  if (dtype !== "f32") return Tensor.fromArray(values, [values.length], dtype);
  const floats = new Float32Array(values.buffer, values.byteOffset, values.length);
  for (let i = 0; i < values.length; i++) floats[i] = values[i] as number;
  return new Tensor([values.length], dtype, bytes);
}

/**
 * All-reduce over the ranks of a process group (SIPs when the topology has several, else cubes,
 * else PEs) for message sizes from
 * `minBytes` to `maxBytes`, doubling, one launch per size, and an nccl-tests-style table: size,
 * count, dtype, op, time, algbw = size / time, busbw = algbw x 2 (n - 1) / n. `--verify` checks
 * every size's result on the first and the last rank. Inputs are integers in [-8, 8], so sums of up
 * to 32 ranks are exact in every dtype: the check does not depend on the order of the additions.
 *
 * Memory follows one size, not the sweep: after each size the ranks nothing checks are freed
 * (without reuse, so later sizes land where they always did and the times do not change), and the
 * checked ones cost phase 1 nothing once the all-reduce has overwritten them with computed values.
 */
export default defineBench({
  name: "allreduce",
  description:
    "nccl-tests-style all-reduce sweep over a @kb/ccl process group (rank = SIP by default): sizes from minBytes to maxBytes doubling, time, algbw and busbw per size.",
  params: z.object({
    minBytes: z.number().int().positive().default(8).describe("Smallest message per rank, bytes."),
    maxBytes: z
      .number()
      .int()
      .positive()
      .default(256 * 2 ** 20)
      .describe("Largest message per rank, bytes (256 MiB)."),
    dtype: dtypeParam.default("f32"),
    op: z.enum(OPS).default("sum").describe("Reduction."),
    scope: scopeParam,
    seed: seedParam,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const size = DTYPE_BYTES[dtype];
    const scope = rankScope(sim, p.scope);
    const pg = initProcessGroup(sim, { backend: "ahbm", scope });
    const n = pg.getWorldSize();
    const rows: (string | number)[][] = [];
    const check: Record<string, BenchCheck> = {};
    // The reference of the size checked last: its first and last rank share it, and only one
    // size's is alive at a time.
    const last: { step: number; reference: Tensor | null } = { step: -1, reference: null };
    let sizes = 0;
    for (let bytes = p.minBytes; bytes <= p.maxBytes; bytes *= 2) sizes++;
    for (let bytes = p.minBytes; bytes <= p.maxBytes; bytes *= 2) {
      const count = Math.max(1, Math.floor(bytes / size));
      const step = rows.length;
      sim.progress(step, sizes, formatByteCount(bytes));
      // Small integers (like nccl-tests' exact data): every partial sum of up to 32 ranks is exact
      // in bf16, f16 and f32, so the check is exact whatever order the algorithm adds in.
      const valuesOf = (rank: number) => {
        const ints = sim.random([count], "i32", { seed: p.seed + rank + 1000 * step, low: -8, high: 8 });
        return new Int32Array(ints.bytes.buffer, ints.bytes.byteOffset, count);
      };
      const tensors: DeviceTensor[] = [];
      for (let rank = 0; rank < n; rank++) {
        const place = scope === "sips" ? { sip: rank } : scope === "cubes" ? { cube: rank } : {};
        const input = integerTensor(valuesOf(rank), dtype);
        tensors.push(await sim.toDevice(input, { ...place, name: `x${rank}@${bytes}` }));
      }
      const result = await pg.allReduce(tensors, p.op);
      const ns = result.launch.endNs - result.launch.startNs;
      const moved = count * size;
      const algbw = moved / ns; // bytes per ns = GB/s
      rows.push([
        moved,
        count,
        dtype,
        p.op,
        result.algorithm,
        (ns / 1000).toFixed(2),
        algbw.toFixed(2),
        ((algbw * 2 * (n - 1)) / n).toFixed(2),
      ]);
      const reference = async () => {
        if (last.step !== step) {
          last.reference = null;
          last.reference = await reduceReference(n, valuesOf, p.op, dtype);
          last.step = step;
        }
        return last.reference as Tensor;
      };
      const checked = [...new Set([0, n - 1])];
      for (const rank of checked) {
        check[`#${String(rows.length).padStart(2, "0")} ${moved}B rank${rank}`] = {
          actual: tensors[rank] as DeviceTensor,
          reference,
        };
      }
      for (let rank = 0; rank < n; rank++) {
        if (!checked.includes(rank)) sim.free(tensors[rank] as DeviceTensor, { reuse: false });
      }
    }
    return {
      check,
      report: {
        title: `all-reduce over ${n} ranks (${scope}), ${p.op}, ${dtype}`,
        columns: [
          "size (B)",
          "count",
          "type",
          "redop",
          "algorithm",
          "time (us)",
          "algbw (GB/s)",
          "busbw (GB/s)",
        ],
        rows,
      },
    };
  },
});
