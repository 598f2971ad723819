import { type DeviceTensor, defineBench } from "@kb/runtime";
import { type Dtype, Tensor } from "@kb/tensor";
import type { TensorHandle, TL } from "@kb/tl";
import * as z from "zod";
import { attentionBackwardHeads } from "../../benches/lib/attention-backward.js";
import { commonParams, firstCube, gridOf } from "../../benches/lib/params.js";
import { attnFwd, attnGrid } from "./06-fused-attention.js";

// Triton's tutorial 06, the backward pass (causal, as Triton's), written with @kb/tl the way
// Triton's `_attn_bwd_preprocess` and `_attn_bwd` are: the forward (06-fused-attention.ts) stores
// Out and M = m_i + log2(l_i) per query row; the preprocess computes Delta = rowsum(Out * dOut);
// then one program per block of BLOCK_N1 keys and head accumulates dK and dV over the query
// blocks from its diagonal on (the diagonal in MASK_BLOCK_M1 = BLOCK_M1 / BLK_SLICE_FACTOR
// slices with the causal mask, the rest in blocks of BLOCK_M1), and the same program computes dQ
// for the BLOCK_M2 query rows of the same index over the key blocks up to its diagonal. The
// probabilities are recomputed from M (p = exp2(q k^T - m)) with K pre-scaled by
// sm_scale / ln(2) on the host, as Triton's wrapper does (`arg_k = k * (sm_scale * RCP_LN2)`).

/** The block sizes of {@link attnBwd} (Triton's: 32, 128, 128, 32 and a slice factor of 2). */
export interface AttnBwdConfig {
  readonly BLOCK_M1: number;
  readonly BLOCK_N1: number;
  readonly BLOCK_M2: number;
  readonly BLOCK_N2: number;
  readonly BLK_SLICE_FACTOR: number;
}

/** ln(2) as Triton's kernel writes it (the f32 nearest). */
const LN2 = 0.6931471824645996;
/** 1 / ln(2), Triton's RCP_LN2. */
const RCP_LN2 = Math.LOG2E;

/**
 * Triton's `_attn_bwd_preprocess`: `Delta[off_hz, m] = sum over d of O[m, d] * dO[m, d]` (in f32)
 * for the BLOCK_M rows of program `(pid, off_hz)`.
 */
export async function attnBwdPreprocess(
  tl: TL,
  O: DeviceTensor,
  DO: DeviceTensor,
  Delta: DeviceTensor,
  BLOCK_M: number,
): Promise<void> {
  const [, H, , HEAD_DIM] = O.shape as [number, number, number, number];
  const m0 = tl.programId(0) * BLOCK_M;
  const off_hz = tl.programId(1);
  const [off_z, off_h] = [Math.floor(off_hz / H), off_hz % H];
  const f32 = async (x: TensorHandle) => (x.dtype === "f32" ? x : await tl.cast(x, "f32"));
  const o = await f32(await tl.load(O.at(off_z, off_h, m0, 0), [BLOCK_M, HEAD_DIM], O.dtype));
  const dout = await f32(await tl.load(DO.at(off_z, off_h, m0, 0), [BLOCK_M, HEAD_DIM], DO.dtype));
  const delta = await tl.sum(await tl.mul(o, dout), 1);
  await tl.store(Delta.at(off_hz, m0), tl.reshape(delta, [BLOCK_M]));
}

/** What the inner loops share: the program's head and the tensors. */
interface BwdScope {
  readonly off_z: number;
  readonly off_h: number;
  readonly off_hz: number;
  readonly Q: DeviceTensor;
  readonly K: DeviceTensor;
  readonly V: DeviceTensor;
  readonly DO: DeviceTensor;
  readonly M: DeviceTensor;
  readonly D: DeviceTensor;
  readonly HEAD_DIM: number;
}

/** `x` in the inputs' dtype for a dot (Triton's `.to(tl.float16)`); f32 stays f32. */
const toInput = (tl: TL, x: TensorHandle, dtype: Dtype) => (dtype === "f32" ? x : tl.cast(x, dtype));

/**
 * Triton's `_attn_bwd_dkdv`: `num_steps` blocks of BLOCK_M1 query rows from `start_m`, against the
 * program's keys `k`, `v` (BLOCK_N1 rows from `start_n`): `pT = exp2(k qT - m)` (masked by
 * `offs_m[None, :] >= offs_n[:, None]` with `MASK`), `dv += pT dO`, `dsT = pT * (v dO^T - Di)`,
 * `dk += dsT q`. Returns the updated accumulators.
 */
