import {
  type DeferredTensor,
  type DeviceTensor,
  deferredTensor,
  type LaunchRecord,
  type Simulator,
} from "@kb/runtime";
import { type Dtype, Tensor } from "@kb/tensor";
import { sliceRows } from "../cube-parts.js";
import { type AttentionConfig, decodeAttentionKernel, prefillAttentionKernel } from "./attention.js";
import { firstKvHead, type LayerDims, rankDims } from "./config.js";
import { type LinearTiles, linearKernel, swigluKernel } from "./linear.js";
import { addRmsNormKernel, type NormConfig, residualAddKernel, rmsNormKernel } from "./norm.js";
import { concatColumns, type TpPlacement } from "./ranks.js";
import type { LayerShape, LayerWeights, PastCache } from "./reference.js";
import { ropeKernel, ropeTables } from "./rope.js";

/** How a layer runs: its dimensions, tokens, dtype and the kernels' block sizes. */
export interface LayerPlan {
  readonly dims: LayerDims;
  readonly shape: LayerShape;
  readonly phase: "prefill" | "decode";
  readonly dtype: Dtype;
  readonly tiles: LinearTiles;
  /** Query rows and keys per attention block. */
  readonly block: number;
  /** Rows per program step of the norm, residual and RoPE kernels. */
  readonly blockRows: number;
}

/** The params a layer's plan is made of (llama-layer's, after parsing). */
export interface LayerPlanParams {
  readonly phase: "prefill" | "decode";
  readonly dtype: Dtype;
  readonly tm: number;
  readonly tn: number;
  readonly tk: number;
  readonly block: number;
  readonly blockRows: number;
}

/** The plan for `batch` sequences: a prefill of `seq` tokens each, or one decode step over `seq` cached positions. */
export function layerPlanOf(p: LayerPlanParams, dims: LayerDims, batch: number, seq: number): LayerPlan {
  const decode = p.phase === "decode";
  return {
    dims,
    shape: { batch, tokens: decode ? 1 : seq, pos0: decode ? seq : 0 },
    phase: p.phase,
    dtype: p.dtype,
    tiles: { tm: p.tm, tn: p.tn, tk: p.tk },
    block: p.block,
    blockRows: p.blockRows,
  };
}

/** One rank's device tensors: its weight shards, its KV cache and its activations, all in its cube's HBM. */
export interface RankBuffers {
  /** The residual stream in and out; layers alternate between them. */
  readonly X: DeviceTensor;
  readonly Y: DeviceTensor;
  readonly attnNorm: DeviceTensor;
  readonly mlpNorm: DeviceTensor;
  readonly XN: DeviceTensor;
  readonly Wqkv: DeviceTensor;
  readonly QKV: DeviceTensor;
  readonly Cos: DeviceTensor;
  readonly Sin: DeviceTensor;
  readonly Kc: DeviceTensor;
  readonly Vc: DeviceTensor;
  readonly A: DeviceTensor;
  readonly Wo: DeviceTensor;
  readonly O: DeviceTensor;
  readonly H: DeviceTensor;
  readonly HN: DeviceTensor;
  readonly Wg: DeviceTensor;
  readonly Wu: DeviceTensor;
  readonly Act: DeviceTensor;
  readonly Wd: DeviceTensor;
  readonly D: DeviceTensor;
}

/** A launch of a layer: a kernel or an all-reduce. */
export interface LayerLaunch {
  readonly layer: number;
  readonly kernel: string;
  readonly communication: boolean;
  readonly record: LaunchRecord;
}

/** The tensors {@link uploadLayer} can take from another call's buffers, by upload name: weights and RoPE tables. */
const SHAREABLE: Readonly<Record<string, keyof RankBuffers>> = {
  attn_norm: "attnNorm",
  mlp_norm: "mlpNorm",
  w_qkv: "Wqkv",
  rope_cos: "Cos",
  rope_sin: "Sin",
  w_o: "Wo",
  w_gate: "Wg",
  w_up: "Wu",
  w_down: "Wd",
};

/** Rows of the KV cache per sequence: the cached positions and the new tokens. */
export function contextOf(shape: LayerShape): number {
  return shape.pos0 + shape.tokens;
}

/**
 * Copies each rank's shards to its cube's HBM (Megatron: QKV, gate and up column-parallel, o-proj
 * and down row-parallel) with its KV cache (the past positions of its KV heads) and the input, and
 * allocates the activations there. With `sharing` (the buffers of an earlier call on the same
 * ranks and plan), the weights and RoPE tables are that call's tensors, not new copies: the
 * micro-batches of a pipeline stage share one copy of its weights.
 *
 * The weight shards are deferred tensors (no kernel branches on a weight): `weights` is called
 * (cache it) only when a run makes their bytes (`--verify`, `--full-data`), never in a timing run.
 */
