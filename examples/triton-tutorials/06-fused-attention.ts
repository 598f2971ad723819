import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { Dtype } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { commonParams, firstCube, gridOf } from "../../benches/lib/params.js";
import { attentionHeads } from "../../benches/lib/reference.js";

// Triton's tutorial 06 (fused attention, forward), written with @kb/tl the way Triton's _attn_fwd
// is: one program per (block of BLOCK_M query rows, head), a loop over blocks of BLOCK_N keys and
// values with an online softmax (running max m_i, running sum l_i, accumulator acc rescaled by
// alpha = exp2(m_i - m_ij)), and for causal attention a mask on the diagonal blocks and a loop
// that stops at the diagonal. The scores never leave the PE's TCM.

/** The block sizes and mode of {@link attnFwd} (Triton's constexpr meta-parameters). */
export interface AttnConfig {
  readonly BLOCK_M: number;
  readonly BLOCK_N: number;
  readonly causal: boolean;
}

/** log2(e): exp(x) = exp2(x * LOG2E), as Triton's kernel scales the scores (1.44269504) for exp2. */
const LOG2E = Math.LOG2E;

/**
 * `Out = softmax(Q K^T * sm_scale) V` per head, Q K V Out `[Z, H, N_CTX, HEAD_DIM]` row-major in
 * device memory: program `(start_m, off_hz)` computes query rows
 * `[start_m * BLOCK_M, (start_m + 1) * BLOCK_M)` of head `off_hz` (`Z * H` heads). With `causal`,
 * row `i` attends to keys `0..i`: the K loop stops after the diagonal block, whose scores are
 * masked by `offs_m[:, None] >= offs_n[None, :]`. With `M` (f32 `[Z * H, N_CTX]`), the program also
 * stores its rows' `m_i + log2(l_i)`, the base-2 log-sum-exp of the scaled scores that the backward
 * pass (06-fused-attention-backward.ts) recomputes the probabilities from, as Triton's kernel does.
 */
export async function attnFwd(
  tl: TL,
  Q: DeviceTensor,
  K: DeviceTensor,
  V: DeviceTensor,
  Out: DeviceTensor,
  sm_scale: number,
  config: AttnConfig,
  M: DeviceTensor | null = null,
): Promise<void> {
  const { BLOCK_M, BLOCK_N, causal } = config;
  const [Zs, H, N_CTX, HEAD_DIM] = Q.shape as [number, number, number, number];
  const start_m = tl.programId(0);
  const off_hz = tl.programId(1);
  const off_z = Math.floor(off_hz / H);
  const off_h = off_hz % H;
  if (off_z >= Zs) return;
  const m0 = start_m * BLOCK_M;
  const offs_m = tl.arange(m0, m0 + BLOCK_M);
  const qk_scale = sm_scale * LOG2E;
  // The running state, outside the loop's scratch: m_i, l_i [BLOCK_M] and acc [BLOCK_M, HEAD_DIM].
  const m_i = tl.full([BLOCK_M], Number.NEGATIVE_INFINITY, "f32");
  const l_i = tl.full([BLOCK_M], 1, "f32");
  let acc = tl.zeros([BLOCK_M, HEAD_DIM], "f32");
  const minusInf = tl.full([BLOCK_M, BLOCK_N], Number.NEGATIVE_INFINITY, "f32"); // where's `b`
  const q = await tl.load(Q.at(off_z, off_h, m0, 0), [BLOCK_M, HEAD_DIM], Q.dtype);
  // Causal: keys past the block's last row are never read; blocks from m0 on cross the diagonal.
  const hi = causal ? Math.min(m0 + BLOCK_M, N_CTX) : N_CTX;
  for (let start_n = 0; start_n < hi; start_n += BLOCK_N) {
    const mark = tl.scratchMark();
    const k = await tl.load(K.at(off_z, off_h, start_n, 0), [BLOCK_N, HEAD_DIM], K.dtype);
    let qk = await tl.dot(q, tl.trans(k));
    if (causal && start_n + BLOCK_N > m0) {
      const offs_n = tl.arange(start_n, start_n + BLOCK_N);
      const mask = await tl.ge(tl.expandDims(offs_m, 1), tl.expandDims(offs_n, 0));
      qk = await tl.where(mask, qk, minusInf);
    }
    // m_ij = max(m_i, rowmax(qk) * qk_scale); p = exp2(qk * qk_scale - m_ij[:, None]).
    const rowMax = tl.reshape(await tl.max(qk, 1), [BLOCK_M]);
    const m_ij = await tl.maximum(m_i, await tl.mul(rowMax, qk_scale));
    const shifted = await tl.sub(await tl.mul(qk, qk_scale), tl.expandDims(m_ij, 1));
    const p = await tl.exp2(shifted);
    const l_ij = tl.reshape(await tl.sum(p, 1), [BLOCK_M]);
    const alpha = await tl.exp2(await tl.sub(m_i, m_ij));
    await tl.fma(l_i, alpha, l_ij, { out: l_i }); // l_i = l_i * alpha + l_ij
    await tl.mul(acc, tl.expandDims(alpha, 1), { out: acc }); // acc = acc * alpha[:, None]
    const v = await tl.load(V.at(off_z, off_h, start_n, 0), [BLOCK_N, HEAD_DIM], V.dtype);
    acc = await tl.dot(V.dtype === "f32" ? p : await tl.cast(p, V.dtype), v, acc); // acc += p @ v
    await tl.maximum(m_i, m_ij, { out: m_i }); // m_i = m_ij (m_ij >= m_i)
    tl.scratchRelease(mark);
  }
  if (M !== null) await tl.store(M.at(off_hz, m0), await tl.add(m_i, await tl.log2(l_i))); // m_i += log2(l_i)
  const o = await tl.div(acc, tl.expandDims(l_i, 1));
  await tl.store(Out.at(off_z, off_h, m0, 0), Out.dtype === "f32" ? o : await tl.cast(o, Out.dtype));
}