async function attnBwdDkdv(
  tl: TL,
  scope: BwdScope,
  acc: { dk: TensorHandle; dv: TensorHandle },
  k: TensorHandle,
  v: TensorHandle,
  BLOCK_M1: number,
  BLOCK_N1: number,
  start_n: number,
  start_m: number,
  num_steps: number,
  MASK: boolean,
): Promise<{ dk: TensorHandle; dv: TensorHandle }> {
  const { off_z, off_h, off_hz, Q, DO, M, D, HEAD_DIM } = scope;
  let { dk, dv } = acc;
  const offs_n = tl.arange(start_n, start_n + BLOCK_N1);
  let curr_m = start_m;
  for (let blk_idx = 0; blk_idx < num_steps; blk_idx++) {
    const mark = tl.scratchMark();
    const q = await tl.load(Q.at(off_z, off_h, curr_m, 0), [BLOCK_M1, HEAD_DIM], Q.dtype);
    const m = await tl.load(M.at(off_hz, curr_m), [BLOCK_M1], "f32");
    const qkT = await tl.dot(k, tl.trans(q)); // qT = q^T: a transposed operand
    let pT = await tl.exp2(await tl.sub(qkT, tl.expandDims(m, 0)));
    if (MASK) {
      const offs_m = tl.arange(curr_m, curr_m + BLOCK_M1);
      const mask = await tl.ge(tl.expandDims(offs_m, 0), tl.expandDims(offs_n, 1));
      pT = await tl.where(mask, pT, 0.0);
    }
    const dout = await tl.load(DO.at(off_z, off_h, curr_m, 0), [BLOCK_M1, HEAD_DIM], DO.dtype);
    dv = await tl.dot(await toInput(tl, pT, DO.dtype), dout, dv);
    const Di = await tl.load(D.at(off_hz, curr_m), [BLOCK_M1], "f32");
    const dpT = await tl.dot(v, tl.trans(dout));
    const dsT = await tl.mul(pT, await tl.sub(dpT, tl.expandDims(Di, 0)));
    dk = await tl.dot(await toInput(tl, dsT, Q.dtype), q, dk); // tl.trans(qT) = q
    curr_m += BLOCK_M1;
    tl.scratchRelease(mark);
  }
  return { dk, dv };
}

/**
 * Triton's `_attn_bwd_dq`: `num_steps` blocks of BLOCK_N2 keys from `start_n` against the
 * program's query rows `q`, `dO` (BLOCK_M2 rows from `start_m`) and their `m`, `Di`:
 * `p = exp2(q kT - m)` (masked by `offs_m[:, None] >= offs_n[None, :]` with `MASK`),
 * `ds = p * (dO vT - Di)`, `dq += ds k`. Returns the updated accumulator.
 */
async function attnBwdDq(
  tl: TL,
  scope: BwdScope,
  dq: TensorHandle,
  q: TensorHandle,
  dout: TensorHandle,
  m: TensorHandle,
  Di: TensorHandle,
  BLOCK_M2: number,
  BLOCK_N2: number,
  start_m: number,
  start_n: number,
  num_steps: number,
  MASK: boolean,
): Promise<TensorHandle> {
  const { off_z, off_h, K, V, HEAD_DIM } = scope;
  const offs_m = tl.arange(start_m, start_m + BLOCK_M2);
  let acc = dq;
  let curr_n = start_n;
  for (let blk_idx = 0; blk_idx < num_steps; blk_idx++) {
    const mark = tl.scratchMark();
    const k = await tl.load(K.at(off_z, off_h, curr_n, 0), [BLOCK_N2, HEAD_DIM], K.dtype);
    const v = await tl.load(V.at(off_z, off_h, curr_n, 0), [BLOCK_N2, HEAD_DIM], V.dtype);
    const qk = await tl.dot(q, tl.trans(k)); // kT = k^T
    let p = await tl.exp2(await tl.sub(qk, m));
    if (MASK) {
      const offs_n = tl.arange(curr_n, curr_n + BLOCK_N2);
      const mask = await tl.ge(tl.expandDims(offs_m, 1), tl.expandDims(offs_n, 0));
      p = await tl.where(mask, p, 0.0);
    }
    const dp = await tl.dot(dout, tl.trans(v)); // vT = v^T
    const ds = await tl.mul(p, await tl.sub(dp, tl.expandDims(Di, 1)));
    acc = await tl.dot(await toInput(tl, ds, K.dtype), k, acc); // tl.trans(kT) = k
    curr_n += BLOCK_N2;
    tl.scratchRelease(mark);
  }
  return acc;
}

