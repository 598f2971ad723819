import { KbError } from "@kb/errors";

/** The published dimensions of one decoder layer (Llama 3 style: RMSNorm, GQA, RoPE, SwiGLU). */
export interface LayerDims {
  /** Model width: columns of the residual stream. */
  readonly hidden: number;
  /** Query heads. */
  readonly heads: number;
  /** Key/value heads (grouped-query attention: each serves heads / kvHeads query heads). */
  readonly kvHeads: number;
  /** Columns of one head. */
  readonly headDim: number;
  /** Width of the SwiGLU MLP (gate and up outputs). */
  readonly ffn: number;
  /** RMSNorm epsilon. */
  readonly eps: number;
  /** RoPE base frequency. */
  readonly ropeTheta: number;
}

/** A preset: a layer's dimensions and the sequence length it runs by default. */
export interface Preset extends LayerDims {
  readonly seq: number;
}

/**
 * The layer presets. `tiny` is small enough to `--verify` in seconds and still has every feature
 * (GQA with 2 query heads per KV head, 4 KV heads so tp = 1, 2 or 4 divide it); the Llama 3
 * presets carry the published dimensions (Meta's model cards / config.json: hidden 4096 and 8192,
 * 32 and 64 heads, 8 KV heads, FFN 14336 and 28672, head dim 128, rope_theta 500000, eps 1e-5).
 */
export const PRESETS = {
  tiny: { hidden: 128, heads: 8, kvHeads: 4, headDim: 16, ffn: 256, eps: 1e-5, ropeTheta: 10000, seq: 32 },
  "llama3-8b": {
    hidden: 4096,
    heads: 32,
    kvHeads: 8,
    headDim: 128,
    ffn: 14336,
    eps: 1e-5,
    ropeTheta: 500000,
    seq: 2048,
  },
  "llama3-70b": {
    hidden: 8192,
    heads: 64,
    kvHeads: 8,
    headDim: 128,
    ffn: 28672,
    eps: 1e-5,
    ropeTheta: 500000,
    seq: 2048,
  },
} as const satisfies Record<string, Preset>;

/** A preset's name. */
export type PresetName = keyof typeof PRESETS;

/** One tensor-parallel rank's share of a layer (Megatron: heads and FFN columns split `tp` ways). */
export interface RankDims {
  /** Query heads of the rank. */
  readonly heads: number;
  /** KV heads of the rank. */
  readonly kvHeads: number;
  /** FFN columns of the rank. */
  readonly ffn: number;
  /** Columns of the rank's fused QKV output: (heads + 2 kvHeads) x headDim. */
  readonly qkvCols: number;
}

/**
 * The share of each of `tp` ranks: `heads / tp` query heads, and their KV heads: `kvHeads / tp`
 * when `tp` divides the KV heads, else (tp a multiple of them, more ranks than KV heads) the one KV
 * head its query heads read, copied to each of the `tp / kvHeads` ranks that share it (Megatron's
 * KV replication). Throws `RUNTIME_INVALID` when `tp` neither divides nor is a multiple of the KV
 * heads, does not divide the query heads or the FFN width, or the query heads are not a whole
 * number of groups per KV head.
 */
export function rankDims(dims: LayerDims, tp: number): RankDims {
  if (dims.heads % dims.kvHeads !== 0) {
    throw new KbError(
      "RUNTIME_INVALID",
      `llama-layer: heads (${dims.heads}) must be a multiple of kvHeads (${dims.kvHeads}): each KV head serves a whole group of query heads.`,
    );
  }
  const kvFits = dims.kvHeads % tp === 0 || tp % dims.kvHeads === 0;
  if (!kvFits || dims.heads % tp !== 0 || dims.ffn % tp !== 0) {
    throw new KbError(
      "RUNTIME_INVALID",
      `llama-layer: tp=${tp} must divide kvHeads (${dims.kvHeads}) or be a multiple of it, and divide heads (${dims.heads}) and ffn (${dims.ffn}): each rank takes whole query heads with their KV heads, and an equal block of FFN columns. Choose a divisor of ${dims.kvHeads}, or a multiple of it that divides ${dims.heads}.`,
    );
  }
  const heads = dims.heads / tp;
  const kvHeads = Math.max(1, dims.kvHeads / tp);
  return { heads, kvHeads, ffn: dims.ffn / tp, qkvCols: (heads + 2 * kvHeads) * dims.headDim };
}

/** The first KV head of rank `r` of `tp` (shared by `tp / kvHeads` ranks when tp exceeds them). */
export function firstKvHead(dims: LayerDims, tp: number, r: number): number {
  return Math.floor((r * dims.kvHeads) / tp);
}
