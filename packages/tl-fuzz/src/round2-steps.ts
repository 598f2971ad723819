// The steps of the differential tester for issue 39's second round of Triton calls: integer bit
// ops (`tl.and or xor not shl shr`), reductions without an axis (`tl.sum(x)`), and Philox random
// numbers (`tl.rand`, `tl.randn`). Drawn by `buildProgram` for kinds 20 to 22.

import { permutation, pick } from "./pick.js";
import type { Dtype, Exact, InputTensor, Step, ValueType } from "./program.js";
import { BIT_OPS } from "./reference/index.js";

/** The kinds of the steps drawn here (appended after USE_CONSUMED, kind 19). */
export const ROUND2_KINDS = Object.freeze({
  bits: 20,
  reduceAll: 21,
  random: 22,
  shape: 23,
  maskedGather: 24,
  scatter: 25,
  wideLoad: 26,
} as const);

/** Shape ops; split and permute need an even column count (else join is drawn). */
const SHAPE_OPS = ["join", "cat", "split", "permute"] as const;
/** A gather's masked-off columns: offsets no allocation holds (the mask keeps them from moving). */
const FAR = 1 << 20;

/** Integer operands of `and or xor` that fit i8: all bits, none, a sign bit, small masks. */
const BIT_SCALARS = [15, -1, 5, 0, -128, 127, 3];
/** Shift amounts: in range, at the edges, and outside [0, bits) (everything shifted out). */
const SHIFTS = [0, 1, 3, 7, 31, 8, 32, -1];
/** Seeds of `tl.rand`: small, a date, past 2^32 (the key's high word), negative. */
const SEEDS = [0, 1, 42, 20261124, 2 ** 33 + 7, -5];
/** Column counts of random tiles. */
const RANDOM_COLS = [1, 3, 8, 13, 33];

/** What the step builder of build.ts lends the drawing of these steps. */
export interface Round2Context {
  readonly blockRows: number;
  readonly types: readonly (ValueType | null)[];
  values(filter?: (type: ValueType) => boolean): number[];
  /** Adds a step; `aliases`: a value whose bytes the result names (a view). */
  push(step: Step, type: ValueType | null, aliases?: number | null): number;
  readonly inputs: readonly InputTensor[];
  /** An i32 host input `[1, values.length]` read whole; its index. */
  indexInput(values: number[]): number;
  /** A block-split input drawn by `choice.b`, or null after loading a new one. */
  splitInputOrLoad(choice: Choice): number | null;
  /** A new output of `cols` columns written block by block; its index. */
  newOutput(cols: number, dtype: Dtype): number;
  scalarFor(dtype: Dtype, n: number): number;
  exactType(dtype: Dtype): Exact;
  random(): number;
}

/** The raw choices of one step (build.ts's RawStep). */
interface Choice {
  readonly kind: number;
  readonly a: number;
  readonly b: number;
  readonly c: number;
  readonly d: number;
}

/** The integer dtypes the bit steps take; a float value is cast to one of CAST_WIDTHS first. */
const INTEGER_DTYPES: readonly Dtype[] = ["i8", "i32", "u32", "u8", "u16", "i16", "i64", "u64"];
const CAST_WIDTHS: readonly Dtype[] = ["i32", "u8", "i16", "i64", "u16", "u64"];
const isInteger = (dtype: Dtype) => INTEGER_DTYPES.includes(dtype);