/**
 * Triton's `_attn_bwd` (causal): program `(pid, 0, bhid)` computes `dK`, `dV` for keys
 * `[pid * BLOCK_N1, (pid + 1) * BLOCK_N1)` of head `bhid` and `dQ` for query rows
 * `[pid * BLOCK_M2, (pid + 1) * BLOCK_M2)`. `K` is the pre-scaled `k * sm_scale / ln(2)`; `M` the
 * forward's base-2 log-sum-exp, `D` the preprocess's Delta (f32 `[Z * H, N_CTX]` each).
 */
export async function attnBwd(
  tl: TL,
  Q: DeviceTensor,
  K: DeviceTensor,
  V: DeviceTensor,
  sm_scale: number,
  DO: DeviceTensor,
  DQ: DeviceTensor,
  DK: DeviceTensor,
  DV: DeviceTensor,
  M: DeviceTensor,
  D: DeviceTensor,
  config: AttnBwdConfig,
): Promise<void> {
  const { BLOCK_M1, BLOCK_N1, BLOCK_M2, BLOCK_N2, BLK_SLICE_FACTOR } = config;
  const [, H, N_CTX, HEAD_DIM] = Q.shape as [number, number, number, number];
  const bhid = tl.programId(2);
  const scope: BwdScope = {
    off_z: Math.floor(bhid / H),
    off_h: bhid % H,
    off_hz: bhid,
    ...{ Q, K, V, DO, M, D, HEAD_DIM },
  };
  const { off_z, off_h } = scope;
  const pid = tl.programId(0);
  const start_n = pid * BLOCK_N1;
  let start_m = start_n;
  const MASK_BLOCK_M1 = BLOCK_M1 / BLK_SLICE_FACTOR;
  let dv = tl.zeros([BLOCK_N1, HEAD_DIM], "f32");
  let dk = tl.zeros([BLOCK_N1, HEAD_DIM], "f32");
  // K and V of the program's keys stay in TCM through the loop.
  const k = await tl.load(K.at(off_z, off_h, start_n, 0), [BLOCK_N1, HEAD_DIM], K.dtype);
  const v = await tl.load(V.at(off_z, off_h, start_n, 0), [BLOCK_N1, HEAD_DIM], V.dtype);
  // The diagonal block, in slices of MASK_BLOCK_M1 rows with the causal mask.
  let num_steps = BLOCK_N1 / MASK_BLOCK_M1;
  const dkdv = { dk, dv };
  ({ dk, dv } = await attnBwdDkdv(
    tl,
    scope,
    dkdv,
    k,
    v,
    MASK_BLOCK_M1,
    BLOCK_N1,
    start_n,
    start_m,
    num_steps,
    true,
  ));
  // The query blocks below the diagonal: no mask.
  start_m += num_steps * MASK_BLOCK_M1;
  num_steps = (N_CTX - start_m) / BLOCK_M1;
  ({ dk, dv } = await attnBwdDkdv(
    tl,
    scope,
    { dk, dv },
    k,
    v,
    BLOCK_M1,
    BLOCK_N1,
    start_n,
    start_m,
    num_steps,
    false,
  ));
  await tl.store(DV.at(off_z, off_h, start_n, 0), await toInput(tl, dv, DV.dtype));
  // dk *= sm_scale (K was pre-scaled by sm_scale / ln 2; the dS it multiplies is in the natural base).
  await tl.store(DK.at(off_z, off_h, start_n, 0), await toInput(tl, await tl.mul(dk, sm_scale), DK.dtype));

  // This block does dQ: query rows [start_m, start_m + BLOCK_M2), keys up to the diagonal.
  start_m = pid * BLOCK_M2;
  let end_n = start_m + BLOCK_M2;
  const MASK_BLOCK_N2 = BLOCK_N2 / BLK_SLICE_FACTOR;
  const q = await tl.load(Q.at(off_z, off_h, start_m, 0), [BLOCK_M2, HEAD_DIM], Q.dtype);
  let dq = tl.zeros([BLOCK_M2, HEAD_DIM], "f32");
  const dout = await tl.load(DO.at(off_z, off_h, start_m, 0), [BLOCK_M2, HEAD_DIM], DO.dtype);
  const m = tl.expandDims(await tl.load(M.at(bhid, start_m), [BLOCK_M2], "f32"), 1); // m[:, None]
  const Di = await tl.load(D.at(bhid, start_m), [BLOCK_M2], "f32");
  // The diagonal block, in slices of MASK_BLOCK_N2 keys with the causal mask.
  num_steps = BLOCK_M2 / MASK_BLOCK_N2;
  const diagonal = end_n - num_steps * MASK_BLOCK_N2;
  dq = await attnBwdDq(
    tl,
    scope,
    dq,
    q,
    dout,
    m,
    Di,
    BLOCK_M2,
    MASK_BLOCK_N2,
    start_m,
    diagonal,
    num_steps,
    true,
  );
  end_n -= num_steps * MASK_BLOCK_N2;
  // The key blocks left of the diagonal: no mask.
  num_steps = end_n / BLOCK_N2;
  const first = end_n - num_steps * BLOCK_N2;
  dq = await attnBwdDq(tl, scope, dq, q, dout, m, Di, BLOCK_M2, BLOCK_N2, start_m, first, num_steps, false);
  // dq *= LN2: the scores were in base 2.
  await tl.store(DQ.at(off_z, off_h, start_m, 0), await toInput(tl, await tl.mul(dq, LN2), DQ.dtype));
}

