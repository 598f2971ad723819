import { initProcessGroup } from "@kb/ccl";
import { KbError } from "@kb/errors";
import type { Grid, Simulator } from "@kb/runtime";
import { DTYPE_BYTES, type Dtype, Tensor } from "@kb/tensor";
import { type GridParams, gridOf } from "../params.js";
import { flatAllReduce, hierarchicalAllReduce, type TpAllReduce } from "./tp-all-reduce.js";

/** Where tensor-parallel rank `r` lives: one cube, whose HBM holds its shards and activations. */
export interface Rank {
  readonly sip: number;
  readonly cube: number;
}

/** The ranks of a tensor-parallel layer, the launch grid that covers them, and their process group. */
export interface TpPlacement {
  readonly ranks: readonly Rank[];
  /** Every PE of the ranks' cubes (`cubeIndex(tl)` is the rank). */
  readonly grid: Grid;
  /** The all-reduce of the ranks' partial sums; null for tp = 1. */
  readonly allReduce: TpAllReduce | null;
}

/**
 * Places `tp` ranks on the grid of `params`: rank = cube. `tp` up to the cubes of the grid's first
 * SIP takes cubes `0..tp-1` of that SIP (@kb/ccl scope `cubes`, their UCIe ring); `tp` equal to
 * the grid's SIP count takes the first cube of every SIP (scope `sips`); `tp` equal to all the
 * grid's cubes (SIPs x cubes, several SIPs) takes every cube, rank `s x cubes + c` on cube `c` of
 * SIP `s`, with the two-level all-reduce of {@link hierarchicalAllReduce}. `"auto"` is every cube
 * of the first SIP when that count divides `kvHeads`, else 1. Throws `RUNTIME_INVALID` for another
 * `tp`, listing the ones this grid supports.
 */
export function placeRanks(
  sim: Simulator,
  params: GridParams,
  tp: number | "auto",
  kvHeads: number,
): TpPlacement {
  const whole = gridOf(sim, params);
  const cubes = whole.cubes.length;
  const degree = tp === "auto" ? (kvHeads % cubes === 0 ? cubes : 1) : tp;
  const pes = params.pes === undefined ? {} : { pes: params.pes };
  const sip = whole.sips[0] as number;
  if (degree === 1) {
    const cube = whole.cubes[0] as number;
    return {
      ranks: [{ sip, cube }],
      grid: sim.grid({ sips: [sip], cubes: [cube], ...pes }),
      allReduce: null,
    };
  }
  const cclConfig = { defaults: { worldSize: degree } };
  if (degree <= cubes && whole.cubes[0] === 0) {
    const ids = whole.cubes.slice(0, degree);
    return {
      ranks: ids.map((cube) => ({ sip, cube })),
      grid: sim.grid({ sips: [sip], cubes: ids, ...pes }),
      allReduce: flatAllReduce(initProcessGroup(sim, { backend: "ahbm", scope: "cubes", sip, cclConfig })),
    };
  }
  if (degree === whole.sips.length && whole.sips[0] === 0) {
    const cube = whole.cubes[0] as number;
    return {
      ranks: whole.sips.map((s) => ({ sip: s, cube })),
      grid: sim.grid({ sips: whole.sips, cubes: [cube], ...pes }),
      allReduce: flatAllReduce(initProcessGroup(sim, { backend: "ahbm", scope: "sips", cube, cclConfig })),
    };
  }
  const sips = whole.sips.length;
  if (sips > 1 && degree === sips * cubes && whole.sips[0] === 0 && whole.cubes[0] === 0) {
    const grid = sim.grid({ sips: whole.sips, cubes: whole.cubes, ...pes });
    return {
      ranks: whole.sips.flatMap((s) => whole.cubes.map((cube) => ({ sip: s, cube }))),
      grid,
      allReduce: hierarchicalAllReduce(sim, grid),
    };
  }
  const options = [...new Set([1, 2, cubes, sips, sips * cubes])].filter((n) => n <= sips * cubes);
  throw new KbError(
    "RUNTIME_INVALID",
    `llama-layer: tp=${degree} does not fit this grid (${whole.sips.length} SIP(s) x ${cubes} cube(s)): a rank is a cube, and the ranks are cubes of the first SIP (tp up to ${cubes}), one cube per SIP (tp = ${sips}) or every cube (tp = ${sips * cubes}). Try tp = ${options.join(", ")}.`,
  );
}

/** Columns `[start, start + count)` of the row-major matrix `t` `[rows, cols]`. */
export function columnBlock(t: Tensor, start: number, count: number): Tensor {
  return concatColumns([{ tensor: t, start, count }], t.dtype);
}

/** The row-major concatenation, column-wise, of column blocks of matrices with the same rows. */
export function concatColumns(
  blocks: readonly { readonly tensor: Tensor; readonly start: number; readonly count: number }[],
  dtype: Dtype,
): Tensor {
  const rows = blocks[0]?.tensor.shape[0] as number;
  const size = DTYPE_BYTES[dtype];
  const width = blocks.reduce((sum, block) => sum + block.count, 0);
  const out = new Uint8Array(rows * width * size);
  for (let r = 0; r < rows; r++) {
    let at = r * width * size;
    for (const { tensor, start, count } of blocks) {
      const cols = tensor.shape[1] as number;
      const from = (r * cols + start) * size;
      out.set(tensor.bytes.subarray(from, from + count * size), at);
      at += count * size;
    }
  }
  return new Tensor([rows, width], dtype, out);
}