/** Draws the step of `kind` (one of ROUND2_KINDS) on the live value `x`. */
export function drawRound2(kind: number, choice: Choice, x: number, ctx: Round2Context): void {
  const tx = ctx.types[x] as ValueType;
  switch (kind) {
    case ROUND2_KINDS.bits: {
      // On an integer value; a float one is cast (truncated) to an integer width first.
      const ints = ctx.values((type) => isInteger(type.dtype));
      const width = CAST_WIDTHS[pick(choice.a, CAST_WIDTHS.length)] as Dtype;
      const a =
        ints.length > 0
          ? (ints[pick(choice.a, ints.length)] as number)
          : ctx.push(
              { kind: "cast", x, dtype: width },
              {
                ...tx,
                dtype: width,
                exact: tx.exact === null ? null : { grain: 0, bound: Math.ceil(tx.exact.bound) },
              },
            );
      const ta = ctx.types[a] as ValueType;
      const op = BIT_OPS[pick(choice.b, BIT_OPS.length)] as (typeof BIT_OPS)[number];
      const partners = ctx.values(
        (type) => type.rows === ta.rows && type.cols === ta.cols && type.dtype === ta.dtype,
      );
      const shift = op === "shl" || op === "shr";
      const b =
        op === "not"
          ? null
          : pick(choice.c, 3) === 0 && partners.length > 0
            ? (partners[pick(choice.d, partners.length)] as number)
            : {
                scalar: (shift ? SHIFTS : BIT_SCALARS)[
                  pick(choice.d, shift ? SHIFTS.length : BIT_SCALARS.length)
                ] as number,
              };
      ctx.push({ kind: "bits", op, a, b }, { ...ta, exact: null });
      return;
    }
    case ROUND2_KINDS.reduceAll: {
      const op = (["sum", "max", "min"] as const)[pick(choice.b, 3)] as "sum" | "max" | "min";
      const size = (tx.rows === "block" ? ctx.blockRows : tx.rows) * tx.cols;
      const exact =
        tx.exact === null || op !== "sum"
          ? tx.exact
          : { grain: tx.exact.grain, bound: tx.exact.bound * size };
      ctx.push({ kind: "reduceAll", op, x }, { rows: 1, cols: 1, dtype: tx.dtype, exact });
      return;
    }
    case ROUND2_KINDS.random: {
      const op = (["rand", "randn", "randint"] as const)[pick(choice.c, 3)] as "rand" | "randn" | "randint";
      const cols = RANDOM_COLS[pick(choice.b, RANDOM_COLS.length)] as number;
      const seed = SEEDS[pick(choice.d, SEEDS.length)] as number;
      const dtype = op === "randint" ? "u32" : "f32";
      ctx.push({ kind: "random", op, seed, cols }, { rows: "block", cols, dtype, exact: null });
      return;
    }
    case ROUND2_KINDS.shape: {
      const drawn = SHAPE_OPS[pick(choice.b, SHAPE_OPS.length)] as (typeof SHAPE_OPS)[number];
      const pairs = drawn === "join" || drawn === "cat" || tx.cols % 2 === 1;
      const op = pairs && drawn !== "cat" ? "join" : drawn;
      const partners = ctx.values(
        (type) => type.rows === tx.rows && type.cols === tx.cols && type.dtype === tx.dtype,
      );
      const b = partners[pick(choice.c, partners.length)] as number;
      const tb = (ctx.types[b] as ValueType).exact;
      // Values only move: exact as the operands (the two of join and cat together).
      const exact =
        !pairs || tx.exact === null
          ? tx.exact
          : tb === null
            ? null
            : { grain: Math.min(tx.exact.grain, tb.grain), bound: Math.max(tx.exact.bound, tb.bound) };
      const cols = op === "join" || op === "cat" ? 2 * tx.cols : op === "split" ? tx.cols / 2 : tx.cols;
      // A permute of [rows, 1, 2] to [rows, 2, 1] moves no byte: its result names x's bytes (an
      // in-place write into either makes the other stale, as for a reshape).
      const aliases = op === "permute" && tx.cols === 2 ? x : null;
      ctx.push(
        { kind: "shape", op, a: x, b, half: pick(choice.d, 2) as 0 | 1 },
        { ...tx, cols, exact },
        aliases,
      );
      return;
    }
    case ROUND2_KINDS.maskedGather:
    case ROUND2_KINDS.wideLoad: {
      const input = ctx.splitInputOrLoad(choice);
      if (input === null) return;
      const { shape, dtype } = ctx.inputs[input] as InputTensor;
      const other = ctx.scalarFor(dtype, choice.d);
      const exact = ctx.exactType(dtype);
      if (kind === ROUND2_KINDS.wideLoad) {
        // Triton's BLOCK = next_power_of_2(C), above C (a power of two doubles).
        const block = 2 ** Math.ceil(Math.log2(shape[1] + 1));
        ctx.push({ kind: "wideLoad", input, block, other }, { rows: "block", cols: block, dtype, exact });
        return;
      }
      const k = 1 + pick(choice.c, 8);
      const on = pick(choice.a, k + 1);
      const idx = Array.from({ length: k }, (_, j) =>
        j < on ? pick(ctx.random() * shape[1], shape[1]) : FAR,
      );
      const index = ctx.indexInput(idx);
      ctx.push({ kind: "maskedGather", input, index, on, other }, { rows: "block", cols: k, dtype, exact });
      return;
    }
    case ROUND2_KINDS.scatter: {
      // A permutation of x's columns (drawn): every element of the output is written once.
      const xs = ctx.values((type) => type.rows === "block");
      if (xs.length === 0) return;
      const v = xs[pick(choice.a, xs.length)] as number;
      const tv = ctx.types[v] as ValueType;
      const perm = permutation(ctx.random, tv.cols);
      // Masked (c odd): columns from `on` are off, their offsets out of range.
      const on = pick(choice.c, 2) === 1 ? pick(choice.d, tv.cols + 1) : null;
      const index = ctx.indexInput(on === null ? perm : perm.map((j, c) => (c < on ? j : FAR)));
      ctx.push({ kind: "scatter", x: v, index, output: ctx.newOutput(tv.cols, tv.dtype), on }, null);
      return;
    }
  }
}
