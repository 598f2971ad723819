import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { Dtype } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { cubeIndex, cubeParts, emptyRows, rowChecks, uploadCopies, uploadRows } from "./lib/cube-parts.js";
import { dtypeParam, gridOf, gridParams, seedParam } from "./lib/params.js";
import { attention } from "./lib/reference.js";

/** One cube's rows of Q and O, and its own copies of K and V. */
interface AttentionPart {
  readonly Q: DeviceTensor;
  readonly K: DeviceTensor;
  readonly V: DeviceTensor;
  readonly O: DeviceTensor;
}

/**
 * Single-head attention, one block of query rows at a time: the PE loads K and V once, then per
 * block `O = softmax(Q K^T * scale) V` with the scores and probabilities in f32 and the
 * probabilities cast to the input dtype for the second GEMM. Blocks go round-robin over the PEs
 * of a cube. The whole score row `[block, S]` sits in TCM (no online softmax): K, V and the
 * scores must fit the PE's scratch.
 */
export async function attentionKernel(
  tl: TL,
  parts: readonly (AttentionPart | null)[],
  block: number,
  scale: number,
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const { Q, K, V, O } = part;
  const [rows, d] = Q.shape as [number, number];
  const s = K.shape[0] as number;
  const blocks = tl.cdiv(rows, block);
  if (tl.programId(0) >= blocks) return;
  const k = await tl.load(K, [s, d], K.dtype);
  const v = await tl.load(V, [s, d], V.dtype);
  const kT = tl.trans(k);
  for (let b = tl.programId(0); b < blocks; b += tl.numPrograms(0)) {
    const mark = tl.scratchMark();
    const r0 = b * block;
    const q = await tl.load(Q.at(r0, 0), [Math.min(block, rows - r0), d], Q.dtype);
    const scores = await tl.dot(q, kT);
    const probs = await tl.softmax(await tl.mul(scores, scale), -1);
    const o = await tl.dot(Q.dtype === "f32" ? probs : await tl.cast(probs, Q.dtype), v);
    await tl.store(O.at(r0, 0), O.dtype === "f32" ? o : await tl.cast(o, O.dtype));
    tl.scratchRelease(mark);
  }
}

/** `O = softmax(Q K^T * scale) V` for one head, Q, K, V, O `[S, D]`. */
export default defineBench({
  name: "attention",
  description:
    "Single-head attention O = softmax(Q K^T * scale) V, Q K V O [S, D]: blocks of query rows over every PE (each cube holds its Q and O rows and copies of K and V); per block tl.dot with tl.trans(K), tl.mul by scale, tl.softmax, cast, tl.dot with V.",
  params: z.object({
    S: z.number().int().positive().default(1024).describe("Sequence length: rows of Q, K, V and O."),
    D: z.number().int().positive().default(64).describe("Head dimension: columns of Q, K, V and O."),
    block: z.number().int().positive().default(64).describe("Query rows per block."),
    scale: z.number().positive().optional().describe("Score scale (default 1 / sqrt(D))."),
    dtype: dtypeParam,
    seed: seedParam,
    ...gridParams,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const scale = p.scale ?? 1 / Math.sqrt(p.D);
    const grid = gridOf(sim, p);
    const q = sim.random([p.S, p.D], dtype, { seed: p.seed });
    const k = sim.random([p.S, p.D], dtype, { seed: p.seed + 1 });
    const v = sim.random([p.S, p.D], dtype, { seed: p.seed + 2 });
    const parts = cubeParts(grid, p.S, p.block);
    const Qs = await uploadRows(sim, q, parts, "Q");
    const Ks = await uploadCopies(sim, k, parts, "K");
    const Vs = await uploadCopies(sim, v, parts, "V");
    const Os = emptyRows(sim, [p.S, p.D], dtype, parts, "O");
    const args = parts.map((_, i) => {
      const [Q, K, V, O] = [Qs[i], Ks[i], Vs[i], Os[i]];
      return Q && K && V && O ? { Q, K, V, O } : null;
    });
    await sim.launch(attentionKernel, { grid, args: [args, p.block, scale], name: "attention" });
    return {
      check: rowChecks("O", parts, Os, (context) => attention(q, k, v, scale, dtype, context?.progress)),
    };
  },
});
