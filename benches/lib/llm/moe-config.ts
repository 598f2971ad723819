import { KbError } from "@kb/errors";
import type { LayerDims } from "./config.js";

/** The dimensions of a Mixtral-style MoE decoder layer: a Llama layer whose MLP is `experts` SwiGLU experts. */
export interface MoeDims extends LayerDims {
  /** Experts of the MoE block (`num_local_experts`); `ffn` is one expert's width. */
  readonly experts: number;
  /** Experts each token goes to (`num_experts_per_tok`). */
  readonly topK: number;
}

/** A MoE preset: a layer's dimensions and its default sequence length. */
export interface MoePreset extends MoeDims {
  readonly seq: number;
}

/**
 * The MoE presets. `tiny` verifies in seconds (8 experts, top-2, expert width 256; attention as
 * llama-layer's tiny). `mixtral-8x7b` carries Mixtral 8x7B's published dimensions (Mistral AI's
 * `config.json` of mistralai/Mixtral-8x7B-v0.1 on Hugging Face: hidden 4096, 32 heads, 8 KV heads,
 * head dim 128, intermediate_size 14336, num_local_experts 8, num_experts_per_tok 2,
 * rope_theta 1e6, rms_norm_eps 1e-5). Its default sequence is 512: the host plans the routing
 * from its own reference of the attention block (see moe-plan.ts), which costs f64 loops over the
 * whole attention.
 */
export const MOE_PRESETS = {
  tiny: {
    hidden: 128,
    heads: 8,
    kvHeads: 4,
    headDim: 16,
    ffn: 256,
    experts: 8,
    topK: 2,
    eps: 1e-5,
    ropeTheta: 10000,
    seq: 32,
  },
  "mixtral-8x7b": {
    hidden: 4096,
    heads: 32,
    kvHeads: 8,
    headDim: 128,
    ffn: 14336,
    experts: 8,
    topK: 2,
    eps: 1e-5,
    ropeTheta: 1e6,
    seq: 512,
  },
} as const satisfies Record<string, MoePreset>;

/** A MoE preset's name. */
export type MoePresetName = keyof typeof MOE_PRESETS;

/**
 * Checks that `ep` expert-parallel groups of `tp` tensor-parallel ranks each can hold the layer:
 * `ep` divides the experts (each group takes `experts / ep` whole experts), `tp` divides an
 * expert's width (each rank of a group an equal block of its columns), and `topK` is at most the
 * experts. Throws `RUNTIME_INVALID` naming the parameter and the values that fit (its message
 * starts with `bench`).
 */
export function checkMoeSplit(dims: MoeDims, ep: number, tp: number, bench = "moe-layer"): void {
  const divisors = (n: number) => Array.from({ length: n }, (_, i) => i + 1).filter((d) => n % d === 0);
  if (dims.topK < 1 || dims.topK > dims.experts) {
    throw new KbError(
      "RUNTIME_INVALID",
      `${bench}: topK=${dims.topK} must be between 1 and the ${dims.experts} experts.`,
    );
  }
  if (dims.experts % ep !== 0) {
    throw new KbError(
      "RUNTIME_INVALID",
      `${bench}: ep=${ep} does not divide the ${dims.experts} experts: each expert-parallel group holds whole experts. Choose ep among ${divisors(dims.experts).join(", ")}.`,
    );
  }
  if (dims.ffn % tp !== 0) {
    throw new KbError(
      "RUNTIME_INVALID",
      `${bench}: tp=${tp} does not divide the expert width (${dims.ffn}): each rank of an expert group takes an equal block of every expert's columns.`,
    );
  }
}