/** The programs of {@link attnFwd}: `[cdiv(N_CTX, BLOCK_M), Z * H]`, Triton's grid. */
export function attnGrid(p: { Z: number; H: number; N_CTX: number; BLOCK_M: number }): [number, number] {
  return [Math.ceil(p.N_CTX / p.BLOCK_M), p.Z * p.H];
}

/** Tutorial 06: fused attention forward, causal or not, on a logical grid of (query block, head). */
export default defineBench({
  name: "triton-06-fused-attention",
  description:
    "Triton tutorial 06: fused attention forward Out = softmax(Q K^T * sm_scale) V for Z x H heads of [N_CTX, HEAD_DIM], one program per (BLOCK_M query rows, head) on a logical grid, a loop over BLOCK_N keys with an online softmax (exp2, running max and sum, rescaled f32 accumulator), causal by a mask on the diagonal blocks and a K loop that stops there (Q, K, V, Out in the HBM of the grid's first cube).",
  params: z.object({
    Z: z.number().int().positive().default(1).describe("Batch."),
    H: z.number().int().positive().default(4).describe("Heads."),
    N_CTX: z
      .number()
      .int()
      .positive()
      .default(1024)
      .describe("Sequence length: rows of Q, K, V, Out per head."),
    HEAD_DIM: z.number().int().positive().default(64).describe("Head dimension: columns of Q, K, V, Out."),
    BLOCK_M: z.number().int().positive().default(128).describe("Query rows per program."),
    BLOCK_N: z.number().int().positive().default(64).describe("Keys and values per step of the K loop."),
    causal: z.boolean().default(true).describe("Row i attends to keys 0..i only."),
    sm_scale: z.number().positive().optional().describe("Score scale (default 1 / sqrt(HEAD_DIM))."),
    ...commonParams,
  }),
  async run(sim, p) {
    if (p.N_CTX % p.BLOCK_M !== 0 || p.BLOCK_M % p.BLOCK_N !== 0) {
      throw new RangeError(
        `triton-06: N_CTX (${p.N_CTX}) must be a multiple of BLOCK_M (${p.BLOCK_M}), and BLOCK_M of BLOCK_N (${p.BLOCK_N}), as in Triton's tutorial.`,
      );
    }
    const dtype: Dtype = p.dtype;
    const sm_scale = p.sm_scale ?? 1 / Math.sqrt(p.HEAD_DIM);
    const grid = gridOf(sim, p);
    const where = firstCube(grid);
    const shape = [p.Z, p.H, p.N_CTX, p.HEAD_DIM];
    const q = sim.random(shape, dtype, { seed: p.seed });
    const k = sim.random(shape, dtype, { seed: p.seed + 1 });
    const v = sim.random(shape, dtype, { seed: p.seed + 2 });
    const Q = await sim.toDevice(q, { ...where, name: "Q" });
    const K = await sim.toDevice(k, { ...where, name: "K" });
    const V = await sim.toDevice(v, { ...where, name: "V" });
    const Out = sim.empty(shape, dtype, { ...where, name: "Out" });
    const config: AttnConfig = { BLOCK_M: p.BLOCK_M, BLOCK_N: p.BLOCK_N, causal: p.causal };
    await sim.launch(attnFwd, {
      grid,
      programs: attnGrid(p),
      args: [Q, K, V, Out, sm_scale, config],
      name: "attn_fwd",
    });
    return {
      check: { Out: { actual: Out, reference: () => attentionHeads(q, k, v, sm_scale, p.causal, dtype) } },
    };
  },
});
