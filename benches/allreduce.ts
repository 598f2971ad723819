import { initProcessGroup } from "@kb/ccl";
import { type BenchCheck, type DeviceTensor, defineBench } from "@kb/runtime";
import { DTYPE_BYTES, type Dtype, Tensor } from "@kb/tensor";
import * as z from "zod";
import { dtypeParam, seedParam } from "./lib/params.js";

const SCOPES = ["auto", "sips", "cubes", "pes"] as const;
const OPS = ["sum", "max", "min"] as const;

/**
 * The ranks' inputs reduced on the host in f64 and rounded once: the reference. `inputOf(rank)`
 * makes rank `rank`'s input again (they are not kept between the sweep and the check: at 256 MiB
 * per rank that is gigabytes), one rank at a time.
 */
function reduceReference(
  ranks: number,
  inputOf: (rank: number) => Tensor,
  op: (typeof OPS)[number],
  dtype: Dtype,
): Tensor {
  const out = inputOf(0).toFloat64Array();
  for (let r = 1; r < ranks; r++) {
    const values = inputOf(r).toFloat64Array();
    for (let i = 0; i < out.length; i++) {
      const a = out[i] as number;
      const b = values[i] as number;
      out[i] = op === "sum" ? a + b : op === "max" ? Math.max(a, b) : Math.min(a, b);
    }
  }
  return Tensor.fromArray(out, [out.length], dtype);
}

/**
 * All-reduce over the ranks of a process group (SIPs when the topology has several, else cubes,
 * else PEs) for message sizes from
 * `minBytes` to `maxBytes`, doubling, one launch per size, and an nccl-tests-style table: size,
 * count, dtype, op, time, algbw = size / time, busbw = algbw x 2 (n - 1) / n. `--verify` checks
 * every size's result on the first and the last rank. Inputs are integers in [-8, 8], so sums of up
 * to 32 ranks are exact in every dtype: the check does not depend on the order of the additions.
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
    scope: z
      .enum(SCOPES)
      .default("auto")
      .describe(
        "What a rank is: a SIP, a cube of SIP 0, or a PE of cube 0; auto: SIPs when there are several, else cubes, else PEs.",
      ),
    seed: seedParam,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const size = DTYPE_BYTES[dtype];
    const topology = sim.machine.graph.topology;
    const scope =
      p.scope !== "auto"
        ? p.scope
        : topology.system.sips > 1
          ? "sips"
          : topology.sip.cubes > 1
            ? "cubes"
            : "pes";
    const pg = initProcessGroup(sim, { backend: "ahbm", scope });
    const n = pg.getWorldSize();
    const rows: (string | number)[][] = [];
    const check: Record<string, BenchCheck> = {};
    // The reference of the size checked last: its first and last rank share it, and only one
    // size's is alive at a time.
    const last: { step: number; reference: Tensor | null } = { step: -1, reference: null };
    for (let bytes = p.minBytes; bytes <= p.maxBytes; bytes *= 2) {
      const count = Math.max(1, Math.floor(bytes / size));
      const step = rows.length;
      // Small integers (like nccl-tests' exact data): every partial sum of up to 32 ranks is exact
      // in bf16, f16 and f32, so the check is exact whatever order the algorithm adds in.
      const inputOf = (rank: number) =>
        sim.fromArray(
          sim
            .random([count], "i32", { seed: p.seed + rank + 1000 * step, low: -8, high: 8 })
            .toFloat64Array(),
          [count],
          dtype,
        );
      const tensors: DeviceTensor[] = [];
      for (let rank = 0; rank < n; rank++) {
        const place = scope === "sips" ? { sip: rank } : scope === "cubes" ? { cube: rank } : {};
        tensors.push(await sim.toDevice(inputOf(rank), { ...place, name: `x${rank}@${bytes}` }));
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
      const reference = () => {
        if (last.step !== step) {
          last.reference = null;
          last.reference = reduceReference(n, inputOf, p.op, dtype);
          last.step = step;
        }
        return last.reference as Tensor;
      };
      for (const rank of [...new Set([0, n - 1])]) {
        check[`#${String(rows.length).padStart(2, "0")} ${moved}B rank${rank}`] = {
          actual: tensors[rank] as DeviceTensor,
          reference,
        };
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
