import type { DeviceTensor } from "@kb/runtime";
import type { TL } from "@kb/tl";
import { cubeIndex } from "../cube-parts.js";
import { toDtype, toF32 } from "./norm.js";

// Rotary position embedding (RoPE, the "rotate half" form of Llama's reference code) on the
// rank's query and key heads of the fused QKV output, and the KV cache write: rotated K and the
// V heads go to the cache rows of their positions.

/** One rank's operands of {@link ropeKernel}. */
export interface RopePart {
  /** The fused projection `[T, (heads + 2 kvHeads) x headDim]`: Q heads, K heads, V heads; Q is rotated in place. */
  readonly QKV: DeviceTensor;
  /** cos and sin of each token row's angles `[T, headDim / 2]`, f32. */
  readonly Cos: DeviceTensor;
  readonly Sin: DeviceTensor;
  /** The KV cache `[batch x ctx, kvHeads x headDim]`: row `b ctx + p` holds position `p` of sequence `b`. */
  readonly Kc: DeviceTensor;
  readonly Vc: DeviceTensor;
}

/** The shape of the work of {@link ropeKernel}. */
export interface RopeConfig {
  readonly heads: number;
  readonly kvHeads: number;
  readonly headDim: number;
  readonly batch: number;
  /** New tokens per sequence (the prompt in prefill, 1 in decode). */
  readonly tokens: number;
  /** Rows of the cache per sequence. */
  readonly ctx: number;
  /** Position of the first new token (0 in prefill, the cached length in decode). */
  readonly pos0: number;
  readonly blockRows: number;
}

/**
 * Per (sequence, block of rows, head): a query head is rotated in place, a key head rotated into
 * the K cache, a value head copied into the V cache. With `x1`, `x2` the two halves of a head,
 * `out = [x1 cos - x2 sin, x2 cos + x1 sin]` in f32, stored in the dtype of the activations.
 */
export async function ropeKernel(
  tl: TL,
  parts: readonly (RopePart | null)[],
  config: RopeConfig,
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const { QKV, Cos, Sin, Kc, Vc } = part;
  const { heads, kvHeads, headDim, tokens, ctx, pos0, blockRows } = config;
  const width = QKV.shape[1] as number;
  const cacheWidth = Kc.shape[1] as number;
  const half = headDim / 2;
  const slots = heads + 2 * kvHeads;
  const blocks = tl.cdiv(tokens, blockRows);
  const count = config.batch * blocks * slots;
  for (let t = tl.programId(0); t < count; t += tl.numPrograms(0)) {
    const mark = tl.scratchMark();
    const slot = t % slots;
    const block = Math.floor(t / slots) % blocks;
    const b = Math.floor(t / (slots * blocks));
    const i0 = block * blockRows;
    const n = Math.min(blockRows, tokens - i0);
    const row = b * tokens + i0; // the first token row of the block in QKV
    const cacheRow = b * ctx + pos0 + i0;
    const col = slot * headDim;
    if (slot >= heads + kvHeads) {
      const g = slot - heads - kvHeads;
      const v = await tl.load(QKV.at(row, col), [n, headDim], QKV.dtype, { stride: width });
      await tl.store(Vc.at(cacheRow, g * headDim), v, { stride: cacheWidth });
    } else {
      const x1 = await toF32(tl, await tl.load(QKV.at(row, col), [n, half], QKV.dtype, { stride: width }));
      const x2 = await toF32(
        tl,
        await tl.load(QKV.at(row, col + half), [n, half], QKV.dtype, { stride: width }),
      );
      const cos = await tl.load(Cos.at(row, 0), [n, half], "f32");
      const sin = await tl.load(Sin.at(row, 0), [n, half], "f32");
      const o1 = await toDtype(tl, await tl.sub(await tl.mul(x1, cos), await tl.mul(x2, sin)), QKV.dtype);
      const o2 = await toDtype(tl, await tl.add(await tl.mul(x2, cos), await tl.mul(x1, sin)), QKV.dtype);
      const isQuery = slot < heads;
      const [dest, destRow, destCol, stride] = isQuery
        ? [QKV, row, col, width]
        : [Kc, cacheRow, (slot - heads) * headDim, cacheWidth];
      await tl.store(dest.at(destRow, destCol), o1, { stride });
      await tl.store(dest.at(destRow, destCol + half), o2, { stride });
    }
    tl.scratchRelease(mark);
  }
}

/**
 * The RoPE tables of token rows: `cos` and `sin` of `position x theta^(-2i / headDim)` for
 * `i < headDim / 2`, row `b tokens + j` at position `pos0 + j`, as f32 values (row-major
 * `[batch x tokens, headDim / 2]`).
 */
export function ropeTables(
  headDim: number,
  theta: number,
  batch: number,
  tokens: number,
  pos0: number,
): { cos: Float32Array; sin: Float32Array } {
  const half = headDim / 2;
  const cos = new Float32Array(batch * tokens * half);
  const sin = new Float32Array(batch * tokens * half);
  for (let b = 0; b < batch; b++) {
    for (let j = 0; j < tokens; j++) {
      for (let i = 0; i < half; i++) {
        const angle = (pos0 + j) * theta ** ((-2 * i) / headDim);
        cos[(b * tokens + j) * half + i] = Math.cos(angle);
        sin[(b * tokens + j) * half + i] = Math.sin(angle);
      }
    }
  }
  return { cos, sin };
}
