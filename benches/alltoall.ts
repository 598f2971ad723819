import { initProcessGroup } from "@kb/ccl";
import { type BenchCheck, type DeviceTensor, defineBench } from "@kb/runtime";
import { DTYPE_BYTES, type Dtype, Tensor } from "@kb/tensor";
import * as z from "zod";
import { rankScope, scopeParam } from "./lib/collective.js";
import { dtypeParam, seedParam } from "./lib/params.js";

/**
 * How many elements rank `s` sends rank `d`: `perPeer` each, or with `uneven` a seeded split of the
 * same total (all-to-all-v): each other peer gets between 0 and twice its share, the rank itself
 * what is left (at least 1, so no output is empty).
 */
function splitsOf(n: number, perPeer: number, uneven: boolean, seed: number): number[][] {
  return Array.from({ length: n }, (_, s) => {
    const row = Array.from({ length: n }, () => perPeer);
    if (!uneven) return row;
    // A small linear congruential generator: the same seed, the same splits.
    let state = (seed * 2654435761 + s * 40503 + 1) >>> 0;
    let left = perPeer * n;
    for (let d = 0; d < n; d++) {
      if (d === s) continue;
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      row[d] = Math.min(left - 1, Math.floor((state / 2 ** 32) * (2 * perPeer + 1)));
      left -= row[d] as number;
    }
    row[s] = left;
    return row;
  });
}

/**
 * All-to-all over the ranks of a process group (SIPs when the topology has several, else cubes,
 * else PEs) for message sizes from `minBytes` to `maxBytes` per rank, doubling, one launch per
 * size: `allToAllSingle`, with `uneven` seeded per-pair split sizes (all-to-all-v). An
 * nccl-tests-style table: size, count, dtype, time, algbw = size / time, busbw = algbw (n - 1) / n.
 * `--verify` checks every rank's output of every size against the blocks the host expects.
 * Inputs are integers in [-8, 8]: exact in every dtype.
 */
export default defineBench({
  name: "alltoall",
  description:
    "nccl-tests-style all-to-all sweep over a @kb/ccl process group (rank = SIP by default): sizes from minBytes to maxBytes doubling, even or seeded uneven splits (all-to-all-v), time, algbw and busbw per size.",
  params: z.object({
    minBytes: z.number().int().positive().default(1024).describe("Smallest input per rank, bytes."),
    maxBytes: z
      .number()
      .int()
      .positive()
      .default(2 ** 20)
      .describe("Largest input per rank, bytes (1 MiB)."),
    dtype: dtypeParam.default("f32"),
    uneven: z
      .boolean()
      .default(false)
      .describe("Seeded uneven split sizes per pair of ranks (all-to-all-v); the same total per rank."),
    scope: scopeParam,
    seed: seedParam,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const size = DTYPE_BYTES[dtype];
    const scope = rankScope(sim, p.scope);
    const pg = initProcessGroup(sim, { backend: "ahbm", scope });
    const n = pg.getWorldSize();
    const place = (rank: number) => {
      const member = pg.group.members[rank] as number;
      return scope === "sips" ? { sip: member } : scope === "cubes" ? { cube: member } : {};
    };
    const rows: (string | number)[][] = [];
    const check: Record<string, BenchCheck> = {};
    for (let bytes = p.minBytes; bytes <= p.maxBytes; bytes *= 2) {
      const perPeer = Math.max(1, Math.floor(bytes / size / n));
      const step = rows.length;
      const splits = splitsOf(n, perPeer, p.uneven, p.seed + 1000 * step);
      const received = splits.map((_, d) => splits.reduce((sum, row) => sum + (row[d] as number), 0));
      const valuesOf = (rank: number) => {
        const ints = sim.random([perPeer * n], "i32", {
          seed: p.seed + rank + 1000 * step,
          low: -8,
          high: 8,
        });
        return new Int32Array(ints.bytes.buffer, ints.bytes.byteOffset, perPeer * n);
      };
      const inputs: DeviceTensor[] = [];
      const outputs: DeviceTensor[] = [];
      for (let rank = 0; rank < n; rank++) {
        const values = Tensor.fromArray(valuesOf(rank), [perPeer * n], dtype);
        inputs.push(await sim.toDevice(values, { ...place(rank), name: `in${rank}@${bytes}` }));
        outputs.push(
          await sim.toDevice(Tensor.zeros([received[rank] as number], dtype), {
            ...place(rank),
            name: `out${rank}@${bytes}`,
          }),
        );
      }
      const result = await pg.allToAllSingle(outputs, inputs, undefined, p.uneven ? splits : undefined);
      const ns = result.launch.endNs - result.launch.startNs;
      const moved = perPeer * n * size;
      const algbw = moved / ns; // bytes per ns = GB/s
      rows.push([
        moved,
        perPeer * n,
        dtype,
        result.algorithm,
        (ns / 1000).toFixed(2),
        algbw.toFixed(2),
        ((algbw * (n - 1)) / n).toFixed(2),
      ]);
      for (let d = 0; d < n; d++) {
        // Block d of every rank's input, in rank order.
        const reference = async () => {
          const values: number[] = [];
          for (let s = 0; s < n; s++) {
            const row = splits[s] as number[];
            const start = row.slice(0, d).reduce((a, b) => a + b, 0);
            const input = valuesOf(s);
            for (let i = 0; i < (row[d] as number); i++) values.push(input[start + i] as number);
          }
          return Tensor.fromArray(values, [values.length], dtype);
        };
        check[`#${String(rows.length).padStart(2, "0")} ${moved}B rank${d}`] = {
          actual: outputs[d] as DeviceTensor,
          reference,
        };
      }
      for (const input of inputs) sim.free(input, { reuse: false });
    }
    return {
      check,
      report: {
        title: `all-to-all${p.uneven ? "-v" : ""} over ${n} ranks (${scope}), ${dtype}`,
        columns: ["size (B)", "count", "type", "algorithm", "time (us)", "algbw (GB/s)", "busbw (GB/s)"],
        rows,
      },
    };
  },
});