export async function uploadLayer(
  sim: Simulator,
  placement: TpPlacement,
  plan: LayerPlan,
  weights: LayerWeights | (() => LayerWeights),
  x: Tensor,
  past: PastCache | null,
  sharing?: readonly RankBuffers[],
): Promise<RankBuffers[]> {
  const { dims, shape, dtype } = plan;
  const tp = placement.ranks.length;
  const share = rankDims(dims, tp);
  const rows = shape.batch * shape.tokens;
  const hd = dims.headDim;
  const tables = ropeTables(hd, dims.ropeTheta, shape.batch, shape.tokens, shape.pos0);
  const cos = Tensor.fromArray(tables.cos, [rows, hd / 2], "f32");
  const sin = Tensor.fromArray(tables.sin, [rows, hd / 2], "f32");
  const out: RankBuffers[] = [];
  for (const [r, rank] of placement.ranks.entries()) {
    const where = { sip: rank.sip, cube: rank.cube };
    const put = async (t: Tensor | DeferredTensor, name: string) => {
      const field = SHAREABLE[name];
      const shared = field === undefined ? undefined : sharing?.[r]?.[field];
      return shared ?? sim.toDevice(t, { ...where, name: `${name}.r${r}` });
    };
    const empty = (dims2: readonly number[], name: string, type: Dtype = dtype) =>
      sim.empty(dims2, type, { ...where, name: `${name}.r${r}` });
    const heads = { start: r * share.heads * hd, count: share.heads * hd };
    const kv = { start: firstKvHead(dims, tp, r) * hd, count: share.kvHeads * hd };
    const ffn = { start: r * share.ffn, count: share.ffn };
    const w = typeof weights === "function" ? weights : () => weights;
    const shard = (shape: readonly number[], make: (all: LayerWeights) => Tensor) =>
      deferredTensor(shape, dtype, () => make(w()));
    const wqkv = shard([dims.hidden, share.qkvCols], (all) =>
      concatColumns(
        [
          { tensor: all.wq, ...heads },
          { tensor: all.wk, ...kv },
          { tensor: all.wv, ...kv },
        ],
        dtype,
      ),
    );
    const cache = (full: Tensor | undefined) => cacheOf(full, shape, kv, dtype);
    out.push({
      X: await put(x, "x"),
      Y: empty([rows, dims.hidden], "y"),
      attnNorm: await put(
        shard([1, dims.hidden], (all) => all.attnNorm.reshape([1, dims.hidden])),
        "attn_norm",
      ),
      mlpNorm: await put(
        shard([1, dims.hidden], (all) => all.mlpNorm.reshape([1, dims.hidden])),
        "mlp_norm",
      ),
      XN: empty([rows, dims.hidden], "x_norm"),
      Wqkv: await put(wqkv, "w_qkv"),
      QKV: empty([rows, share.qkvCols], "qkv"),
      Cos: await put(cos, "rope_cos"),
      Sin: await put(sin, "rope_sin"),
      Kc: await put(cache(past?.k), "k_cache"),
      Vc: await put(cache(past?.v), "v_cache"),
      A: empty([rows, share.heads * hd], "attn"),
      Wo: await put(
        shard([heads.count, dims.hidden], (all) => sliceRows(all.wo, heads)),
        "w_o",
      ),
      O: empty([rows, dims.hidden], "o_partial", "f32"),
      H: empty([rows, dims.hidden], "h", "f32"), // the residual stream mid-layer: f32
      HN: empty([rows, dims.hidden], "h_norm"),
      Wg: await put(
        shard([dims.hidden, ffn.count], (all) => concatColumns([{ tensor: all.wGate, ...ffn }], dtype)),
        "w_gate",
      ),
      Wu: await put(
        shard([dims.hidden, ffn.count], (all) => concatColumns([{ tensor: all.wUp, ...ffn }], dtype)),
        "w_up",
      ),
      Act: empty([rows, share.ffn], "act"),
      Wd: await put(
        shard([ffn.count, dims.hidden], (all) => sliceRows(all.wDown, ffn)),
        "w_down",
      ),
      D: empty([rows, dims.hidden], "down_partial", "f32"),
    });
  }
  return out;
}

/**
 * A rank's KV cache `[batch x ctx, its KV heads x headDim]`: row `b ctx + p` for position `p` of
 * sequence `b`, the past positions from `full` (`[batch x pos0, kvHeads x headDim]`), the new ones
 * zero until the RoPE kernel writes them.
 */
function cacheOf(
  full: Tensor | undefined,
  shape: LayerShape,
  kv: { start: number; count: number },
  dtype: Dtype,
): Tensor {
  const ctx = contextOf(shape);
  const out = Tensor.zeros([shape.batch * ctx, kv.count], dtype);
  if (full === undefined || shape.pos0 === 0) return out;
  const mine = concatColumns([{ tensor: full, ...kv }], dtype);
  const rowBytes = mine.nbytes / (shape.batch * shape.pos0);
  for (let b = 0; b < shape.batch; b++) {
    const from = b * shape.pos0 * rowBytes;
    out.bytes.set(mine.bytes.subarray(from, from + shape.pos0 * rowBytes), b * ctx * rowBytes);
  }
  return out;
}

