import type { DeviceTensor } from "@kb/runtime";
import type { LoadFuture, TensorHandle, TL } from "@kb/tl";
import { cubeIndex } from "../cube-parts.js";
import { toDtype } from "./norm.js";

// Flash attention with grouped-query heads over the KV cache, the structure of Triton's tutorial
// 06 (examples/triton-tutorials/06-fused-attention.ts): a block of query rows in TCM, a loop over
// blocks of keys and values with an online softmax (running max m, running sum l, an f32
// accumulator rescaled by exp2(m_old - m_new)), the probabilities cast to the input dtype for the
// second tl.dot. Prefill masks the diagonal blocks (causal) and stops there; decode's one query
// row per head sees the whole cache. Query head h reads KV head floor(h / group).

/** One rank's operands of the attention kernels. */
export interface AttentionPart {
  /** The fused projection `[T, (heads + 2 kvHeads) x headDim]`: the rotated query heads come first. */
  readonly QKV: DeviceTensor;
  /** The KV cache `[batch x ctx, kvHeads x headDim]`. */
  readonly Kc: DeviceTensor;
  readonly Vc: DeviceTensor;
  /** The attention output `[T, heads x headDim]`, head h in columns `[h headDim, (h + 1) headDim)`. */
  readonly O: DeviceTensor;
}

/** The shape of the work of the attention kernels. */
export interface AttentionConfig {
  readonly heads: number;
  readonly kvHeads: number;
  readonly headDim: number;
  readonly batch: number;
  /** New tokens per sequence: the prompt (prefill) or 1 (decode). */
  readonly tokens: number;
  /** Rows of the cache per sequence; decode attends to all of them. */
  readonly ctx: number;
  /** Query rows per block (prefill) and keys per step of the K loop. */
  readonly blockM: number;
  readonly blockN: number;
  readonly scale: number;
  /**
   * Prefill only: the position of the first new token (default 0). Query row `i` of a sequence is
   * at position `pos0 + i` and sees keys `0..pos0 + i`: a later chunk of a chunked prefill attends
   * to the chunks before it in the cache.
   */
  readonly pos0?: number;
}

/**
 * The online-softmax loop: `q` `[rows, headDim]` against keys `[0, keys)` of the cache rows from
 * `cacheRow`, columns `col`; `causalFrom`: query row `r` sees keys `0..causalFrom + r` (null: all).
 * Returns the normalised f32 output `[rows, headDim]`.
 *
 * The K and V blocks are double-buffered: the loads of block `j + 1` (tl.loadAsync into the other
 * pair of buffers) run while block `j`'s dots and softmax math do, so the PE_DMA and the compute
 * engines overlap instead of taking turns.
 */
async function flashLoop(
  tl: TL,
  part: AttentionPart,
  q: TensorHandle,
  cacheRow: number,
  col: number,
  keys: number,
  causalFrom: number | null,
  config: AttentionConfig,
): Promise<TensorHandle> {
  const { Kc, Vc } = part;
  const [rows, headDim] = q.shape as [number, number];
  const stride = Kc.shape[1] as number;
  const qkScale = config.scale * Math.LOG2E; // exp(x) = exp2(x log2 e)
  const mI = tl.full([rows], Number.NEGATIVE_INFINITY, "f32");
  const lI = tl.full([rows], 0, "f32");
  let acc = tl.zeros([rows, headDim], "f32");
  const offsM = causalFrom === null ? null : tl.arange(causalFrom, causalFrom + rows);
  const kBuffers = [0, 1].map(() => tl.empty([config.blockN, headDim], Kc.dtype));
  const vBuffers = [0, 1].map(() => tl.empty([config.blockN, headDim], Vc.dtype));
  const issue = async (j: number) => {
    const n0 = j * config.blockN;
    const n = Math.min(config.blockN, keys - n0);
    const at = (buffers: TensorHandle[]) => tl.view(buffers[j % 2] as TensorHandle, 0, [n, headDim]);
    const k = await tl.loadAsync(Kc.at(cacheRow + n0, col), [n, headDim], Kc.dtype, {
      stride,
      out: at(kBuffers),
    });
    const v = await tl.loadAsync(Vc.at(cacheRow + n0, col), [n, headDim], Vc.dtype, {
      stride,
      out: at(vBuffers),
    });
    return { k, v };
  };
  const blocks = Math.ceil(keys / config.blockN);
  let next = blocks > 0 ? await issue(0) : null;
  for (let j = 0; j < blocks; j++) {
    const mark = tl.scratchMark();
    const n0 = j * config.blockN;
    const n = Math.min(config.blockN, keys - n0);
    const current = next as { k: LoadFuture; v: LoadFuture };
    next = j + 1 < blocks ? await issue(j + 1) : null;
    const k = await tl.wait(current.k);
    let qk = await tl.dot(q, tl.trans(k));
    if (offsM !== null && n0 + n - 1 > (causalFrom as number)) {
      const offsN = tl.arange(n0, n0 + n);
      const mask = await tl.ge(tl.expandDims(offsM, 1), tl.expandDims(offsN, 0));
      qk = await tl.where(mask, qk, tl.full([rows, n], Number.NEGATIVE_INFINITY, "f32"));
    }
    const rowMax = tl.reshape(await tl.max(qk, 1), [rows]);
    const mIJ = await tl.maximum(mI, await tl.mul(rowMax, qkScale));
    const p = await tl.exp2(await tl.sub(await tl.mul(qk, qkScale), tl.expandDims(mIJ, 1)));
    const alpha = await tl.exp2(await tl.sub(mI, mIJ));
    await tl.fma(lI, alpha, tl.reshape(await tl.sum(p, 1), [rows]), { out: lI }); // l = l alpha + rowsum(p)
    await tl.mul(acc, tl.expandDims(alpha, 1), { out: acc });
    const v = await tl.wait(current.v);
    acc = await tl.dot(await toDtype(tl, p, Vc.dtype), v, acc); // acc += p @ v
    await tl.maximum(mI, mIJ, { out: mI });
    tl.scratchRelease(mark);
  }
  return tl.div(acc, tl.expandDims(lI, 1));
}

