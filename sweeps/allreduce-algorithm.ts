import { initProcessGroup } from "@kb/ccl";
import { type BenchCheck, type DeviceTensor, defineBench } from "@kb/runtime";
import { Tensor } from "@kb/tensor";
import * as z from "zod";

/**
 * One all-reduce of `bytes` per rank with the algorithm named by a param, so a sweep can put the
 * algorithm on an axis (kb run allreduce picks it by size from ccl.yaml instead). Rank r holds the
 * value r everywhere; afterwards every rank holds 0 + 1 + ... + (n - 1), which --verify checks on
 * the first and last rank.
 */
export default defineBench({
  name: "allreduce-algorithm",
  description: "One f32 sum all-reduce of `bytes` per rank with the named @kb/ccl algorithm (ring or tree).",
  params: z.object({
    algorithm: z.enum(["ring", "tree"]).default("ring").describe("The all-reduce algorithm."),
    bytes: z.number().int().positive().default(65536).describe("Message per rank, bytes (f32 elements x 4)."),
    scope: z.enum(["sips", "cubes", "pes"]).default("pes").describe("What a rank is."),
  }),
  async run(sim, p) {
    const pg = initProcessGroup(sim, {
      backend: "ahbm",
      scope: p.scope,
      cclConfig: { allReduce: [{ algorithm: p.algorithm }] },
    });
    const n = pg.getWorldSize();
    const count = Math.max(1, Math.floor(p.bytes / 4));
    const tensors: DeviceTensor[] = [];
    for (let rank = 0; rank < n; rank++) {
      const place = p.scope === "sips" ? { sip: rank } : p.scope === "cubes" ? { cube: rank } : {};
      tensors.push(await sim.toDevice(Tensor.full([count], rank, "f32"), { ...place, name: `x${rank}` }));
    }
    const result = await pg.allReduce(tensors, "sum");
    const ns = result.launch.endNs - result.launch.startNs;
    const algbw = (count * 4) / ns;
    const expected = Tensor.full([count], (n * (n - 1)) / 2, "f32");
    const check: Record<string, BenchCheck> = {};
    for (const rank of new Set([0, n - 1])) {
      check[`rank${rank}`] = { actual: tensors[rank] as DeviceTensor, reference: () => expected };
    }
    return {
      check,
      report: {
        title: `all-reduce over ${n} ranks (${p.scope}), f32 sum`,
        columns: ["bytes", "algorithm", "ranks", "time (us)", "algbw (GB/s)", "busbw (GB/s)"],
        rows: [
          [
            count * 4,
            result.algorithm,
            n,
            Number((ns / 1000).toFixed(3)),
            Number(algbw.toFixed(2)),
            Number(((algbw * 2 * (n - 1)) / n).toFixed(2)),
          ],
        ],
      },
    };
  },
});