/** The rules Triton's kernels put on the block sizes that `c` breaks, each as a sentence. */
function brokenBlockRules(
  c: AttnBwdConfig & { N_CTX: number; PRE_BLOCK: number; BLOCK_M: number; BLOCK_N: number },
) {
  const N_CTX = c.N_CTX;
  const rules: [boolean, string][] = [
    [N_CTX % c.PRE_BLOCK === 0, `N_CTX (${N_CTX}) a multiple of PRE_BLOCK (${c.PRE_BLOCK})`],
    [
      N_CTX % c.BLOCK_M === 0 && c.BLOCK_M % c.BLOCK_N === 0,
      "N_CTX a multiple of BLOCK_M, BLOCK_M of BLOCK_N",
    ],
    [c.BLOCK_N1 === c.BLOCK_M2, `BLOCK_N1 (${c.BLOCK_N1}) equal to BLOCK_M2 (${c.BLOCK_M2})`],
    [N_CTX % c.BLOCK_N1 === 0, `N_CTX a multiple of BLOCK_N1 (${c.BLOCK_N1})`],
    [c.BLOCK_N1 % c.BLOCK_M1 === 0, `BLOCK_N1 a multiple of BLOCK_M1 (${c.BLOCK_M1})`],
    [c.BLOCK_M2 % c.BLOCK_N2 === 0, `BLOCK_M2 a multiple of BLOCK_N2 (${c.BLOCK_N2})`],
    [
      c.BLOCK_M1 % c.BLK_SLICE_FACTOR === 0 && c.BLOCK_N2 % c.BLK_SLICE_FACTOR === 0,
      `BLOCK_M1 and BLOCK_N2 multiples of BLK_SLICE_FACTOR (${c.BLK_SLICE_FACTOR})`,
    ],
  ];
  return rules.filter(([ok]) => !ok).map(([, rule]) => rule);
}

/** `x * factor`, rounded to `x`'s dtype (the host's `arg_k = k * (sm_scale * RCP_LN2)`). */
function scaled(x: Tensor, factor: number): Tensor {
  return Tensor.fromArray(
    x.toFloat64Array().map((value) => value * factor),
    x.shape,
    x.dtype,
  );
}