/**
 * Prefill: per (sequence, query head, block of `blockM` query rows), causal attention over the
 * sequence's cache rows `0..pos0 + i` for query row `i` (`pos0` 0: the prompt starts at position 0).
 */
export async function prefillAttentionKernel(
  tl: TL,
  parts: readonly (AttentionPart | null)[],
  config: AttentionConfig,
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const { QKV, O } = part;
  const { heads, kvHeads, headDim, tokens, ctx, blockM } = config;
  const group = heads / kvHeads;
  const blocks = tl.cdiv(tokens, blockM);
  const count = config.batch * heads * blocks;
  for (let t = tl.programId(0); t < count; t += tl.numPrograms(0)) {
    const mark = tl.scratchMark();
    // Heaviest first: the last query block (which sees every key) of each (sequence, head), then
    // the one before it, ... With the PEs taking items round-robin, each PE gets a mix of long and
    // short causal rows; block-fastest order gave PE p block p of every head (the last PE all the
    // longest ones, 1.9 x the mean work on an 8b rank).
    const block = blocks - 1 - Math.floor(t / (config.batch * heads));
    const h = t % heads;
    const b = Math.floor(t / heads) % config.batch;
    const m0 = block * blockM;
    const rows = Math.min(blockM, tokens - m0);
    const width = QKV.shape[1] as number;
    const q = await tl.load(QKV.at(b * tokens + m0, h * headDim), [rows, headDim], QKV.dtype, {
      stride: width,
    });
    const g = Math.floor(h / group);
    const pos0 = config.pos0 ?? 0;
    const o = await flashLoop(tl, part, q, b * ctx, g * headDim, pos0 + m0 + rows, pos0 + m0, config);
    const out = await toDtype(tl, o, O.dtype);
    await tl.store(O.at(b * tokens + m0, h * headDim), out, { stride: O.shape[1] as number });
    tl.scratchRelease(mark);
  }
}

/**
 * Decode: per (sequence, KV head), the `group` query heads that share the KV head as the rows of
 * one block (they are adjacent in the QKV row), over every cache row of the sequence.
 */
export async function decodeAttentionKernel(
  tl: TL,
  parts: readonly (AttentionPart | null)[],
  config: AttentionConfig,
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const { QKV, O } = part;
  const { heads, kvHeads, headDim, ctx } = config;
  const group = heads / kvHeads;
  const count = config.batch * kvHeads;
  for (let t = tl.programId(0); t < count; t += tl.numPrograms(0)) {
    const mark = tl.scratchMark();
    const g = t % kvHeads;
    const b = Math.floor(t / kvHeads);
    const q = await tl.load(QKV.at(b, g * group * headDim), [group, headDim], QKV.dtype);
    const o = await flashLoop(tl, part, q, b * ctx, g * headDim, ctx, null, config);
    await tl.store(O.at(b, g * group * headDim), await toDtype(tl, o, O.dtype));
    tl.scratchRelease(mark);
  }
}
