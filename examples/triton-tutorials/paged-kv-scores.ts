import { type DeviceTensor, defineBench } from "@kb/runtime";
import { Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { commonParams, firstCube, gridOf } from "../../benches/lib/params.js";

// Decode-time attention scores over a paged KV cache in fp8, as a Triton user writes it (vLLM's
// layout; not one of Triton's numbered tutorials): program `seq` loads its context length, then
// for each of its logical blocks loads the physical block id from the block table, gathers that
// block's rows of the e4m3 key cache through offsets computed from the loaded id, dequantizes
// them (cast to f32 times the per-tensor `k_scale`), and stores `q . k` for each token, masked to
// the context length. The block ids are loaded data: phase 1 evaluates `phys * BLOCK_SIZE +
// offs_t` on them, so it knows which bytes each gather moves.
//
//   seq = tl.program_id(0)
//   ctx_len = tl.load(context_lens_ptr + seq)
//   offs_d = tl.arange(0, HEAD_DIM); offs_t = tl.arange(0, BLOCK_SIZE)
//   q = tl.load(q_ptr + seq * HEAD_DIM + offs_d).to(tl.float32)
//   for j in range(tl.cdiv(ctx_len, BLOCK_SIZE)):
//       phys = tl.load(block_tables_ptr + seq * MAX_BLOCKS + j)
//       rows = phys * BLOCK_SIZE + offs_t
//       k = tl.load(k_cache_ptr + rows[:, None] * HEAD_DIM + offs_d[None, :])      # float8e4nv
//       s = tl.sum(k.to(tl.float32) * k_scale * q[None, :], axis=1)
//       tok = j * BLOCK_SIZE + offs_t
//       tl.store(out_ptr + seq * MAX_CTX + tok, s.to(out_ptr.dtype.element_ty), mask=tok < ctx_len)

/** The shapes of {@link pagedScoresKernel} (Triton's constexprs). */
export interface PagedConfig {
  readonly MAX_BLOCKS: number;
  readonly BLOCK_SIZE: number;
  readonly HEAD_DIM: number;
  readonly k_scale: number;
}

/** `out[seq, t] = sum_d q[seq, d] * k_scale * k_cache[row(seq, t), d]` for the tokens of `seq`. */
export async function pagedScoresKernel(
  tl: TL,
  q_ptr: DeviceTensor,
  k_cache: DeviceTensor,
  block_tables: DeviceTensor,
  context_lens: DeviceTensor,
  out: DeviceTensor,
  config: PagedConfig,
): Promise<void> {
  const { MAX_BLOCKS, BLOCK_SIZE, HEAD_DIM, k_scale } = config;
  const MAX_CTX = MAX_BLOCKS * BLOCK_SIZE;
  const seq = tl.programId(0);
  const ctx_len = (await tl.load(context_lens.at(seq), [1], "i32")).data.getFlat(0);
  const offs_d = tl.arange(0, HEAD_DIM);
  const offs_t = tl.arange(0, BLOCK_SIZE);
  const q = await (await tl.load(q_ptr.at(seq, 0), [HEAD_DIM], q_ptr.dtype)).to("f32");
  for (let j = 0; j < tl.cdiv(ctx_len, BLOCK_SIZE); j++) {
    const mark = tl.scratchMark();
    const phys = await tl.load(block_tables.at(seq, j), [1], "i32");
    const rows = await tl.add(await tl.mul(phys, BLOCK_SIZE), offs_t);
    const offs = await tl.add(await tl.mul(tl.expandDims(rows, 1), HEAD_DIM), tl.expandDims(offs_d, 0));
    const k = await tl.load(k_cache, [BLOCK_SIZE, HEAD_DIM], "f8e4m3", { offsets: offs });
    const kf = await tl.mul(await k.to("f32"), k_scale);
    const s = tl.reshape(await tl.sum(await tl.mul(kf, tl.expandDims(q, 0)), 1), [BLOCK_SIZE]);
    const tok = await tl.add(offs_t, j * BLOCK_SIZE);
    const value = out.dtype === "f32" ? s : await s.to(out.dtype);
    await tl.store(out, value, {
      offsets: await tl.add(tok, seq * MAX_CTX),
      mask: await tl.lt(tok, ctx_len),
    });
    tl.scratchRelease(mark);
  }
}

/** A deterministic stream of integers in `[0, n)` from `seed` (an LCG). */
function draws(seed: number): (n: number) => number {
  let state = (seed * 2654435761 + 7) >>> 0;
  return (n) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
}

/** Context lengths in `[1, MAX_CTX]` and a block table dealing each sequence distinct physical blocks, shuffled. */
export function pagedLayout(
  seqs: number,
  maxBlocks: number,
  blockSize: number,
  seed: number,
): { lens: number[]; table: number[]; physical: number } {
  const draw = draws(seed);
  const lens = Array.from({ length: seqs }, () => 1 + draw(maxBlocks * blockSize));
  const physical = seqs * maxBlocks;
  const ids = Array.from({ length: physical }, (_, i) => i);
  for (let i = ids.length - 1; i > 0; i--) {
    const swap = draw(i + 1);
    [ids[i], ids[swap]] = [ids[swap] as number, ids[i] as number];
  }
  // Entries past a sequence's last block are never read: a stale id, as a real table holds.
  return { lens, table: ids, physical };
}

/** The host reference: the scores of each sequence's tokens, 0 where the kernel stores nothing. */
export function pagedReference(
  q: Tensor,
  cache: Tensor,
  layout: { lens: number[]; table: number[] },
  config: PagedConfig,
  dtype: Tensor["dtype"],
): Tensor {
  const { MAX_BLOCKS, BLOCK_SIZE, HEAD_DIM, k_scale } = config;
  const qs = q.toFloat64Array();
  const ks = cache.toFloat64Array();
  const out = new Float64Array(layout.lens.length * MAX_BLOCKS * BLOCK_SIZE);
  layout.lens.forEach((len, seq) => {
    for (let t = 0; t < len; t++) {
      const phys = layout.table[seq * MAX_BLOCKS + Math.floor(t / BLOCK_SIZE)] as number;
      const row = phys * BLOCK_SIZE + (t % BLOCK_SIZE);
      let sum = 0;
      for (let d = 0; d < HEAD_DIM; d++)
        sum += (qs[seq * HEAD_DIM + d] as number) * k_scale * (ks[row * HEAD_DIM + d] as number);
      out[seq * MAX_BLOCKS * BLOCK_SIZE + t] = sum;
    }
  });
  return Tensor.fromArray(out, [layout.lens.length, MAX_BLOCKS * BLOCK_SIZE], dtype);
}

/** Paged-KV attention scores with an fp8 key cache: one program per sequence. */
export default defineBench({
  name: "triton-paged-kv-scores",
  description:
    "Decode attention scores over a paged fp8 (e4m3) key cache, as a Triton user writes it: one program per sequence, the block table's physical ids loaded and turned into gather offsets (phys * BLOCK_SIZE + offs_t), the key rows dequantized by k_scale and dotted with q, stored masked to the context length (all in the HBM of the grid's first cube).",
  params: z.object({
    seqs: z.number().int().positive().default(16).describe("Sequences (programs)."),
    MAX_BLOCKS: z.number().int().positive().default(8).describe("Blocks per sequence in the block table."),
    BLOCK_SIZE: z.number().int().positive().default(16).describe("Tokens per KV block."),
    HEAD_DIM: z.number().int().positive().default(64).describe("Head dimension."),
    k_scale: z.number().positive().default(0.125).describe("The key cache's per-tensor fp8 scale."),
    ...commonParams,
  }),
  async run(sim, p) {
    const grid = gridOf(sim, p);
    const where = firstCube(grid);
    const config: PagedConfig = {
      MAX_BLOCKS: p.MAX_BLOCKS,
      BLOCK_SIZE: p.BLOCK_SIZE,
      HEAD_DIM: p.HEAD_DIM,
      k_scale: p.k_scale,
    };
    const layout = pagedLayout(p.seqs, p.MAX_BLOCKS, p.BLOCK_SIZE, p.seed);
    const q = sim.random([p.seqs, p.HEAD_DIM], p.dtype, { seed: p.seed });
    const cache = sim.random([layout.physical * p.BLOCK_SIZE, p.HEAD_DIM], "f8e4m3", {
      seed: p.seed + 1,
      low: -4,
      high: 4,
    });
    const Q = await sim.toDevice(q, { ...where, name: "q" });
    const K = await sim.toDevice(cache, { ...where, name: "k_cache" });
    const T = await sim.toDevice(Tensor.fromArray(layout.table, [p.seqs, p.MAX_BLOCKS], "i32"), {
      ...where,
      name: "block_tables",
    });
    const L = await sim.toDevice(Tensor.fromArray(layout.lens, [p.seqs], "i32"), {
      ...where,
      name: "context_lens",
    });
    const out = await sim.toDevice(Tensor.zeros([p.seqs, p.MAX_BLOCKS * p.BLOCK_SIZE], p.dtype), {
      ...where,
      name: "out",
    });
    await sim.launch(pagedScoresKernel, {
      grid,
      programs: [p.seqs],
      args: [Q, K, T, L, out, config],
      name: "paged_kv_scores",
    });
    return {
      check: { out: { actual: out, reference: () => pagedReference(q, cache, layout, config, p.dtype) } },
    };
  },
});