/** Tutorial 06, backward: the forward storing M, the preprocess, then dQ, dK, dV in one kernel. */
export default defineBench({
  name: "triton-06-fused-attention-backward",
  description:
    "Triton tutorial 06 backward (causal): the forward stores Out and the base-2 log-sum-exp M, _attn_bwd_preprocess computes Delta = rowsum(Out * dOut), and _attn_bwd computes dK, dV per block of BLOCK_N1 keys (diagonal slices masked, then the query blocks below) and dQ per block of BLOCK_M2 query rows, recomputing p = exp2(q k^T - m) with K pre-scaled by sm_scale / ln 2 (all tensors in the HBM of the grid's first cube).",
  params: z
    .object({
      Z: z.number().int().positive().default(1).describe("Batch."),
      H: z.number().int().positive().default(2).describe("Heads."),
      N_CTX: z.number().int().positive().default(1024).describe("Sequence length."),
      HEAD_DIM: z.number().int().positive().default(64).describe("Head dimension."),
      BLOCK_M: z.number().int().positive().default(128).describe("Forward: query rows per program."),
      BLOCK_N: z.number().int().positive().default(64).describe("Forward: keys per step."),
      PRE_BLOCK: z.number().int().positive().default(128).describe("Preprocess: rows per program."),
      BLOCK_M1: z.number().int().positive().default(32).describe("dK, dV: query rows per step."),
      BLOCK_N1: z.number().int().positive().default(128).describe("dK, dV: keys per program."),
      BLOCK_M2: z.number().int().positive().default(128).describe("dQ: query rows per program."),
      BLOCK_N2: z.number().int().positive().default(32).describe("dQ: keys per step."),
      BLK_SLICE_FACTOR: z
        .number()
        .int()
        .positive()
        .default(2)
        .describe("Diagonal steps are this many times smaller."),
      sm_scale: z.number().positive().default(0.5).describe("Score scale (Triton's test: 0.5)."),
      ...commonParams,
    })
    .superRefine((p, context) => {
      const broken = brokenBlockRules(p);
      if (broken.length === 0) return;
      context.addIssue({
        code: "custom",
        path: [],
        message: `the blocks need ${broken.join("; ")}, as in Triton's tutorial: pick block sizes that divide N_CTX (Triton's are BLOCK_M1 32, BLOCK_N1 128, BLOCK_M2 128, BLOCK_N2 32, BLK_SLICE_FACTOR 2).`,
      });
    }),
  async run(sim, p) {
    const config: AttnBwdConfig = {
      BLOCK_M1: p.BLOCK_M1,
      BLOCK_N1: p.BLOCK_N1,
      BLOCK_M2: p.BLOCK_M2,
      BLOCK_N2: p.BLOCK_N2,
      BLK_SLICE_FACTOR: p.BLK_SLICE_FACTOR,
    };
    const dtype: Dtype = p.dtype;
    const grid = gridOf(sim, p);
    const where = firstCube(grid);
    const shape = [p.Z, p.H, p.N_CTX, p.HEAD_DIM];
    const heads = p.Z * p.H;
    const [q, k, v, dout] = [0, 1, 2, 3].map((i) => sim.random(shape, dtype, { seed: p.seed + i })) as [
      Tensor,
      Tensor,
      Tensor,
      Tensor,
    ];
    const Q = await sim.toDevice(q, { ...where, name: "Q" });
    const K = await sim.toDevice(k, { ...where, name: "K" });
    const V = await sim.toDevice(v, { ...where, name: "V" });
    const DO = await sim.toDevice(dout, { ...where, name: "dO" });
    const Out = sim.empty(shape, dtype, { ...where, name: "Out" });
    const M = sim.empty([heads, p.N_CTX], "f32", { ...where, name: "M" });
    // The forward, causal, storing M (06-fused-attention.ts).
    await sim.launch(attnFwd, {
      grid,
      programs: attnGrid(p),
      args: [Q, K, V, Out, p.sm_scale, { BLOCK_M: p.BLOCK_M, BLOCK_N: p.BLOCK_N, causal: true }, M],
      name: "attn_fwd",
    });
    const Delta = sim.empty([heads, p.N_CTX], "f32", { ...where, name: "Delta" });
    await sim.launch(attnBwdPreprocess, {
      grid,
      programs: [p.N_CTX / p.PRE_BLOCK, heads],
      args: [Out, DO, Delta, p.PRE_BLOCK],
      name: "attn_bwd_preprocess",
    });
    const argK = await sim.toDevice(scaled(k, p.sm_scale * RCP_LN2), { ...where, name: "arg_k" });
    const DQ = sim.empty(shape, dtype, { ...where, name: "dQ" });
    const DK = sim.empty(shape, dtype, { ...where, name: "dK" });
    const DV = sim.empty(shape, dtype, { ...where, name: "dV" });
    await sim.launch(attnBwd, {
      grid,
      programs: [p.N_CTX / p.BLOCK_N1, 1, heads],
      args: [Q, argK, V, p.sm_scale, DO, DQ, DK, DV, M, Delta, config],
      name: "attn_bwd",
    });
    let gradients: ReturnType<typeof attentionBackwardHeads> | undefined;
    const reference = (name: "dq" | "dk" | "dv") => () => {
      gradients ??= attentionBackwardHeads(q, k, v, dout, p.sm_scale, true, dtype);
      return gradients[name];
    };
    return {
      check: {
        dQ: { actual: DQ, reference: reference("dq") },
        dK: { actual: DK, reference: reference("dk") },
        dV: { actual: DV, reference: reference("dv") },
      },
    };
  },
});