/** The steps of one layer {@link runLayer} states with `sim.progress`: 9 kernels, and 2 all-reduces on several ranks. */
export function layerSteps(placement: TpPlacement): number {
  return placement.allReduce === null ? 9 : 11;
}

/**
 * Runs layer `layer` on every rank: reading the residual stream from X (even layers) or Y (odd
 * ones) and writing the other. Returns its launches in order; an all-reduce follows the o-proj and
 * the down projection when there is more than one rank. With `layers` (the layers in the run), it
 * states its position before each kernel and all-reduce (`sim.progress`, {@link layerSteps} a layer).
 * With `attentionOnly`, it stops after the add-rmsnorm (H and HN written): a MoE layer runs its own MLP.
 */
export async function runLayer(
  sim: Simulator,
  placement: TpPlacement,
  plan: LayerPlan,
  buffers: readonly RankBuffers[],
  layer: number,
  layers?: number,
  attentionOnly = false,
): Promise<LayerLaunch[]> {
  const { dims, shape } = plan;
  const share = rankDims(dims, buffers.length);
  const grid = placement.grid;
  const launches: LayerLaunch[] = [];
  const perLayer = layerSteps(placement);
  let step = 0;
  const progress = (kernel: string) => {
    if (layers !== undefined)
      sim.progress(
        layer * perLayer + step,
        layers * perLayer,
        `layer ${layer + 1}/${layers} · launch ${kernel} ${step + 1}/${perLayer}`,
      );
    step++;
  };
  const launch = async <A extends readonly unknown[]>(
    kernel: string,
    fn: (tl: never, ...args: A) => Promise<void>,
    args: A,
  ) => {
    progress(kernel);
    const record = await sim.launch(fn as never, { grid, args: args as never, name: kernel });
    launches.push({ layer, kernel, communication: false, record });
  };
  const allReduce = async (kernel: string, tensors: DeviceTensor[]) => {
    if (placement.allReduce === null) return;
    progress(kernel);
    for (const { name, record } of await placement.allReduce(kernel, tensors)) {
      launches.push({ layer, kernel: name, communication: true, record });
    }
  };
  const inOf = (b: RankBuffers) => (layer % 2 === 0 ? b.X : b.Y);
  const outOf = (b: RankBuffers) => (layer % 2 === 0 ? b.Y : b.X);
  const norm: NormConfig = { blockRows: plan.blockRows, eps: dims.eps };
  const attention: AttentionConfig = {
    heads: share.heads,
    kvHeads: share.kvHeads,
    headDim: dims.headDim,
    batch: shape.batch,
    tokens: shape.tokens,
    ctx: contextOf(shape),
    blockM: plan.block,
    blockN: plan.block,
    scale: 1 / Math.sqrt(dims.headDim),
    pos0: shape.pos0,
  };
  await launch("rmsnorm", rmsNormKernel, [
    buffers.map((b) => ({ X: inOf(b), W: b.attnNorm, Y: b.XN })),
    norm,
  ]);
  await launch("qkv-proj", linearKernel, [
    buffers.map((b) => ({ A: b.XN, W: b.Wqkv, C: b.QKV })),
    plan.tiles,
  ]);
  await launch("rope-kv-cache", ropeKernel, [
    buffers.map((b) => ({ QKV: b.QKV, Cos: b.Cos, Sin: b.Sin, Kc: b.Kc, Vc: b.Vc })),
    { ...attention, pos0: shape.pos0, blockRows: plan.blockRows },
  ]);
  await launch(
    plan.phase === "prefill" ? "attention-prefill" : "attention-decode",
    plan.phase === "prefill" ? prefillAttentionKernel : decodeAttentionKernel,
    [buffers.map((b) => ({ QKV: b.QKV, Kc: b.Kc, Vc: b.Vc, O: b.A })), attention],
  );
  await launch("o-proj", linearKernel, [buffers.map((b) => ({ A: b.A, W: b.Wo, C: b.O })), plan.tiles]);
  await allReduce(
    "all-reduce o",
    buffers.map((b) => b.O),
  );
  await launch("add-rmsnorm", addRmsNormKernel, [
    buffers.map((b) => ({ X: inOf(b), O: b.O, W: b.mlpNorm, H: b.H, HN: b.HN })),
    norm,
  ]);
  if (attentionOnly) return launches;
  await launch("gate-up-swiglu", swigluKernel, [
    buffers.map((b) => ({ A: b.HN, Wg: b.Wg, Wu: b.Wu, Act: b.Act })),
    plan.tiles,
  ]);
  await launch("down-proj", linearKernel, [buffers.map((b) => ({ A: b.Act, W: b.Wd, C: b.D })), plan.tiles]);
  await allReduce(
    "all-reduce down",
    buffers.map((b) => b.D),
  );
  await launch("residual-add", residualAddKernel, [
    buffers.map((b) => ({ X: b.H, D: b.D, Y: outOf(b) })),
    norm,
  ]);
  return launches;
}
